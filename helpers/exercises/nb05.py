"""Checkers for the exercises of notebook 05 (multi-head attention)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["SHAPE_SIZES", "check_mha_param_count", "check_shapes", "check_split_heads"]


@checker("Exercise 1 (split the heads)")
def check_split_heads(fn):
    """``fn(x, num_heads)``: (B, L, d_model) -> (B, num_heads, L, d_model // num_heads)."""
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).reshape(2, 3, 8)  # (B, L, d_model)
    got = call(fn, x, 4)
    assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
    after_view = ": that is (B, L, h, d_k), the shape after view; transpose(1, 2) moves the head axis first"
    assert got.shape == (2, 4, 3, 2), (f"expected (B, h, L, d_k) = (2, 4, 3, 2), got {tuple(got.shape)}"
                                       + (after_view if got.shape == (2, 3, 4, 2) else ""))
    if torch.equal(got, x.reshape(2, 4, 3, 2)):
        raise AssertionError(
            "right shape, wrong numbers: a plain reshape to (B, h, L, d_k) mixes tokens into heads. "
            "Reshape to (B, L, h, d_k) first, then swap L and h with transpose(1, 2)"
        )
    want = x.view(2, 3, 4, 2).transpose(1, 2)
    if not torch.equal(got, want):
        b, h, t, _ = ((got != want).nonzero()[0]).tolist()
        raise AssertionError(
            f"right shape, wrong numbers: head {h} of token {t} (batch {b}) holds {got[b, h, t].tolist()}, but it "
            f"must hold the {h}-th slice of width d_k of that token's features, x[b, t, h*d_k:(h+1)*d_k]"
        )


def _count(d_model: int, bias: bool) -> int:
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


@checker("Exercise 2 (parameter count)")
def check_mha_param_count(fn):
    """``fn(d_model, num_heads, bias)`` -> number of parameters of MultiHeadAttention."""
    for d_model, heads, bias in ((8, 2, True), (64, 8, True), (64, 4, False), (512, 8, True)):
        got = call(fn, d_model, heads, bias)
        want = _count(d_model, bias)
        case = f"d_model={d_model}, num_heads={heads}, bias={bias}: got {got}"
        if got == 3 * d_model * d_model + (3 * d_model if bias else 0):
            raise AssertionError(f"{case}, the size of W_q, W_k and W_v: do not forget the output projection W_o")
        if not bias and got == 4 * d_model * d_model + 4 * d_model:
            raise AssertionError(f"{case}: with bias=False the projections have no biases, only the 4 weights")
        if bias and got == 4 * d_model * d_model:
            raise AssertionError(f"{case}, the weights only: each of the 4 projections also has d_model biases")
        other = heads * 2 if d_model % (heads * 2) == 0 else 1
        got_other = call(fn, d_model, other, bias)
        if got == want // heads or got == want * heads or got_other != got:
            raise AssertionError(f"{case}, and {got_other} with num_heads={other}: the count changes with the number "
                                 "of heads, but the heads share d_model (h heads of d_model x d_k side by side are "
                                 "one d_model x d_model projection), so it does not depend on it")
        if got != want:
            raise AssertionError(f"{case}, which is too {'large' if got > want else 'small'}: count 4 projections "
                                 "of d_model x d_model (plus d_model biases each when bias=True)")


_SHAPE_STEPS = ("q", "q_split", "q_heads", "scores", "merged")
SHAPE_SIZES = (2, 10, 48, 4)  # B, L, d_model, num_heads: d_k = 12, every size different


def _shapes(b: int, length: int, d_model: int, h: int) -> dict[str, tuple[int, ...]]:
    d_k = d_model // h
    return {"q": (b, length, d_model), "q_split": (b, length, h, d_k), "q_heads": (b, h, length, d_k),
            "scores": (b, h, length, length), "merged": (b, length, d_model)}


@checker("Exercise 3 (the shape at each step)")
def check_shapes(answer):
    """``answer``: dict step -> shape tuple for B=2, L=10, d_model=48, num_heads=4 (see the notebook).

    The sizes are all different (d_k = 12), so that (B, L, h, d_k) and (B, L, d_k, h) differ."""
    if not isinstance(answer, dict) or set(answer) != set(_SHAPE_STEPS):
        got = sorted(answer) if isinstance(answer, dict) else type(answer).__name__
        raise AssertionError(f"expected a dict with the keys {list(_SHAPE_STEPS)}, got {got}")
    want = _shapes(*SHAPE_SIZES)
    b, length, d_model, h = SHAPE_SIZES
    d_k = d_model // h
    for step in _SHAPE_STEPS:
        try:
            got = tuple(int(n) for n in answer[step])
        except (TypeError, ValueError):
            raise AssertionError(f"{step}: expected a tuple of sizes such as (2, 3, 4), got {answer[step]!r}") from None
        if got == want[step]:
            continue
        hint = ""
        if d_model in got[1:] and step in ("q_split", "q_heads"):
            hint = f": after the split, each head holds d_k = d_model / h = {d_k} features, not d_model"
        elif step == "scores" and len(got) == 3:
            hint = ": every head has its own (L, L) scores, so the head axis stays"
        elif step == "scores" and d_k in got[2:]:
            hint = ": scores compare positions with positions; d_k is summed away by the matrix product"
        elif step == "q_split" and got == (b, length, d_k, h):
            hint = (": view keeps each token's features in order, so they are cut into h pieces of d_k: "
                    "(B, L, h, d_k), the head index first")
        elif step == "q_heads" and got == (b, length, h, d_k):
            hint = ": that is still the shape after view; transpose(1, 2) moves the head axis before L"
        elif step == "merged" and got in ((b, length, h, d_k), (b, h, length, d_k)):
            hint = (": the heads are still apart; merging transposes them back and reshapes the h pieces of d_k "
                    "into one row of d_model features per token, ready for W_o")
        elif step == "q" and got != want[step] and d_k in got:
            hint = (f": W_q projects d_model to d_model = {d_model} for all heads at once; the split into heads "
                    "of d_k comes after")
        elif sorted(got) == sorted(want[step]):
            hint = ": the right sizes in the wrong order"
        raise AssertionError(f"{step}: got {got}, which is not the shape of this step{hint}")
