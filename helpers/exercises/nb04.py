"""Checkers for the exercises of notebook 04 (masks)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["CHANGE_CASES", "check_allowed_keys", "check_changed_outputs", "check_sliding_window_mask"]


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
                             + _window_mistakes(got, want, window))


def _window_mistakes(got: torch.Tensor, want: torch.Tensor, window: int) -> str:
    """Say what is wrong with the first (query, key) pairs that differ, by the rule they break
    (the future, the window's reach), without printing the whole answer."""
    lines = []
    for i, j in (got != want).nonzero().tolist()[:3]:
        if got[i, j] and j > i:
            lines.append(f"query {i} may see key {j}, which is in its future")
        elif got[i, j]:
            lines.append(f"query {i} may see key {j}, {i - j} positions back: further than a window of {window} "
                         f"reaches (itself and the {window - 1} before it)")
        else:
            where = "itself" if i == j else f"{i - j} position{'s' if i - j > 1 else ''} back"
            lines.append(f"query {i} may not see key {j} ({where}), which a window of {window} allows")
    return "\n".join(lines)


# Exercise 2: which outputs change when one token changes, under causal AND padding masks?
CHANGE_CASES = {
    "a": ((6, 1, 9, 3, 0, 0), 4),  # right padding: change the padding token at position 4
    "b": ((0, 0, 2, 5, 8, 1), 2),  # left padding: change the real token at position 2
    "c": ((0, 0, 2, 5, 8, 1), 0),  # left padding: change the padding token at position 0
}


def _changed_outputs(ids: tuple[int, ...], position: int, pad_id: int = 0) -> list[int]:
    """Positions whose attention output changes when the embedding at ``position`` changes
    (random embeddings and projections, causal AND not-padding mask, empty rows give zeros)."""
    from ..attention import padding_mask, scaled_dot_product_attention

    g = torch.Generator().manual_seed(4)
    n, d = len(ids), 4
    x = torch.randn(n, d, generator=g)  # (L, d_model)
    w_q, w_k, w_v = (torch.randn(d, d, generator=g) for _ in range(3))  # (d_model, d_k) each
    mask = torch.ones(n, n, dtype=torch.bool).tril() & padding_mask(torch.tensor([ids]), pad_id)[0, 0]

    def out(x):
        return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask)[0]  # (L, d_v)

    x2 = x.clone()
    x2[position] = torch.randn(d, generator=g)
    return ((out(x2) - out(x)).abs().amax(-1) > 1e-6).nonzero().flatten().tolist()


def _why(case: str, got: list[int], want: list[int]) -> str:
    ids, position = CHANGE_CASES[case]
    padding = ids[position] == 0
    extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    reasons = []
    if any(p < position for p in extra):
        reasons.append(f"positions before {position} cannot see it (causal mask)")
    if padding and any(p > position for p in extra):
        reasons.append("no query may attend to a padding key, so later positions do not see it")
    if padding and position in missing:
        reasons.append("a padding mask hides padding KEYS; the padding token's own query still "
                       "attends to the real tokens before it, so its own output changes")
    if padding and position in extra and not want:
        reasons.append(f"query {position} has no key left (its keys are all padding or in the future), "
                       "so its output is zeros whatever its query")
    if not padding and any(p > position for p in missing):
        reasons.append(f"every later position may attend to key {position}: it is a real token")
    if not padding and position in missing:
        reasons.append(f"query {position} attends to itself, so its own output changes too")
    return "; ".join(reasons) or "that is not what the masks allow"


@checker("Exercise 2 (which outputs change?)")
def check_changed_outputs(answer):
    """``answer``: dict {"a": [...], "b": [...], "c": [...]} of the output positions that change."""
    if not isinstance(answer, dict) or set(answer) != set(CHANGE_CASES):
        got = sorted(answer) if isinstance(answer, dict) else type(answer).__name__
        raise AssertionError(f"expected a dict with the keys {sorted(CHANGE_CASES)}, got {got}")
    for case in sorted(CHANGE_CASES):
        ids, position = CHANGE_CASES[case]
        try:
            got = sorted(int(p) for p in answer[case])
        except (TypeError, ValueError):
            raise AssertionError(f"case {case!r}: expected a list of positions (0 to {len(ids) - 1}), "
                                 f"got {answer[case]!r}") from None
        want = _changed_outputs(ids, position)
        if got != want:
            raise AssertionError(f"case {case!r} (tokens {list(ids)}, position {position} changes): "
                                 f"you listed {got}, but {_why(case, got, want)}")


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
        try:
            got = sorted(int(k) for k in answer[q])
        except (TypeError, ValueError):
            raise AssertionError(f"query {q}: expected a list of key positions (0 to {len(_TOKENS) - 1}, or [] "
                                 f"for none), got {answer[q]!r}") from None
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
