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
    if context.shape == (3, 4) and torch.allclose(context, weights.to(k.dtype) @ k, atol=1e-5):
        raise AssertionError(
            "expected the context to have shape (Lq, d_v) = (3, 2), got (3, 4), the width of the keys: "
            "you mixed the keys; the context mixes the values (weights @ values)")
    assert context.shape == (3, 2), (
        f"with 3 queries and values of size 2 the context should have shape (Lq, d_v) = (3, 2), "
        f"got {tuple(context.shape)}")
    if torch.allclose(weights.sum(0), torch.ones(5), atol=1e-4):
        raise AssertionError(
            f"expected each row (one query) to sum to 1, got row sums "
            f"{[round(v, 4) for v in weights.sum(-1).tolist()]}: your weights sum to 1 down each "
            "column. Normalise over the keys (the last dimension, dim=-1)")
    if torch.allclose(weights.double().sum(), torch.tensor(1.0, dtype=torch.float64), atol=1e-4) and torch.allclose(
            weights, torch.softmax((q @ k.T).flatten(), dim=0).reshape(3, 5), atol=1e-5):
        raise AssertionError(
            f"expected each row (one query) to sum to 1, got row sums "
            f"{[round(v, 4) for v in weights.sum(-1).tolist()]}: you normalised over all entries of the score "
            "matrix at once. Normalise each row on its own (the keys, the last dimension: dim=-1)")
    if not torch.allclose(weights.sum(-1), torch.ones(3), atol=1e-4):
        raise AssertionError(
            f"expected each row of weights to sum to 1, got row sums "
            f"{[round(v, 4) for v in weights.sum(-1).tolist()]}: did you apply the softmax?")
    if torch.allclose(weights, torch.softmax(q @ k.T / math.sqrt(4), dim=-1), atol=1e-5):
        raise AssertionError(
            f"expected largest weight {want_w.max().item():.4f}, got {weights.max().item():.4f}: "
            "you scaled the scores, which is notebook 02's idea. Here the scores are not scaled")
    if (weights < 0).any() and torch.allclose(weights.sum(-1), torch.ones(3), atol=1e-4):
        raise AssertionError(
            f"expected weights >= 0, got {weights.min().item():.4f}: rows that sum to 1 but hold negative "
            "weights come from dividing the scores by their sum, which fails as soon as a score is "
            "negative. Exponentiate first, then divide by the sum: the softmax")
    if not torch.allclose(weights, want_w, atol=1e-5, rtol=1e-4):
        raise AssertionError(
            "weights differ from softmax(queries @ keys.T, dim=-1): " + _furthest("weights", weights, want_w)
            + ". The scores are queries @ keys.T (query i against key j), then a softmax over each row")
    if not torch.allclose(context, want_c, atol=1e-5, rtol=1e-4):
        raise AssertionError("context differs from weights @ values: " + _furthest("context", context, want_c)
                             + ". The context is weights @ values: each row of values weighted by one row of weights")


def _furthest(name: str, got: torch.Tensor, want: torch.Tensor) -> str:
    """The entry of ``got`` furthest from ``want``, named with its index."""
    i, j = divmod(int((got - want).abs().argmax()), want.shape[1])
    return f"{name}[{i}, {j}] should be {want[i, j].item():.4f}, got {got[i, j].item():.4f} (the entry furthest off)"


@checker("Exercise 2 (a query for 'mouse')")
def check_query(q, x: torch.Tensor, target: int = 5, max_norm: float = 2.0, min_weight: float = 0.7,
                tokens=None) -> None:
    """``q`` (d,), of length at most ``max_norm``, must put at least ``min_weight`` of its weight on
    word ``target`` of ``x`` (L, d). With ``tokens`` (the L words), messages name the words."""

    def word(j: int) -> str:
        return f"word {j}" if tokens is None else f"{tokens[j]!r} (word {j})"

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
    if float(w[target]) >= min_weight:
        return
    got = f"expected a weight of at least {min_weight} on {word(target)}, got {float(w[target]):.4f}"
    short = (f" Your query has length {norm:.4f} of the {max_norm} allowed: a longer one in the same direction "
             "spreads the scores further apart." if norm < max_norm - 0.05 else "")
    if int(w.argmax()) != target:
        raise AssertionError(
            f"{got} (the largest weight, {float(w.max()):.4f}, is on {word(int(w.argmax()))}). Point the query "
            f"along the features that {word(target)} has and the others lack." + short)
    others = sorted((j for j in range(len(w)) if j != target), key=lambda j: -float(w[j]))
    rest = ", ".join(f"{word(j)} {float(w[j]):.4f}" for j in others[:3])
    raise AssertionError(
        f"{got}: it already gets the largest weight, but the others keep {1 - float(w[target]):.4f} ({rest}, "
        f"...). Lower their scores: a query component of the opposite sign to a feature lowers the score "
        f"of every word that has that feature, and one that {word(target)} lacks costs it nothing." + short)
