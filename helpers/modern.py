"""Attention as today's language models use it (notebook 13): grouped-query attention, the
sliding-window mask, RMSNorm, the size of the KV cache and RoPE's two pairing conventions.

Masks follow the rest of ``helpers``: boolean, True = may attend.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import bool_mask, mask_fits

__all__ = [
    "KV_DTYPES",
    "GroupedQueryAttention",
    "RMSNorm",
    "extrapolation_plot",
    "interleaved_to_half",
    "kv_cache_bytes",
    "kv_cache_curves",
    "kv_cache_plot",
    "logit_curves_plot",
    "rope_half",
    "sliding_window_mask",
]


def _int(func: str, name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{func}: {name} must be an int, got {type(value).__name__} {value!r}")
    if value < low:
        raise ValueError(f"{func}: {name} must be >= {low}, got {value}")
    return value


def sliding_window_mask(n: int, window: int, device=None) -> torch.Tensor:
    """(n, n) bool, True where position i may attend to j: 0 <= i - j < window (causal and banded).

    With ``window >= n`` it equals the causal mask.
    """
    _int("sliding_window_mask", "n", n, 1)
    _int("sliding_window_mask", "window", window, 1)
    i = torch.arange(n, device=device)[:, None]
    j = torch.arange(n, device=device)[None, :]
    return (i - j >= 0) & (i - j < window)


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, seq_len: int,
                   batch_size: int = 1, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of a KV cache: layers x 2 (keys and values) x kv_heads x head_dim x L x B x bytes."""
    func = "kv_cache_bytes"
    for name, value in (("num_layers", num_layers), ("num_kv_heads", num_kv_heads),
                        ("head_dim", head_dim), ("batch_size", batch_size)):
        _int(func, name, value, 1)
    _int(func, "seq_len", seq_len, 0)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{func}: dtype must be a torch.dtype such as torch.float16, got {dtype!r}")
    itemsize = torch.empty((), dtype=dtype).element_size()
    return num_layers * 2 * num_kv_heads * head_dim * seq_len * batch_size * itemsize


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dimension (no mean subtracted, no bias)."""

    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        _int("RMSNorm", "d", d, 1)
        if not isinstance(eps, int | float) or isinstance(eps, bool) or not eps > 0:
            raise ValueError(f"RMSNorm: eps must be a number > 0, got {eps!r}")
        self.d, self.eps = d, float(eps)
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != self.d:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"RMSNorm: x must have last dimension d={self.d}, got {got}")
        if not x.is_floating_point():
            raise TypeError(f"RMSNorm: x must be a floating-point tensor, got {x.dtype}")
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # (..., 1)
        return x * rms * self.weight


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
        _int(func, "d_model", d_model, 1)
        _int(func, "num_heads", num_heads, 1)
        _int(func, "num_kv_heads", num_kv_heads, 1)
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

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        func = "GroupedQueryAttention"
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != self.d_model:
                got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
                raise ValueError(f"{func}: {name} must have shape (B, L, d_model={self.d_model}), got {got}")
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ValueError(f"{func}: query {tuple(query.shape)}, key {tuple(key.shape)} and value "
                             f"{tuple(value.shape)} must share B, and key and value must share Lk")
        q = self._heads(self.q_proj(query), self.num_heads)  # (B, h, Lq, head_dim)
        k = self._heads(self.k_proj(key), self.num_kv_heads)  # (B, h_kv, Lk, head_dim)
        v = self._heads(self.v_proj(value), self.num_kv_heads)  # (B, h_kv, Lk, head_dim)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(group, dim=1)  # (B, h, Lk, head_dim): query head i reads kv head i // group
        v = v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, h, Lq, Lk)
        if mask is not None:
            bool_mask(func, mask)
            mask_fits(func, mask, scores.shape)
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)  # empty rows: zeros
        out = (weights @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], self.d_model)
        return self.out_proj(out)  # (B, Lq, d_model)


def rope_half(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """RoPE in the half-split convention of much released model code (``rotate_half``): dimension
    i is paired with i + d/2 instead of 2i with 2i + 1. x (..., L, d) -> (..., L, d)."""
    if not isinstance(x, torch.Tensor) or x.dim() < 2 or x.shape[-1] % 2:
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"rope_half: x must be (..., L, d) with an even d, got {got}")
    length, d = x.shape[-2], x.shape[-1]
    pos = torch.arange(length, device=x.device) if positions is None else torch.as_tensor(positions, device=x.device)
    inv_freq = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)  # (d/2,)
    angle = pos.to(torch.float32)[:, None] * inv_freq  # (L, d/2)
    cos = torch.cat([angle.cos(), angle.cos()], -1).to(x.dtype)  # (L, d)
    sin = torch.cat([angle.sin(), angle.sin()], -1).to(x.dtype)
    first, second = x[..., : d // 2], x[..., d // 2:]
    rotated_half = torch.cat([-second, first], dim=-1)  # rotate_half
    return x * cos + rotated_half * sin


def interleaved_to_half(d: int) -> torch.Tensor:
    """The permutation ``perm`` of the features with ``rope_half(x[..., perm]) ==
    apply_rope(x)[..., perm]``: even features first, then odd ones."""
    _int("interleaved_to_half", "d", d, 2)
    if d % 2:
        raise ValueError(f"interleaved_to_half: d must be even, got {d}")
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])


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
        _int(func, name, value, 1)
    _int(func, "window", window, 0)
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


UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def kv_cache_plot(curves: dict[str, tuple[list[int], list[int]]], ax=None, title: str | None = None,
                  unit: str = "GiB"):
    """Lines of KV-cache size (in ``unit``) against the context length, one per entry of ``curves``."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    if unit not in UNITS:
        raise ValueError(f"kv_cache_plot: unit must be one of {list(UNITS)}, got {unit!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    colors = mpl.colormaps["viridis"]([0.1, 0.45, 0.75, 0.9])
    styles = ["-", "--", "-.", ":"]
    for i, (label, (lengths, sizes)) in enumerate(curves.items()):
        ax.plot(lengths, [s / UNITS[unit] for s in sizes], styles[i % 4], color=colors[i % 4], lw=2,
                label=label)
    ax.set_xlabel("context length L (tokens)")
    ax.set_ylabel(f"KV cache ({unit})")
    ax.set_ylim(bottom=0)
    ax.legend()
    if title:
        ax.set_title(title)
    return ax.figure


def extrapolation_plot(lengths, losses: dict[str, list[float]], trained_len: int, best: float | None = None,
                       ax=None):
    """Validation loss against the sequence length, one line per kind of positions; a dotted line
    at the trained length and, if given, a dashed line at the best possible loss."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    colors = mpl.colormaps["viridis"]([0.1, 0.5, 0.85])
    for i, (label, values) in enumerate(losses.items()):
        if len(values) != len(lengths):
            raise ValueError(f"extrapolation_plot: {label!r} has {len(values)} losses for {len(lengths)} lengths")
        ax.plot(lengths, values, marker="osD"[i % 3], color=colors[i % 3], lw=2, label=label)
    ax.axvline(trained_len, color="0.5", ls=":", label=f"trained length {trained_len}")
    if best is not None:
        ax.axhline(best, color="0.3", ls="--", lw=1, label="best possible")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(lengths), [str(t) for t in lengths])
    ax.set_xlabel("sequence length L (tokens)")
    ax.set_ylabel("validation loss (nats/token)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)  # beside the lines
    return ax.figure


def logit_curves_plot(steps, series: dict[str, list[float]], ax=None):
    """The largest attention logit during training, one line per model (notebook 13's QK-norm)."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.4))
    colors = mpl.colormaps["viridis"]([0.1, 0.5, 0.85])
    for i, (label, values) in enumerate(series.items()):
        if len(values) != len(steps):
            raise ValueError(f"logit_curves_plot: {label!r} has {len(values)} values for {len(steps)} steps")
        ax.plot(steps, values, marker="osD"[i % 3], color=colors[i % 3], lw=2, label=label)
    ax.set_xlabel("training step")
    ax.set_ylabel(r"largest logit $q \cdot k / \sqrt{d_k}$")
    ax.set_ylim(bottom=0)
    ax.legend()
    return ax.figure
