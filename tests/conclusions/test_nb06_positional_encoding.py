"""Notebook 06's conclusions, re-checked where they could break.

Section 3: at d_model = 16 the similarity PE(p)·PE(p + Δ) climbs back (offset 6 above offset 3, a
rebound above 0.3 within 25 offsets); at d_model = 128 it almost does not within the 25 offsets drawn
(below 0.01), but does further out, "later and smaller". Sections 1, 5 and 6: without a mask,
shuffling the tokens just shuffles the outputs; with the causal mask, or with learned or sinusoidal
positions, it no longer does; added sinusoids give diagonals that are not constant while RoPE's are
(seeds 0-9 of the random vectors and weights).
"""

import pytest
import torch

from helpers import MultiHeadAttention, PositionalEncoding, apply_rope, causal_mask, seed_everything
from helpers import sinusoidal_positional_encoding as table
from helpers.exercises.nb06 import _rope


def rebound(d: int, offsets: int) -> float:
    pe = table(offsets, d)
    s = pe @ pe[0] / (d / 2)
    return max((s[j] - s[:j].min()).item() for j in range(1, offsets))


def test_similarity_rebounds_at_16_barely_within_25_offsets_at_128_and_later_and_smaller_further_out():
    s16 = table(25, 16) @ table(25, 16)[0]
    assert s16[6] > s16[3]
    assert rebound(16, 25) > 0.3 and rebound(128, 25) < 0.01
    assert rebound(128, 100) > 0.05  # "further out they come back too"
    assert rebound(128, 100) < rebound(16, 100) and rebound(128, 100) < rebound(16, 25)  # "smaller"


@pytest.mark.parametrize("seed", range(10))
def test_positions_break_the_shuffle_symmetry(seed):
    seed_everything(seed)
    x = torch.randn(1, 6, 8)
    mha = MultiHeadAttention(8, num_heads=2)
    perm = torch.tensor([4, 5, 2, 3, 0, 1])
    torch.testing.assert_close(mha(x[:, perm], x[:, perm], x[:, perm]), mha(x, x, x)[:, perm])
    learned = torch.nn.Embedding(10, 8)
    for add in (lambda t: t + learned(torch.arange(6)), PositionalEncoding(8, max_len=10)):
        xp, xs = add(x), add(x[:, perm])
        assert (mha(xs, xs, xs) - mha(xp, xp, xp)[:, perm]).abs().max() > 0.01
    xs, causal = x[:, perm], causal_mask(6)  # the control of section 1: a causal mask, no positions
    assert (mha(xs, xs, xs, causal) - mha(x, x, x, causal)[:, perm]).abs().max() > 0.01


@pytest.mark.parametrize("seed", range(10))
def test_rope_diagonals_are_constant_added_sinusoids_are_not(seed):
    seed_everything(seed)
    n, d = 20, 8
    q, k = torch.randn(d), torch.randn(d)
    rope = apply_rope(q.expand(n, d)) @ apply_rope(k.expand(n, d)).T
    added = (q + table(n, d)) @ (k + table(n, d)).T
    for o in range(-n + 1, n):
        diag = torch.diagonal(rope, offset=o)
        assert (diag - diag[0]).abs().max() < 1e-4
    assert torch.diagonal(added, offset=5).std() > 0.1


def test_exercise_1c_rope_tells_before_from_after_for_random_vectors():
    """Statement (c) is false: for random q and k, the score at +Δ and at -Δ differ."""
    g = torch.Generator().manual_seed(0)
    differ = 0
    for _ in range(20):
        q, k = torch.randn(16, generator=g, dtype=torch.float64), torch.randn(16, generator=g, dtype=torch.float64)
        p = torch.tensor([10])
        ahead = (_rope(q[None], p) * _rope(k[None], p + 3)).sum()
        behind = (_rope(q[None], p) * _rope(k[None], p - 3)).sum()
        differ += bool((ahead - behind).abs() > 1e-3)
    assert differ == 20
