"""Notebook 12's label-smoothing control (section 2), in a file of its own so that it trains in
another worker than test_nb12_gpt.py, the longest file of the suite: the encoder-decoder trained
without label smoothing at seeds 0, 1 and 2 and held-out seed 5, against the decoder-only model of the same seed (the
same cached model test_nb12_gpt.py trains; the cache's lock lets one worker train it and the other
load it)."""

import pytest
from seed_sets import seed_id

from helpers.experiments import train_date_model


def _first(steps, v, level):
    """The first step at which the accuracy reaches the level (None: not within the run)."""
    return next((s for s, a in zip(steps, v, strict=True) if a >= level), None)


SEEDS = (0, 1, 2, 5)  # written from 0-2; 5 held out (seed_sets.HELD_OUT_SEEDS), checked unchanged


@pytest.mark.timeout(3600)  # four encoder-decoders of 2,000 steps (cached after the first run)
@pytest.mark.parametrize("seed", SEEDS, ids=seed_id)
def test_label_smoothing_does_not_explain_the_ranking(seed):
    """Control for the one difference in recipe (notebook 12, section 2: the encoder-decoder keeps
    notebook 10's label smoothing of 0.1, the decoder-only model is trained on plain
    cross-entropy): trained without it (``smoothing=0.0``), the encoder-decoder is still ahead of
    the decoder-only model for the first 300 steps and never ahead from step 500 on, and reaches
    99 % after it (if at all). Seeds 0, 1, 2 (written) and held-out 5 (one seed: each costs an
    encoder-decoder of 2,000 steps, about 2.5 minutes of a core).

    Exploration (review gpt12, before the notebook named the control): without smoothing the
    encoder-decoder ended at 0.913, 0.970, 0.970 (with it: 0.913, 0.993, 0.983), ahead at steps
    100-300 and behind from step 500 on at every seed, as with it. Re-run under the pinned kernels
    (review 0912b): without smoothing 0.910, 0.973, 0.977 after 2,000 steps (with it: 0.903, 0.990,
    0.980); ahead at steps 100-300 by at least 0.037, 0.010, 0.030; behind from step 500 by at least
    0.090, 0.023, 0.023; 99 % never reached (the decoder-only model at steps 1,200, 1,300, 1,400).
    Held-out seed 5 (review r3, pinned), unchanged: ahead up to step 300 (0.143 against 0.023 there),
    behind from step 400; 99 % never reached (0.977 after 2,000 steps), the decoder-only model at
    step 1,300."""
    _, gpt = train_date_model("gpt", seed=seed, device="cpu", retrain=True)  # the same model as test_nb12_gpt's
    steps, dg = gpt["acc_step"], gpt["acc"]
    model, history = train_date_model("encdec", seed=seed, device="cpu", retrain=True, smoothing=0.0)
    assert not history.get("shipped") and history["acc_step"] == steps
    ed = history["acc"]
    assert all(ed[i] > dg[i] for i, s in enumerate(steps) if s <= 300), (ed[:3], dg[:3])
    assert all(dg[i] >= ed[i] for i, s in enumerate(steps) if s >= 500), (ed[4:], dg[4:])
    assert _first(steps, dg, 0.99) < (_first(steps, ed, 0.99) or 10**9)
