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
    (lambda z: sample_next(z.fill_(float("-inf")), temperature=0), "no token to sample"),  # was: id 0
    (lambda z: filtered_probs(z.fill_(float("-inf")), temperature=0), "no token to sample"),
    (lambda z: sample_next(z * float("nan")), "NaN"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call(torch.randn(6))


def test_integer_logits_rejected():
    with pytest.raises(TypeError, match="floating point"):
        top_k_filter(torch.arange(5), 2)


# ---------------------------------------------------------------- never NaN, never empty


@pytest.mark.parametrize("dtype, logits, temperature", [
    (torch.float32, [1.0, 2.0, 3.0], 1e-39),  # 3 / 1e-39 overflows float32: was NaN everywhere
    (torch.float32, [1.0, 2.0, 3.0], 5e-324),  # the smallest positive float
    (torch.float64, [1.0, 2.0, 3.0], 1e-320),
    (torch.bfloat16, [1.0, 2.0, 3.0], 1e-39),
    (torch.float16, [10.0, 20.0, 30.0], 1e-4),  # 300,000 > 65,504: was NaN everywhere
])
def test_tiny_temperatures_give_the_greedy_limit_not_nan(dtype, logits, temperature):
    z = torch.tensor(logits, dtype=dtype)
    probs = filtered_probs(z, temperature)
    assert probs.dtype == dtype
    assert torch.equal(probs, torch.tensor([0.0, 0.0, 1.0], dtype=dtype))
    assert sample_next(z, temperature).item() == 2  # was: RuntimeError from torch.multinomial
    ties = filtered_probs(torch.tensor([3.0, 3.0, 1.0], dtype=dtype), temperature)
    torch.testing.assert_close(ties, torch.tensor([0.5, 0.5, 0.0], dtype=dtype))  # ties share


def test_temperatures_that_do_not_overflow_are_divided_as_before():
    """The fix takes another path only when logits / temperature overflows: results of every
    temperature that worked before are bit-identical to the softmax of logits / temperature."""
    g = torch.Generator().manual_seed(0)
    z = torch.randn(5, 40, generator=g) * 4
    for t in (0.05, 0.7, 1.0, 1.3, 10.0):
        assert torch.equal(filtered_probs(z, t), torch.softmax(z / t, dim=-1))
        a = sample_next(z, t, 5, 0.9, generator=torch.Generator().manual_seed(1))
        b = torch.multinomial(torch.softmax(top_p_filter(top_k_filter(z / t, 5), 0.9), -1), 1,
                              generator=torch.Generator().manual_seed(1))[:, 0]
        assert torch.equal(a, b)


def test_a_plus_inf_logit_takes_all_the_probability():
    """top_p_filter once kept nothing for a row with +inf (its softmax is NaN), although its
    docstring promises at least one token; sample_next then said the row was -inf everywhere."""
    z = torch.tensor([float("inf"), 1.0, 2.0])
    kept = top_p_filter(z, 0.5)
    assert torch.equal(kept, torch.tensor([float("inf"), float("-inf"), float("-inf")]))
    assert torch.equal(filtered_probs(z), torch.tensor([1.0, 0.0, 0.0]))  # was NaN
    assert torch.equal(filtered_probs(z, top_p=0.5), torch.tensor([1.0, 0.0, 0.0]))
    assert sample_next(z, top_p=0.5).item() == 0
    two = torch.tensor([[float("inf"), 1.0, float("inf")], [0.0, 1.0, 2.0]])
    probs = filtered_probs(two, 0.8)
    assert torch.equal(probs[0], torch.tensor([0.5, 0.0, 0.5]))
    torch.testing.assert_close(probs[1], torch.softmax(two[1] / 0.8, -1))
    assert (~torch.isneginf(top_p_filter(two, 0.01))).sum(-1).eq(1).all()  # always at least one


@pytest.mark.parametrize("call, error, match", [
    (lambda z: filtered_probs(z, top_k=0), ValueError, r"^filtered_probs: top_k must be None .* got 0"),
    (lambda z: filtered_probs(z, top_k=2.5), ValueError, r"top_k must be None .* got 2.5 \(float\)"),
    (lambda z: filtered_probs(z, top_p=0), ValueError, r"^filtered_probs: top_p must be None .* got 0"),
    (lambda z: sample_next(z, top_p="0.5"), ValueError, r"top_p must be None .* got '0.5' \(str\)"),
    (lambda z: sample_next(z, generator=3), TypeError, r"^sample_next: generator must be None or a "
                                                       r"torch.Generator .* got 3 \(int\)"),
])
def test_filter_arguments_are_named(call, error, match):
    """Through filtered_probs, sample_next and GPT.generate the message names top_k / top_p (it
    said "top-k needs an int k"); a generator that is not one was a TypeError from multinomial."""
    with pytest.raises(error, match=match):
        call(torch.randn(6))
