"""Notebook 09's conclusions, re-checked where they could break.

Section 7: averaged over all labels, the untrained model's loss is at least ln|V| (Jensen: always);
on the particular labels of a batch it can land below ln|V| (the notebook counts it over seeds 0-199
of its own model: 15 of 200, and claims "at least 1, under 10 %"); the logits' root mean square is of the order of sqrt(2 d_model / (d_model + |V|) + 1 / (3 d_model))
(the Xavier weights' part and the output bias's, which keeps nn.Linear's own initialisation; within a
factor of 3 for one model; within 3 % on average over 200 initialisations, also for |V| = 1000). Section 8: another seed gives other untrained nonsense from greedy decoding: a model that
stops at once, or one that wanders among several words. Models: ``helpers.Transformer`` (the
notebook's architecture, Xavier-uniform matrices), the running example, seeds 0-59.

The notebook's one setting, ``SEED`` (its model's initialisation): the claims of section 7 that
"our particular labels cost even more than that average" and of section 8 that the model "never
says <eos>" are about the stored run (SEED = 0) only; the prose says so, and at other seeds they
do not hold (of 60 initialisations of ``helpers.Transformer``, which draw other weights than
the notebook's own class, the batch's loss exceeded the average over all labels at 26;
among seeds 0-9 some say <eos>), which ``test_the_stored_runs_statements_are_not_general`` checks.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from seed_sets import HELD_OUT_SEEDS, WRITTEN_SEEDS
from torch import nn

from helpers import Transformer, greedy_decode, padding_mask, seed_everything, target_mask

SRC = torch.tensor([[3, 4, 5, 6, 2], [3, 7, 6, 2, 0]])
TGT = torch.tensor([[1, 3, 4, 5, 6, 2], [1, 3, 7, 6, 2, 0]])
DEC_IN, LABELS = TGT[:, :-1], TGT[:, 1:]
LN_V = math.log(8)


def predicted_rms(vocab, d_model):
    return math.sqrt(2 * d_model / (d_model + vocab) + 1 / (3 * d_model))


def model_for(seed, vocab=8):
    seed_everything(seed)
    model = Transformer(8, vocab, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0)
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    return model.eval()


@pytest.fixture(scope="module")
def runs():
    out = []
    for seed in range(60):
        model = model_for(seed)
        with torch.no_grad():
            logits = model(SRC, DEC_IN, padding_mask(SRC, 0), target_mask(DEC_IN, 0))
        z = logits[LABELS != 0]
        out.append({"loss": F.cross_entropy(logits.flatten(0, 1), LABELS.flatten(), ignore_index=0).item(),
                    "average": (z.logsumexp(-1) - z.mean(-1)).mean().item(),
                    "ratio": z.pow(2).mean().sqrt().item() / predicted_rms(8, 16),
                    "greedy": greedy_decode(model, SRC, 8, 1, 2, padding_mask(SRC, 0))})
    return out


def test_averaged_over_all_labels_the_loss_is_never_below_ln_v(runs):
    assert all(r["average"] >= LN_V for r in runs)


def test_on_particular_labels_the_loss_can_fall_below_ln_v(runs):
    below = sum(r["loss"] < LN_V for r in runs)
    assert 0 < below < len(runs) / 4, below  # "a few of the seeds"


def test_the_logits_spread_is_of_the_predicted_order(runs):
    assert all(1 / 3 < r["ratio"] < 3 for r in runs), [round(r["ratio"], 3) for r in runs]


@pytest.mark.parametrize("vocab", (8, 1000))
def test_averaged_over_200_initialisations_the_rms_is_the_predicted_one(vocab):
    """The notebook: over its 200 initialisations (seeds 0-199), the logits' root mean square is
    within 3 % of the formula. Here a "seed" s stands for the 200 initialisations 200 s .. 200 s + 199.
    Written from seeds 0-4 (|V| = 8: -1.6, +0.6, -1.6, +2.3, -0.8 %; |V| = 1000: within 0.3 %),
    checked unchanged on held-out 5-9 (|V| = 8: -0.5, -2.5, +0.2, +0.7, -0.6 %). Without the bias's
    part, |V| = 1000 would be off by +29 %: the notebook also claims "more than 20 % above the weights'
    part alone" at |V| = 1000 (its seeds 0-199: +28.9 %), checked here on blocks 0-4 and held-out 5-9."""
    def rms(block):
        mean_squares = []
        for seed in range(200 * block, 200 * block + 200):
            with torch.no_grad():
                z = model_for(seed, vocab)(SRC, DEC_IN, padding_mask(SRC, 0), target_mask(DEC_IN, 0))
            mean_squares.append(z[LABELS != 0].pow(2).mean().item())
        return math.sqrt(sum(mean_squares) / len(mean_squares))

    measured = {block: rms(block) for block in WRITTEN_SEEDS + HELD_OUT_SEEDS}
    errors = {block: m / predicted_rms(vocab, 16) - 1 for block, m in measured.items()}
    assert all(abs(e) < 0.03 for e in errors.values()), {b: round(e, 4) for b, e in errors.items()}
    if vocab == 1000:  # the notebook: "more than 20 % above the weights' part alone"
        above = {block: m / math.sqrt(2 * 16 / (16 + vocab)) - 1 for block, m in measured.items()}
        assert all(a > 0.20 for a in above.values()), {b: round(a, 4) for b, a in above.items()}


def test_untrained_greedy_output_is_arbitrary_some_stop_at_once_some_wander(runs):
    outs = [r["greedy"] for r in runs[:10]]
    assert any(o.shape[1] == 2 for o in outs)  # <bos> then <eos> at once, for every sentence
    assert any(len(set(o[0, 1:].tolist())) >= 3 for o in outs)  # several different words


def test_the_stored_runs_statements_are_not_general(runs):
    """Why the notebook words them as the stored run's: at other seeds, the batch's labels cost less
    than the average over all labels, and greedy decoding says <eos>."""
    assert 10 < sum(r["loss"] > r["average"] for r in runs) < 50
    assert any((r["greedy"] == 2).any() for r in runs[1:10])
