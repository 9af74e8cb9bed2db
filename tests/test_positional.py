"""Unit tests for helpers.positional: the sinusoidal table, PositionalEncoding and RoPE."""

import math

import pytest
import torch

from helpers import PositionalEncoding, apply_rope, sinusoidal_positional_encoding


@pytest.mark.parametrize("d_model", [4, 6, 5, 1])
def test_sinusoidal_matches_formula_with_loops(d_model):
    pe = sinusoidal_positional_encoding(7, d_model)
    assert pe.shape == (7, d_model)
    want = torch.zeros(7, d_model)
    for pos in range(7):
        for i in range(d_model):
            angle = pos / 10000 ** (2 * (i // 2) / d_model)
            want[pos, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    torch.testing.assert_close(pe, want)


def test_sinusoidal_errors():
    with pytest.raises(ValueError, match="max_len=0, d_model=4"):
        sinusoidal_positional_encoding(0, 4)


def test_positional_encoding_adds_table_and_offsets():
    pe = PositionalEncoding(6, max_len=10)
    x = torch.randn(2, 4, 6)
    table = sinusoidal_positional_encoding(10, 6)
    torch.testing.assert_close(pe(x), x + table[:4])
    torch.testing.assert_close(pe(x[:, :1], start=3), x[:, :1] + table[3:4])


def test_positional_encoding_errors():
    pe = PositionalEncoding(6, max_len=10)
    with pytest.raises(ValueError, match="length 11 .* longer than max_len=10"):
        pe(torch.randn(1, 11, 6))
    with pytest.raises(ValueError, match=r"starting at position 8\) is longer than max_len=10"):
        pe(torch.randn(1, 3, 6), start=8)
    with pytest.raises(ValueError, match=r"expected x of shape \(B, L, d_model=6\), got \(1, 3, 5\)"):
        pe(torch.randn(1, 3, 5))


def test_rope_rotates_pairs_and_keeps_norms():
    x = torch.randn(2, 5, 8)
    r = apply_rope(x)
    torch.testing.assert_close(r[:, 0], x[:, 0])  # position 0: no rotation
    torch.testing.assert_close(r.norm(dim=-1), x.norm(dim=-1))
    # pair 0 of position 3 is rotated by 3 radians (frequency 1)
    c, s = math.cos(3.0), math.sin(3.0)
    torch.testing.assert_close(r[:, 3, 0], x[:, 3, 0] * c - x[:, 3, 1] * s)
    torch.testing.assert_close(r[:, 3, 1], x[:, 3, 0] * s + x[:, 3, 1] * c)


def test_rope_score_depends_only_on_offset():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(16, generator=g), torch.randn(16, generator=g)
    rq = apply_rope(q.expand(40, 16))  # the same q placed at positions 0..39
    rk = apply_rope(k.expand(40, 16))
    scores = rq @ rk.T  # (40, 40): scores[m, n] = q at m . k at n
    for offset in (-5, 0, 3, 17):
        diag = torch.diagonal(scores, offset=-offset)  # entries with m - n = offset
        torch.testing.assert_close(diag, diag[:1].expand_as(diag), rtol=0, atol=1e-5)


def test_rope_positions_argument_and_errors():
    x = torch.randn(3, 4)
    torch.testing.assert_close(apply_rope(x, torch.tensor([5, 6, 7])), apply_rope(torch.randn(8, 4).index_copy(
        0, torch.tensor([5, 6, 7]), x))[5:])
    with pytest.raises(ValueError, match="last dimension must be even; got d=5"):
        apply_rope(torch.randn(3, 5))
    with pytest.raises(ValueError, match=r"positions must have shape \(L,\) = \(3,\)"):
        apply_rope(x, torch.arange(4))
    with pytest.raises(ValueError, match=r"\(\.\.\., L, d\), got \(4,\)"):
        apply_rope(torch.randn(4))
