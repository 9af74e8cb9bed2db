"""A decoder-only Transformer language model, GPT-style (notebook 12).

Structure (each part a module attribute, so that a later notebook can swap one):

    ids (B, L) -> tok_embed -> positions (adds position information; the ``positions`` hook)
               -> dropout -> blocks[0] ... blocks[num_layers - 1] (GPTBlock, pre-LN)
               -> norm (final LayerNorm) -> lm_head (tied to tok_embed by default) -> logits (B, L, |V|)

A ``GPTBlock`` is notebook 08's decoder layer without cross-attention, i.e. notebook 07's pre-LN
encoder layer run with a causal mask: x = x + SelfAttn(LN(x)); x = x + FFN(LN(x)). It subclasses
``EncoderLayer`` (same parameters) and adds a key/value cache for generation (notebook 11).

Notebook 13 adds the options of today's LLMs (each default is notebook 12's choice, bit for bit):
``num_kv_heads`` (grouped-query / multi-query attention), ``window`` and ``sinks`` (sliding-window
attention with attention sinks, and a rolling KV cache of fixed size), ``norm="rms"`` (RMSNorm),
``qk_norm`` (RMSNorm on each head's queries and keys) and ``positions`` ("learned", "sinusoidal" or
"rope"). With any of ``num_kv_heads != num_heads``, ``norm="rms"``, ``qk_norm`` or ``positions="rope"``
the blocks are ``ModernBlock``s, whose attention is a ``ModernAttention`` (a
``GroupedQueryAttention`` with a cache, RoPE and QK-norm).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ._cache import fingerprint, load_or_train, tensor_digest
from ._checks import bool_mask, mask_fits
from .attention import KVCache, causal_mask
from .layers import EncoderLayer, FeedForward
from .modern import GroupedQueryAttention, RMSNorm
from .positional import PositionalEncoding, apply_rope
from .sampling import sample_next
from .training import warmup_lr

__all__ = ["GPT", "GPTBlock", "LearnedPositions", "ModernAttention", "ModernBlock", "NoPositions",
           "RollingKVCache", "SinusoidalPositions", "cache_nbytes", "complete_greedy", "max_attention_logit", "pack_sentences", "train_lm",
           "train_lm_cached", "window_sink_mask"]

NORMS = ("layer", "rms")
POSITIONS = ("learned", "sinusoidal", "rope")


class LearnedPositions(nn.Module):
    """Adds a learned vector per position (GPT-2's choice): x (B, L, d_model) -> x + P[start:start+L]."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = max_len
        self.embed = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        length = x.shape[1]
        if start + length > self.max_len:
            raise ValueError(f"positions {start}..{start + length - 1} do not fit max_len={self.max_len}")
        pos = torch.arange(start, start + length, device=x.device)  # (L,)
        return x + self.embed(pos)  # (B, L, d_model)


class GPTBlock(EncoderLayer):
    """Pre-LN decoder block without cross-attention: causal self-attention, then feed-forward,
    each inside a residual connection. Same parameters as ``EncoderLayer(norm_first=True)``."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = False,
                cache: KVCache | None = None) -> torch.Tensor:
        h = self.norm1(x)  # (B, L, d_model)
        x = x + self.dropout1(self.self_attn(h, h, h, mask, need_weights=need_weights, cache=cache))
        return x + self._ff(self.norm2(x))  # (B, L, d_model)


def window_sink_mask(query_pos: torch.Tensor, key_pos: torch.Tensor, window: int | None,
                     sinks: int = 0) -> torch.Tensor:
    """(Lq, Lk) bool, True where the query at position i may attend to the key at position j:
    j <= i and (i - j < window or j < sinks). ``window=None`` is plain causal attention."""
    i, j = query_pos[:, None], key_pos[None, :]
    allowed = j <= i
    if window is not None:
        allowed = allowed & ((i - j < window) | (j < sinks))
    return allowed


class RollingKVCache(KVCache):
    """A KV cache of fixed size for sliding-window attention with ``sinks`` attention sinks.

    ``update(k, v)`` returns the stored keys and values followed by the new ones (what the new
    queries may need), then keeps only what a later query can still attend to: the first ``sinks``
    positions and the last ``window - 1`` ones. So it never holds more than ``sinks + window - 1``
    positions between steps, however long the sequence. ``positions`` are the absolute positions of
    the stored keys, ``seen`` how many tokens went through the cache.
    """

    def __init__(self, window: int, sinks: int = 0):
        super().__init__()
        if window is None:
            raise ValueError("RollingKVCache: window must be an int >= 1 (the positions a query sees), "
                             "got None; for full attention use a KVCache")
        _check_window(window, sinks, "RollingKVCache")
        self.window, self.sinks, self.seen = window, sinks, 0
        self.positions = torch.zeros(0, dtype=torch.long)  # (L_stored,)

    def __repr__(self) -> str:
        return (f"RollingKVCache(window={self.window}, sinks={self.sinks}, seen={self.seen}, "
                f"stored={len(self)})")

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k_all, v_all = super().update(k, v)  # (B, h, L_stored + L_new, d_k)
        new = torch.arange(self.seen, self.seen + k.shape[2])
        pos_all = torch.cat([self.positions, new])  # (L_stored + L_new,)
        self.seen += k.shape[2]
        keep = (pos_all < self.sinks) | (pos_all > self.seen - self.window)  # what the next query sees
        if not bool(keep.all()):
            idx = keep.nonzero().squeeze(1).to(k_all.device)
            self.k, self.v = k_all.index_select(2, idx), v_all.index_select(2, idx)  # fresh copies
        self.positions = pos_all[keep]
        return k_all, v_all


def _cache_start(cache: KVCache) -> int:
    return cache.seen if isinstance(cache, RollingKVCache) else len(cache)


def cache_nbytes(caches: Sequence[KVCache]) -> int:
    """Bytes of memory really held by the keys and values of a list of caches (one per layer):
    the sizes of the distinct storages behind the cached tensors (a view that keeps a larger
    buffer alive counts with all of it)."""
    seen: dict[int, int] = {}
    for cache in caches:
        for t in (cache.k, cache.v):
            if t is not None:
                storage = t.untyped_storage()
                seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def _check_window(window, sinks, where: str) -> None:
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise ValueError(f"{where}: window must be None (full causal attention) or an int >= 1, "
                         f"got {window!r}")
    if isinstance(sinks, bool) or not isinstance(sinks, int) or sinks < 0:
        raise ValueError(f"{where}: sinks must be an int >= 0, got {sinks!r}")
    if window is None and sinks:
        raise ValueError(f"{where}: sinks={sinks} needs a window: attention sinks are the first "
                         "tokens kept in a sliding window's cache")


class SinusoidalPositions(nn.Module):
    """Notebook 09's choice: token embeddings scaled by sqrt(d_model), plus the fixed sinusoidal
    table of notebook 06 (``PositionalEncoding``): x (B, L, d_model) -> x * sqrt(d_model) + PE."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.encoding = PositionalEncoding(d_model, max_len)
        self.scale = math.sqrt(d_model)

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        return self.encoding(x * self.scale, start)  # (B, L, d_model)


class NoPositions(nn.Module):
    """The position hook for RoPE: nothing is added to the embeddings (the attention rotates)."""

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        return x


class ModernAttention(GroupedQueryAttention):
    """``GroupedQueryAttention`` as today's LLMs run it: a KV cache that stores only the
    ``num_kv_heads`` key/value heads, optional RMSNorm of each head's queries and keys
    (``qk_norm``) and optional RoPE (notebook 06's ``apply_rope``) at absolute positions.

    ``forward(query, key, value, mask=None, cache=None, start=0)``: mask boolean, True = may attend,
    (Lq, Lk) (the fast path: no copy of the shared heads) or broadcastable to (B, h, Lq, Lk);
    ``start`` is the position of the first new token. ``max_logit`` keeps the largest
    attention logit q.k / sqrt(d_k) of the last call (over the pairs the mask allows).
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, qk_norm: bool = False,
                 rope: bool = False, bias: bool = True):
        super().__init__(d_model, num_heads, num_kv_heads, bias)
        self.q_norm = RMSNorm(self.head_dim) if qk_norm else None
        self.k_norm = RMSNorm(self.head_dim) if qk_norm else None
        self.rope = rope
        self.max_logit: torch.Tensor | None = None
        self.attn_weights: torch.Tensor | None = None

    def forward(self, query, key, value, mask=None, cache: KVCache | None = None, start: int = 0,
                need_weights: bool = False):
        b, lq, _ = query.shape
        q = self._heads(self.q_proj(query), self.num_heads)  # (B, h, Lq, d_k)
        k = self._heads(self.k_proj(key), self.num_kv_heads)  # (B, h_kv, Lk_new, d_k)
        v = self._heads(self.v_proj(value), self.num_kv_heads)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.rope:
            q = apply_rope(q, torch.arange(start, start + lq, device=q.device))
            k = apply_rope(k, torch.arange(start, start + k.shape[2], device=k.device))
        if cache is not None:
            k, v = cache.update(k, v)  # (B, h_kv, Lk, d_k): only the shared heads are stored
        group = self.num_heads // self.num_kv_heads
        if mask is not None:
            bool_mask("ModernAttention", mask)
            if mask.dim() != 2 or mask.shape != (lq, k.shape[2]):
                # a per-example or per-head mask: expand the kv heads and attend head by head
                return self._attend_expanded(q, k.repeat_interleave(group, 1),
                                             v.repeat_interleave(group, 1), mask, b, lq, need_weights)
        qg = q.reshape(b, self.num_kv_heads, group * lq, self.head_dim)  # heads i // group share k, v
        scores = (qg * (1.0 / math.sqrt(self.head_dim))) @ k.transpose(-2, -1)  # (B, h_kv, g*Lq, Lk)
        if mask is not None:
            scores = scores.masked_fill(~mask.repeat(group, 1), float("-inf"))
        self.max_logit = scores.detach().amax()
        weights = torch.softmax(scores, dim=-1)
        self.attn_weights = weights.detach().view(b, self.num_heads, lq, -1) if need_weights else None
        out = (weights @ v).view(b, self.num_heads, lq, self.head_dim)  # (B, h, Lq, d_k)
        return self.out_proj(out.transpose(1, 2).reshape(b, lq, self.d_model))  # (B, Lq, d_model)

    def _attend_expanded(self, q, k, v, mask, b, lq, need_weights):
        """q, k, v (B, h, ., d_k) with a mask broadcastable to (B, h, Lq, Lk)."""
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, h, Lq, Lk)
        mask_fits("ModernAttention", mask, scores.shape)
        scores = scores.masked_fill(~mask, float("-inf"))
        self.max_logit = scores.detach().amax()
        weights = torch.softmax(scores, dim=-1).masked_fill(~mask.any(-1, keepdim=True), 0.0)
        self.attn_weights = weights.detach() if need_weights else None
        out = (weights @ v).transpose(1, 2).reshape(b, lq, self.d_model)
        return self.out_proj(out)  # (B, Lq, d_model)


class ModernBlock(nn.Module):
    """A pre-norm decoder block with ``ModernAttention``: x = x + Attn(N(x)); x = x + FFN(N(x)),
    N a LayerNorm (``norm="layer"``) or an RMSNorm (``norm="rms"``)."""

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, d_ff: int, dropout: float = 0.0,
                 norm: str = "layer", qk_norm: bool = False, rope: bool = False):
        super().__init__()
        self.self_attn = ModernAttention(d_model, num_heads, num_kv_heads, qk_norm, rope)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = _make_norm(norm, d_model), _make_norm(norm, d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, cache: KVCache | None = None,
                start: int = 0, need_weights: bool = False) -> torch.Tensor:
        h = self.norm1(x)  # (B, L, d_model)
        x = x + self.dropout1(self.self_attn(h, h, h, mask, cache=cache, start=start,
                                             need_weights=need_weights))
        return x + self.dropout2(self.feed_forward(self.norm2(x)))  # (B, L, d_model)


def _make_norm(norm: str, d_model: int) -> nn.Module:
    return nn.LayerNorm(d_model) if norm == "layer" else RMSNorm(d_model)


class GPT(nn.Module):
    """A decoder-only language model: ``forward(ids (B, L)) -> logits (B, L, vocab_size)``.

    ``tie_weights=True`` uses the token embedding matrix as the output layer's weight (one
    (|V|, d_model) matrix instead of two). ``generate`` continues prompts token by token.

    Notebook 13's options (the defaults are notebook 12's model, bit for bit):
    ``num_kv_heads`` key/value heads shared by groups of query heads (None = ``num_heads``: multi-head
    attention; 1: multi-query attention); ``window`` (None = full causal attention, else a query
    sees its ``window`` latest positions, itself included) and ``sinks`` (the first ``sinks``
    positions stay visible too); ``norm`` "layer" or "rms"; ``qk_norm`` (RMSNorm of each head's
    queries and keys); ``positions`` "learned", "sinusoidal" or "rope". ``window`` and ``sinks`` hold
    no parameters: ``set_window`` changes them on a trained model.
    """

    def __init__(self, vocab_size: int, d_model: int = 128, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int = 512, max_len: int = 128, dropout: float = 0.0, tie_weights: bool = True,
                 num_kv_heads: int | None = None, window: int | None = None, sinks: int = 0,
                 norm: str = "layer", qk_norm: bool = False, positions: str = "learned"):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("num_layers", num_layers),
                            ("max_len", max_len)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if norm not in NORMS:
            raise ValueError(f"GPT: norm must be one of {NORMS}, got {norm!r}")
        if positions not in POSITIONS:
            raise ValueError(f"GPT: positions must be one of {POSITIONS}, got {positions!r}")
        if not isinstance(qk_norm, bool):
            raise TypeError(f"GPT: qk_norm must be True or False, got {qk_norm!r}")
        kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        self.modern = kv_heads != num_heads or norm != "layer" or qk_norm or positions == "rope"
        if isinstance(kv_heads, bool) or not isinstance(kv_heads, int) or kv_heads < 1:
            raise ValueError(f"GPT: num_kv_heads must be None or an int >= 1, got {num_kv_heads!r}")
        if isinstance(num_heads, int) and num_heads % kv_heads:
            raise ValueError(f"GPT: num_heads={num_heads} must be a multiple of num_kv_heads={kv_heads}: "
                             "every key/value head serves an equal group of query heads")
        self.set_window(window, sinks)
        self.vocab_size, self.d_model, self.max_len = vocab_size, d_model, max_len
        self.config = {"vocab_size": vocab_size, "d_model": d_model, "num_heads": num_heads,
                       "num_layers": num_layers, "d_ff": d_ff, "max_len": max_len, "dropout": dropout,
                       "tie_weights": tie_weights, "num_kv_heads": kv_heads, "norm": norm,
                       "qk_norm": qk_norm, "positions": positions}
        self.tok_embed = nn.Embedding(vocab_size, d_model)
        if positions == "learned":
            self.positions = LearnedPositions(max_len, d_model)  # the position hook: (x, start) -> x
        elif positions == "sinusoidal":
            self.positions = SinusoidalPositions(max_len, d_model)
        else:
            self.positions = NoPositions()  # RoPE rotates queries and keys inside the attention
        self.dropout = nn.Dropout(dropout)
        if self.modern:
            self.blocks = nn.ModuleList(
                ModernBlock(d_model, num_heads, kv_heads, d_ff, dropout, norm, qk_norm, positions == "rope")
                for _ in range(num_layers))
        else:
            self.blocks = nn.ModuleList(GPTBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.norm = _make_norm(norm, d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_embed.weight
        self.apply(self._init_weights)

    def set_window(self, window: int | None, sinks: int = 0) -> GPT:
        """Use sliding-window attention (``window`` latest positions, plus the first ``sinks``
        ones) from now on; ``window=None`` is full causal attention. Returns the model."""
        _check_window(window, sinks, "GPT")
        self.window, self.sinks = window, sinks
        return self

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # GPT-2's initialisation: small normal weights, zero biases.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def _check_ids(self, ids) -> None:
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[1] < 1:
            got = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"ids must be token ids of shape (B, L) with L >= 1, got {got}")
        if ids.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"ids must hold integer token ids (torch.long), got {ids.dtype}")
        if int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size:
            raise ValueError(f"ids hold values in {int(ids.min())}..{int(ids.max())}, but the vocabulary "
                             f"has {self.vocab_size} tokens (ids 0..{self.vocab_size - 1})")

    def new_cache(self) -> list[KVCache]:
        """One empty key/value cache per block, for ``forward(..., cache=...)``: a
        ``RollingKVCache`` of fixed size when the model has a window, else a growing ``KVCache``."""
        if self.window is not None:
            return [RollingKVCache(self.window, self.sinks) for _ in self.blocks]
        return [KVCache() for _ in self.blocks]

    def _mask(self, start: int, length: int, cache: list[KVCache] | None, device) -> torch.Tensor | None:
        """The (L, Lk) mask of the new tokens over the keys they see (None: they see all)."""
        if self.window is None and self.sinks == 0:  # notebook 12: causal
            if length == 1:  # one new token may see everything cached: no mask needed
                return None
            return causal_mask(start + length, device=device)[start:]  # (L, start + L)
        new = torch.arange(start, start + length)
        past = torch.arange(start)
        if cache is not None and isinstance(cache[0], RollingKVCache):
            past = cache[0].positions
        mask = window_sink_mask(new, torch.cat([past, new]), self.window, self.sinks)
        return None if bool(mask.all()) else mask.to(device)

    def forward(self, ids: torch.Tensor, cache: list[KVCache] | None = None,
                need_weights: bool = False) -> torch.Tensor:
        """ids (B, L) -> logits (B, L, vocab_size). With a ``cache``, ``ids`` are the new tokens:
        their positions continue after the cached ones, and they attend to the cache too."""
        self._check_ids(ids)
        start = 0 if cache is None else _cache_start(cache[0])
        length = ids.shape[1]
        if start + length > self.max_len:
            raise ValueError(f"a sequence of {start + length} tokens is longer than max_len={self.max_len}")
        x = self.dropout(self.positions(self.tok_embed(ids), start))  # (B, L, d_model)
        mask = self._mask(start, length, cache, ids.device)
        for i, block in enumerate(self.blocks):
            layer_cache = None if cache is None else cache[i]
            if self.modern:
                x = block(x, mask, cache=layer_cache, start=start, need_weights=need_weights)
            else:
                x = block(x, mask, need_weights=need_weights, cache=layer_cache)
        return self.lm_head(self.norm(x))  # (B, L, vocab_size)

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, use_cache: bool = True,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Continue the prompts ``ids`` (B, L0) by ``max_new_tokens`` sampled tokens ->
        (B, L0 + max_new_tokens). ``temperature=0`` is greedy. With ``use_cache`` each step feeds
        only the newest token and reuses the cached keys and values (same ids, less work)."""
        self._check_ids(ids)
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
        if ids.shape[1] + max_new_tokens > self.max_len:
            raise ValueError(f"a prompt of {ids.shape[1]} tokens plus {max_new_tokens} new ones is longer "
                             f"than max_len={self.max_len}")
        was_training = self.training
        self.eval()
        cache = self.new_cache() if use_cache else None
        step_input = ids
        for _ in range(max_new_tokens):
            logits = self(step_input if use_cache else ids, cache=cache)[:, -1]  # (B, |V|)
            nxt = sample_next(logits, temperature, top_k, top_p, generator)  # (B,)
            ids = torch.cat([ids, nxt[:, None]], dim=1)  # (B, L + 1)
            step_input = nxt[:, None]  # (B, 1)
        self.train(was_training)
        return ids


def train_lm(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor, steps: int,
             batch_size: int = 64, peak_lr: float = 3e-3, warmup_steps: int = 50, clip_norm: float = 1.0,
             seed: int = 0, log_every: int = 50,
             callback: Callable[[int, dict], None] | None = None) -> dict[str, list]:
    """Next-token training: ``inputs`` (N, L) ids, ``targets`` (N, L) the ids to predict at each
    position (-100 = not scored). ``steps`` of AdamW with warm-up and cosine decay (``warmup_lr``),
    batches drawn by a seeded shuffle. Returns ``step``, ``loss`` (mean over the last
    ``log_every`` steps), ``lr`` and ``seconds`` (wall clock, for information only).
    """
    if inputs.shape != targets.shape or inputs.dim() != 2:
        raise ValueError(f"inputs and targets must both be (N, L), got {tuple(inputs.shape)} and "
                         f"{tuple(targets.shape)}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, betas=(0.9, 0.98), weight_decay=0.0)
    history: dict[str, list] = {"step": [], "loss": [], "lr": [], "seconds": []}
    order, pos, running, start = torch.randperm(len(inputs), generator=gen), 0, [], time.perf_counter()
    model.train()
    for step in range(steps):
        if pos + batch_size > len(order):  # a new epoch: reshuffle
            order, pos = torch.randperm(len(inputs), generator=gen), 0
        idx = order[pos: pos + batch_size]
        pos += batch_size
        x, y = inputs[idx].to(device), targets[idx].to(device)  # (B, L) each
        lr = warmup_lr(step, peak_lr, warmup_steps, steps)
        for group in opt.param_groups:
            group["lr"] = lr
        logits = model(x)  # (B, L, |V|)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
        running.append(loss.item())
        if (step + 1) % log_every == 0 or step + 1 == steps:
            history["step"].append(step + 1)
            history["loss"].append(sum(running) / len(running))
            history["lr"].append(lr)
            history["seconds"].append(time.perf_counter() - start)
            running = []
            if callback is not None:
                callback(step + 1, history)
                model.train()
    model.eval()
    return history


@torch.no_grad()
def complete_greedy(model: GPT, prompts: Sequence[Sequence[int]], max_new_tokens: int) -> list[list[int]]:
    """Greedy continuations of prompts of any lengths: prompts of equal length are batched
    together (no padding needed). Returns the new ids of each prompt, in the prompts' order."""
    device = next(model.parameters()).device
    by_len: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_len.setdefault(len(p), []).append(i)
    out: list[list[int]] = [[] for _ in prompts]
    for length, rows in by_len.items():
        ids = torch.tensor([list(prompts[i]) for i in rows], device=device)  # (B, length)
        new = model.generate(ids, max_new_tokens, temperature=0)[:, length:]  # (B, max_new_tokens)
        for i, r in zip(rows, new.tolist(), strict=True):
            out[i] = r
    return out


@torch.no_grad()
def max_attention_logit(model: GPT, ids: torch.Tensor) -> float:
    """The largest attention logit q.k / sqrt(d_k) over every layer, head and allowed
    (query, key) pair when ``model`` reads ``ids`` (B, L): how far the softmax is from saturating
    (notebook 02)."""
    was_training = model.training
    model.eval()
    found: list[torch.Tensor] = []
    hooks = []
    if not model.modern:  # notebook 12's blocks: recompute the logits from the attention's input
        def hook(attn, args):
            h = args[0]
            q, k = attn.split_heads(attn.w_q(h)), attn.split_heads(attn.w_k(h))  # (B, h, L, d_k)
            scores = q @ k.transpose(-2, -1) / math.sqrt(attn.d_k)  # (B, h, L, L)
            mask = model._mask(0, h.shape[1], None, h.device)
            found.append(scores.masked_fill(~mask, float("-inf")).amax() if mask is not None else scores.amax())
        hooks = [block.self_attn.register_forward_pre_hook(hook) for block in model.blocks]
    try:
        model(ids)
    finally:
        for handle in hooks:
            handle.remove()
        model.train(was_training)
    if model.modern:
        found = [block.self_attn.max_logit for block in model.blocks]
    return float(torch.stack(found).max())


def train_lm_cached(make_model: Callable[[], GPT], inputs: torch.Tensor, targets: torch.Tensor,
                    steps: int, name: str = "lm", cache: bool = True,
                    on_log: Callable[[GPT, dict], None] | None = None, threads: int | None = 1,
                    **train_kwargs):
    """``train_lm`` with notebook 10's on-disk cache (``helpers.training.cache_folder``).

    ``make_model()`` builds the freshly initialised model (seed it inside). The key covers all
    that changes the trained weights: the model's ``config``, its initial weights, the data,
    ``steps`` and the other ``train_lm`` arguments, the torch version, the device and the number of
    threads; a changed recipe trains again. ``on_log(model, history)`` runs at every log step (e.g.
    to record a measurement in ``history``). Returns ``(model, history)``, the model in eval mode;
    ``history["cached"]`` says whether it was loaded. Parallel runs asking for the same model train
    it once (``helpers._cache.load_or_train``).

    ``threads`` CPU threads train the model (None: torch's current setting), then the setting is
    restored. The default, 1, is the fastest for models this small (on a busy machine, 2 threads
    were measured 30x slower per step), and it gives the same weights whatever OMP_NUM_THREADS is.
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"train_lm_cached: threads must be None or an int >= 1, got {threads!r}")
    model = make_model()
    key = {"config": getattr(model, "config", repr(model)), "steps": steps,
           "train": fingerprint(dict(sorted(train_kwargs.items()))),
           "data": tensor_digest(inputs, targets)}
    callback = None if on_log is None else (lambda step, history: on_log(model, history))
    return load_or_train(f"gpt-{name}", model,
                         lambda: train_lm(model, inputs, targets, steps, callback=callback,
                                          **train_kwargs), key, cache=cache, threads=threads)


def pack_sentences(token_ids: Sequence[Sequence[int]], length: int = 32, start_id: int = 1,
                   pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Notebook 12's rows: each starts with ``start_id`` ("." in the toy language) followed by as
    many whole sentences (lists of ids) as fit in ``length`` + 1 tokens, padded with ``pad_id``.
    Returns inputs (N, length) and next-token labels (N, length), -100 at padding (not scored)."""
    if isinstance(length, bool) or not isinstance(length, int) or length < 2:
        raise ValueError(f"pack_sentences: length must be an int >= 2, got {length!r}")
    rows, row = [], [start_id]
    for ids in token_ids:
        if len(ids) + 1 > length + 1:
            raise ValueError(f"pack_sentences: a sentence of {len(ids)} tokens does not fit a row of "
                             f"length {length}")
        if len(row) + len(ids) > length + 1:
            rows.append(row + [pad_id] * (length + 1 - len(row)))
            row = [start_id]
        row += list(ids)
    t = torch.tensor(rows + [row + [pad_id] * (length + 1 - len(row))])  # (N, length + 1)
    x, y = t[:, :-1], t[:, 1:].clone()
    y[y == pad_id] = -100  # padding is not scored
    return x, y
