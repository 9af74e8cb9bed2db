"""Attention as today's language models use it (notebook 13): grouped-query and multi-query
attention, RMSNorm and QK-norm, sliding windows with attention sinks and their rolling KV cache,
and the memory a KV cache takes (a formula, and the bytes a real cache holds).

``ModernAttention`` (a ``GroupedQueryAttention`` with a KV cache, RoPE and QK-norm) and
``ModernBlock`` are what ``helpers.GPT`` builds when one of these options is asked for. RoPE's two
pairing conventions live with the other positions, in ``helpers.positional``.

Masks follow the rest of ``helpers``: boolean, True = may attend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import as_bool, bool_mask, floating, int_at_least, mask_fits, module_input
from .attention import KVCache, check_mask
from .layers import FeedForward
from .positional import apply_rope

__all__ = [
    "ACTIVATIONS",
    "KV_DTYPES",
    "NORMS",
    "ROPE_SCALINGS",
    "SINK_POSITIONS",
    "GroupedQueryAttention",
    "ModernAttention",
    "ModernBlock",
    "PreallocatedKVCache",
    "RMSNorm",
    "RollingKVCache",
    "SwiGLU",
    "cache_nbytes",
    "decode_step_cost",
    "kv_cache_bytes",
    "kv_cache_curves",
    "max_attention_logit",
    "sliding_window_mask",
    "window_sink_mask",
]


def sliding_window_mask(n: int, window: int, device=None) -> torch.Tensor:
    """(n, n) bool, True where position i may attend to j: 0 <= i - j < window (causal and banded).

    With ``window >= n`` it equals the causal mask.
    """
    int_at_least("sliding_window_mask", "n", n, 1)
    int_at_least("sliding_window_mask", "window", window, 1)
    i = torch.arange(n, device=device)[:, None]
    j = torch.arange(n, device=device)[None, :]
    return (i - j >= 0) & (i - j < window)


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, seq_len: int,
                   batch_size: int = 1, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of a KV cache: layers x 2 (keys and values) x kv_heads x head_dim x L x B x bytes."""
    func = "kv_cache_bytes"
    for name, value in (("num_layers", num_layers), ("num_kv_heads", num_kv_heads),
                        ("head_dim", head_dim), ("batch_size", batch_size)):
        int_at_least(func, name, value, 1)
    int_at_least(func, "seq_len", seq_len, 0)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{func}: dtype must be a torch.dtype such as torch.float16, got {dtype!r}")
    itemsize = torch.empty((), dtype=dtype).element_size()
    return num_layers * 2 * num_kv_heads * head_dim * seq_len * batch_size * itemsize


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dimension (no mean subtracted, no bias)."""

    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        int_at_least("RMSNorm", "d", d, 1)
        if not isinstance(eps, int | float) or isinstance(eps, bool) or not 0 < eps < math.inf:
            raise ValueError(f"RMSNorm: eps must be a finite number > 0, got {eps!r}")
        self.d, self.eps = d, float(eps)
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != self.d:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"RMSNorm: x must have last dimension d={self.d}, got {got}")
        if not x.is_floating_point():
            raise TypeError(f"RMSNorm: x must be a floating-point tensor, got {x.dtype}")
        if x.device != self.weight.device:
            raise ValueError(f"RMSNorm: x is on device {x.device} but the weight is on "
                             f"{self.weight.device}; expected x.to({str(self.weight.device)!r}) or module.to(...)")
        # The statistic in float32 (float64 for float64 x), as nn.RMSNorm does: in float16 one
        # value >= 256 squares to inf and would zero its whole row. A row whose squares overflow
        # even there (|x| > 1.8e19 in float32) is divided by its largest |x| first: the same
        # x / rms(x), with no inf on the way (other rows are computed exactly as before).
        wide = x.to(torch.promote_types(x.dtype, torch.float32))
        mean_sq = wide.pow(2).mean(-1, keepdim=True)  # (..., 1)
        overflow = torch.isinf(mean_sq) & torch.isfinite(wide).all(-1, keepdim=True)
        scale = torch.where(overflow, wide.abs().amax(-1, keepdim=True), torch.ones_like(mean_sq))
        mean_sq = torch.where(overflow, (wide / scale).pow(2).mean(-1, keepdim=True), mean_sq)
        rms = torch.rsqrt(mean_sq + self.eps / scale.pow(2)) / scale  # (..., 1)
        out = wide * rms * self.weight.to(wide.dtype)
        return out.to(torch.promote_types(x.dtype, self.weight.dtype))


class GroupedQueryAttention(nn.Module):
    """Multi-head attention whose ``num_kv_heads`` key/value heads are shared by groups of
    ``num_heads // num_kv_heads`` query heads: ``num_kv_heads == num_heads`` is multi-head
    attention, ``num_kv_heads == 1`` multi-query attention.

    ``forward(query, key, value, mask=None)``: query (B, Lq, d_model), key and value
    (B, Lk, d_model), mask boolean broadcastable to (B, h, Lq, Lk) with True = may attend ->
    (B, Lq, d_model).
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, bias: bool = True):
        super().__init__()
        func = "GroupedQueryAttention"
        int_at_least(func, "d_model", d_model, 1)
        int_at_least(func, "num_heads", num_heads, 1)
        int_at_least(func, "num_kv_heads", num_kv_heads, 1)
        as_bool(func, "bias", bias)
        if d_model % num_heads:
            raise ValueError(f"{func}: d_model={d_model} is not divisible by num_heads={num_heads}")
        if num_heads % num_kv_heads:
            raise ValueError(f"{func}: num_heads={num_heads} must be a multiple of num_kv_heads="
                             f"{num_kv_heads}: every key/value head serves an equal group of query heads")
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, num_kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(d_model, num_kv_heads * self.head_dim, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _heads(self, x: torch.Tensor, n: int) -> torch.Tensor:
        b, length, _ = x.shape
        return x.view(b, length, n, self.head_dim).transpose(1, 2)  # (B, n, L, head_dim)

    def _check_inputs(self, query, key, value, where: str) -> None:
        """query, key, value (B, L, d_model), floating point, with the weights' dtype and device."""
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != self.d_model:
                got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
                raise ValueError(f"{where}: {name} must have shape (B, L, d_model={self.d_model}), got {got}")
            floating(where, name, t)
            module_input(where, name, t, self)
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ValueError(f"{where}: query {tuple(query.shape)}, key {tuple(key.shape)} and value "
                             f"{tuple(value.shape)} must share B, and key and value must share Lk")

    def _check_mask(self, mask, b: int, lq: int, lk: int, where: str) -> torch.Tensor:
        """The mask as (B or 1, h or 1, Lq or 1, Lk or 1), by MultiHeadAttention's rule (notebook
        04): (Lq, Lk) for every example and head, (B, Lq, Lk) per example (the same for every
        head), or (B, h, Lq, Lk)."""
        bool_mask(where, mask)
        if mask.dim() > 4:
            raise ValueError(f"{where}: mask must be (Lq, Lk), (B, Lq, Lk) or (B, h, Lq, Lk), got shape "
                             f"{tuple(mask.shape)}")
        if mask.dim() == 3:
            mask = mask[:, None]  # (B, 1, Lq, Lk): one example's mask for all its heads
        check_mask(mask, (b, self.num_heads, lq, lk), where, self.q_proj.weight.device)
        return mask

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        func = "GroupedQueryAttention"
        self._check_inputs(query, key, value, func)
        if mask is not None:
            mask = self._check_mask(mask, query.shape[0], query.shape[1], key.shape[1], func)
        q = self._heads(self.q_proj(query), self.num_heads)  # (B, h, Lq, head_dim)
        k = self._heads(self.k_proj(key), self.num_kv_heads)  # (B, h_kv, Lk, head_dim)
        v = self._heads(self.v_proj(value), self.num_kv_heads)  # (B, h_kv, Lk, head_dim)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(group, dim=1)  # (B, h, Lk, head_dim): query head i reads kv head i // group
        v = v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, h, Lq, Lk)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)  # empty rows: zeros
        out = (weights @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], self.d_model)
        return self.out_proj(out)  # (B, Lq, d_model)



def decode_step_cost(num_params: int, num_layers: int, num_heads: int, num_kv_heads: int, head_dim: int,
                     context: int, new_tokens: int = 1, batch_size: int = 1,
                     dtype: torch.dtype = torch.float16) -> dict[str, int | float]:
    """What one forward step of ``batch_size`` sequences computes and reads from memory when each
    feeds ``new_tokens`` tokens (1: a decoding step; the prompt's length: prefill) after
    ``context`` cached ones:

    - ``flops``: 2 per weight per new token (``num_params`` weights that multiply every token) plus
      attention's two products, 2 * 2 * h * d_k per layer and per (new token, key) pair that the
      causal mask allows: the new token at place t (0, 1, ...) sees context + t + 1 keys, so the
      pairs are new * context + new * (new + 1) / 2 (context + 1 for a decoding step; a prefill's
      queries see (new + 1) / 2 keys on average);
    - ``weight_bytes``: every weight is read once per step, whatever the batch;
    - ``kv_bytes``: the cache read (``context`` positions) and written (the new ones), per sequence;
    - ``intensity``: flops per byte read or written. A processor that does F FLOPs in the time it
      moves one byte is limited by memory below F FLOPs/byte, by arithmetic above.
    """
    func = "decode_step_cost"
    for name, value, low in (("num_params", num_params, 1), ("num_layers", num_layers, 1),
                             ("num_heads", num_heads, 1), ("num_kv_heads", num_kv_heads, 1),
                             ("head_dim", head_dim, 1), ("context", context, 0),
                             ("new_tokens", new_tokens, 1), ("batch_size", batch_size, 1)):
        int_at_least(func, name, value, low)
    if num_heads % num_kv_heads:
        raise ValueError(f"{func}: num_heads={num_heads} must be a multiple of num_kv_heads={num_kv_heads}")
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{func}: dtype must be a torch.dtype such as torch.float16, got {dtype!r}")
    itemsize = torch.empty((), dtype=dtype).element_size()
    keys = context + new_tokens
    pairs = new_tokens * context + new_tokens * (new_tokens + 1) // 2  # (query, key) pairs under the causal mask
    flops = batch_size * (new_tokens * 2 * num_params + num_layers * 2 * 2 * num_heads * head_dim * pairs)
    weight_bytes = num_params * itemsize
    kv_bytes = kv_cache_bytes(num_layers, num_kv_heads, head_dim, keys, batch_size, dtype)
    return {"flops": flops, "weight_bytes": weight_bytes, "kv_bytes": kv_bytes,
            "intensity": flops / (weight_bytes + kv_bytes)}

KV_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16,
             "int8": torch.int8}


def kv_cache_curves(num_layers: int, num_heads: int, head_dim: int, num_kv_heads: int,
                    max_context: int, batch_size: int = 1, dtype: str = "float16",
                    window: int = 0, points: int = 64) -> dict[str, tuple[list[int], list[int]]]:
    """KV-cache bytes against the context length L = 0..max_context for multi-head (``num_heads``
    kv heads), grouped-query (``num_kv_heads``) and multi-query (1) attention; with ``window`` > 0
    also for grouped-query attention with a sliding window (the cache holds min(L, window)
    positions). Returns {label: (lengths, bytes)}."""
    func = "kv_cache_curves"
    for name, value in (("num_layers", num_layers), ("num_heads", num_heads), ("head_dim", head_dim),
                        ("num_kv_heads", num_kv_heads), ("max_context", max_context),
                        ("batch_size", batch_size), ("points", points)):
        int_at_least(func, name, value, 1)
    int_at_least(func, "window", window, 0)
    if num_heads % num_kv_heads:
        raise ValueError(f"{func}: num_heads={num_heads} must be a multiple of num_kv_heads={num_kv_heads}")
    if dtype not in KV_DTYPES:
        raise ValueError(f"{func}: dtype must be one of {list(KV_DTYPES)}, got {dtype!r}")
    lengths = sorted({round(i * max_context / points) for i in range(points + 1)})
    kinds = {f"MHA ({num_heads} kv heads)": num_heads, f"GQA ({num_kv_heads} kv heads)": num_kv_heads,
             "MQA (1 kv head)": 1}
    curves = {label: (lengths, [kv_cache_bytes(num_layers, kv, head_dim, t, batch_size, KV_DTYPES[dtype])
                                for t in lengths]) for label, kv in kinds.items()}
    if window:
        curves[f"GQA + window {window}"] = (lengths, [
            kv_cache_bytes(num_layers, num_kv_heads, head_dim, min(t, window), batch_size, KV_DTYPES[dtype])
            for t in lengths])
    return curves


NORMS = ("layer", "rms")


def window_sink_mask(query_pos: torch.Tensor, key_pos: torch.Tensor, window: int | None,
                     sinks: int = 0) -> torch.Tensor:
    """(Lq, Lk) bool, True where the query at position i may attend to the key at position j:
    j <= i and (i - j < window or j < sinks). ``window=None`` is plain causal attention.
    ``query_pos`` (Lq,) and ``key_pos`` (Lk,) are integer positions (tensors or lists)."""
    func = "window_sink_mask"
    _check_window(window, sinks, func)
    query_pos, key_pos = _positions(func, "query_pos", query_pos), _positions(func, "key_pos", key_pos)
    i, j = query_pos[:, None], key_pos[None, :].to(query_pos.device)
    allowed = j <= i
    if window is not None:
        allowed = allowed & ((i - j < window) | (j < sinks))
    return allowed


def _positions(where: str, name: str, pos) -> torch.Tensor:
    """``pos`` as a 1-D integer tensor of positions, else a clear error."""
    try:
        pos = torch.as_tensor(pos)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{where}: {name} must be a 1-D tensor (or list) of integer positions, got "
                        f"{type(pos).__name__}") from None
    if pos.dim() != 1 or pos.dtype == torch.bool or pos.is_floating_point() or pos.is_complex():
        raise TypeError(f"{where}: {name} must be a 1-D tensor (or list) of integer positions, got "
                        f"shape {tuple(pos.shape)} and dtype {pos.dtype}")
    return pos


class RollingKVCache(KVCache):
    """A KV cache of fixed size for sliding-window attention with ``sinks`` attention sinks.

    ``update(k, v)`` returns the stored keys and values followed by the new ones (what the new
    queries may need), then keeps only what a later query can still attend to: the first ``sinks``
    positions and the last ``window - 1`` ones. So it never holds more than ``sinks + window - 1``
    positions between steps, however long the sequence. ``positions`` are the absolute positions of
    the stored keys, ``seen`` how many tokens went through the cache, ``key_positions`` the
    absolute positions of the keys the last ``update`` returned.

    With RoPE the attention stores keys here *before* rotating them and rotates them by their
    place in the cache (sinks first, then the window), as StreamingLLM does: the cache holds no
    trace of how far the stream has gone.
    """

    def __init__(self, window: int, sinks: int = 0):
        super().__init__()
        if window is None:
            raise ValueError("RollingKVCache: window must be an int >= 1 (the positions a query sees), "
                             "got None; for full attention use a KVCache")
        _check_window(window, sinks, "RollingKVCache")
        self.window, self.sinks, self.seen = window, sinks, 0
        self.positions = torch.zeros(0, dtype=torch.long)  # (L_stored,)
        self.key_positions = torch.zeros(0, dtype=torch.long)  # (L_stored + L_new,) of the last update

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
        self.positions, self.key_positions = pos_all[keep], pos_all
        return k_all, v_all


class PreallocatedKVCache(KVCache):
    """A KV cache that reserves room for ``capacity`` positions at its first update and then
    writes each step's keys and values into that buffer, as inference servers do: no
    ``torch.cat``, so a step copies only the new keys and values, never the whole cache.
    ``k`` and ``v`` are views of the filled part; the memory held is the whole buffer."""

    def __init__(self, capacity: int):
        super().__init__()
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"PreallocatedKVCache: capacity must be an int >= 1, got {capacity!r}")
        self.capacity, self.length = capacity, 0
        self._k: torch.Tensor | None = None
        self._v: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"PreallocatedKVCache(capacity={self.capacity}, length={self.length})"

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if k.dim() != 4 or v.dim() != 4 or k.shape[:3] != v.shape[:3]:
            raise ValueError(f"PreallocatedKVCache.update expects k (B, h, L_new, d_k) and v "
                             f"(B, h, L_new, d_v) with the same (B, h, L_new), got k {tuple(k.shape)} "
                             f"and v {tuple(v.shape)}")
        if self._k is None:
            b, h, _, d_k = k.shape
            self._k = k.new_empty(b, h, self.capacity, d_k)  # (B, h, capacity, d_k)
            self._v = v.new_empty(b, h, self.capacity, v.shape[-1])
        elif k.shape[:2] != self._k.shape[:2] or k.shape[-1] != self._k.shape[-1]:
            raise ValueError(f"new keys {tuple(k.shape)} do not match the cache's buffer "
                             f"{tuple(self._k.shape)}: B, h and d_k must stay the same")
        end = self.length + k.shape[2]
        if end > self.capacity:
            raise ValueError(f"PreallocatedKVCache: {end} positions do not fit its capacity "
                             f"{self.capacity}; make a cache with a larger capacity")
        self._k[:, :, self.length:end] = k  # write the new positions in place
        self._v[:, :, self.length:end] = v
        self.length = end
        self.k, self.v = self._k[:, :, :end], self._v[:, :, :end]  # views: (B, h, L, d_k)
        return self.k, self.v


def cache_nbytes(caches: Sequence[KVCache]) -> int:
    """Bytes of memory really held by the keys and values of a list of caches (one per layer):
    the sizes of the distinct storages behind the cached tensors (a view that keeps a larger
    buffer alive counts with all of it). One cache alone is counted too."""
    if isinstance(caches, KVCache):
        caches = [caches]
    if not isinstance(caches, Sequence) or not all(isinstance(c, KVCache) for c in caches):
        raise TypeError("cache_nbytes: caches must be a KVCache or a list of them (one per layer, as "
                        f"model.new_cache() gives), got {type(caches).__name__}"
                        + ("" if not isinstance(caches, Sequence) else
                           f" holding {sorted({type(c).__name__ for c in caches})}"))
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


ROPE_SCALINGS = (None, "pi", "ntk")
SINK_POSITIONS = ("cache", "absolute")


class ModernAttention(GroupedQueryAttention):
    """``GroupedQueryAttention`` as today's LLMs run it: a KV cache that stores only the
    ``num_kv_heads`` key/value heads, optional RMSNorm of each head's queries and keys
    (``qk_norm``) and optional RoPE (notebook 06's ``apply_rope``).

    ``forward(query, key, value, mask=None, cache=None, start=0, window=None, sinks=0)``: mask
    boolean, True = may attend, (Lq, Lk) (the fast path: no copy of the shared heads), (B, Lq, Lk)
    per example or broadcastable to (B, h, Lq, Lk); ``start`` is the position of the first new
    token. With RoPE, ``window`` and ``sinks``, a query sees the sinks as if they stood just before
    its window (StreamingLLM's positions within the cache; ``sink_positions="absolute"`` keeps
    their own positions instead, so their offset grows with the stream). ``max_logit`` keeps the largest
    attention logit q.k / sqrt(d_k) of the last call (over the pairs the mask allows).

    ``rope_scaling`` (None, "pi" or "ntk") and ``rope_factor`` stretch RoPE to ``rope_factor``
    times the trained length: position interpolation divides every position by the factor;
    NTK-aware scaling multiplies the base by factor^(d_k / (d_k - 2)).
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, qk_norm: bool = False,
                 rope: bool = False, bias: bool = True, norm_eps: float = 1e-6, rope_base: float = 10000.0):
        super().__init__(d_model, num_heads, num_kv_heads, bias)
        as_bool("ModernAttention", "qk_norm", qk_norm)
        as_bool("ModernAttention", "rope", rope)
        self.q_norm = RMSNorm(self.head_dim, eps=norm_eps) if qk_norm else None
        self.k_norm = RMSNorm(self.head_dim, eps=norm_eps) if qk_norm else None
        if isinstance(rope_base, bool) or not isinstance(rope_base, int | float) or not 1 < rope_base < math.inf:
            raise ValueError(f"ModernAttention: rope_base must be a finite number > 1, got {rope_base!r}")
        self.rope, self.rope_base = rope, float(rope_base)
        self.rope_scaling, self.rope_factor = None, 1.0
        self.max_logit: torch.Tensor | None = None
        self.attn_weights: torch.Tensor | None = None

    def _rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """RoPE at ``positions`` (L,), with this layer's scaling: x (B, n, L, d_k) -> same."""
        wide = torch.float64 if x.dtype == torch.float64 else torch.float32  # as apply_rope
        positions = positions.to(device=x.device, dtype=wide)
        if self.rope_scaling == "pi":
            return apply_rope(x, positions / self.rope_factor, self.rope_base)
        if self.rope_scaling == "ntk":
            d = self.head_dim
            return apply_rope(x, positions, self.rope_base * self.rope_factor ** (d / (d - 2)))
        return apply_rope(x, positions, self.rope_base)

    def forward(self, query, key, value, mask=None, cache: KVCache | None = None, start: int = 0,
                need_weights: bool = False, window: int | None = None, sinks: int = 0,
                sink_positions: str = "cache"):
        func = "ModernAttention"
        self._check_inputs(query, key, value, func)
        _check_window(window, sinks, func)
        if sink_positions not in SINK_POSITIONS:
            raise ValueError(f"{func}: sink_positions must be one of {SINK_POSITIONS}, got {sink_positions!r}")
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"{func}: start must be an int >= 0 (the position of the first new token), "
                             f"got {start!r}")
        b, lq, _ = query.shape
        q = self._heads(self.q_proj(query), self.num_heads)  # (B, L, d_model) -> (B, h, Lq, d_k)
        k = self._heads(self.k_proj(key), self.num_kv_heads)  # (B, L, h_kv*d_k) -> (B, h_kv, Lk_new, d_k)
        v = self._heads(self.v_proj(value), self.num_kv_heads)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q_unrotated, sink_keys = q, None
        if self.rope and isinstance(cache, RollingKVCache):
            k, v = cache.update(k, v)  # unrotated keys (B, h_kv, Lk, d_k), sinks first
            if lq == 1 and sink_positions == "cache":  # StreamingLLM: by the place in the cache
                lk = k.shape[2]
                q, k = self._rotate(q, torch.tensor([lk - 1])), self._rotate(k, torch.arange(lk))
            else:  # absolute positions (then, for "cache", the sinks moved up to each query's window)
                q = self._rotate(q, torch.arange(start, start + lq))
                k = self._rotate(k, cache.key_positions)
                sink_keys = int((cache.key_positions < sinks).sum())
        else:
            if self.rope:
                q = self._rotate(q, torch.arange(start, start + lq))
                k = self._rotate(k, torch.arange(start, start + k.shape[2]))
                sink_keys = min(sinks, start + k.shape[2])
            if cache is not None:
                k, v = cache.update(k, v)  # (B, h_kv, Lk, d_k): only the shared heads are stored
        group = self.num_heads // self.num_kv_heads
        lk = k.shape[2]
        if mask is None and window is not None:  # the mask the window implies, by absolute positions
            key_pos = (cache.key_positions if isinstance(cache, RollingKVCache)
                       else torch.arange(start + lq - lk, start + lq))
            implied = window_sink_mask(torch.arange(start, start + lq), key_pos, window, sinks)
            mask = None if bool(implied.all()) else implied.to(q.device)
        qg = q.reshape(b, self.num_kv_heads, group * lq, self.head_dim)  # heads i // group share k, v
        scores = (qg * (1.0 / math.sqrt(self.head_dim))) @ k.transpose(-2, -1)  # (B, h_kv, g*Lq, Lk)
        if sink_keys and window is not None and sink_positions == "cache":  # sink j at offset min(i, s+w-1) - j
            q_pos = torch.arange(start, start + lq).clamp(max=sinks + window - 1)
            q_sink = self._rotate(q_unrotated, q_pos).reshape(b, self.num_kv_heads, group * lq, self.head_dim)
            sink_scores = (q_sink * (1.0 / math.sqrt(self.head_dim))) @ k[:, :, :sink_keys].transpose(-2, -1)
            scores = torch.cat([sink_scores, scores[..., sink_keys:]], dim=-1)  # (B, h_kv, g*Lq, Lk)
        empty_rows = None
        if mask is not None:
            bool_mask("ModernAttention", mask)
            if mask.dim() == 2 and mask.shape == (lq, lk):
                if mask.device != scores.device:
                    raise ValueError(f"ModernAttention: mask is on device {mask.device} but the scores are on "
                                     f"{scores.device}; expected mask.to({str(scores.device)!r})")
                scores = scores.masked_fill(~mask.repeat(group, 1), float("-inf"))
                # a query that may attend to nothing: zeros, not NaN (on 'meta' no value is known)
                if mask.device.type == "meta" or not bool(mask.any(-1).all()):
                    empty_rows = ~mask.any(-1)[None, None, :, None].expand(b, self.num_heads, lq, 1)
            else:  # per example (B, Lq, Lk) or per head: on the (B, h, Lq, Lk) view of the scores
                full = mask[:, None] if mask.dim() == 3 else mask  # (B, Lq, Lk) -> (B, 1, Lq, Lk)
                mask_fits("ModernAttention", full, torch.Size((b, self.num_heads, lq, lk)))
                full = full.expand(b, self.num_heads, lq, lk)
                scores = scores.view(b, self.num_heads, lq, lk).masked_fill(~full, float("-inf"))
                empty_rows = ~full.any(-1, keepdim=True)  # (B, h, Lq, 1): nothing to attend to
                scores = scores.view(b, self.num_kv_heads, group * lq, lk)
        self.max_logit = scores.detach().amax()
        weights = torch.softmax(scores, dim=-1)  # (B, h_kv, g*Lq, Lk)
        if empty_rows is not None:
            weights = weights.view(b, self.num_heads, lq, lk).masked_fill(empty_rows, 0.0)
            weights = weights.view(b, self.num_kv_heads, group * lq, lk)
        self.attn_weights = weights.detach().view(b, self.num_heads, lq, lk) if need_weights else None
        out = (weights @ v).view(b, self.num_heads, lq, self.head_dim)  # (B, h_kv, g*Lq, d_k) -> (B, h, Lq, d_k)
        return self.out_proj(out.transpose(1, 2).reshape(b, lq, self.d_model))  # -> (B, Lq, d_model)


ACTIVATIONS = ("relu", "gelu", "swiglu")


class SwiGLU(nn.Module):
    """The feed-forward network of Llama and most open models since: two input matrices, one
    passed through SiLU as a gate, multiplied element-wise with the other, then an output matrix,
    no bias: x (..., d_model) -> down(SiLU(gate(x)) * up(x)) (..., d_model). Three matrices of
    d_model x d_ff instead of two: the SwiGLU paper and Llama 1 take d_ff about 2/3 of 4 d_model to
    keep the count (Llama 1 7B: 11,008 for d_model 4,096); Llama 3 takes 3.5 d_model (14,336)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        int_at_least("SwiGLU", "d_model", d_model, 1)
        int_at_least("SwiGLU", "d_ff", d_ff, 1)
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d_model = self.gate.in_features
        if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != d_model:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"SwiGLU: x must have last dimension d_model={d_model}, got {got}")
        floating("SwiGLU", "x", x)
        module_input("SwiGLU", "x", x, self)
        gated = F.silu(self.gate(x)) * self.up(x)  # (..., d_model) -> (..., d_ff)
        return self.down(self.dropout(gated))  # (..., d_ff) -> (..., d_model)


class ModernBlock(nn.Module):
    """A pre-norm decoder block with ``ModernAttention``: x = x + Attn(N(x)); x = x + FFN(N(x)),
    N a LayerNorm (``norm="layer"``) or an RMSNorm (``norm="rms"``, eps ``norm_eps``), the FFN
    notebook 07's with ReLU or GELU, or SwiGLU (``activation``); ``rope_base`` is RoPE's base b
    (the angle of pair i at position m is m * b^(-2i/d_k))."""

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, d_ff: int, dropout: float = 0.0,
                 norm: str = "layer", qk_norm: bool = False, rope: bool = False, activation: str = "relu",
                 norm_eps: float = 1e-6, bias: bool = True, rope_base: float = 10000.0):
        super().__init__()
        self.self_attn = ModernAttention(d_model, num_heads, num_kv_heads, qk_norm, rope, bias, norm_eps,
                                         rope_base)
        if activation == "swiglu":
            self.feed_forward = SwiGLU(d_model, d_ff, dropout)
        else:
            self.feed_forward = FeedForward(d_model, d_ff, dropout, activation=activation, bias=bias)
        self.norm1 = _make_norm(norm, d_model, norm_eps, bias)
        self.norm2 = _make_norm(norm, d_model, norm_eps, bias)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, cache: KVCache | None = None,
                start: int = 0, need_weights: bool = False, window: int | None = None,
                sinks: int = 0, sink_positions: str = "cache") -> torch.Tensor:
        h = self.norm1(x)  # (B, L, d_model)
        x = x + self.dropout1(self.self_attn(h, h, h, mask, cache=cache, start=start, need_weights=need_weights,
                                             window=window, sinks=sinks, sink_positions=sink_positions))
        return x + self.dropout2(self.feed_forward(self.norm2(x)))  # (B, L, d_model)


def _make_norm(norm: str, d_model: int, eps: float = 1e-6, bias: bool = True) -> nn.Module:
    """LayerNorm (with its bias unless ``bias=False``) or RMSNorm (which has none)."""
    if norm not in NORMS:
        raise ValueError(f"norm must be 'layer' (LayerNorm) or 'rms' (RMSNorm), got {norm!r}")
    return nn.LayerNorm(d_model, bias=bias) if norm == "layer" else RMSNorm(d_model, eps=eps)


@torch.no_grad()
def max_attention_logit(model: nn.Module, ids: torch.Tensor) -> float:
    """The largest attention logit q.k / sqrt(d_k) of a ``helpers.GPT`` over every layer, head and allowed
    (query, key) pair when ``model`` reads ``ids`` (B, L): how far the softmax is from saturating
    (notebook 02)."""
    if not (isinstance(model, nn.Module) and hasattr(model, "modern") and hasattr(model, "blocks")):
        raise TypeError(f"max_attention_logit: model must be a helpers.GPT, got {type(model).__name__}")
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
