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
    with pytest.raises(AssertionError, match="differs"):
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
