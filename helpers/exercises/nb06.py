"""Checkers for the exercises of notebook 06 (positional encoding)."""

from __future__ import annotations

import math

import torch

from ._common import call, checker

__all__ = ["check_pe_with_base", "check_rotate_pair"]


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
        got = call(fn, max_len, d_model, base)
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
            f"return a tensor of the same shape as x {tuple(x.shape)}"
        )
        c, s = math.cos(angle), math.sin(angle)
        want = torch.stack([x[:, 0] * c - x[:, 1] * s, x[:, 0] * s + x[:, 1] * c], dim=-1)
        clockwise = torch.stack([x[:, 0] * c + x[:, 1] * s, -x[:, 0] * s + x[:, 1] * c], dim=-1)
        if torch.allclose(got, clockwise, atol=1e-6):
            raise AssertionError("you rotated clockwise: (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos)")
        torch.testing.assert_close(got, want, msg=lambda m, a=angle: f"wrong rotation for angle={a:.4f}:\n{m}")
