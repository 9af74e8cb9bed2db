"""Checkers for the exercises of notebook 00 (start here)."""

from __future__ import annotations

import operator

from ._common import call, checker

__all__ = ["check_alignment", "check_bottleneck_sizes"]

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
    if answer == list(range(len(_FRENCH))):
        raise AssertionError(
            f"you give word-for-word order {answer}, but French puts this adjective after the "
            "noun: 'maison blanche' is 'house white'")
    wrong = [f"{_FRENCH[i]!r} -> {_ENGLISH[j]!r}" for i, j in enumerate(answer) if j != _ALIGNMENT[i]]
    assert not wrong, (
        f"expected each French word paired with the English word it translates; you pair "
        f"{', '.join(wrong)}, which do not translate each other")


@checker("Exercise 2 (bottleneck)")
def check_bottleneck_sizes(fn) -> None:
    """``fn(n_words, hidden_size)`` returns (numbers an RNN decoder receives, numbers attention sees)."""
    for n_words, hidden in ((3, 4), (50, 256), (7, 1)):
        got = call(fn, n_words, hidden)
        try:
            rnn, attn = (int(v) for v in got)
        except (TypeError, ValueError):
            raise AssertionError(
                f"expected a pair of whole numbers (rnn_numbers, attention_numbers), got {got!r}") from None
        if rnn != hidden:
            raise AssertionError(
                f"for {n_words} words and hidden size {hidden} you say the RNN decoder receives {rnn} "
                "numbers; expected the size of the encoder's last hidden state only, whatever "
                "the length")
        if attn != n_words * hidden:
            raise AssertionError(
                f"for {n_words} words and hidden size {hidden} you say attention can look at {attn} "
                "numbers; expected one hidden state per source word, all kept")
