"""The checker decorator every exercise uses (helpers/exercises/_common.py)."""

import pytest
from IPython.core.interactiveshell import InteractiveShell

from helpers.exercises._common import NotAttempted, Verdict, call, checker


@checker("Exercise 9")
def check_double(fn):
    assert call(fn, 2) == 4, f"double(2) should be 4, got {call(fn, 2)}"


def stub(x):
    raise NotImplementedError


def test_correct_answer_prints_correct_and_is_truthy(capsys):
    assert check_double(lambda x: 2 * x)
    assert capsys.readouterr().out == "Exercise 9: correct!\n"


@pytest.mark.parametrize("answer", [None, ..., stub])
def test_untouched_stub_is_not_attempted_and_falsy(answer, capsys):
    assert not check_double(answer)
    assert "Exercise 9: not attempted yet" in capsys.readouterr().out


def test_wrong_answer_raises_with_the_reason():
    with pytest.raises(AssertionError, match=r"double\(2\) should be 4, got 3"):
        check_double(lambda x: x + 1)


def test_a_verdict_shows_nothing_in_a_notebook():
    # IPython's formatter produces no output at all for it: no stray "False" under the message.
    assert InteractiveShell.instance().display_formatter.format(Verdict(False)) == ({}, {})
    assert repr(Verdict(True)) == "Verdict(correct=True)"


@checker("Exercise 8")
def check_two_parts(fn, prediction):
    assert call(fn, 2) == 4, "double(2) should be 4"
    if prediction is None or prediction is Ellipsis:
        raise NotAttempted("the function is right; now the prediction.")


def test_a_first_part_done_says_so_instead_of_not_attempted(capsys):
    assert not check_two_parts(lambda x: 2 * x, ...)
    assert capsys.readouterr().out == "Exercise 8: the function is right; now the prediction.\n"
    assert not check_two_parts(stub, ...)
    assert "Exercise 8: not attempted yet" in capsys.readouterr().out
