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
    assert not nb10.check_warmup(stub, ...)
    assert not nb10.check_warmup(None, ...)
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

    assert not nb10.check_without_positions(right)  # the accuracies are still to come
    assert "without_positions is right. Now train both models" in capsys.readouterr().out
    assert nb10.check_without_positions(right, (0.72, 0.51))
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

    def first_positions_only(model):  # zeroes the start of the table: a short source would not show it
        model.pos.pe[:8].zero_()
        return model

    with pytest.raises(AssertionError, match="still knows where each token is"):
        nb10.check_without_positions(first_positions_only)


def test_one_head():
    ref = reference()

    def build(heads, d_model=16, d_ff=32, layers=2, vocab=None, norm_first=True):
        return lambda v: Transformer(vocab or v, vocab or v, d_model, heads, layers, d_ff,
                                     dropout=0.0, max_len=40, norm_first=norm_first)

    assert nb10.check_one_head(build(1), ref, runs(2.0237, 2.0220))  # seed 0's step-100 losses
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


def run(loss_100, steps=100, log_every=25, **config):
    """A history as train_seq2seq returns it for exercise 2's run (losses at the logged steps)."""
    cfg = {"steps": steps, "batch_size": 64, "peak_lr": 2e-3, "warmup_steps": 30, "smoothing": 0.1,
           "clip_norm": 1.0, "seed": 0, "length_buckets": 1, "norm_first": True, **config}
    logged = list(range(log_every, steps + 1, log_every))
    return {"step": logged, "loss": [4.3] * (len(logged) - 1) + [loss_100], "config": cfg}


def runs(one, four, **config):
    return run(one, **config), run(four, **config)


def test_one_head_losses(capsys):
    """The structure alone is not the answer: without histories the checker asks for them; it reads
    the step-100 losses from the two histories (hand-typed losses are refused), checks that both
    runs are exercise 2's (100 steps, warm-up 30, the recipe's batches, logged every 25 steps) and
    differ in nothing else; losses near the source-free floor (2.38) are refused, the first time
    with a hint, from the second wrong try with where the floor comes from (not the answer)."""
    ref = reference()

    def right(v):
        return Transformer(v, v, 16, 1, 2, 32, dropout=0.0, max_len=40, norm_first=True)

    assert not nb10.check_one_head(right, ref)
    assert not nb10.check_one_head(right, ref, ...)
    assert capsys.readouterr().out.count("Now train it and the 4-head model for 100 steps") == 2
    # The reader's wrong answers: typed losses, and the losses of full 1,200-step runs.
    for typed in ((3.3, 3.25), (2.0, 2.05), 2.02):
        with pytest.raises(AssertionError, match="pass the histories, not the losses|two dicts"):
            nb10.check_one_head(right, ref, typed)
    with pytest.raises(AssertionError, match="has steps=1200; the question is about runs with steps=100"):
        nb10.check_one_head(right, ref, (run(0.95, steps=1200, log_every=100), run(0.88, steps=1200, log_every=100)))
    with pytest.raises(AssertionError, match="has warmup_steps=100"):
        nb10.check_one_head(right, ref, runs(2.02, 2.03, warmup_steps=100))
    with pytest.raises(AssertionError, match="has peak_lr=0.01"):
        nb10.check_one_head(right, ref, runs(2.02, 2.03, peak_lr=1e-2))
    with pytest.raises(AssertionError, match="logged its loss every 50 steps.*log_every=25"):
        nb10.check_one_head(right, ref, runs(2.10, 2.11, log_every=50))
    with pytest.raises(AssertionError, match="differ in seed"):
        nb10.check_one_head(right, ref, (run(2.02), run(1.98, seed=1)))
    with pytest.raises(AssertionError, match="train the same model twice"):
        nb10.check_one_head(right, ref, runs(2.02, 2.02))
    nb10.WRONG_TRIES["losses"] = 0
    with pytest.raises(AssertionError, match=r"one head 2\.3000 and four heads 2\.3100 at step 100: not below 2\.18") as err:
        nb10.check_one_head(right, ref, runs(2.30, 2.31))
    assert "Where 2.38 comes from" not in str(err.value) and "second wrong try" in str(err.value)
    with pytest.raises(AssertionError, match=r"one head 2\.3000 at step 100: not below 2\.18.*Where 2\.38 comes from") as err:
        nb10.check_one_head(right, ref, runs(2.30, 2.02))  # near the floor: no sign of reading the source
    assert not any(x in str(err.value) for x in ("1.96", "2.16", "2.02", "still learns", "within 0.1"))
    nb10.WRONG_TRIES["losses"] = 0
    assert nb10.check_one_head(right, ref, runs(2.0237, 2.0220))


def test_without_positions_accuracies():
    def right(model):
        model.pos.pe.zero_()
        return model

    with pytest.raises(AssertionError, match=r"the model without positions came out ahead .*order, "
                                             r"\(with positions, without\)"):
        nb10.check_without_positions(right, (0.51, 0.72))  # the two swapped
    with pytest.raises(AssertionError, match="measure the same model twice"):
        nb10.check_without_positions(right, (0.72, 0.72))
    with pytest.raises(AssertionError, match=r"take its \[0\]"):
        nb10.check_without_positions(right, ((0.72, ["2021-03-12"]), (0.51, ["2021-12-03"])))
    with pytest.raises(AssertionError, match="two fractions from 0 to 1"):
        nb10.check_without_positions(right, (72, 51))  # percentages
    with pytest.raises(AssertionError, match="two fractions from 0 to 1"):
        nb10.check_without_positions(right, 0.72)
    # A gap too small for 600 steps each (the reader's wrong answer: a too-short run, or noise).
    with pytest.raises(AssertionError, match=r"only 0\.0010 behind .* same 600 steps"):
        nb10.check_without_positions(right, (0.512, 0.511))
    assert nb10.check_without_positions(right, (0.936, 0.830))  # seed 0's runs


def test_without_positions_removed_after_training():
    """The reader's wrong answer: train the normal model, then call without_positions on it and
    measure (1.000 with, 0.052 without). The first wrong try gets the hint, the second the values."""
    def right(model):
        model.pos.pe.zero_()
        return model

    nb10.WRONG_TRIES["accuracies"] = 0
    with pytest.raises(AssertionError, match="Near 0 means positions were removed after training") as err:
        nb10.check_without_positions(right, (1.0, 0.052))
    assert "0.82" not in str(err.value) and "second wrong try" in str(err.value)
    with pytest.raises(AssertionError, match=r"removed after training.* 0\.82-0\.86 without"):
        nb10.check_without_positions(right, (1.0, 0.052))
    nb10.WRONG_TRIES["accuracies"] = 0


def hist(norm_first, final_loss, warmup=0, lr=1e-2, steps=100):
    return {"step": [50, 100], "loss": [2.0, final_loss], "lr": [lr, 0.0],
            "config": {"norm_first": norm_first, "warmup_steps": warmup, "peak_lr": lr, "steps": steps}}


def test_warmup():
    runs = (hist(False, 2.4), hist(False, 2.0, warmup=30))
    assert nb10.check_warmup(runs, "with warm-up")
    assert nb10.check_warmup(lambda: runs, "with warm-up")
    with pytest.raises(AssertionError, match=r"you answered 'without warm-up', but .* the final loss "
                                             r"was 2\.4000 without warm-up and 2\.0000 with it"):
        nb10.check_warmup(runs, "without warm-up")
    # The answer follows the learner's own evidence, not a stored result.
    assert nb10.check_warmup((hist(False, 1.8), hist(False, 2.2, warmup=30)), "without warm-up")
    # The old question, post-LN against pre-LN: two effects at once.
    with pytest.raises(AssertionError, match="norm_first=True: both runs are post-LN"):
        nb10.check_warmup((hist(False, 2.4), hist(True, 1.7, warmup=30)), "with warm-up")
    with pytest.raises(AssertionError, match="norm_first=True: both runs are post-LN"):
        nb10.check_warmup((hist(True, 2.4), hist(True, 1.7, warmup=30)), "with warm-up")
    with pytest.raises(AssertionError, match="first run used warmup_steps=30"):
        nb10.check_warmup((hist(False, 2.0, warmup=30), hist(False, 2.4)), "with warm-up")  # swapped
    with pytest.raises(AssertionError, match="second run used warmup_steps=0 too"):
        nb10.check_warmup((hist(False, 2.4), hist(False, 2.0)), "with warm-up")
    with pytest.raises(AssertionError, match="peak_lr=0.001"):
        nb10.check_warmup((hist(False, 2.4), hist(False, 2.0, warmup=30, lr=1e-3)), "with warm-up")
    with pytest.raises(AssertionError, match="differ in peak_lr .* two effects at once"):
        nb10.check_warmup((hist(False, 2.4), hist(False, 2.0, warmup=30, lr=5e-3)), "with warm-up")
    with pytest.raises(AssertionError, match="differ in steps .* two effects at once"):
        nb10.check_warmup((hist(False, 2.4), hist(False, 2.0, warmup=30, steps=200)), "with warm-up")
    # Every other entry of the config counts too (these differed and passed before).
    for entry, a, b in (("batch_size", 256, 64), ("seed", 0, 1), ("smoothing", 0.1, 0.0),
                        ("clip_norm", 1.0, None)):
        one, two = hist(False, 2.4), hist(False, 2.0, warmup=30)
        one["config"][entry], two["config"][entry] = a, b
        with pytest.raises(AssertionError, match=rf"differ in {entry} \({a} and {b}\) .* two effects"):
            nb10.check_warmup((one, two), "with warm-up")
    with pytest.raises(AssertionError, match="too close to tell"):
        nb10.check_warmup((hist(False, 2.05), hist(False, 2.0, warmup=30)), "with warm-up")
    with pytest.raises(AssertionError, match='expected the answer "with warm-up" or "without warm-up", '
                                             'got \'pre-LN\''):
        nb10.check_warmup(runs, "pre-LN")
    with pytest.raises(AssertionError, match=r"expected a pair \(history without warm-up, history with "
                                             r"warm-up\), got a dict"):
        nb10.check_warmup(runs[0], "with warm-up")
    with pytest.raises(AssertionError, match="got a tuple of length 3"):
        nb10.check_warmup(runs + runs[:1], "with warm-up")
    with pytest.raises(AssertionError, match="the first \\(no warm-up\\) entry should be the dict .* got list"):
        nb10.check_warmup(([2.4], runs[1]), "with warm-up")
