"""helpers.claims: a lesson's check says what it claims, prints it when it holds and says what was
found when it does not."""

import pytest
import torch

from helpers import claim, claim_close


def test_claim_prints_the_statement_and_the_evidence(capsys):
    claim("two heads learn both relations", 1.0 >= 0.99, "accuracy 1.0000")
    claim("softmax rows sum to 1", torch.tensor(True))
    assert capsys.readouterr().out == ("✓ two heads learn both relations (accuracy 1.0000)\n"
                                       "✓ softmax rows sum to 1\n")


def test_a_false_claim_fails_with_what_was_found(capsys):
    with pytest.raises(AssertionError, match=r"^✗ one head learns both relations: accuracy 0\.6100$"):
        claim("one head learns both relations", 0.61 >= 0.99, "accuracy 0.6100")
    assert capsys.readouterr().out == ""


def test_claim_close_passes_and_fails_like_assert_close(capsys):
    claim_close("ours equals PyTorch's", torch.ones(3), torch.ones(3))
    assert capsys.readouterr().out == "✓ ours equals PyTorch's\n"
    with pytest.raises(AssertionError, match="✗ ours equals PyTorch's: Tensor-likes are not close"):
        claim_close("ours equals PyTorch's", torch.ones(3), torch.zeros(3))
    claim_close("close enough at atol 0.1", torch.tensor(1.05), torch.tensor(1.0), rtol=0, atol=0.1)


@pytest.mark.parametrize(("args", "error"), [
    (("", True), "statement must be a non-empty str"),
    ((None, True), "statement must be a non-empty str"),
    (("x", 1), "holds must be a bool"),
    (("x", torch.tensor([True, False])), "reduce it first"),
    (("x", True, 0.5), "shown must be a str"),
])
def test_claim_refuses_what_is_not_a_claim(args, error):
    with pytest.raises(TypeError, match=error):
        claim(*args)
