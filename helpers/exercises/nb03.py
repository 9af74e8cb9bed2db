"""Checkers for the exercises of notebook 03 (trainable self-attention)."""

from __future__ import annotations

import math

import torch

from ._common import call, checker

__all__ = ["check_cross_attention", "check_self_attention_from_params"]


def _reference(x_q, x_kv, w_q, w_k, w_v):
    q, k, v = x_q @ w_q, x_kv @ w_k, x_kv @ w_v  # (Lq, d_k), (Lk, d_k), (Lk, d_v)
    weights = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)  # (Lq, Lk)
    return weights @ v  # (Lq, d_v)


def _inputs(seed=0, lq=4, lk=4, d_in=5, d_k=3, d_v=2):
    g = torch.Generator().manual_seed(seed)
    x_q = torch.randn(lq, d_in, generator=g)
    x_kv = x_q if lq == lk else torch.randn(lk, d_in, generator=g)
    w = [torch.randn(d_in, d, generator=g) for d in (d_k, d_k, d_v)]
    return x_q, x_kv, *w


@checker("Exercise 1 (self-attention from raw parameters)")
def check_self_attention_from_params(fn):
    """``fn(x, w_q, w_k, w_v)`` with x (L, d_in), w_q and w_k (d_in, d_k), w_v (d_in, d_v)."""
    x, _, w_q, w_k, w_v = _inputs()
    got = call(fn, x, w_q, w_k, w_v)
    assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
    assert got.shape == (4, 2), f"expected shape (L, d_v) = (4, 2), got {tuple(got.shape)}"
    q, k = x @ w_q, x @ w_k
    unscaled = torch.softmax(q @ k.T, dim=-1) @ (x @ w_v)
    if torch.allclose(got, unscaled, atol=1e-5) and not torch.allclose(got, _reference(x, x, w_q, w_k, w_v)):
        raise AssertionError("close, but the scores are not scaled: divide q @ k.T by sqrt(d_k)")
    torch.testing.assert_close(got, _reference(x, x, w_q, w_k, w_v),
                               msg=lambda m: "the output differs from softmax(QK^T/sqrt(d_k))V:\n" + m)


@checker("Exercise 2 (cross-attention)")
def check_cross_attention(fn):
    """``fn(x_q, x_kv, w_q, w_k, w_v)``: queries from x_q (Lq, d_in), keys and values from x_kv."""
    x_q, x_kv, w_q, w_k, w_v = _inputs(seed=1, lq=3, lk=5)
    got = call(fn, x_q, x_kv, w_q, w_k, w_v)
    assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
    assert got.shape == (3, 2), (
        f"expected shape (Lq, d_v) = (3, 2): one output per query, got {tuple(got.shape)}"
    )
    torch.testing.assert_close(got, _reference(x_q, x_kv, w_q, w_k, w_v),
                               msg=lambda m: "queries must come from x_q, keys and values from x_kv:\n" + m)
