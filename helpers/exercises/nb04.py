"""Checkers for the exercises of notebook 04 (masks)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["check_allowed_keys", "check_decoder_mask", "check_sliding_window_mask"]


def _window_reference(n: int, window: int) -> torch.Tensor:
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (j <= i) & (i - j < window)  # (n, n)


@checker("Exercise 1 (sliding-window mask)")
def check_sliding_window_mask(fn):
    """``fn(n, window)`` -> (n, n) bool, True where 0 <= i - j < window."""
    for n, window in ((5, 2), (6, 3), (4, 1), (3, 5)):
        got = call(fn, n, window)
        assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, (
            f"return a torch.bool tensor (True = may attend), got "
            f"{got.dtype if isinstance(got, torch.Tensor) else type(got).__name__}"
        )
        assert got.shape == (n, n), f"sliding_window_mask({n}, {window}) should be ({n}, {n}), got {tuple(got.shape)}"
        want = _window_reference(n, window)
        if torch.equal(got, want):
            continue
        if torch.equal(got, ~want):
            raise AssertionError("your mask is inverted: True must mean 'may attend'")
        if torch.equal(got, _window_reference(n, n)) and window < n:
            raise AssertionError(f"with window={window} that is just the causal mask: limit how far back i may look")
        if torch.equal(got, _window_reference(n, window + 1)) or torch.equal(got, _window_reference(n, window - 1)):
            raise AssertionError(
                f"off by one for n={n}, window={window}: query i sees keys i-window+1 .. i "
                f"(exactly `window` keys, itself included)"
            )
        raise AssertionError(f"sliding_window_mask({n}, {window}) is wrong. Your mask:\n{got.int()}\n"
                             + _row_differences(got, want))


def _row_differences(got: torch.Tensor, want: torch.Tensor, label: str = "query") -> str:
    """Name the first rows that differ, with their counts of allowed keys (not the answer itself)."""
    lines = []
    for index in (got != want).any(-1).nonzero().tolist()[:3]:
        row = tuple(index)
        where = f"{label} {row[-1]}" if len(row) == 1 else f"sequence {row[0]}, {label} {row[-1]}"
        lines.append(f"{where}: expected {int(want[row].sum())} allowed keys, got {int(got[row].sum())}")
    return "\n".join(lines)


def _decoder_reference(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    n = tokens.shape[1]
    causal = torch.ones(n, n, dtype=torch.bool).tril()  # (L, L)
    return causal & (tokens != pad_id)[:, None, None, :]  # (B, 1, L, L)


@checker("Exercise 2 (causal + padding mask)")
def check_decoder_mask(fn):
    """``fn(tokens, pad_id)`` -> (B, 1, L, L) bool: causal AND the key is not padding."""
    tokens = torch.tensor([[5, 6, 7, 0, 0],  # right padding
                           [8, 9, 3, 4, 2],  # none
                           [0, 0, 4, 5, 6]])  # left padding
    got = call(fn, tokens, 0)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, (
        f"return a torch.bool tensor, got {got.dtype if isinstance(got, torch.Tensor) else type(got).__name__}"
    )
    assert got.shape == (3, 1, 5, 5), (
        f"expected shape (B, 1, L, L) = (3, 1, 5, 5) so that it broadcasts over heads, got {tuple(got.shape)}"
    )
    want = _decoder_reference(tokens, 0)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    real = tokens != 0  # (B, L)
    if torch.equal(got, causal | real[:, None, None, :]):
        raise AssertionError("you combined the masks with OR: a key must be allowed by BOTH masks")
    if torch.equal(got, causal & real[:, None, :, None]):
        raise AssertionError("the padding mask is on the queries (rows): it must hide padding keys (columns)")
    lengths = real.sum(-1)  # (B,) real tokens per sequence
    if torch.equal(got, causal & (torch.arange(5)[None, :] < lengths[:, None])[:, None, None, :]):
        raise AssertionError("right for right padding, wrong for the left-padded sequence 2: you assumed the "
                             "padding comes at the end. Find padding by its id, wherever it is")
    if torch.equal(got, causal.T & real[:, None, None, :]):
        raise AssertionError("your causal part lets queries see the future: key j is allowed only when j <= i")
    if not torch.equal(got, want):
        raise AssertionError("the mask is wrong: True exactly where the key is not in the future and not "
                             "padding.\n" + _row_differences(got[:, 0], want[:, 0]))


_TOKENS = torch.tensor([0, 0, 7, 3, 9, 5])  # pad_id = 0: two padding tokens at the start
_QUERIES = (1, 3, 5)


def _allowed_reference() -> dict[int, list[int]]:
    mask = _window_reference(6, 3) & (_TOKENS != 0)[None, :]  # (L, L): window 3, causal, not padding
    return {q: mask[q].nonzero().flatten().tolist() for q in _QUERIES}


@checker("Exercise 3 (predict what a mask lets through)")
def check_allowed_keys(answer):
    """``answer``: dict {query: sorted list of the keys it may attend to} for queries 1, 3 and 5."""
    if not isinstance(answer, dict) or set(answer) != set(_QUERIES):
        got = sorted(answer) if isinstance(answer, dict) else type(answer).__name__
        raise AssertionError(f"expected a dict with the queries {list(_QUERIES)} as keys, got {got}")
    want = _allowed_reference()
    for q in _QUERIES:
        got = sorted(int(k) for k in answer[q])
        if got == want[q]:
            continue
        extra, missing = sorted(set(got) - set(want[q])), sorted(set(want[q]) - set(got))
        reasons = []
        if any(_TOKENS[k] == 0 for k in extra):
            reasons.append("it includes a padding key")
        if any(k > q for k in extra):
            reasons.append("it includes a future key")
        if any(k <= q - 3 for k in extra):
            reasons.append("it reaches further back than the window of 3")
        if missing:
            reasons.append(f"it leaves out {len(missing)} allowed key(s)")
        raise AssertionError(f"query {q}: you listed {got}, " + ("; ".join(reasons) or "which is not what the mask allows"))
