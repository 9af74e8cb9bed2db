"""Notebook 06's predict-then-verify checkers (exercises 1 and 2): not attempted for the stub,
each wrong prediction named with what was measured, the right answers accepted. Exercise 3's
checker is tested in test_exercises_nb03_06.py."""

import pytest
import torch

from helpers.exercises import nb06

RIGHT_DIRECTION = {"a": True, "b": True, "c": False}
RIGHT_TERMS = {"x.x": "constant", "x.PE(key)": "positions", "PE(query).x": "positions",
               "PE(query).PE(key)": "offset"}


def test_before_or_after_accepts_the_measured_truth(capsys):
    assert nb06.check_before_or_after(RIGHT_DIRECTION)
    assert "correct!" in capsys.readouterr().out


def test_before_or_after_not_attempted(capsys):
    assert not nb06.check_before_or_after({"a": ..., "b": ..., "c": ...})
    assert not nb06.check_before_or_after(None)
    assert "not attempted yet" in capsys.readouterr().out


@pytest.mark.parametrize(("key", "match"), [
    ("a", r"\(a\) you said False, it is True: .* cos is even"),
    ("b", r"\(b\) you said False, it is True: .* a rotation back is the transpose"),
    ("c", r"\(c\) you said True, it is False: for one q and k, offset \+3 scores -?\d\.\d{4} and offset "
          r"−3 scores -?\d\.\d{4}"),
])
def test_before_or_after_names_each_wrong_prediction_with_the_measurement(key, match):
    with pytest.raises(AssertionError, match=match) as err:
        nb06.check_before_or_after({**RIGHT_DIRECTION, key: not RIGHT_DIRECTION[key]})
    assert str(err.value).startswith("1 of 3 predictions are wrong")


def test_before_or_after_rejects_answers_that_are_not_bools():
    with pytest.raises(AssertionError, match=r"\(a\): answer True or False, got 'yes'"):
        nb06.check_before_or_after({**RIGHT_DIRECTION, "a": "yes"})
    with pytest.raises(AssertionError, match=r"\['c'\] missing"):
        nb06.check_before_or_after({"a": True, "b": True})


def test_score_terms_accepts_the_measured_kinds(capsys):
    assert nb06.check_score_terms(RIGHT_TERMS)
    assert "correct!" in capsys.readouterr().out
    assert not nb06.check_score_terms(dict.fromkeys(nb06.SCORE_TERMS, ...))
    assert "not attempted" in capsys.readouterr().out


def test_score_terms_a_common_mistake_gets_the_reason():
    # "adding positions makes every score depend on the offset": the cross terms do not
    wrong = dict.fromkeys(nb06.SCORE_TERMS, "offset") | {"x.x": "constant"}
    with pytest.raises(AssertionError, match=r"2 of 4 are wrong") as err:
        nb06.check_score_terms(wrong)
    assert "x.PE(key): you said 'offset', measured 'positions'" in str(err.value)
    assert "PE(query).x: you said 'offset', measured 'positions'" in str(err.value)


def test_score_terms_rejects_unknown_kinds_and_terms():
    with pytest.raises(AssertionError, match=r"each answer is one of \['constant', 'offset', 'positions'\]"):
        nb06.check_score_terms({**RIGHT_TERMS, "x.x": "fixed"})
    with pytest.raises(AssertionError, match=r"unknown term\(s\) \['q.k'\]"):
        nb06.check_score_terms({**RIGHT_TERMS, "q.k": "offset"})


def test_term_kind_tells_the_three_kinds_apart():
    assert nb06.term_kind(torch.full((4, 4), 2.0, dtype=torch.float64)) == "constant"
    i, j = torch.meshgrid(torch.arange(4.0), torch.arange(4.0), indexing="ij")
    assert nb06.term_kind((j - i).double() ** 2) == "offset"
    assert nb06.term_kind(j.double()) == "positions"


def test_offset_matrix_moves_the_table_forward():
    from helpers import sinusoidal_positional_encoding

    pe = sinusoidal_positional_encoding(30, 16).double()
    m = nb06.offset_matrix(5, 16)  # (d_model, d_model)
    torch.testing.assert_close(pe[:-5] @ m.T, pe[5:], atol=1e-5, rtol=0)
