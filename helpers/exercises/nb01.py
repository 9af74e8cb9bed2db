"""Checkers for the exercises of notebook 01 (dot-product attention)."""

from __future__ import annotations

import math

import torch

from ._common import call, checker

__all__ = ["check_dot_attention", "check_query"]


def _reference(q, k, v):
    w = torch.softmax(q @ k.T, dim=-1)  # (Lq, Lk)
    return w @ v, w  # (Lq, d_v), (Lq, Lk)


@checker("Exercise 1 (dot_attention)")
def check_dot_attention(fn) -> None:
    """``fn(queries (Lq, d), keys (Lk, d), values (Lk, d_v))`` returns (context, weights)."""
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 4, generator=g), torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g)
    got = call(fn, q.clone(), k.clone(), v.clone())
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        raise AssertionError(f"expected a pair (context, weights), got {type(got).__name__}")
    context, weights = (torch.as_tensor(t) for t in got)
    want_c, want_w = _reference(q, k, v)
    assert weights.shape == (3, 5), (
        f"with 3 queries and 5 keys the weights should have shape (Lq, Lk) = (3, 5), "
        f"got {tuple(weights.shape)}")
    assert context.shape == (3, 2), (
        f"with 3 queries and values of size 2 the context should have shape (Lq, d_v) = (3, 2), "
        f"got {tuple(context.shape)}")
    if torch.allclose(weights.sum(0), torch.ones(5), atol=1e-4):
        raise AssertionError(
            f"expected each row (one query) to sum to 1, got row sums "
            f"{[round(v, 4) for v in weights.sum(-1).tolist()]}: your weights sum to 1 down each "
            "column. Normalise over the keys (the last dimension, dim=-1)")
    if not torch.allclose(weights.sum(-1), torch.ones(3), atol=1e-4):
        raise AssertionError(
            f"expected each row of weights to sum to 1, got row sums "
            f"{[round(v, 4) for v in weights.sum(-1).tolist()]}: did you apply the softmax?")
    if torch.allclose(weights, torch.softmax(q @ k.T / math.sqrt(4), dim=-1), atol=1e-5):
        raise AssertionError(
            f"expected largest weight {want_w.max().item():.4f}, got {weights.max().item():.4f}: "
            "you scaled the scores, which is notebook 02's idea. Here the scores are not scaled")
    torch.testing.assert_close(
        weights, want_w, msg=lambda m: f"weights differ from softmax(queries @ keys.T, dim=-1):\n{m}")
    torch.testing.assert_close(
        context, want_c, msg=lambda m: f"context differs from weights @ values:\n{m}")


@checker("Exercise 2 (a query for 'mouse')")
def check_query(q, x: torch.Tensor, target: int = 5, max_norm: float = 2.0) -> None:
    """``q`` (d,) must put at least half of its weight on word ``target`` of ``x`` (L, d)."""
    q = torch.as_tensor(q, dtype=torch.float32)
    assert q.shape == (x.shape[1],), (
        f"expected a vector of {x.shape[1]} numbers like the embeddings, got shape "
        f"{tuple(q.shape)}")
    assert torch.isfinite(q).all(), f"expected finite numbers, got inf or nan in {q.tolist()}"
    norm = float(q.norm())
    assert norm <= max_norm + 1e-6, (
        f"expected a length of at most {max_norm}, got {norm:.4f} (a long enough query can "
        "pick anything, the challenge is to point in the right direction)")
    w = torch.softmax(x @ q, dim=-1)  # (L,)
    assert float(w[target]) >= 0.5, (
        f"expected a weight of at least 0.5 on word {target}, got {float(w[target]):.4f} "
        f"(the largest weight, {float(w.max()):.4f}, is on word {int(w.argmax())}). Point the query where that word's embedding differs most from the others")
