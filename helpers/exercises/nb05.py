"""Checkers for the exercises of notebook 05 (multi-head attention)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["SHAPE_SIZES", "WRONG_TRIES", "check_head_one", "check_mha_param_count", "check_shapes"]


# Exercise 1: x = arange(12).view(1, 3, 4) (B = 1, L = 3, d_model = 4), h = 2 heads of d_k = 2.
_X = torch.arange(12.0).view(1, 3, 4)  # token t holds the features 4t .. 4t + 3
_HEAD_1 = {"split": _X.view(1, 3, 2, 2).transpose(1, 2)[0, 1].tolist(),  # [[2, 3], [6, 7], [10, 11]]
           "direct view": _X.view(1, 2, 3, 2)[0, 1].tolist()}  # [[6, 7], [8, 9], [10, 11]]
_TOKENS = [1, 2]  # the tokens whose features the direct view's head 1 holds (6, 7 of token 1; 8..11 of token 2)
_KEYS = ("split", "direct view", "tokens")
# The "tokens" question is a prediction: a first wrong answer gets a hint, from the second on the
# answer as well (``WRONG_TRIES`` counts them in this session).
WRONG_TRIES = {"tokens": 0}
_HEAD_0 = {"split": _X.view(1, 3, 2, 2).transpose(1, 2)[0, 0].tolist(), "direct view": _X.view(1, 2, 3, 2)[0, 0].tolist()}


def _rows(value, name: str) -> list[list[float]]:
    """``value`` as a (3, 2) list of numbers, or an AssertionError saying what was expected."""
    expected = f"{name!r}: expected head 1 as 3 rows (one per position) of 2 numbers (d_k), like [[0, 0], [0, 0], [0, 0]]"
    try:
        rows = torch.as_tensor(value, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        raise AssertionError(f"{expected}, got {value!r}") from None
    if rows.shape != (3, 2):
        hint = ": that is (d_k, L), transposed" if rows.shape == (2, 3) else ""
        raise AssertionError(f"{expected}, got shape {tuple(rows.shape)}{hint}")
    return [[int(v) if float(v).is_integer() else v for v in row] for row in rows.tolist()]


@checker("Exercise 1 (the wrong split)")
def check_head_one(answer):
    """``answer``: {"split": head 1 by view(B, L, h, d_k).transpose(1, 2), "direct view": head 1 by
    view(B, h, L, d_k)}, each a (L, d_k) = (3, 2) list, for x = arange(12).view(1, 3, 4) and h = 2, and
    "tokens": the indices of the tokens whose features the direct view's head 1 holds."""
    if not isinstance(answer, dict) or set(answer) != set(_KEYS):
        got = sorted(answer) if isinstance(answer, dict) else type(answer).__name__
        raise AssertionError(f"expected a dict with the keys {sorted(_KEYS)}, got {got}")
    split = _rows(answer["split"], "split")
    if split != _HEAD_1["split"]:
        if split == _HEAD_1["direct view"]:
            why = "that is what the direct view gives"
        elif split == _HEAD_0["split"]:
            why = "that is head 0, each token's first d_k features"
        else:
            why = "head 1 of the split holds, for every token, its second slice of d_k features"
        raise AssertionError(f"'split': you wrote {split}; {why}. view(B, L, h, d_k) keeps each token's 4 features "
                             "together and cuts them into h = 2 slices of 2; transpose(1, 2) only moves the head axis")
    direct = _rows(answer["direct view"], "direct view")
    if direct != _HEAD_1["direct view"]:
        if direct == _HEAD_1["split"]:
            why = ("that is the right split: the direct view has the same shape but not the same numbers. view "
                   "never moves a number; it reads the 12 in memory order and cuts them into (h, L, d_k) blocks")
        elif direct == _HEAD_0["direct view"]:
            why = "that is head 0 of the direct view, the first 6 numbers in memory"
        else:
            why = ("view reads the 12 numbers in memory order (token 0's 4 features, then token 1's, ...): "
                   "head 1 is the second block of L x d_k = 6 of them, cut into rows of 2")
        raise AssertionError(f"'direct view': you wrote {direct}; {why}")
    _check_tokens(answer["tokens"])


def _check_tokens(value) -> None:
    try:
        tokens = sorted({int(t) for t in value})
    except (TypeError, ValueError):
        raise AssertionError(f"'tokens': give a list of token indices (0, 1 or 2), got {value!r}") from None
    if tokens == _TOKENS:
        return
    if tokens == [1]:
        hint = "the middle row is not the only one: which token do the rows of 'direct view' come from?"
    else:
        hint = ("token t holds the features 4t .. 4t + 3: which token does each number of your 'direct view' "
                "rows belong to?")
    WRONG_TRIES["tokens"] += 1
    if WRONG_TRIES["tokens"] == 1:
        raise AssertionError(f"'tokens': you said {tokens}; hint: {hint} Try again; a second wrong answer "
                             "shows the tokens.")
    raise AssertionError(f"'tokens': you said {tokens}; head 1 of the direct view holds features of the tokens "
                         f"{_TOKENS}: 6 and 7 are token 1's last two features, 8 to 11 all of token 2's. One head "
                         "should hold one slice of every token; this one mixes two tokens and skips token 0.")


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
        if bias and got == 4 * d_model * d_model + 4 * (d_model // heads):
            raise AssertionError(f"{case}: the weights are right, the biases are not. Each projection adds one bias "
                                 "per output feature, d_model of them (the heads' d_k-wide slices side by side), "
                                 "not d_k")
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
