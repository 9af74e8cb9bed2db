"""Checkers for the exercises of notebook 14 (induction heads)."""

from __future__ import annotations

import torch

from ..data.repeated import repeated_tokens
from ..induction import induction_score, per_position_loss, previous_token_score
from ._common import call, checker

__all__ = ["check_ablation_guess", "check_induction_score", "check_previous_token_score"]


def _patterns(n: int, kind: str) -> torch.Tensor:
    """Causal (3, 2n, 2n) test patterns: random rows, plus one sharp pattern of the given kind."""
    g = torch.Generator().manual_seed(14)
    size = 2 * n
    scores = torch.randn(3, size, size, generator=g)
    scores = scores.masked_fill(~torch.ones(size, size, dtype=torch.bool).tril(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    sharp = torch.zeros(size, size)
    for t in range(size):
        j = t - 1 if kind == "previous" else (t - n + 1 if t >= n else t)
        sharp[t, max(j, 0)] = 1.0
    w[0] = sharp
    return w


def _as_scores(got, want: torch.Tensor, what: str) -> torch.Tensor:
    got = torch.as_tensor(got, dtype=torch.float32)
    assert got.shape == want.shape, (
        f"{what} should return one score per pattern: shape {tuple(want.shape)}, got {tuple(got.shape)}"
    )
    return got


@checker("Exercise 1 (induction score)")
def check_induction_score(fn):
    """``fn(weights (..., 2n, 2n), n) -> (...)``: mean attention from t >= n to t - n + 1."""
    n = 5
    w = _patterns(n, "induction")
    want = induction_score(w, n)
    got = _as_scores(call(fn, w, n), want, "your function")
    duplicate = w.diagonal(offset=-n, dim1=-2, dim2=-1).mean(-1)  # the previous occurrence itself
    if torch.allclose(got, duplicate, atol=1e-4):
        raise AssertionError(
            "you measured attention to t - n, the previous occurrence of the current token (a "
            "'duplicate-token' head). An induction head looks one further: at the token that "
            f"followed it. On a perfect induction pattern you got {got[0]:.3f}, expected {want[0]:.3f}"
        )
    assert torch.allclose(got, want, atol=1e-4), (
        f"scores differ: expected {[round(v, 3) for v in want.tolist()]}, got "
        f"{[round(v, 3) for v in got.tolist()]} (which queries t do you average over?)"
    )


@checker("Exercise 2 (previous-token score)")
def check_previous_token_score(fn):
    """``fn(weights (..., L, L)) -> (...)``: mean attention from each t >= 1 to t - 1."""
    w = _patterns(6, "previous")
    want = previous_token_score(w)
    got = _as_scores(call(fn, w), want, "your function")
    if torch.allclose(got, w.diagonal(dim1=-2, dim2=-1).mean(-1), atol=1e-4):
        raise AssertionError("you measured attention to the current position t (the diagonal), "
                             "not to the previous one")
    assert torch.allclose(got, want, atol=1e-4), (
        f"scores differ: expected {[round(v, 3) for v in want.tolist()]}, got "
        f"{[round(v, 3) for v in got.tolist()]}. On the sharp pattern (first entry) every query "
        "t >= 1 looks at t - 1; does your average include the query at t = 0, which has no t - 1?"
    )


@checker("Exercise 3 (which layer-0 head matters)")
def check_ablation_guess(guess, model, n: int = 12):
    """``guess = (0, head)``: the layer-0 head whose zeroing raises the repeated-half loss most."""
    if (not isinstance(guess, tuple) or len(guess) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in guess)):
        raise AssertionError(f"answer with a (layer, head) tuple of ints, got {guess!r}")
    heads = [(0, h) for h in range(model.num_heads)]
    assert guess in heads, f"the question is about layer 0, whose heads are {heads}; got {guess}"
    ids = repeated_tokens(256, n, model.vocab_size, torch.Generator().manual_seed(99))
    ids = ids.to(next(model.parameters()).device)
    base = per_position_loss(model, ids)[n:].mean().item()
    loss = {hd: per_position_loss(model, ids, ablate=[hd])[n:].mean().item() for hd in heads}
    best = max(loss, key=loss.get)
    assert guess == best, (
        f"zeroing head {guess} takes the repeated-half loss only from {base:.2f} to "
        f"{loss[guess]:.2f} nats; the other head of layer 0 raises it more. Which head writes what "
        "the induction heads of layer 1 read?"
    )
