"""Checkers for the exercises of notebook 03 (trainable self-attention).

Both exercises use the running example (helpers.data.toy_embeddings) and the projections set by hand
in Step 1 of the notebook: W_q reads "describes a size" (3 x size) and "is an action" (3 x action),
W_k offers "a big animal" (animal + size) and "a small animal" (animal - size), d_k = 2.
"""

from __future__ import annotations

import math

import torch

from ..data.toy_embeddings import TOKENS, toy_embeddings
from ._common import checker

__all__ = ["HAND_W_K", "HAND_W_Q", "check_mouse_looks_at", "check_mouse_query_weights"]

HAND_W_Q = ((0.0, 0.0), (0.0, 0.0), (0.0, 3.0), (3.0, 0.0))  # (d_model, d_k): rows article, animal, action, size
HAND_W_K = ((0.0, 0.0), (1.0, 1.0), (0.0, 0.0), (1.0, -1.0))  # (d_model, d_k)


WRONG_TRIES = {"mouse_looks_at": 0, "mouse_query_weights": 0}  # wrong answers so far in this session: a hint
# first, then the explanation (exercise 1) or one W_q that works (exercise 2)
FEATURES = ("article", "animal", "action", "size")  # the rows of W_q


def _weights(w_q: torch.Tensor, w_k: torch.Tensor) -> torch.Tensor:
    x = toy_embeddings()  # (L, d_model)
    q, k = x @ w_q, x @ w_k  # (L, d_k) each
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)  # (L, L)


def _words(answer, what: str) -> set[str]:
    if isinstance(answer, str):
        answer = [answer]
    try:
        words = list(answer)
    except TypeError:
        raise AssertionError(f"expected {what}, got {type(answer).__name__}") from None
    if not words or not all(isinstance(w, str) for w in words):
        raise AssertionError(f"expected {what}, got {answer!r}")
    unknown = [w for w in words if w not in TOKENS]
    if unknown:
        raise AssertionError(f"{unknown} are not words of the sentence {list(TOKENS)}")
    return set(words)


@checker("Exercise 1 (predict where 'mouse' looks)")
def check_mouse_looks_at(answer) -> None:
    """``answer``: the word, or set of words, that get the largest weight from the query "mouse"
    with the hand-set projections (a set when several tie)."""
    got = _words(answer, "a word of the sentence, or a set of words such as {'cat', 'big'}")
    w = _weights(torch.tensor(HAND_W_Q), torch.tensor(HAND_W_K))[TOKENS.index("mouse")]  # (L,)
    top = {t for t, v in zip(TOKENS, w.tolist(), strict=True) if v >= w.max().item() - 1e-6}
    if got == top:
        return
    shown = ", ".join(f"{t} {v:.4f}" for t, v in zip(TOKENS, w.tolist(), strict=True))
    WRONG_TRIES["mouse_looks_at"] += 1
    if WRONG_TRIES["mouse_looks_at"] == 1 and got < top:  # the first wrong try: a hint, not yet the answer
        raise AssertionError(
            f"you name {sorted(got)}: it does get the largest weight, but not alone. Hint: another word has "
            "exactly the same key on the column that matters. Try again; a second wrong answer shows the weights.")
    if WRONG_TRIES["mouse_looks_at"] == 1:
        raise AssertionError(
            f"you name {sorted(got)}, but that is not where 'mouse' looks most. Hint: compute the query of "
            "'mouse' first (its embedding times W_q: which features of 'mouse' does W_q read?), then its dot "
            "product with each word's key. Try again; a second wrong answer shows the explanation.")
    why = ("'mouse' has size -0.8, so its query is -2.4 on column 0 ('describes a size') and 0 on "
           "column 1: it prefers the keys with the SMALLEST 'big animal' value (animal + size). "
           "The articles have 0 there, the others more (chased 0.1, mouse 0.2, big 1, cat 1.5)")
    if got < top:
        raise AssertionError(f"you name {sorted(got)}, but {sorted(top - got)} get exactly the same weight "
                             f"(weights: {shown})")
    raise AssertionError(f"you name {sorted(got)}; the largest weight goes to {sorted(top)}. {why}. "
                         f"Weights: {shown}")


@checker("Exercise 2 (make 'mouse' look at 'cat')")
def check_mouse_query_weights(w_q) -> None:
    """``w_q`` (d_model, d_k) = (4, 2), used with the hand-set W_k: "mouse" must give "cat" at least
    half of its weight, and "big" must still look most at "cat", "chased" most at "mouse"."""
    try:
        w_q = torch.as_tensor(w_q, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        raise AssertionError(f"expected a (4, 2) matrix of numbers, got {type(w_q).__name__}") from None
    if w_q.shape != (4, 2):
        raise AssertionError(f"expected W_q of shape (d_model, d_k) = (4, 2) (rows article, animal, action, "
                             f"size), got {tuple(w_q.shape)}")
    if not torch.isfinite(w_q).all():
        raise AssertionError(f"expected finite numbers, got {w_q.tolist()}")
    w = _weights(w_q, torch.tensor(HAND_W_K))  # (L, L)
    x = toy_embeddings()
    i = TOKENS.index

    def looks_at(word: str) -> str:
        return TOKENS[int(w[i(word)].argmax())]

    def query(word: str) -> str:
        q = (x[i(word)] @ w_q).tolist()
        return f"({q[0]:.2f}, {q[1]:.2f})"

    on_cat = w[i("mouse"), i("cat")].item()
    problem = None
    if on_cat < 0.5:
        problem = (
            f"expected 'mouse' to give 'cat' at least 0.5, got {on_cat:.4f} (it looks most at "
            f"{looks_at('mouse')!r}, {w[i('mouse')].max().item():.4f}). Its query is {query('mouse')}: "
            "key column 0 is 'a big animal' (cat 1.5, big 1.0), column 1 'a small animal' (mouse 1.8). "
            "'mouse' is an animal with size -0.8: ")
        hand = torch.tensor(HAND_W_Q)
        if w_q[1, 0] > hand[1, 0] and torch.equal(w_q[[0, 2, 3]], hand[[0, 2, 3]]):  # only the animal row changed,
            # toward column 0, too little
            problem += "the animal row is the right row; a larger entry in its column 0 moves 'mouse' further"
        else:
            problem += "which row of W_q can push its query along column 0?"
    for word, target in (("big", "cat"), ("chased", "mouse")):
        if problem is None and looks_at(word) != target:
            problem = (f"'mouse' now gives 'cat' {on_cat:.4f}, but {word!r} looks most at {looks_at(word)!r} "
                       f"instead of {target!r} (its query is {query(word)}): " + _culprit(w_q, x[i(word)], word))
    if problem is None:
        return
    WRONG_TRIES["mouse_query_weights"] += 1
    if WRONG_TRIES["mouse_query_weights"] > 1:  # from the second wrong try on: one answer
        problem += (" " if problem.endswith("?") else ". ") + (
                    "One W_q that works: the hand-set one with the animal row set to (8, 0), which moves the "
                    "query of 'mouse' by (8, 0) and that of 'chased' (0.1 of an animal) only by (0.8, 0)")
    raise AssertionError(problem)


def _culprit(w_q: torch.Tensor, x_word: torch.Tensor, word: str) -> str:
    """What to change: the changed row of W_q that moves the query of ``word`` most. If ``word`` has only
    a little of that row's feature (less than 'mouse'), the row is the right one and its size is wrong."""
    x_mouse = toy_embeddings()[TOKENS.index("mouse")]
    moved = x_word[:, None] * (w_q - torch.tensor(HAND_W_Q))  # (d_model, d_k): each row's change of the query
    r = int(moved.norm(dim=-1).argmax())
    if moved[r].norm() > 0 and 0 < abs(x_word[r]) < abs(x_mouse[r]):
        return (f"{word!r} has {abs(x_word[r]):.1f} of the {FEATURES[r]} feature ('mouse' has {abs(x_mouse[r]):.1f}), "
                f"so the {FEATURES[r]} row you changed moves its query too: a smaller entry in that row keeps "
                f"{word!r} where it was while still moving 'mouse'")
    return f"change the row that 'mouse' has and {word!r} lacks"
