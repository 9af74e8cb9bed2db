"""Notebook 12's experimental conclusions, re-checked at seeds 0, 1 and 2 (seed 0 is the notebook's
own run, shared through the cache of trained models).

Every test trains on one CPU thread (the cache does that), so its numbers do not depend on
OMP_NUM_THREADS. The dates models take most of the time: 2,000 steps of two models per seed.
"""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from helpers.data import toy_language as tl
from helpers.experiments import date_task, toy_lm_data, train_date_models, train_toy_lm
from helpers.gpt import sample_sentences
from helpers.training import collate

SEEDS = (0, 1, 2)


def _step_flops(forward):
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        forward()
    return 3 * counter.get_total_flops()


@pytest.fixture(scope="module")
def date_flops():
    """FLOPs of one training step of each model, measured as notebook 12 measures them (the
    encoder-decoder: the mean of ten batches of 64 pairs; the decoder-only model: 64 rows of 48)."""
    task = date_task()
    runs = train_date_models(seed=0, device="cpu")
    encdec, gpt = runs["encdec"][0], runs["gpt"][0]
    batches = [collate(task["train_pairs"][i:i + 64], task["tok"]) for i in range(0, 640, 64)]
    ed = sum(_step_flops(lambda b=b: encdec(b.src, b.tgt_in, b.src_mask, b.tgt_mask, need_weights=True))
             for b in batches) / len(batches)
    dg = _step_flops(lambda: gpt(task["x"][:64], need_weights=True))
    return ed, dg


@pytest.mark.timeout(1800)  # a seed not in the cache trains two models for 2,000 steps each
@pytest.mark.parametrize("seed", SEEDS)
def test_which_date_model_is_ahead_depends_on_when_you_look_and_what_you_count(seed, date_flops):
    """Conclusion (notebook 12, section 2): per step the encoder-decoder is ahead for the first
    300 steps, the decoder-only model from step 500 to 1,000 and it reaches 99 % first; both end
    at >= 98 %; per FLOP the encoder-decoder reaches 95 % first.
    Seeds: 0, 1, 2 (initialisation and data order). Variation: the notebook's "Try it" is these
    other seeds. Control: the FLOPs of a step, counted by PyTorch, for the per-compute ranking."""
    runs = train_date_models(seed=seed, device="cpu")
    steps = runs["gpt"][1]["acc_step"]
    ed, dg = runs["encdec"][1]["acc"], runs["gpt"][1]["acc"]
    assert steps == list(range(100, 2001, 100))
    assert all(ed[i] > dg[i] for i, s in enumerate(steps) if s <= 300), (ed[:3], dg[:3])
    assert all(dg[i] > ed[i] for i, s in enumerate(steps) if 500 <= s <= 1000), (ed[4:10], dg[4:10])
    def first(v, level):  # the first step at or above the level (none: after the run)
        return next((s for s, a in zip(steps, v, strict=True) if a >= level), 10**9)

    assert first(dg, 0.99) < first(ed, 0.99), (first(dg, 0.99), first(ed, 0.99))
    assert min(ed[-1], dg[-1]) >= 0.98, (ed[-1], dg[-1])
    flops_ed, flops_dg = date_flops
    assert 1.5 < flops_dg / flops_ed < 3.0  # "about twice as much"
    assert first(ed, 0.95) * flops_ed < first(dg, 0.95) * flops_dg, (first(ed, 0.95), first(dg, 0.95))


@pytest.fixture(scope="module")
def language_models():
    return {seed: train_toy_lm(seed=seed, device="cpu")[0] for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_language_model_is_close_to_the_grammar(seed, language_models):
    """Conclusion (notebook 12, section 4): after 300 steps the model's validation loss is below
    the grammar's own loss + 0.05 (an upper bound a better model cannot fail); the packing-aware
    floor lies about 0.01 below the grammar's loss. Seeds 0, 1, 2."""
    data = toy_lm_data()
    with torch.no_grad():
        logits = language_models[seed](data["val_x"])
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), data["val_y"].flatten(), ignore_index=-100).item()
    grammar = -sum(tl.log_prob(s) for s in data["val_texts"]) / int((data["val_y"] >= 0).sum())
    assert loss < grammar + 0.05, (loss, grammar)
    assert 0.005 < grammar - tl.packed_best_loss(data["val_texts"], 32) < 0.02


@pytest.mark.parametrize("seed", SEEDS)
def test_sampling_trades_quality_for_diversity(seed, language_models):
    """Conclusion (notebook 12, section 7): of 300 samples at least 97 % parse at tau <= 0.5, and
    from tau = 0.5 on every step up in temperature lowers the share; at every tau >= 80 % of the
    samples are different; fewer shapes at tau 0.1 than 1, at 1 than 2; top-p 0.5 parses more than
    top-p 1 and top-p 0.3 gives fewer shapes. And <pad> appears at tau = 2 unless suppressed.
    Seeds: 0, 1, 2 of the model (the sampling seed is the notebook's, 0)."""
    lm = language_models[seed]
    temperatures = [0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]

    def measure(**kwargs):
        texts = sample_sentences(lm, 300, seed=0, **kwargs)
        return sum(map(tl.is_sentence, texts)) / 300, len(set(texts)), len(set(map(tl.shape, texts)))

    by_temp = {t: measure(temperature=t) for t in temperatures}
    share = {t: v[0] for t, v in by_temp.items()}
    shapes = {t: v[2] for t, v in by_temp.items()}
    assert min(share[t] for t in (0.1, 0.25, 0.5)) >= 0.97, share
    assert all(share[a] > share[b] for a, b in zip(temperatures[2:], temperatures[3:], strict=False)), share
    assert min(v[1] for v in by_temp.values()) >= 240
    assert shapes[0.1] < shapes[1.0] < shapes[2.0], shapes
    top_p = {p: measure(temperature=1.0, top_p=p) for p in (0.3, 0.5, 1.0)}
    assert top_p[0.5][0] > top_p[1.0][0] and top_p[0.3][2] < top_p[1.0][2], top_p
    prompt = torch.ones(300, 1, dtype=torch.long)
    hot = lm.generate(prompt, 16, temperature=2.0, generator=torch.Generator().manual_seed(0))
    safe = lm.generate(prompt, 16, temperature=2.0, generator=torch.Generator().manual_seed(0), suppress=[0])
    assert (hot == 0).any(1).sum() > 0 and not (safe == 0).any()
