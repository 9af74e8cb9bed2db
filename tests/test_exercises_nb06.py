"""Notebook 06's checkers. Exercises 1 and 2 (predict, then verify): not attempted for the stub,
each wrong prediction named with what was measured, the right answers accepted. Exercise 3 (a RoPE
score from the offset): any pair of rotations with the right difference accepted, each plausible
slip (the offset's sign, no rotation, the half-split pairing) named, a hint first and the expected
score from the second wrong try on."""

import re

import pytest
import torch

from helpers import apply_rope
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


# ---------------------------------------------------------------- exercise 3

OMEGA = 10000 ** (-torch.arange(0, 8, 2) / 8)  # (d/2,) for d = 8


def rotate_pairs(x, angle):
    """x (8,) with pair i = (x_2i, x_2i+1) turned by angle[i]."""
    a, b = x[0::2], x[1::2]
    return torch.stack([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1).flatten()


def rotate_halves(x, angle):
    """The half-split pairing: dimension i with i + 4."""
    a, b = x[:4], x[4:]
    return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()])


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.setitem(nb06.WRONG_TRIES, "rope_score_at_offset", 0)


def test_rope_score_not_attempted(capsys):
    def stub(q, k, offset):
        raise NotImplementedError

    assert not nb06.check_rope_score_at_offset(stub)
    assert "not attempted yet" in capsys.readouterr().out


@pytest.mark.parametrize("answer", [
    lambda q, k, o: q @ rotate_pairs(k, o * OMEGA),  # k alone, by the offset
    lambda q, k, o: rotate_pairs(q, -o * OMEGA) @ k,  # q alone, back by the offset
    lambda q, k, o: apply_rope(q[None], torch.tensor([0]))[0] @ apply_rope(k[None], torch.tensor([o]))[0],
    lambda q, k, o: rotate_pairs(q, o * OMEGA) @ rotate_pairs(k, 2 * o * OMEGA),  # any p: here p = offset
    lambda q, k, o: (q @ rotate_pairs(k, o * OMEGA)).numpy(),  # a NumPy number
    lambda q, k, o: float(q @ rotate_pairs(k, o * OMEGA)),
], ids=["rotate k", "rotate q back", "apply_rope at 0 and offset", "q at offset, k at 2 offset", "numpy",
        "float"])
def test_rope_score_accepts_any_rotations_with_the_right_difference(answer, capsys):
    assert nb06.check_rope_score_at_offset(answer)
    assert "correct!" in capsys.readouterr().out


@pytest.mark.parametrize(("answer", "hint"), [
    (lambda q, k, o: rotate_pairs(q, o * OMEGA) @ k, r"the score for offset -3: which of q and k sits later"),
    (lambda q, k, o: rotate_pairs(q, o * OMEGA) @ rotate_pairs(k, o * OMEGA),
     r"without any rotation: rotating q and k by the same angle changes nothing"),
    (lambda q, k, o: q @ rotate_halves(k, o * OMEGA), r"half-split pairing .*pairs adjacent dimensions"),
    (lambda q, k, o: rotate_halves(q, o * OMEGA) @ k, r"half-split pairing"),  # and the wrong way round
    (lambda q, k, o: q @ rotate_pairs(k, o * 10000 ** (-torch.arange(0, 4) / 8)),  # omega_i = 10000^(-i/d)
     r"same for every p: pick one p, and check the angle of each pair"),
], ids=["offset flipped", "same rotation", "half-split", "half-split flipped", "other slip"])
def test_rope_score_hint_first_then_the_expected_score(answer, hint):
    with pytest.raises(AssertionError, match=r"offset 3: you returned -?\d+\.\d{4}\. Hint: .*" + hint) as first:
        nb06.check_rope_score_at_offset(answer)
    assert not re.search(r"expected -?\d", str(first.value))  # no score given away yet
    assert "a second wrong answer shows the expected score" in str(first.value)
    with pytest.raises(AssertionError, match=r"offset 3: expected -?\d+\.\d{4} \(the score of q at position p "
                                             r"and k at p \+ 3, the same for every p\), got -?\d+\.\d{4}\. "
                       + ".*" + hint):
        nb06.check_rope_score_at_offset(answer)


def test_rope_score_wants_one_number():
    with pytest.raises(AssertionError, match=r"return one score \(a number or a 0-d tensor\), got shape \(8,\)"):
        nb06.check_rope_score_at_offset(lambda q, k, o: q * k)
