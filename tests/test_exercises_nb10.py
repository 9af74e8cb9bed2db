"""Each checker of notebook 10: "not attempted" for the stub, rejects plausible wrong answers,
accepts a right one."""

import pytest
import torch

from helpers import Transformer
from helpers.exercises import nb10


def stub(*args):
    raise NotImplementedError


def reference():
    torch.manual_seed(0)
    return Transformer(30, 30, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0,
                       max_len=40, norm_first=True)


def test_stubs_are_not_attempted(capsys):
    assert not nb10.check_without_positions(stub)
    assert not nb10.check_one_head(stub, reference())
    assert not nb10.check_no_warmup(stub, ...)
    assert not nb10.check_no_warmup(None, ...)
    assert capsys.readouterr().out.count("not attempted yet") == 4


def test_without_positions(capsys):
    def right(model):
        model.pos.pe.zero_()
        return model

    def unchanged(model):
        return model

    def zero_embeddings(model):
        model.src_embed.weight.data.zero_()
        return model

    def forgets_to_return(model):
        model.pos.pe.zero_()

    assert nb10.check_without_positions(right)
    with pytest.raises(AssertionError, match=r"still knows where each token is: expected .*"
                                             r"at most 1e-5\), got a difference of \d\.\d{4}") as err:
        nb10.check_without_positions(unchanged)
    assert "pe" not in str(err.value).split() and "zero" not in str(err.value)  # no answer given
    with pytest.raises(AssertionError, match="token embeddings changed"):
        nb10.check_without_positions(zero_embeddings)
    with pytest.raises(AssertionError, match="return the model"):
        nb10.check_without_positions(forgets_to_return)

    def identity_positions(model):  # right for the encoder, but the decoder passes start=
        model.pos = torch.nn.Identity()
        return model

    with pytest.raises(AssertionError, match=r"the whole model no longer runs \(TypeError: .*start"):
        nb10.check_without_positions(identity_positions)


def test_one_head():
    ref = reference()

    def build(heads, d_model=16, d_ff=32, layers=2, vocab=None, norm_first=True):
        return lambda v: Transformer(vocab or v, vocab or v, d_model, heads, layers, d_ff,
                                     dropout=0.0, max_len=40, norm_first=norm_first)

    assert nb10.check_one_head(build(1), ref)
    with pytest.raises(AssertionError, match="expected 1 head in every attention layer, found num_heads \\[4\\] in 6 layers"):
        nb10.check_one_head(build(4), ref)
    with pytest.raises(AssertionError, match="keep d_model = 16"):
        nb10.check_one_head(build(1, d_model=4), ref)  # d_model / 4 heads "per head"
    with pytest.raises(AssertionError, match="keep d_ff = 32"):
        nb10.check_one_head(build(1, d_ff=64), ref)
    with pytest.raises(AssertionError, match="LayerNorm placement"):
        nb10.check_one_head(build(1, norm_first=False), ref)
    with pytest.raises(AssertionError, match="parameters, but the reference has"):
        nb10.check_one_head(build(1, vocab=31), ref)


def hist(norm_first, final_loss, warmup=0, lr=1e-2):
    return {"step": [100, 200], "loss": [2.0, final_loss], "lr": [lr, 0.0],
            "config": {"norm_first": norm_first, "warmup_steps": warmup, "peak_lr": lr}}


def test_no_warmup():
    runs = (hist(False, 1.9), hist(True, 0.9))
    assert nb10.check_no_warmup(runs, "pre-LN")
    assert nb10.check_no_warmup(lambda: runs, "pre-LN")
    with pytest.raises(AssertionError, match=r"you answered 'post-LN', but .* the final loss was "
                                             r"1\.9000 for post-LN and 0\.9000 for pre-LN"):
        nb10.check_no_warmup(runs, "post-LN")
    # The answer follows the learner's own evidence, not a stored result.
    assert nb10.check_no_warmup((hist(False, 0.8), hist(True, 1.5)), "post-LN")
    with pytest.raises(AssertionError, match="norm_first=False"):
        nb10.check_no_warmup((hist(True, 1.9), hist(True, 0.9)), "pre-LN")
    with pytest.raises(AssertionError, match="warmup_steps=100"):
        nb10.check_no_warmup((hist(False, 1.9, warmup=100), hist(True, 0.9)), "pre-LN")
    with pytest.raises(AssertionError, match="peak_lr=0.001"):
        nb10.check_no_warmup((hist(False, 1.9), hist(True, 0.9, lr=1e-3)), "pre-LN")
    with pytest.raises(AssertionError, match="too close to tell"):
        nb10.check_no_warmup((hist(False, 0.95), hist(True, 0.9)), "pre-LN")
    with pytest.raises(AssertionError, match='expected the answer "pre-LN" or "post-LN", got \'preLN\''):
        nb10.check_no_warmup(runs, "preLN")
    with pytest.raises(AssertionError, match=r"expected a pair \(post-LN history, pre-LN history\), "
                                             r"got a dict"):
        nb10.check_no_warmup(runs[0], "pre-LN")
    with pytest.raises(AssertionError, match="got a tuple of length 3"):
        nb10.check_no_warmup(runs + runs[:1], "pre-LN")
    with pytest.raises(AssertionError, match="the first \\(post-LN\\) entry should be the dict .* got list"):
        nb10.check_no_warmup(([1.9], runs[1]), "pre-LN")
