"""Each checker of notebook 13 says "not attempted" for the stub, rejects plausible wrong
answers with a message naming what was expected and accepts a right answer."""

import pytest
import torch

from helpers.exercises import nb13


def stub(*args):
    raise NotImplementedError


def test_expand_kv(capsys):
    assert not nb13.check_expand_kv(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="tiled"):
        nb13.check_expand_kv(lambda k, h: k.repeat(1, h // k.shape[1], 1, 1))
    with pytest.raises(AssertionError, match="expected shape"):
        nb13.check_expand_kv(lambda k, h: k)
    assert nb13.check_expand_kv(lambda k, h: k.repeat_interleave(h // k.shape[1], dim=1))


def test_kv_cache_size(capsys):
    assert not nb13.check_kv_cache_size(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="keys AND values"):
        nb13.check_kv_cache_size(lambda n, kv, d, t, b, s: n * kv * d * t * b * s)
    with pytest.raises(AssertionError, match="expected"):
        nb13.check_kv_cache_size(lambda n, kv, d, t, b, s: 2 * n * kv * d * t * s)  # forgot the batch
    with pytest.raises(AssertionError, match="int"):
        nb13.check_kv_cache_size(lambda n, kv, d, t, b, s: float(2 * n * kv * d * t * b * s))
    assert nb13.check_kv_cache_size(lambda n, kv, d, t, b, s: 2 * n * kv * d * t * b * s)


def test_window_positions(capsys):
    assert not nb13.check_window_positions(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="includes the query"):
        nb13.check_window_positions(lambda t, w, s: [j for j in range(t + 1) if t - j <= w or j < s])
    with pytest.raises(AssertionError, match="expected"):
        nb13.check_window_positions(lambda t, w, s: [j for j in range(t + 1) if t - j < w])  # no sinks
    assert nb13.check_window_positions(lambda t, w, s: [j for j in range(t + 1) if t - j < w or j < s])


def test_rms_norm(capsys):
    assert not nb13.check_rms_norm(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="LayerNorm"):
        nb13.check_rms_norm(lambda x, w, eps: torch.nn.functional.layer_norm(x, x.shape[-1:], w, None, eps))
    with pytest.raises(AssertionError, match="inside the square root"):
        nb13.check_rms_norm(lambda x, w, eps: x / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps) * w)
    with pytest.raises(AssertionError, match="gain is missing"):
        nb13.check_rms_norm(lambda x, w, eps: x / x.pow(2).mean(-1, keepdim=True).add(eps).sqrt())  # no weight
    assert nb13.check_rms_norm(lambda x, w, eps: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w)


def cache_positions_right(t, window, sinks):
    keys = [j for j in range(t + 1) if t - j < window or j < sinks]
    return list(range(len(keys))), len(keys) - 1


def cache_positions_absolute(t, window, sinks):
    return [j for j in range(t + 1) if t - j < window or j < sinks], t


def test_cache_rope_positions(capsys):
    assert not nb13.check_cache_rope_positions(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="absolute positions"):
        nb13.check_cache_rope_positions(cache_positions_absolute)
    with pytest.raises(AssertionError, match="places"):
        nb13.check_cache_rope_positions(lambda t, w, s: (list(range(w + s)), w + s - 1))
    assert nb13.check_cache_rope_positions(cache_positions_right)


# Wrong answers found by the review of notebook 13 (notes/review_modern.md, findings 19-21).


def test_window_positions_refuses_sinks_in_the_future():
    """Sinks kept whatever t (so the query at t=1 with 4 sinks saw 2 and 3) passed the checker."""
    def future_sinks(t, window, sinks):
        return sorted(set(range(sinks)) | {j for j in range(t + 1) if t - j < window})

    with pytest.raises(AssertionError, match="in the future"):
        nb13.check_window_positions(future_sinks)

    def future_places(t, window, sinks):
        return list(range(len(future_sinks(t, window, sinks)))), len(future_sinks(t, window, sinks)) - 1

    with pytest.raises(AssertionError, match="places"):
        nb13.check_cache_rope_positions(future_places)


@pytest.mark.parametrize("wrong, concept", [
    (lambda n, kv, d, t, b, s: 2 * n * kv * d * t * b * s * 8, "bits, not bytes"),
    (lambda n, kv, d, t, b, s: 2 * kv * d * t * b * s, "one layer's cache"),
    (lambda n, kv, d, t, b, s: 2 * n * kv * d * t * s, "one sequence's cache"),
])
def test_kv_cache_size_names_the_missing_factor(wrong, concept):
    with pytest.raises(AssertionError, match=rf"{concept}.*expected .* bytes, got"):
        nb13.check_kv_cache_size(wrong)


def test_kv_cache_size_takes_any_integer_type():
    """A right count as a NumPy or 0-d tensor integer was refused as "not an int"."""
    import numpy as np

    assert nb13.check_kv_cache_size(lambda n, kv, d, t, b, s: np.int64(2 * n * kv * d * t * b * s))
    assert nb13.check_kv_cache_size(lambda n, kv, d, t, b, s: torch.tensor(2 * n * kv * d * t * b * s))
    with pytest.raises(AssertionError, match="as an int, got bool"):
        nb13.check_kv_cache_size(lambda n, kv, d, t, b, s: True)


@pytest.mark.parametrize("wrong, concept", [
    (lambda x, w, eps: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True)) * w, "ignores eps"),
    (lambda x, w, eps: x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps) * w, "sum of squares"),
    (lambda x, w, eps: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps), "gain is missing"),
    (lambda x, w, eps: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) / w, "divided by weight"),
    (lambda x, w, eps: x * torch.rsqrt(x.pow(2).mean(0, keepdim=True) + eps) * w, r"mean\(x\^2 over the last"),
    (lambda x, w, eps: x / (x.std(-1, keepdim=True) + eps) * w, "standard deviation"),
    (lambda x, w, eps: x / (x.var(-1, keepdim=True, unbiased=False) + eps).sqrt() * w, "subtracts the mean"),
])
def test_rms_norm_names_the_step_that_went_wrong(wrong, concept):
    """Each of these got assert_close's multi-line "Tensor-likes are not close!"."""
    with pytest.raises(AssertionError, match=concept):
        nb13.check_rms_norm(wrong)
