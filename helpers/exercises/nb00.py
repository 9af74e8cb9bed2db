"""Checkers for the exercises of notebook 00 (start here)."""

from __future__ import annotations

import operator

from ._common import checker

__all__ = ["SUMMARIES", "WRONG_TRIES", "check_alignment", "check_order_aware"]

# Exercises 1 and 2 ask for predictions: a first wrong answer gets a hint, from the second on the
# explanation as well (``WRONG_TRIES`` counts them in this session).
WRONG_TRIES = {"alignment": 0, "order_aware": 0}

# "the white house is big" -> "la maison blanche est grande"
_ENGLISH = ["the", "white", "house", "is", "big"]
_FRENCH = ["la", "maison", "blanche", "est", "grande"]
_ALIGNMENT = [0, 2, 1, 3, 4]


@checker("Exercise 1 (alignment)")
def check_alignment(answer) -> None:
    """``answer[i]`` is the index of the English word that French word i translates."""
    expected = f"expected a list of {len(_FRENCH)} whole numbers (indices into the English sentence)"
    if isinstance(answer, str | bytes):
        raise AssertionError(f"{expected}, got the text {answer!r}: write the numbers as a list")
    try:
        answer = [operator.index(a) for a in answer]  # whole numbers only: no "0", no 1.5
    except TypeError:
        raise AssertionError(f"{expected}, got {answer!r}") from None
    assert len(answer) == len(_FRENCH), (
        f"expected one English index per French word ({len(_FRENCH)} of them: {_FRENCH}), "
        f"got {len(answer)}: {answer!r}")
    for i, j in enumerate(answer):
        assert 0 <= j < len(_ENGLISH), (
            f"expected indices from 0 to {len(_ENGLISH) - 1} (the English sentence), got {j} "
            f"for {_FRENCH[i]!r}")
    if answer == _ALIGNMENT:
        return
    WRONG_TRIES["alignment"] += 1
    if WRONG_TRIES["alignment"] == 1:  # the first wrong try: a hint, not yet the answer
        raise AssertionError(
            f"you give {answer}, but that is not how the two sentences pair up. Hint: French puts most "
            "adjectives after the noun. Try again; a second wrong answer shows the explanation.")
    if answer == list(range(len(_FRENCH))):
        raise AssertionError(
            f"you give word-for-word order {answer}, but French puts this adjective after the "
            "noun: 'maison blanche' is 'house white'")
    wrong = [f"{_FRENCH[i]!r} -> {_ENGLISH[j]!r}" for i, j in enumerate(answer) if j != _ALIGNMENT[i]]
    assert not wrong, (
        f"expected each French word paired with the English word it translates; you pair "
        f"{', '.join(wrong)}, which do not translate each other")


# Exercise 2: which summaries of a sentence depend on the order of its words?
SUMMARIES = ("mean", "sum", "max", "last RNN state", "all RNN states")
_ORDER_AWARE = {"mean": False, "sum": False, "max": False, "last RNN state": True, "all RNN states": True}
_WHY = {
    "mean": "the mean adds the word vectors up (then divides by their number), and a sum does not "
            "care in which order its terms come",
    "sum": "a sum does not care in which order its terms come: 'dog bites man' and 'man bites dog' "
           "add up the same three vectors",
    "max": "the largest value of each feature over the words is the same whatever order the words "
           "come in",
    "last RNN state": "the RNN reads the words one after another and each step starts from the "
                      "previous state, so after 'dog bites' it is in another state than after "
                      "'man bites'",
    "all RNN states": "the states come one per position, in order, and each depends on the words "
                      "before it",
}


@checker("Exercise 2 (which summaries see word order?)")
def check_order_aware(answer) -> None:
    """``answer``: dict {summary: True if it can tell 'dog bites man' from 'man bites dog'}."""
    expected = f"expected a dict with the keys {list(SUMMARIES)} and True/False values"
    if not isinstance(answer, dict):
        raise AssertionError(f"{expected}, got {type(answer).__name__}")
    missing = [k for k in SUMMARIES if k not in answer]
    extra = [k for k in answer if k not in SUMMARIES]
    if missing or extra:
        raise AssertionError(f"{expected}; missing {missing}, unknown {extra}")
    for name in SUMMARIES:
        value = answer[name]
        if value is None or value is Ellipsis:
            raise AssertionError(f"{name!r}: still {value!r}; write True or False")
        if not isinstance(value, bool):
            raise AssertionError(f"{name!r}: expected True or False, got {value!r}")
    wrong = [name for name in SUMMARIES if answer[name] != _ORDER_AWARE[name]]
    if not wrong:
        return
    WRONG_TRIES["order_aware"] += 1
    if WRONG_TRIES["order_aware"] == 1:  # the first wrong try: how many and how to find out, not which
        raise AssertionError(
            f"{len(wrong)} of {len(SUMMARIES)} predictions are wrong. "
            "Hint: compute each summary of sentence_a and of sentence_b and compare them, e.g. "
            "rnn(sentence_a[None]) with rnn(sentence_b[None]) for the RNN (it returns all states and "
            "the last one). Try again; a second wrong answer names them and shows the reasons.")
    lines = [f"{name!r}: you say {'it can' if answer[name] else 'it cannot'} tell the two "
             f"sentences apart, but {_WHY[name]}" for name in wrong]
    raise AssertionError("\n".join(lines))
