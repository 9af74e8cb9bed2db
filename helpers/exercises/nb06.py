"""Checkers for the exercises of notebook 06 (positional encoding)."""

from __future__ import annotations

import math

import torch

from ._common import call, checker

__all__ = ["check_pe_with_base", "check_rope_score_at_offset", "check_rotate_pair"]


def _pe(max_len: int, d_model: int, base: float) -> torch.Tensor:
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)  # (ceil(d/2),)
    angle = pos / base ** (two_i / d_model)  # (max_len, ceil(d/2))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe


@checker("Exercise 1 (sinusoidal encoding with any base)")
def check_pe_with_base(fn):
    """``fn(max_len, d_model, base)`` -> (max_len, d_model) sinusoidal table."""
    for max_len, d_model, base in ((10, 8, 10000.0), (7, 6, 100.0), (5, 5, 10.0)):
        try:
            got = call(fn, max_len, d_model, base)
        except RuntimeError as err:
            if d_model % 2 == 0:
                raise
            raise AssertionError(
                f"pe_with_base({max_len}, {d_model}, {base}) failed for an odd d_model ({err}). With d_model={d_model} "
                f"there are {math.ceil(d_model / 2)} sine columns but only {d_model // 2} cosine columns"
            ) from None
        assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
        assert got.shape == (max_len, d_model), (
            f"expected shape (max_len, d_model) = ({max_len}, {d_model}), got {tuple(got.shape)}"
        )
        want = _pe(max_len, d_model, base)
        half = math.ceil(d_model / 2)
        if d_model % 2 == 0 and torch.allclose(got[:, :half], want[:, 0::2]):
            raise AssertionError("sines must go to the even columns 0, 2, 4, ... and cosines to the odd ones "
                                 "(interleaved), not first half / second half")
        if torch.allclose(got, _pe(max_len, d_model, 10000.0)) and base != 10000.0:
            raise AssertionError(f"you ignored `base` (got the table for 10000 when base={base})")
        torch.testing.assert_close(got, want, msg=lambda m, b=base, d=d_model: f"wrong table for d_model={d}, base={b}:\n{m}")


@checker("Exercise 2 (rotate one pair, the heart of RoPE)")
def check_rotate_pair(fn):
    """``fn(x, angle)``: x (..., 2) rotated counter-clockwise by ``angle`` (radians)."""
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, -0.8]])  # (3, 2)
    for angle in (math.pi / 2, 0.3, -1.2):
        got = call(fn, x, angle)
        assert isinstance(got, torch.Tensor) and got.shape == x.shape, (
            f"return a tensor of the same shape as x {tuple(x.shape)}, got "
            f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}"
        )
        c, s = math.cos(angle), math.sin(angle)
        want = torch.stack([x[:, 0] * c - x[:, 1] * s, x[:, 0] * s + x[:, 1] * c], dim=-1)
        clockwise = torch.stack([x[:, 0] * c + x[:, 1] * s, -x[:, 0] * s + x[:, 1] * c], dim=-1)
        if torch.allclose(got, clockwise, atol=1e-6):
            raise AssertionError("you rotated clockwise: (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos)")
        torch.testing.assert_close(got, want, msg=lambda m, a=angle: f"wrong rotation for angle={a:.4f}:\n{m}")


def _rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """x (L, d) rotated pair by pair: pair i of row r by positions[r] * 10000^(-2i/d)."""
    d = x.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)  # (d/2,)
    angle = positions.to(torch.float32)[:, None] * omega  # (L, d/2)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1).flatten(-2)


@checker("Exercise 3 (RoPE scores from the offset alone)")
def check_rope_score_at_offset(fn):
    """``fn(q, k, offset)`` -> the RoPE score of q at any position m and k at m + offset."""
    g = torch.Generator().manual_seed(6)
    q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
    for offset in (3, -5, 0, 12):
        got = call(fn, q.clone(), k.clone(), offset)
        got = torch.as_tensor(got, dtype=torch.float32)
        assert got.numel() == 1, f"return one score (a number or a 0-d tensor), got shape {tuple(got.shape)}"
        m = torch.tensor([0, 7, 20])  # several query positions, same offset
        want = (_rope(q.expand(3, 8), m) * _rope(k.expand(3, 8), m + offset)).sum(-1)  # (3,) all equal
        if torch.allclose(got, want[0], atol=1e-4):
            continue
        flipped = (q * _rope(k[None], torch.tensor([-offset]))[0]).sum()
        if offset != 0 and torch.allclose(got, flipped, atol=1e-4):
            raise AssertionError(f"offset {offset}: got {got.item():.4f}, the score for offset {-offset}: "
                                 "which of q and k sits later, and which way does the angle go?")
        if offset != 0 and torch.allclose(got, (q * k).sum(), atol=1e-4):
            raise AssertionError(f"offset {offset}: got {got.item():.4f}, the score without any rotation: "
                                 "rotating q and k by the same angle changes nothing, the offset must appear")
        raise AssertionError(f"offset {offset}: got {got.item():.4f}, expected {want[0].item():.4f} (the score "
                             f"of q at position m and k at m + {offset}, the same for every m)")
