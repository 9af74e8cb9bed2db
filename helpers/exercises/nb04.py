"""Checkers for the exercises of notebook 04 (masks)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["check_decoder_mask", "check_sliding_window_mask"]


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
        assert torch.equal(got, want), f"sliding_window_mask({n}, {window}) is wrong:\n{got.int()}\nexpected\n{want.int()}"


def _decoder_reference(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    n = tokens.shape[1]
    causal = torch.ones(n, n, dtype=torch.bool).tril()  # (L, L)
    return causal & (tokens != pad_id)[:, None, None, :]  # (B, 1, L, L)


@checker("Exercise 2 (causal + padding mask)")
def check_decoder_mask(fn):
    """``fn(tokens, pad_id)`` -> (B, 1, L, L) bool: causal AND the key is not padding."""
    tokens = torch.tensor([[5, 6, 7, 0, 0], [8, 9, 3, 4, 2]])
    got = call(fn, tokens, 0)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, "return a torch.bool tensor"
    assert got.shape == (2, 1, 5, 5), (
        f"expected shape (B, 1, L, L) = (2, 1, 5, 5) so that it broadcasts over heads, got {tuple(got.shape)}"
    )
    want = _decoder_reference(tokens, 0)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    if torch.equal(got, causal | (tokens != 0)[:, None, None, :]):
        raise AssertionError("you combined the masks with OR: a key must be allowed by BOTH masks (use &)")
    if torch.equal(got, causal & (tokens != 0)[:, None, :, None]):
        raise AssertionError("the padding mask is on the queries (rows): it must hide padding keys (columns)")
    assert torch.equal(got, want), "the mask is wrong: True exactly where j <= i and token j is not padding"
