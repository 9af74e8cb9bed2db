"""helpers.sampling: each filter against brute force, the sampler against its distribution,
and clear errors for bad arguments."""

from itertools import combinations

import pytest
import torch

from helpers.sampling import filtered_probs, sample_next, top_k_filter, top_p_filter


def brute(p, ok):
    subsets = [set(c) for n in range(1, len(p) + 1) for c in combinations(range(len(p)), n)]
    good = [s for s in subsets if ok(s)]
    smallest = min(map(len, good))
    return max((s for s in good if len(s) == smallest), key=lambda s: sum(p[i] for i in s))


@pytest.mark.parametrize("seed", range(5))
def test_filters_match_enumeration(seed):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(7, generator=g, dtype=torch.float64) * 2
    p = torch.softmax(z, -1).tolist()
    for k in range(1, 8):
        kept = set(torch.nonzero(~torch.isneginf(top_k_filter(z, k))).flatten().tolist())
        assert kept == brute(p, lambda s, k=k: len(s) == k)
    for pp in (0.01, 0.3, 0.5, 0.75, 0.9, 0.999, 1.0):
        kept = set(torch.nonzero(~torch.isneginf(top_p_filter(z, pp))).flatten().tolist())
        assert kept == brute(p, lambda s, pp=pp: sum(p[i] for i in s) >= pp - 1e-12)


def test_filters_keep_shape_and_values_batched():
    z = torch.randn(2, 3, 10)
    for out in (top_k_filter(z, 4), top_p_filter(z, 0.7)):
        assert out.shape == z.shape
        kept = ~torch.isneginf(out)
        torch.testing.assert_close(out[kept], z[kept])
    assert (~torch.isneginf(top_k_filter(z, 4))).sum(-1).eq(4).all()
    assert (~torch.isneginf(top_p_filter(z, 1e-6))).sum(-1).eq(1).all()  # always at least one


def test_top_k_exactly_k_with_ties_and_k_above_vocab():
    z = torch.zeros(5)
    assert int((~torch.isneginf(top_k_filter(z, 2))).sum()) == 2
    torch.testing.assert_close(top_k_filter(z, 99), z)


def test_filtered_probs_temperature_and_greedy():
    z = torch.tensor([1.0, 2.0, 0.0])
    torch.testing.assert_close(filtered_probs(z, 0.5), torch.softmax(z / 0.5, -1))
    torch.testing.assert_close(filtered_probs(z, 0), torch.tensor([0.0, 1.0, 0.0]))
    assert sample_next(z, temperature=0).item() == 1
    assert sample_next(torch.randn(4, 3, 9), temperature=0).shape == (4, 3)


def test_sampler_matches_distribution():
    z = torch.tensor([1.5, 1.0, 0.3, -0.5, -2.0])
    q = filtered_probs(z, 0.9, top_k=4, top_p=0.95)
    n = 20_000
    ids = sample_next(z.expand(n, -1), 0.9, 4, 0.95, generator=torch.Generator().manual_seed(1))
    freq = torch.bincount(ids, minlength=5).double() / n
    assert freq[q == 0].sum() == 0
    assert 0.5 * (freq - q.double()).abs().sum() < 0.01


def test_sampler_is_repeatable_with_generator():
    z = torch.randn(8, 20)
    a = sample_next(z, generator=torch.Generator().manual_seed(3))
    b = sample_next(z, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


@pytest.mark.parametrize("call, match", [
    (lambda z: top_k_filter(z, 0), "k >= 1"),
    (lambda z: top_k_filter(z, 1.5), "k >= 1"),
    (lambda z: top_p_filter(z, 0.0), r"p in \(0, 1\]"),
    (lambda z: top_p_filter(z, 1.2), r"p in \(0, 1\]"),
    (lambda z: sample_next(z, temperature=-0.1), "temperature"),
    (lambda z: sample_next(z, temperature=float("nan")), "temperature"),
    (lambda z: sample_next(z.fill_(float("-inf"))), "no token to sample"),
    (lambda z: sample_next(z * float("nan")), "NaN"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call(torch.randn(6))


def test_integer_logits_rejected():
    with pytest.raises(TypeError, match="floating point"):
        top_k_filter(torch.arange(5), 2)
