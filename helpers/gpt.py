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
``GroupedQueryAttention`` with a cache, RoPE and QK-norm); those live in ``helpers.modern``, the
position hooks in ``helpers.positional``. Training is ``helpers.training.train_lm``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .attention import KVCache, causal_mask
from .data import toy_language as tl
from .layers import EncoderLayer
from .modern import NORMS, ModernBlock, RollingKVCache, _check_window, _make_norm, window_sink_mask
from .positional import LearnedPositions, NoPositions, SinusoidalPositions
from .sampling import sample_next

__all__ = ["GPT", "GPTBlock", "POSITIONS", "complete_greedy", "sample_sentences"]

POSITIONS = ("learned", "sinusoidal", "rope")


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


def _cache_start(cache: KVCache) -> int:
    return cache.seen if isinstance(cache, RollingKVCache) else len(cache)


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


def sample_sentences(model, n: int, temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None, prompt: str = "", seed: int = 0,
                     max_new_tokens: int = 16) -> list[str]:
    """``n`` sentences sampled from ``model`` after the start token '.' and the (optional)
    ``prompt`` words: each is the prompt plus the generated words up to the first '.' (kept).
    A sample that reaches no '.' within ``max_new_tokens`` is returned without one."""
    device = next(model.parameters()).device
    prompt_ids = [1] + tl.encode(prompt)  # "." starts every prompt, like the training rows
    ids = torch.tensor([prompt_ids] * n, device=device)  # (n, L0)
    gen = torch.Generator(device=device).manual_seed(seed)
    out = model.generate(ids, max_new_tokens, temperature, top_k, top_p, generator=gen)
    texts = []
    for row in out[:, 1:].tolist():
        text = tl.decode(row)
        cut = text.find(".", len(tl.decode(prompt_ids[1:])))
        texts.append(text if cut < 0 else text[: cut + 1])
    return texts
