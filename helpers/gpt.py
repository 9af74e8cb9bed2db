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

import inspect
import math
import operator
from collections.abc import Sequence

import torch
from torch import nn

from .attention import KVCache, causal_mask
from .data import toy_language as tl
from .layers import EncoderLayer
from .modern import (
    ACTIVATIONS,
    NORMS,
    ROPE_SCALINGS,
    ModernBlock,
    PreallocatedKVCache,
    RollingKVCache,
    _check_window,
    _make_norm,
    window_sink_mask,
)
from .positional import LearnedPositions, NoPositions, SinusoidalPositions
from .sampling import check_settings, sample_next

__all__ = ["GPT", "GPTBlock", "POSITIONS", "complete_greedy", "flops_per_token", "forward_flops", "sample_sentences"]

POSITIONS = ("learned", "sinusoidal", "rope", "none")
SINK_POSITIONS = ("cache", "absolute")


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


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"GPT: {name} must be an int >= 1, got {value!r}")
    return value


class GPT(nn.Module):
    """A decoder-only language model: ``forward(ids (B, L)) -> logits (B, L, vocab_size)``.

    ``tie_weights=True`` uses the token embedding matrix as the output layer's weight (one
    (|V|, d_model) matrix instead of two). ``generate`` continues prompts token by token.

    Notebook 13's options (the defaults are notebook 12's model, bit for bit):
    ``num_kv_heads`` key/value heads shared by groups of query heads (None = ``num_heads``: multi-head
    attention; 1: multi-query attention); ``window`` (None = full causal attention, else a query
    sees its ``window`` latest positions, itself included) and ``sinks`` (the first ``sinks``
    positions stay visible too); ``norm`` "layer" or "rms"; ``qk_norm`` (RMSNorm of each head's
    queries and keys); ``positions`` "learned", "sinusoidal", "rope" or "none";
    ``activation`` of the feed-forward network, "relu", "gelu" (the exact, erf form) or "swiglu"
    (gate * SiLU, three matrices, no bias); ``norm_eps`` the epsilon of every RMSNorm (LayerNorm
    keeps PyTorch's 1e-5); ``bias=False`` removes every bias; ``rope_base`` is RoPE's base
    (10,000 in notebook 06; SmolLM2 uses 100,000). ``GPT.from_config(config)`` builds a model from
    such a dict of arguments (``model.config``, or one read from a model file). ``window`` and ``sinks`` hold
    no parameters: ``set_window`` changes them on a trained model, ``set_rope_scaling`` stretches
    RoPE to longer sequences.

    With ``positions`` "rope" or "none" and a ``window``, ``forward`` and ``generate`` accept
    sequences longer than ``max_len`` (nothing in the model depends on the absolute position);
    otherwise ``max_len`` is the longest sequence.
    """

    def __init__(self, vocab_size: int, d_model: int = 128, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int = 512, max_len: int = 128, dropout: float = 0.0, tie_weights: bool = True,
                 num_kv_heads: int | None = None, window: int | None = None, sinks: int = 0,
                 norm: str = "layer", qk_norm: bool = False, positions: str = "learned",
                 activation: str = "relu", norm_eps: float = 1e-6, bias: bool = True,
                 rope_base: float = 10000.0):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("num_heads", num_heads),
                            ("num_layers", num_layers), ("d_ff", d_ff), ("max_len", max_len)):
            _positive_int(name, value)
        if d_model % num_heads:
            raise ValueError(f"GPT: d_model={d_model} is not divisible by num_heads={num_heads}: each "
                             "head needs d_model / num_heads dimensions")
        if norm not in NORMS:
            raise ValueError(f"GPT: norm must be one of {NORMS}, got {norm!r}")
        if positions not in POSITIONS:
            raise ValueError(f"GPT: positions must be one of {POSITIONS}, got {positions!r}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"GPT: activation must be one of {ACTIVATIONS}, got {activation!r}")
        for name, value in (("qk_norm", qk_norm), ("bias", bias), ("tie_weights", tie_weights)):
            if not isinstance(value, bool):
                raise TypeError(f"GPT: {name} must be True or False, got {value!r}")
        if isinstance(norm_eps, bool) or not isinstance(norm_eps, int | float) or not 0 < norm_eps < 1:
            raise ValueError(f"GPT: norm_eps must be a number in (0, 1), got {norm_eps!r}")
        if norm_eps != 1e-6 and norm == "layer" and not qk_norm:
            raise ValueError(f"GPT: norm_eps={norm_eps!r} sets the epsilon of RMSNorm, but this model has "
                             "none (norm='layer', qk_norm=False); LayerNorm keeps PyTorch's 1e-5")
        if not isinstance(dropout, int | float) or isinstance(dropout, bool) or not 0 <= dropout < 1:
            raise ValueError(f"GPT: dropout must be a number in [0, 1), got {dropout!r}")
        kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if isinstance(kv_heads, bool) or not isinstance(kv_heads, int) or kv_heads < 1:
            raise ValueError(f"GPT: num_kv_heads must be None or an int >= 1, got {num_kv_heads!r}")
        if num_heads % kv_heads:
            raise ValueError(f"GPT: num_heads={num_heads} must be a multiple of num_kv_heads={kv_heads}: "
                             "every key/value head serves an equal group of query heads")
        if positions == "rope" and (d_model // num_heads) % 2:
            raise ValueError(f"GPT: positions='rope' rotates pairs of dimensions, so each head's width "
                             f"d_model / num_heads = {d_model}/{num_heads} = {d_model // num_heads} must "
                             "be even")
        if isinstance(rope_base, bool) or not isinstance(rope_base, int | float) or not 1 < rope_base < math.inf:
            raise ValueError(f"GPT: rope_base must be a finite number > 1, got {rope_base!r}")
        if rope_base != 10000.0 and positions != "rope":
            raise ValueError(f"GPT: rope_base={rope_base!r} sets RoPE's base, but this model has "
                             f"positions={positions!r}; use positions='rope'")
        self.modern = (kv_heads != num_heads or norm != "layer" or qk_norm or positions in ("rope", "none")
                       or activation != "relu" or not bias)
        self.set_window(window, sinks)
        self.vocab_size, self.d_model, self.max_len = vocab_size, d_model, max_len
        self.config = {"vocab_size": vocab_size, "d_model": d_model, "num_heads": num_heads,
                       "num_layers": num_layers, "d_ff": d_ff, "max_len": max_len, "dropout": dropout,
                       "tie_weights": tie_weights, "num_kv_heads": kv_heads, "norm": norm,
                       "qk_norm": qk_norm, "positions": positions}
        if activation != "relu" or norm_eps != 1e-6 or not bias:  # old cache keys stay valid
            self.config.update(activation=activation, norm_eps=norm_eps, bias=bias)
        if rope_base != 10000.0:
            self.config["rope_base"] = float(rope_base)
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
                ModernBlock(d_model, num_heads, kv_heads, d_ff, dropout, norm, qk_norm, positions == "rope",
                            activation, norm_eps, bias, rope_base)
                for _ in range(num_layers))
        else:
            self.blocks = nn.ModuleList(GPTBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.norm = _make_norm(norm, d_model, norm_eps, bias)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_embed.weight
        self.apply(self._init_weights)

    @classmethod
    def from_config(cls, config: dict) -> GPT:
        """A new model with the architecture ``config`` describes (the keyword arguments of
        ``GPT(...)``, as ``model.config`` holds them): ``GPT.from_config(model.config)`` builds a
        model of the same shape, with fresh weights."""
        if not isinstance(config, dict):
            raise TypeError(f"GPT.from_config: config must be a dict of GPT's arguments, got "
                            f"{type(config).__name__}")
        known = set(inspect.signature(cls.__init__).parameters) - {"self"}
        unknown = sorted(set(config) - known)
        if unknown:
            raise ValueError(f"GPT.from_config: config has keys {unknown} that GPT does not take; "
                             f"expected some of {sorted(known)}")
        return cls(**config)

    @property
    def streams(self) -> bool:
        """Whether sequences may be longer than ``max_len``: no absolute position table, and a
        window that keeps the cache (and every query's view) of fixed size."""
        return self.config["positions"] in ("rope", "none") and self.window is not None

    def set_window(self, window: int | None, sinks: int = 0, sink_positions: str = "cache") -> GPT:
        """Use sliding-window attention (``window`` latest positions, plus the first ``sinks``
        ones) from now on; ``window=None`` is full causal attention. Returns the model.

        With RoPE, ``sink_positions="cache"`` (StreamingLLM) rotates the sinks as if they stood
        just before the window, whatever the position of the query; ``"absolute"`` keeps their own
        positions, so a query far down the stream sees them at an offset never met in training."""
        _check_window(window, sinks, "GPT")
        if sink_positions not in SINK_POSITIONS:
            raise ValueError(f"GPT.set_window: sink_positions must be one of {SINK_POSITIONS}, got "
                             f"{sink_positions!r}")
        self.window, self.sinks, self.sink_positions = window, sinks, sink_positions
        return self

    def set_rope_scaling(self, method: str | None = None, factor: float = 1.0) -> GPT:
        """Stretch RoPE to ``factor`` times the trained length, without training: ``"pi"``
        (position interpolation: every position divided by ``factor``), ``"ntk"`` (NTK-aware:
        the base multiplied by factor^(d_k / (d_k - 2))), or None (plain RoPE). Returns the model."""
        if self.config["positions"] != "rope":
            raise ValueError(f"GPT.set_rope_scaling: the model has positions={self.config['positions']!r}; "
                             "scaling needs positions='rope'")
        if method not in ROPE_SCALINGS:
            raise ValueError(f"GPT.set_rope_scaling: method must be one of {ROPE_SCALINGS}, got {method!r}")
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not 1 <= factor < math.inf:
            raise ValueError(f"GPT.set_rope_scaling: factor must be a number >= 1, got {factor!r}")
        if method == "ntk":
            attn = self.blocks[0].self_attn
            d = attn.head_dim
            if d <= 2:
                raise ValueError(f"GPT.set_rope_scaling: 'ntk' multiplies the base by factor^(d_k / (d_k - 2)), "
                                 f"which needs a head width d_k > 2; this model's is {d}: use 'pi'")
            try:
                new_base = attn.rope_base * float(factor) ** (d / (d - 2))
            except OverflowError:
                new_base = math.inf
            if not math.isfinite(new_base):
                raise ValueError(f"GPT.set_rope_scaling: factor={factor!r} makes the NTK base "
                                 f"{attn.rope_base:g} * factor^({d}/{d - 2}) overflow; use a smaller factor")
        for block in self.blocks:
            block.self_attn.rope_scaling, block.self_attn.rope_factor = method, float(factor)
        return self

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # GPT-2's initialisation: small normal weights, zero biases.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def _check_ids(self, ids, where: str = "GPT") -> None:
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[1] < 1:
            got = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"{where}: ids must be token ids of shape (B, L) with L >= 1, got {got}")
        if ids.shape[0] < 1:
            raise ValueError(f"{where}: ids is an empty batch of shape {tuple(ids.shape)}; give at least one "
                             "sequence, shape (B, L) with B >= 1")
        if ids.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"ids must hold integer token ids (torch.long), got {ids.dtype}")
        if ids.device.type == "meta":  # shapes only: no values to check
            return
        if int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size:
            raise ValueError(f"ids hold values in {int(ids.min())}..{int(ids.max())}, but the vocabulary "
                             f"has {self.vocab_size} tokens (ids 0..{self.vocab_size - 1})")

    def _check_cache(self, cache) -> None:
        n = len(self.blocks)
        if not isinstance(cache, list | tuple) or len(cache) != n or not all(isinstance(c, KVCache) for c in cache):
            got = (f"a {type(cache).__name__}" if not isinstance(cache, list | tuple)
                   else f"a {type(cache).__name__} of {len(cache)} items")
            raise ValueError(f"GPT: cache must be a list of {n} KVCaches, one per block (model.new_cache()), "
                             f"got {got}")
        if self.window is not None and not all(isinstance(c, RollingKVCache) and c.window == self.window
                                               and c.sinks == self.sinks for c in cache):
            raise ValueError(f"GPT: the model has window={self.window}, sinks={self.sinks}: its cache must be "
                             "model.new_cache() (RollingKVCaches of that window), made after set_window")
        starts = {_cache_start(c) for c in cache}
        if len(starts) != 1:
            raise ValueError(f"GPT: the caches of the blocks hold different lengths {sorted(starts)}; use one "
                             "model.new_cache() per sequence batch")

    def new_cache(self, capacity: int | None = None) -> list[KVCache]:
        """One empty key/value cache per block, for ``forward(..., cache=...)``: a
        ``RollingKVCache`` of fixed size when the model has a window, else a growing ``KVCache``
        (or, with ``capacity``, a ``PreallocatedKVCache`` with room for that many positions)."""
        if self.window is not None:
            if capacity is not None:
                raise ValueError("GPT.new_cache: a model with a window uses a RollingKVCache of fixed size; "
                                 "capacity is for full attention")
            return [RollingKVCache(self.window, self.sinks) for _ in self.blocks]
        if capacity is not None:
            return [PreallocatedKVCache(capacity) for _ in self.blocks]
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

    def _check_length(self, total: int, what: str) -> None:
        if total > self.max_len and not self.streams:
            positions = self.config["positions"]
            why = ("its learned position table has max_len rows" if positions == "learned" else
                   "its sinusoidal table has max_len rows" if positions == "sinusoidal" else
                   "without a window every query sees the whole sequence, as in training")
            raise ValueError(f"{what} of {total} tokens is longer than max_len={self.max_len}: {why}. "
                             "Only a model with positions='rope' or 'none' and a window goes further")

    def forward(self, ids: torch.Tensor, cache: list[KVCache] | None = None,
                need_weights: bool = False) -> torch.Tensor:
        """ids (B, L) -> logits (B, L, vocab_size). With a ``cache``, ``ids`` are the new tokens:
        their positions continue after the cached ones, and they attend to the cache too."""
        self._check_ids(ids)
        if cache is not None:
            self._check_cache(cache)
        start = 0 if cache is None else _cache_start(cache[0])
        length = ids.shape[1]
        self._check_length(start + length, "a sequence")
        x = self.dropout(self.positions(self.tok_embed(ids), start))  # (B, L) -> (B, L, d_model)
        mask = self._mask(start, length, cache, ids.device)
        for i, block in enumerate(self.blocks):
            layer_cache = None if cache is None else cache[i]
            if self.modern:
                x = block(x, mask, cache=layer_cache, start=start, need_weights=need_weights,
                          window=self.window, sinks=self.sinks, sink_positions=self.sink_positions)
            else:
                x = block(x, mask, need_weights=need_weights, cache=layer_cache)
        return self.lm_head(self.norm(x))  # (B, L, d_model) -> (B, L, vocab_size)

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, use_cache: bool = True,
                 generator: torch.Generator | None = None, suppress: Sequence[int] = ()) -> torch.Tensor:
        """Continue the prompts ``ids`` (B, L0) by ``max_new_tokens`` sampled tokens ->
        (B, L0 + max_new_tokens). ``temperature=0`` is greedy. With ``use_cache`` each step feeds
        only the newest token and reuses the cached keys and values (same ids, less work).
        ``suppress``: token ids that are never generated (e.g. padding, or the start token)."""
        self._check_ids(ids, "GPT.generate")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
        banned = _suppress_ids(suppress, self.vocab_size)
        check_settings(temperature, top_k, top_p)  # also when no token is generated
        self._check_length(ids.shape[1] + max_new_tokens, f"a prompt of {ids.shape[1]} tokens plus "
                           f"{max_new_tokens} new ones")
        was_training = self.training
        self.eval()
        cache = self.new_cache() if use_cache else None
        step_input = ids
        for _ in range(max_new_tokens):
            logits = self(step_input if use_cache else ids, cache=cache)[:, -1]  # (B, |V|)
            if banned:
                logits[:, banned] = float("-inf")  # never generated
            nxt = sample_next(logits, temperature, top_k, top_p, generator)  # (B,)
            ids = torch.cat([ids, nxt[:, None]], dim=1)  # (B, L) -> (B, L + 1)
            step_input = nxt[:, None]  # (B,) -> (B, 1)
        self.train(was_training)
        return ids


def _suppress_ids(suppress, vocab_size: int) -> list[int]:
    if isinstance(suppress, str | bytes):
        raise TypeError(f"GPT.generate: suppress must be a sequence of token ids (ints), got the string "
                        f"{suppress!r}")
    try:
        items = list(suppress)
    except TypeError:
        raise TypeError(f"GPT.generate: suppress must be a sequence of token ids, got {suppress!r}") from None
    banned = []
    for k, i in enumerate(items):  # an id is an int: 1.5 or True would silently be id 1
        is_bool = isinstance(i, bool) or (isinstance(i, torch.Tensor) and i.dtype == torch.bool)
        try:
            if is_bool:
                raise TypeError
            banned.append(operator.index(i))
        except TypeError:
            raise TypeError(f"GPT.generate: suppress must hold token ids (ints), but suppress[{k}] is "
                            f"{type(i).__name__} {i!r}") from None
    bad = [i for i in banned if not 0 <= i < vocab_size]
    if bad:
        raise ValueError(f"GPT.generate: suppress holds ids {bad} outside the vocabulary 0..{vocab_size - 1}")
    if len(set(banned)) >= vocab_size:
        raise ValueError("GPT.generate: suppress bans every token of the vocabulary: nothing can be generated")
    return sorted(set(banned))


@torch.no_grad()
def complete_greedy(model: GPT, prompts: Sequence[Sequence[int]], max_new_tokens: int,
                    suppress: Sequence[int] = ()) -> list[list[int]]:
    """Greedy continuations of prompts of any lengths: prompts of equal length are batched
    together (no padding needed). Returns the new ids of each prompt, in the prompts' order.
    ``suppress``: ids never generated (``GPT.generate``), e.g. padding and the start token."""
    if len(prompts) == 0:
        raise ValueError("complete_greedy: prompts is empty; give at least one prompt (a list of ids)")
    device = next(model.parameters()).device
    by_len: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_len.setdefault(len(p), []).append(i)
    out: list[list[int]] = [[] for _ in prompts]
    for length, rows in by_len.items():
        ids = torch.tensor([list(prompts[i]) for i in rows], device=device)  # (B, length)
        new = model.generate(ids, max_new_tokens, temperature=0, suppress=suppress)[:, length:]  # (B, new)
        for i, r in zip(rows, new.tolist(), strict=True):
            out[i] = r
    return out


def sample_sentences(model, n: int, temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None, prompt: str = "", seed: int = 0,
                     max_new_tokens: int = 16) -> list[str]:
    """``n`` sentences sampled from ``model`` after the start token '.' and the (optional)
    ``prompt`` words: each is the prompt plus the generated words up to the first '.' (kept).
    A sample that reaches no '.' within ``max_new_tokens`` is returned without one.

    ``<pad>`` is never generated (it only ever fills the end of a training row), so every word of
    a sample is one the model chose; each id is written out as it is (nothing is dropped)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"sample_sentences: n must be an int >= 1 (how many sentences), got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"sample_sentences: seed must be an int (it seeds the sampler), got {seed!r}")
    if getattr(model, "vocab_size", None) != len(tl.VOCAB):
        raise ValueError(f"sample_sentences: the model must be a GPT over the toy language's {len(tl.VOCAB)} "
                         f"tokens (tl.VOCAB), got one with vocab_size={getattr(model, 'vocab_size', None)!r}")
    device = next(model.parameters()).device
    prompt_ids = [1] + tl.encode(prompt)  # "." starts every prompt, like the training rows
    ids = torch.tensor([prompt_ids] * n, device=device)  # (n, L0)
    gen = torch.Generator(device=device).manual_seed(seed)
    out = model.generate(ids, max_new_tokens, temperature, top_k, top_p, generator=gen, suppress=[0])
    texts = []
    for row in out[:, 1:].tolist():
        words = [tl.VOCAB[i] for i in row]  # every generated id, none skipped
        if "." in words[len(prompt_ids) - 1:]:
            words = words[: words.index(".", len(prompt_ids) - 1) + 1]  # up to the first '.'
        texts.append(" ".join(words).replace(" .", "."))
    return texts


def forward_flops(model: GPT, length: int) -> int:
    """Multiply-adds x 2 of ``model(ids)`` on one sequence of ``length`` tokens: every matrix
    product, as PyTorch's ``FlopCounterMode`` counts them (embedding lookups, norms, softmax and
    additions are not counted; they are a small share). Per block: the projections and the
    feed-forward network (2 FLOPs per weight per token) and attention's two products
    Q K^T and A V (2 * L * L * d_model each: the full L x L matrix is computed, then masked),
    and with RoPE, a window and sinks the sinks' second product (``_sink_flops``).
    Plus the output layer (2 * d_model * |V| per token). (Notebook 12's blocks compute attention
    with ``F.scaled_dot_product_attention``, whose fused CPU kernel ``FlopCounterMode`` does not
    see: on a CPU it reports their two attention products as zero.)"""
    _check_gpt("forward_flops", model)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"forward_flops: length must be an int >= 1, got {length!r}")
    per_token = 2 * _matmul_weights(model)
    attention = len(model.blocks) * 2 * 2 * length * length * model.d_model
    return per_token * length + attention + len(model.blocks) * _sink_flops(model, length)


def _sink_flops(model: GPT, length: int) -> int:
    """With RoPE, a window and sinks at StreamingLLM's positions, a forward pass over ``length``
    tokens scores the sink keys a second time, with each query rotated to its place in the
    cache: one more product Q K_sinks^T (2 * length * sinks * d_model per layer)."""
    if not (model.config["positions"] == "rope" and model.window is not None and model.sinks
            and model.sink_positions == "cache"):
        return 0
    return 2 * length * min(model.sinks, length) * model.d_model


def _check_gpt(where: str, model) -> None:
    if not isinstance(model, GPT):
        raise TypeError(f"{where}: model must be a helpers.GPT (the count follows its blocks), got "
                        f"{type(model).__name__}")


def flops_per_token(model: GPT, context: int, training: bool = False) -> int:
    """FLOPs to process one token at position ``context`` - 1 with a KV cache (the token attends
    to ``context`` keys, or with a window to at most ``window + sinks``, all its rolling cache
    holds): 2 per weight it multiplies (about 2 N) plus attention's 2 * 2 * keys * d_model per
    layer, as ``FlopCounterMode`` counts them. ``training=True``: 3 times that (the backward pass costs
    twice the forward), i.e. about 6 N per token."""
    _check_gpt("flops_per_token", model)
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise ValueError(f"flops_per_token: context must be an int >= 1, got {context!r}")
    if not isinstance(training, bool):
        raise TypeError(f"flops_per_token: training must be True or False, got {training!r}")
    keys = context if model.window is None else min(context, model.window + model.sinks)
    forward = 2 * _matmul_weights(model) + len(model.blocks) * 2 * 2 * keys * model.d_model
    return 3 * forward if training else forward


def _matmul_weights(model: GPT) -> int:
    """Weights that multiply every token: the Linear layers' (the output layer included, once
    even when tied), not the embedding tables (a lookup) nor biases and norms."""
    seen, total = set(), 0
    for module in model.modules():
        if isinstance(module, nn.Linear) and id(module.weight) not in seen:
            seen.add(id(module.weight))
            total += module.weight.numel()
    return total
