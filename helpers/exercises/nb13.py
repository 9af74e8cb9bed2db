"""Checkers for the exercises of notebook 13 (attention in today's LLMs)."""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

from ..modern import kv_cache_bytes
from ._common import call, checker

__all__ = ["check_cache_rope_positions", "check_expand_kv", "check_kv_cache_size", "check_rms_norm",
           "check_window_positions"]


def _shape(t) -> str:
    return str(tuple(t.shape)) if isinstance(t, torch.Tensor) else type(t).__name__


@checker("Exercise 1 (sharing key/value heads)")
def check_expand_kv(fn):
    """``fn(k, num_heads)``: k (B, h_kv, L, d) -> (B, h, L, d), query head i reading kv head i // g."""
    g = torch.Generator().manual_seed(13)
    for b, kv, h, length, d in ((2, 2, 8, 5, 4), (1, 1, 4, 3, 2), (3, 4, 4, 2, 3)):
        k = torch.randn(b, kv, length, d, generator=g)
        got = call(fn, k.clone(), h)
        want = k.repeat_interleave(h // kv, dim=1)
        assert isinstance(got, torch.Tensor) and got.shape == want.shape, (
            f"with k of shape {tuple(k.shape)} and num_heads={h} expected shape {tuple(want.shape)}, "
            f"got {_shape(got)}")
        if not torch.equal(got, want):
            if torch.equal(got, k.repeat(1, h // kv, 1, 1)):
                raise AssertionError(
                    "you tiled the heads (kv0, kv1, kv0, kv1, ...): query head i would read kv head "
                    f"i % h_kv. Heads are grouped: query heads 0..{h // kv - 1} share kv head 0, and so "
                    "on, i.e. head i reads kv head i // g (repeat_interleave, not repeat)")
            raise AssertionError(f"with h_kv={kv} and num_heads={h}, query head i must get kv head "
                                 f"i // {h // kv}; your heads differ from that")


@checker("Exercise 2 (KV-cache size)")
def check_kv_cache_size(fn):
    """``fn(num_layers, num_kv_heads, head_dim, seq_len, batch_size, bytes_per_value)`` -> int."""
    cases = ((32, 8, 128, 8192, 1, 2), (2, 4, 16, 100, 3, 4), (80, 1, 128, 4096, 8, 2))
    dtypes = {2: torch.float16, 4: torch.float32}
    for layers, kv, d, length, b, size in cases:
        got = call(fn, layers, kv, d, length, b, size)
        want = kv_cache_bytes(layers, kv, d, length, b, dtypes[size])
        try:  # a Python int, or a NumPy or 0-d tensor integer holding one
            got = operator.index(got) if not isinstance(got, bool) else got
        except TypeError:
            pass
        assert isinstance(got, int) and not isinstance(got, bool), (
            f"return the number of bytes as an int, got {type(got).__name__}")
        where = (f"for {layers} layers, {kv} kv heads, head_dim {d}, {length} tokens, batch {b} and "
                 f"{size} bytes per value expected {want:,} bytes, got {got:,}")
        if got == want // 2:
            raise AssertionError("that is half the cache: every layer stores keys AND values (a factor 2); "
                                 + where)
        if got == want * 8:
            raise AssertionError(f"that is bits, not bytes: bytes_per_value is already in bytes ({size} here); "
                                 + where)
        if layers > 1 and got == want // layers:
            raise AssertionError("that is one layer's cache: every layer keeps its own keys and values "
                                 "(multiply by num_layers); " + where)
        if b > 1 and got == want // b:
            raise AssertionError("that is one sequence's cache: each of the batch_size sequences keeps its "
                                 "own (multiply by batch_size); " + where)
        assert got == want, where


def _allowed(t, window, sinks):
    return [j for j in range(t + 1) if t - j < window or j < sinks]


@checker("Exercise 3 (what a sliding window with sinks sees)")
def check_window_positions(fn):
    """``fn(t, window, sinks)`` -> the sorted positions the query at position t attends to."""
    for t, window, sinks in ((0, 3, 0), (9, 3, 0), (9, 4, 2), (3, 4, 2), (20, 1, 1), (5, 10, 4), (1, 1, 4)):
        got = call(fn, t, window, sinks)
        want = _allowed(t, window, sinks)
        try:
            got_list = [int(j) for j in got]
        except TypeError:
            raise AssertionError(f"return a list of positions, got {type(got).__name__}") from None
        if any(j > t for j in got_list):
            raise AssertionError(
                f"with t={t}, window={window}, sinks={sinks} you returned {got_list}: positions after t are "
                "in the future, and a query never sees them, not even a sink (only the sinks j < sinks "
                f"with j <= t). Expected {want}")
        if got_list == [j for j in range(t + 1) if t - j <= window or j < sinks] and got_list != want:
            raise AssertionError(
                f"with t={t}, window={window}: a window of {window} positions includes the query "
                f"itself, so the oldest one is t - {window - 1}; you kept {window + 1} recent positions")
        assert got_list == want, (f"with t={t}, window={window}, sinks={sinks} expected {want}, "
                                  f"got {got_list}")


@checker("Exercise 4 (RMSNorm)")
def check_rms_norm(fn):
    """``fn(x, weight, eps)``: x / sqrt(mean(x^2) + eps) * weight over the last dimension."""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 5, 8, generator=g) * 3 + 1.5  # not centred: a LayerNorm would differ
    weight = torch.rand(8, generator=g) + 0.5
    for eps in (1e-6, 0.5):
        got = call(fn, x.clone(), weight.clone(), eps)
        want = F.rms_norm(x, (8,), weight, eps)
        assert isinstance(got, torch.Tensor) and got.shape == x.shape, (
            f"return a tensor of the shape of x {tuple(x.shape)}, got {_shape(got)}")
        if torch.allclose(got, F.layer_norm(x, (8,), weight, None, eps), atol=1e-4):
            raise AssertionError("you subtracted the mean: that is LayerNorm. RMSNorm only divides by "
                                 "the root mean square sqrt(mean(x^2) + eps)")
        if eps == 0.5:
            rms = x.pow(2).mean(-1, keepdim=True).sqrt()
            if torch.allclose(got, x / (rms + eps) * weight, atol=1e-5):
                raise AssertionError("eps goes inside the square root: x / sqrt(mean(x^2) + eps)")
            if torch.allclose(got, x / rms * weight, atol=1e-5):
                raise AssertionError("with eps=0.5 your answer ignores eps: it goes inside the square root, "
                                     "x / sqrt(mean(x^2) + eps)")
        rms_of_sum = x.pow(2).sum(-1, keepdim=True).add(eps).sqrt()
        if torch.allclose(got, x / rms_of_sum * weight, atol=1e-5):
            raise AssertionError("you divided by the square root of the sum of squares: RMSNorm takes the "
                                 "mean over the last dimension, sqrt(mean(x^2) + eps)")
        for unbiased in (True, False):
            std = x.std(-1, keepdim=True, correction=int(unbiased))
            if any(torch.allclose(got, x / d * weight, atol=1e-5) for d in (std + eps, (std**2 + eps).sqrt())):
                raise AssertionError("you divided by the standard deviation, which subtracts the mean first: "
                                     "RMSNorm divides by the root mean square of x itself, sqrt(mean(x^2) + eps)")
        if torch.allclose(got * weight, want, atol=1e-5):
            raise AssertionError("the gain is missing: multiply the normalised x by weight, feature by feature")
        if torch.allclose(got, want * weight.pow(-2), atol=1e-5) or torch.allclose(got * weight.pow(2), want,
                                                                                  atol=1e-5):
            raise AssertionError("you divided by weight: multiply the normalised x by it instead")
        if not torch.allclose(got, want, rtol=1.3e-6, atol=1e-5):
            err = (got - want).abs().max().item()
            raise AssertionError(f"RMSNorm with eps={eps} differs from torch.nn.functional.rms_norm by up to "
                                 f"{err:.4f}: expected x / sqrt(mean(x^2 over the last dimension) + eps) * weight")


@checker("Exercise 5 (positions within the cache)")
def check_cache_rope_positions(fn):
    """``fn(t, window, sinks)`` -> (the RoPE positions of the keys the query at t sees, in the
    order of ``window_positions``, and the query's own): their places 0, 1, ... in the cache."""
    for t, window, sinks in ((9, 4, 2), (3, 4, 2), (0, 3, 0), (20, 1, 1), (100, 8, 4), (5, 10, 4), (1, 1, 4)):
        got = call(fn, t, window, sinks)
        keys = _allowed(t, window, sinks)
        want = (list(range(len(keys))), len(keys) - 1)
        try:
            got_keys, got_query = [int(j) for j in got[0]], int(got[1])
        except (TypeError, IndexError, ValueError):
            raise AssertionError(f"return (key_positions, query_position), got {got!r}") from None
        if (got_keys, got_query) == (keys, t) and keys != want[0]:
            raise AssertionError(
                f"with t={t}, window={window}, sinks={sinks} you returned the absolute positions {keys}: "
                "StreamingLLM rotates each key by its place in the cache instead, 0, 1, ... in order")
        assert (got_keys, got_query) == want, (
            f"with t={t}, window={window}, sinks={sinks} the keys {keys} sit at places {want[0]} of the "
            f"cache and the query at {want[1]}; got {got_keys} and {got_query}")
