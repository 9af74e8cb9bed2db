"""Every way of giving attention the order of the tokens (notebook 06, used again in 12 and 13):

- added to the embeddings: the sinusoidal table (``sinusoidal_positional_encoding``,
  ``PositionalEncoding``), learned vectors (``LearnedPositions``), or nothing (``NoPositions``);
  ``SinusoidalPositions`` is notebook 09's scaled-embeddings-plus-table as a GPT position hook;
- rotary position embedding (RoPE), which rotates queries and keys instead, in its two pairing
  conventions: interleaved pairs (2i, 2i + 1) (``apply_rope``, the original paper's) and half-split
  pairs (i, i + d/2) (``rope_half``, much released model code), with the permutation between them
  (``interleaved_to_half``).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from . import _checks

__all__ = ["LearnedPositions", "NoPositions", "PositionalEncoding", "SinusoidalPositions", "apply_rope",
           "interleaved_to_half", "rope_half", "sinusoidal_positional_encoding"]


def sinusoidal_positional_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """(max_len, d_model) table with PE[pos, 2i] = sin(pos / 10000^(2i/d_model)) and
    PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model)). An odd d_model works (the last column is a sine).
    """
    max_len = _checks.as_int("sinusoidal_positional_encoding", "max_len", max_len)
    d_model = _checks.as_int("sinusoidal_positional_encoding", "d_model", d_model)
    if max_len < 1 or d_model < 1:
        raise ValueError(f"max_len and d_model must be >= 1, got max_len={max_len}, d_model={d_model}")
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)  # (ceil(d_model / 2),)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (max_len, ceil(d_model / 2))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encoding to (B, L, d_model) embeddings, then applies dropout.

    ``forward(x, start=0)`` uses positions start .. start + L - 1 (``start`` is for decoding one
    token at a time with a KV cache).
    """

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        d_model = _checks.as_int("PositionalEncoding", "d_model", d_model, minimum=1)
        max_len = _checks.as_int("PositionalEncoding", "max_len", max_len, minimum=1)
        _checks.as_float("PositionalEncoding", "dropout", dropout, 0.0, 1.0)
        self.d_model = d_model
        self.max_len = max_len
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        where = "PositionalEncoding"
        _checks.tensor(where, "x", x, f"a tensor (B, L, d_model={self.d_model})")
        start = _checks.as_int(where, "start", start)
        if start < 0:
            raise ValueError(f"{where}: start must be a position >= 0, got {start}")
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"expected x of shape (B, L, d_model={self.d_model}), got {tuple(x.shape)}")
        _checks.floating(where, "x", x)
        if x.device != self.pe.device:
            raise ValueError(f"{where}: x is on device {x.device} but the encoding table is on "
                             f"{self.pe.device}; expected x.to({str(self.pe.device)!r}) or module.to(...)")
        length = x.shape[1]
        if start + length > self.max_len:
            raise ValueError(
                f"sequence of length {length} (starting at position {start}) is longer than "
                f"max_len={self.max_len} of this PositionalEncoding; build it with a larger max_len"
            )
        return self.dropout(x + self.pe[start : start + length])  # (B, L, d_model)


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding (RoPE): rotate each pair (x[..., 2i], x[..., 2i+1]) of the
    vectors in ``x`` (..., L, d) by the angle pos * base^(-2i/d), where pos is the row's position.

    ``positions`` (L,) defaults to 0 .. L-1. Apply it to queries and keys (not values): the score
    q_m . k_n then depends on the positions only through the offset m - n.
    """
    _checks.tensor("apply_rope", "x", x, "a floating-point tensor (..., L, d)")
    base = _checks.as_float("apply_rope", "base", base)
    if base <= 0:
        raise ValueError(f"apply_rope: base must be a number > 0, got {base:g}")
    if x.dim() < 2:
        raise ValueError(f"apply_rope expects x of shape (..., L, d), got {tuple(x.shape)}")
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError(
            f"RoPE rotates pairs of dimensions, so the last dimension must be even; got d={d} "
            f"in x of shape {tuple(x.shape)}"
        )
    _checks.floating("apply_rope", "x", x)
    positions = _rope_positions("apply_rope", positions, x)
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32  # the angles' precision
    inv_freq = base ** (-torch.arange(0, d, 2, device=x.device, dtype=wide) / d)  # (d/2,)
    angle = positions.to(wide)[:, None] * inv_freq  # (L, d/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., L, d/2) each
    rotated = torch.stack([x_even * cos - x_odd * sin, x_even * sin + x_odd * cos], dim=-1)
    return rotated.flatten(-2)  # (..., L, d): the pairs interleaved back in place


def _rope_positions(where: str, positions, x: torch.Tensor) -> torch.Tensor:
    """``positions`` (default 0 .. L-1) as a tensor (L,) of finite numbers on x's device."""
    length = x.shape[-2]
    if positions is None:
        return torch.arange(length, device=x.device)
    try:
        positions = torch.as_tensor(positions, device=x.device)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{where}: positions must be a tensor or list of {length} numbers, "
                        f"got {_checks.got(positions)}") from None
    if positions.dtype == torch.bool or positions.is_complex():
        raise TypeError(f"{where}: positions must hold numbers, got dtype {positions.dtype}")
    if positions.shape != (length,):
        raise ValueError(
            f"{where}: positions must have shape (L,) = ({length},) to match x {tuple(x.shape)}, "
            f"got {tuple(positions.shape)}"
        )
    if positions.is_floating_point() and positions.device.type != "meta" \
            and not bool(torch.isfinite(positions).all()):
        raise ValueError(f"{where}: positions must be finite numbers, got {positions.tolist()}"[:300])
    return positions


def rope_half(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """RoPE in the half-split convention of much released model code (``rotate_half``): dimension
    i is paired with i + d/2 instead of 2i with 2i + 1. x (..., L, d) -> (..., L, d).

    Takes what ``apply_rope`` takes and refuses what it refuses (integer x, ``base`` <= 0,
    positions that are not L numbers)."""
    if not isinstance(x, torch.Tensor) or x.dim() < 2 or x.shape[-1] % 2:
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else _checks.got(x)
        raise ValueError(f"rope_half: x must be (..., L, d) with an even d, got {got}")
    _checks.floating("rope_half", "x", x)
    base = _checks.as_float("rope_half", "base", base)
    if base <= 0:
        raise ValueError(f"rope_half: base must be a number > 0, got {base:g}")
    d = x.shape[-1]
    pos = _rope_positions("rope_half", positions, x)
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
    _checks.int_at_least("interleaved_to_half", "d", d, 2)
    if d % 2:
        raise ValueError(f"interleaved_to_half: d must be even, got {d}")
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])


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


class SinusoidalPositions(nn.Module):
    """Notebook 09's choice: token embeddings scaled by sqrt(d_model), plus the fixed sinusoidal
    table of notebook 06 (``PositionalEncoding``): x (B, L, d_model) -> x * sqrt(d_model) + PE.

    ``token_scale`` (default sqrt(d_model)) and ``table_scale`` (default 1) change the two sizes:
    x * token_scale + table_scale * PE (notebook 13 balances them)."""

    def __init__(self, max_len: int, d_model: int, token_scale: float | None = None, table_scale: float = 1.0):
        super().__init__()
        self.encoding = PositionalEncoding(d_model, max_len)
        self.scale = math.sqrt(d_model) if token_scale is None else float(token_scale)
        self.table_scale = float(table_scale)

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        if self.table_scale == 1.0:
            return self.encoding(x * self.scale, start)  # (B, L, d_model)
        return self.encoding(x * (self.scale / self.table_scale), start) * self.table_scale


class NoPositions(nn.Module):
    """The position hook of ``positions="rope"`` (nothing is added to the embeddings: the attention
    rotates queries and keys) and ``positions="none"`` (no position information at all: only the
    causal mask tells a token how many came before it)."""

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        return x
