"""Each checker of notebook 14 says "not attempted" for the stub, rejects plausible wrong answers
with a helpful message and accepts a right answer."""

import pytest
import torch

from helpers.data.repeated import repeated_tokens
from helpers.exercises import nb14
from helpers.induction import AttentionOnlyTransformer, per_position_loss


def stub(*args):
    raise NotImplementedError


def induction_right(w, n):
    return w.diagonal(offset=-(n - 1), dim1=-2, dim2=-1)[..., 1:].mean(-1)


def induction_duplicate(w, n):  # the previous occurrence itself, t - n
    return w.diagonal(offset=-n, dim1=-2, dim2=-1).mean(-1)


def induction_with_first_half_query(w, n):  # includes t = n - 1
    return w.diagonal(offset=-(n - 1), dim1=-2, dim2=-1).mean(-1)


def previous_right(w):
    return w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)


def previous_diagonal(w):
    return w.diagonal(dim1=-2, dim2=-1).mean(-1)


def previous_counting_t0(w):  # divides by L instead of L - 1
    return w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / w.shape[-1]


def test_stubs_are_not_attempted(capsys):
    assert not nb14.check_induction_score(stub)
    assert not nb14.check_previous_token_score(stub)
    assert not nb14.check_ablation_guess(None, AttentionOnlyTransformer(64))
    assert capsys.readouterr().out.count("not attempted") == 3


def test_right_answers_pass(capsys):
    assert nb14.check_induction_score(induction_right)
    assert nb14.check_previous_token_score(previous_right)
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, word", [(induction_duplicate, "t - n"),
                                         (induction_with_first_half_query, "expected")])
def test_induction_score_rejects(wrong, word):
    with pytest.raises(AssertionError, match=word):
        nb14.check_induction_score(wrong)


@pytest.mark.parametrize("wrong, word", [(previous_diagonal, "diagonal"),
                                         (previous_counting_t0, "t = 0")])
def test_previous_token_score_rejects(wrong, word):
    with pytest.raises(AssertionError, match=word):
        nb14.check_previous_token_score(wrong)


def test_ablation_guess_accepts_the_measured_head_only():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(64, d_model=16, num_heads=2, num_layers=2)
    ids = repeated_tokens(256, 12, 64, torch.Generator().manual_seed(99))
    loss = {(0, h): per_position_loss(model, ids, ablate=[(0, h)])[12:].mean().item()
            for h in range(2)}
    best = max(loss, key=loss.get)
    assert nb14.check_ablation_guess(best, model)
    wrong = next(hd for hd in loss if hd != best)
    with pytest.raises(AssertionError, match="the other head of layer 0 raises it more"):
        nb14.check_ablation_guess(wrong, model)
    with pytest.raises(AssertionError, match="layer 0"):
        nb14.check_ablation_guess((1, 0), model)
    with pytest.raises(AssertionError, match="tuple"):
        nb14.check_ablation_guess("0, 0", model)
