"""Notebook 12's experimental conclusions. The date comparison of section 2 is checked at seeds 0, 1
and 2, from which its statements were written, and at the held-out seeds 5, 6 and 7, on which they
are checked unchanged (``seed_sets``; seeds 3, 4, 8 and 9 are left out: each seed trains two models
for about 7 minutes of one core, and this file runs whole in one worker); the label-smoothing control in test_nb12_smoothing.py; the language model's
loss and the quality-diversity trade-off at seeds 0, 1 and 2; the trade-off counted among the
samples that parse, the verb agreement with its controls, the training loss's flattening just above the
entropy rate, and the packed rows' longer first sentences (data seeds), at seeds 0-4 and held-out 5-9.

The notebook loads its two date models (seed 0) from the files shipped with the repository
(``helpers.experiments.SHIPPED_DATE_MODELS``); here every seed is trained from scratch with the
notebook's switch ``retrain=True`` (seed 0 included), and the retrained seed-0 models must make the
notebook's statements true as the shipped ones do (under the pinned kernels they are the same bits).

Every test trains on one CPU thread (the cache does that), so its numbers do not depend on
OMP_NUM_THREADS. The dates models take most of the time: 2,000 steps of two models per seed
(a few minutes each; the encoder-decoder took 305 s on a shared core; trained once, then loaded
from the cache).
"""

import functools

import pytest
import torch
from seed_sets import ALL_SEEDS, seed_id
from torch.utils.flop_counter import FlopCounterMode

from helpers.data import toy_language as tl
from helpers.experiments import (
    date_task,
    make_date_models,
    toy_lm_data,
    train_date_models,
    train_toy_lm,
)
from helpers.gpt import sample_sentences
from helpers.training import collate
from helpers.widgets import sampling_view
from tools import numerics

SEEDS = (0, 1, 2)  # the language model's loss and sampling (sections 4 and 7)
DATE_SEEDS = (0, 1, 2, 5, 6, 7)  # section 2: written from 0-2, held out 5-7 (the runs it was checked on)


def _step_flops(forward):
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        forward()
    return 3 * counter.get_total_flops()


@pytest.fixture(scope="module")
def date_flops():
    """FLOPs of one training step of each model, measured as notebook 12 measures them: the mean
    of the same ten batches of 64 pairs, each padded to its own longest row (the encoder-decoder by
    ``collate``, the decoder-only rows cut after their batch's longest row)."""
    task = date_task()
    encdec, gpt = make_date_models(seed=0, device="cpu")  # FLOPs do not depend on the weights
    batches = [collate(task["train_pairs"][i:i + 64], task["tok"]) for i in range(0, 640, 64)]
    ed = sum(_step_flops(lambda b=b: encdec(b.src, b.tgt_in, b.src_mask, b.tgt_mask, need_weights=True))
             for b in batches) / len(batches)
    rows = [task["x"][i:i + 64] for i in range(0, 640, 64)]
    cut = [r[:, :int((r != task["tok"].pad_id).sum(1).max())] for r in rows]
    dg = sum(_step_flops(lambda r=r: gpt(r, need_weights=True)) for r in cut) / len(cut)
    dg_46 = _step_flops(lambda: gpt(task["x"][:64], need_weights=True))
    return ed, dg, dg_46


@functools.cache
def _date_run(seed):
    """Both date models at one seed: (steps, encoder-decoder accuracies, decoder-only accuracies)."""
    runs = train_date_models(seed=seed, device="cpu", retrain=True)  # trained here (or cached), never shipped
    assert not runs["gpt"][1].get("shipped") and not runs["encdec"][1].get("shipped")
    return runs["gpt"][1]["acc_step"], runs["encdec"][1]["acc"], runs["gpt"][1]["acc"]


@pytest.fixture(scope="module")
def date_runs():
    """{seed: (steps, encoder-decoder accuracies, decoder-only accuracies)} at every date seed."""
    return {seed: _date_run(seed) for seed in DATE_SEEDS}


@pytest.mark.timeout(3600)
def test_the_retrained_seed_0_models_say_what_the_shipped_ones_say(date_flops):
    """The notebook's switch ``RETRAIN = True`` (``retrain=True``) trains both date models with the
    recipe the shipped files record; the retrained models make every statement of the notebook's
    section 2 true, as the shipped ones do: the same claims, computed by the same function, on
    both histories. The shipped files were trained by tools/ship_date_models.py under the pinned
    kernels this suite uses (tools/numerics.py), so on an x86-64 CPU the retraining reproduces them:
    the weights and the histories (accuracies, losses, learning rates; not the wall-clock seconds)
    are identical (checked with an empty cache on the project's machine, review r3: the decoder-only
    model retrained in 380 s came out with the shipped weights, bit for bit)."""
    shipped = train_date_models(seed=0, device="cpu")
    assert shipped["gpt"][1]["shipped"] and shipped["encdec"][1]["shipped"]
    steps, ed, dg = _date_run(0)
    assert shipped["gpt"][1]["acc_step"] == steps
    flops_ed, flops_dg, _ = date_flops
    for label, (e, d) in {"shipped": (shipped["encdec"][1]["acc"], shipped["gpt"][1]["acc"]),
                          "retrained": (ed, dg)}.items():
        claims = notebook_claims(steps, e, d, flops_ed, flops_dg)
        assert all(claims.values()), (label, claims)
    # the shipped run's statement about itself (the notebook: "here the decoder-only model reaches
    # 90 % with less compute"; at other seeds the order differs, the next tests)
    e, d = shipped["encdec"][1]["acc"], shipped["gpt"][1]["acc"]
    assert _first(steps, d, 0.9) * flops_dg < _first(steps, e, 0.9) * flops_ed
    if numerics.applies():  # pinned kernels: the same bits as the shipped training
        retrained = train_date_models(seed=0, device="cpu", retrain=True)
        for kind in ("encdec", "gpt"):
            (model, history), (shipped_model, shipped_history) = retrained[kind], shipped[kind]
            for key in ("step", "loss", "lr", "acc_step", "acc"):  # not "seconds": wall-clock time
                assert history[key] == shipped_history[key], (kind, key)
            weights = shipped_model.state_dict()
            assert all(torch.equal(v, weights[k]) for k, v in model.state_dict().items()), kind


def notebook_claims(steps, ed, dg, flops_ed, flops_dg) -> dict[str, bool]:
    """The statements of notebook 12's section 2 about its run (seed 0), as its claim cells compute them."""
    def first(v, level):
        return _first(steps, v, level)
    return {
        "encoder-decoder ahead for the first 300 steps": all(ed[i] > dg[i] for i, s in enumerate(steps) if s <= 300),
        "decoder-only ahead from step 500 on": all(dg[i] > ed[i] for i, s in enumerate(steps) if s >= 500),
        "decoder-only reaches 99 % first": (first(dg, 0.99) or 10**9) < (first(ed, 0.99) or 10**9),
        "per FLOP the encoder-decoder reaches 30 % first":
            (first(ed, 0.30) or 10**9) * flops_ed < (first(dg, 0.30) or 10**9) * flops_dg,
        "decoder-only >= 99 % after 2,000 steps": dg[-1] >= 0.99,
        "encoder-decoder >= 85 % after 2,000 steps": ed[-1] >= 0.85,
    }


def _first(steps, v, level):
    """The first step at which the accuracy reaches the level (None: not within the run)."""
    return next((s for s, a in zip(steps, v, strict=True) if a >= level), None)


@pytest.mark.timeout(3600)  # seeds not in the cache train two models for 2,000 steps each
@pytest.mark.parametrize("seed", DATE_SEEDS, ids=seed_id)
def test_which_date_model_is_ahead_depends_on_when_you_look_and_what_you_count(seed, date_flops):
    """Conclusion (notebook 12, section 2), at every seed: per step the encoder-decoder is ahead
    for the first 300 steps, and from step 500 to the end the decoder-only model is ahead or level
    (never behind), and it reaches 99 % first; after 2,000 steps the decoder-only model is at
    >= 99 %, the encoder-decoder at >= 85 %; per FLOP the encoder-decoder reaches 30 % first. Each
    decoder-only step costs about 1.8 times as much.
    Seeds: 0-2 (written) and held-out 5-7 (initialisation and data order). Variation: the notebook's
    "Try it" is these other seeds (its SEED setting). Control: the FLOPs of a step, counted by
    PyTorch with the same padding rule for both models (each batch padded to its longest row).

    Exploration (review gpt12): with the decoder-only rows counted at 46 positions (the longest row
    of the whole set) while the encoder-decoder's batches are padded per batch, the encoder-decoder
    reached 90 % first at all three seeds; with the same rule for both (2.58 instead of 2.78
    GFLOPs per decoder-only step) seed 0 (the models then shipped, trained with native kernels)
    reaches 90 % with 2.582 against 2.589 TFLOPs, i.e. the
    decoder-only model first. 30 %: 0.86 vs 1.03, 0.72 vs 1.29, 0.72 vs 1.03 TFLOPs.

    Re-scoped after held-out seeds (review 0912b): the statements were first written from seeds
    0-2 as "the decoder-only model ahead at every measurement from step 500" and "the
    encoder-decoder between 90 % and 99 % after 2,000 steps". At held-out seed 9 (the reader's run,
    another CPU, torch 2.11) the two models were level at step 1,200 (0.950 each) and the
    encoder-decoder ended at 0.997; here (pinned kernels) the decoder-only model's lead at seed 1
    shrinks to one date of 300 (0.003) at some step after 500, and seed 0's encoder-decoder ends at
    0.903, one date above 90 %. So the prose says "ahead or
    level" and "at least 85 %" (the margin CONTRIBUTING.md asks for), and the notebook's strict
    "ahead at every measurement" is a claim about its shipped run only. Retrained here, final
    accuracies (encoder-decoder, decoder-only): seed 0 0.903, 1.000; 1 0.990, 0.997; 2 0.980,
    1.000; held-out 5 0.980, 1.000 (smallest lead from step 500 0.020, at step 300 the
    encoder-decoder 0.033 ahead; 99 % at step 1,300 against never; 30 % both at step 500, so per
    FLOP the encoder-decoder first; 90 % at 1,400 against 900); held-out 6 0.980, 1.000 (lead from
    500 at least 0.017); held-out 7 0.967, 0.997 (at least 0.027); at 5, 6 and 7 the decoder-only
    model reaches 90 % first per FLOP. Seeds 3, 4, 8 and 9 are not run under the pinned kernels
    (each seed's pair takes about 7 minutes of a quiet core, and this file runs in one worker);
    the reader's run of 5-9 on another CPU is the only evidence for 8 and 9."""
    steps, ed, dg = _date_run(seed)
    assert steps == list(range(100, 2001, 100))
    assert all(ed[i] > dg[i] for i, s in enumerate(steps) if s <= 300), (ed[:3], dg[:3])
    assert all(dg[i] >= ed[i] for i, s in enumerate(steps) if s >= 500), (ed[4:], dg[4:])
    assert _first(steps, dg, 0.99) < (_first(steps, ed, 0.99) or 10**9), (_first(steps, dg, 0.99), _first(steps, ed, 0.99))
    assert dg[-1] >= 0.99, dg[-1]
    assert ed[-1] >= 0.85, ed[-1]
    flops_ed, flops_dg, flops_46 = date_flops
    assert 1.7 < flops_dg / flops_ed < 1.9  # "about 1.8 times as much"
    assert flops_dg < flops_46  # padding to the longest row of the whole set wastes work
    assert _first(steps, ed, 0.30) * flops_ed < _first(steps, dg, 0.30) * flops_dg, (_first(steps, ed, 0.3), _first(steps, dg, 0.3))


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("level", [0.90, 0.95])
def test_per_flop_order_at_higher_levels_changes_from_seed_to_seed(level, date_runs, date_flops):
    """Conclusion (notebook 12, section 2): at 90 % and at 95 %, which model reaches the level with
    less compute is not the same at every seed (both orders occur among the six seeds; among 0-2
    already). In the shipped run (seed 0, trained under the pinned kernels) the decoder-only model
    reaches 90 % first: 1.81 against 2.59 TFLOPs."""
    flops_ed, flops_dg, _ = date_flops
    never = 10**9
    compute = {seed: ((_first(steps, ed, level) or never) * flops_ed, (_first(steps, dg, level) or never) * flops_dg)
               for seed, (steps, ed, dg) in date_runs.items()}
    assert {e < d for e, d in compute.values()} == {True, False}, compute


@functools.cache
def _language_model(seed):
    """Notebook 12's word-level GPT at one seed (300 steps; trained once, cached on disk)."""
    return train_toy_lm(seed=seed, device="cpu")[0]


@pytest.fixture(scope="module")
def language_models():
    return {seed: _language_model(seed) for seed in SEEDS}


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
    assert 0.005 < grammar - tl.packed_best_loss(data["val_texts"], 32) < 0.02  # "about 0.01"


@pytest.mark.parametrize("sampling_seed", (0, 1, 2, 3))
@pytest.mark.parametrize("seed", SEEDS)
def test_sampling_trades_quality_for_diversity(seed, sampling_seed, language_models):
    """Conclusion (notebook 12, section 7): of 300 samples at least 97 % parse at tau <= 0.5, and
    from tau = 0.75 on every step up in temperature lowers the share; at every tau >= 80 % of the
    samples are different; top-p 0.5 parses more than top-p 1. And <pad> appears at tau = 2 unless
    suppressed. (Shapes counted over all samples, broken ones included, grow from tau 0.1 to 1 to 2;
    the notebook no longer counts them as diversity: see the next test.)
    Seeds: 0, 1, 2 of the model x 0-3 of the sampler (a GPU draws another stream than the CPU).
    The notebook's statements among these (the share that parses, distinct samples, top-p 0.5
    against 1, <pad> at tau = 2) are also checked at all ten model seeds in the next-but-one test.

    Exploration (review gpt12, model seeds 0-2 x sampling seeds 0-3): between tau = 0.5 and 0.75
    the share fell by only 1-6 samples of 300 (0.993 -> 0.990 once), so the notebook no longer
    claims that step; from 0.75 on each step fell by >= 4 points in all 12 runs."""
    lm = language_models[seed]
    temperatures = [0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]

    def measure(**kwargs):
        texts = sample_sentences(lm, 300, seed=sampling_seed, **kwargs)
        return sum(map(tl.is_sentence, texts)) / 300, len(set(texts)), len(set(map(tl.shape, texts)))

    by_temp = {t: measure(temperature=t) for t in temperatures}
    share = {t: v[0] for t, v in by_temp.items()}
    shapes = {t: v[2] for t, v in by_temp.items()}
    assert min(share[t] for t in (0.1, 0.25, 0.5)) >= 0.97, share
    assert all(share[a] > share[b] for a, b in zip(temperatures[3:], temperatures[4:], strict=False)), share
    assert min(v[1] for v in by_temp.values()) >= 240
    assert shapes[0.1] < shapes[1.0] < shapes[2.0], shapes  # over all samples, broken ones included
    top_p = {p: measure(temperature=1.0, top_p=p) for p in (0.3, 0.5, 1.0)}
    assert top_p[0.5][0] > top_p[1.0][0], top_p
    prompt = torch.ones(300, 1, dtype=torch.long)
    gen = torch.Generator().manual_seed(sampling_seed)
    hot = lm.generate(prompt, 16, temperature=2.0, generator=gen)
    safe = lm.generate(prompt, 16, temperature=2.0, generator=torch.Generator().manual_seed(sampling_seed),
                       suppress=[0])
    assert (hot == 0).any(1).sum() > 0
    assert not (safe == 0).any()


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_model_makes_the_verb_agree_with_the_subjects_number(seed):
    """Conclusion (notebook 12, section 7): after "the cats that" the plural verb forms get more
    than 10 times the probability of the singular ones; control: after "the cat that" the singular
    forms get more than 10 times that of the plural ones ("chased" fits both and counts in neither).
    The sharper control (review 0912b): with a noun of the other number between the subject and the
    main verb, "the cats that see a dog" (plural over 5x singular) and "the cat that sees some
    dogs" (singular over 5x plural): the subject decides, not the nearest noun.
    Seeds 0-4 (written) and held-out 5-9.

    Exploration (before the claim was written, model seeds 0-4, then held-out 5-9 unchanged):
    plural against singular mass after "the cats that" was 0.739/0.014, 0.728/0.009, 0.773/0.012,
    0.784/0.009, 0.778/0.010 at seeds 0-4 and 0.765/0.009, 0.758/0.010, 0.780/0.007, 0.752/0.010,
    0.751/0.010 at held-out seeds 5-9; after "the cat that" singular against plural was 0.733-0.769
    against 0.008-0.011. The smallest ratio of the 20 was 52x (seed 0, plural): 10x leaves room.
    The sharper control, measured at seeds 0-4 before its threshold was written: "the cats that see
    a dog" plural/singular 0.748/0.014, 0.744/0.022, 0.791/0.016, 0.699/0.097, 0.771/0.018; "the cat
    that sees some dogs" singular/plural 0.767/0.013, 0.790/0.018, 0.791/0.014, 0.742/0.055,
    0.791/0.011. The nearest noun pulls a little (seed 3: 7.2x and 13.5x), so the threshold is 5x, not
    the 10x of the plain prompts. Held-out seeds 5-9, unchanged: 0.751-0.783 against 0.013-0.023 and
    0.761-0.796 against 0.015-0.017 (at least 33x)."""
    plural_forms, singular_forms = ("chase", "see", "sleep", "run"), ("chases", "sees", "sleeps", "runs")
    lm = _language_model(seed)

    def mass(prompt):
        p = dict(zip(tl.VOCAB, sampling_view(lm, prompt, temperature=1.0).probs.tolist(), strict=True))
        return sum(p[w] for w in plural_forms), sum(p[w] for w in singular_forms)

    for prompt, ratio in (("the cats that", 10), ("the cats that see a dog", 5)):
        plural, singular = mass(prompt)
        assert plural > ratio * singular, (prompt, plural, singular)
    for prompt, ratio in (("the cat that", 10), ("the cat that sees some dogs", 5)):
        plural, singular = mass(prompt)
        assert singular > ratio * plural, (prompt, singular, plural)


@pytest.mark.parametrize("sampling_seed", (0, 1))
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_correct_variety_is_bought_at_low_temperature(seed, sampling_seed):
    """Conclusion (notebook 12, section 7): counted among the samples that parse, diversity has a
    ceiling, the grammar's 24 shapes (``tl.shapes()``), and temperature buys correct variety at low
    temperatures: of 300 samples, the parsed ones show at most 16 shapes at tau = 0.1 and at least
    22 at tau = 0.5 (while >= 97 % parse, tested above); at tau = 2 at least 100 of the shapes are
    broken sentences' and the parsed samples show fewer shapes than at 0.5, also when tau = 0.5 is
    given only as many parsed samples as tau = 2 has (the reader's control for sample size: with
    108 parsed samples, 0.5 showed 22.7 shapes on average against 17 at tau = 2). Top-p 0.3 gives fewer
    parsed shapes than top-p 1; top-p 0.9 keeps >= 97 % parsing with >= 22 shapes.
    Seeds: model seeds 0-4 (thresholds written from them) and held-out 5-9 (checked unchanged), each
    with the notebook's sampling seed 0 and with 1. Control: every parsed shape is one of the 24.
    Also at all ten seeds (review r3: first tested at model seeds 0-2 only, while the notebook says
    "ten models"; the reader's sweep of seeds 0-9 x sampling seeds 0, 1 held, with >= 280 distinct
    samples of 300 and 37-43 rows with <pad> at tau = 2): at least 97 % parse at tau <= 0.5, from
    tau = 0.75 on each step up lowers the share that parses, >= 80 % of the samples are distinct at
    every tau, top-p 0.5 parses more than top-p 1, and <pad> appears at tau = 2 unless suppressed.

    Exploration (2026-12-06, before the claims were written; model seeds 0-4 x sampling seeds 0, 1):
    parsed shapes at tau = 0.1: 10-14; at 0.25: 21-24; at 0.5: 24 in all ten runs; at 0.75-1.5:
    21-24; at 2: 15-20, with 147-164 shapes over all samples. Top-p 0.9: 24 shapes and 98.7-100 %
    parsing; top-p 0.3: 1-2 shapes. Held-out seeds 5-9 afterwards, thresholds unchanged: tau = 0.1:
    9-13; 0.5: 24; 2: 14-18 (146-158 over all); top-p 0.9: 24 shapes, 98.0-100 % parsing."""
    lm = _language_model(seed)

    def measure(**kwargs):  # (share that parses, shapes, shapes among the parsed samples)
        texts = sample_sentences(lm, 300, seed=sampling_seed, **kwargs)
        parsed = {tl.shape(t) for t in texts if tl.is_sentence(t)}
        assert parsed <= tl.shapes(), parsed - tl.shapes()  # the control: no correct sample adds a shape
        return sum(map(tl.is_sentence, texts)) / 300, len({tl.shape(t) for t in texts}), len(parsed)

    assert len(tl.shapes()) == 24
    temperatures = [0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]
    texts = {t: sample_sentences(lm, 300, seed=sampling_seed, temperature=t) for t in temperatures}
    share = {t: sum(map(tl.is_sentence, v)) / 300 for t, v in texts.items()}
    assert min(share[t] for t in (0.1, 0.25, 0.5)) >= 0.97, share
    assert all(share[a] > share[b] for a, b in zip(temperatures[3:], temperatures[4:], strict=False)), share
    assert min(len(set(v)) for v in texts.values()) >= 240, {t: len(set(v)) for t, v in texts.items()}
    by_temp = {t: measure(temperature=t) for t in (0.1, 0.5, 2.0)}
    assert by_temp[0.1][2] <= 16, by_temp
    assert by_temp[0.5][2] >= 22, by_temp
    assert by_temp[2.0][1] - by_temp[2.0][2] >= 100, by_temp
    assert by_temp[2.0][2] < by_temp[0.5][2], by_temp
    # the control for sample size: as many parsed samples at 0.5 as tau = 2 has still show more shapes
    k = round(by_temp[2.0][0] * 300)
    half = [t for t in sample_sentences(lm, 300, seed=sampling_seed, temperature=0.5) if tl.is_sentence(t)][:k]
    assert len({tl.shape(t) for t in half}) > by_temp[2.0][2], (k, half)
    top_p = {p: measure(temperature=1.0, top_p=p) for p in (0.3, 0.5, 0.9, 1.0)}
    assert top_p[0.3][2] < top_p[1.0][2], top_p
    assert top_p[0.5][0] > top_p[1.0][0], top_p
    assert top_p[0.9][0] >= 0.97, top_p
    assert top_p[0.9][2] >= 22, top_p
    prompt = torch.ones(300, 1, dtype=torch.long)  # 300 rows that start with '.'
    hot = lm.generate(prompt, 16, temperature=2.0, generator=torch.Generator().manual_seed(sampling_seed))
    safe = lm.generate(prompt, 16, temperature=2.0, generator=torch.Generator().manual_seed(sampling_seed),
                       suppress=[0])
    assert (hot == 0).any(1).sum() > 0 and not (safe == 0).any()


@pytest.mark.parametrize("sampling_seed", (0, 1))
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_a_rows_start_and_the_low_temperature_each_change_the_structure(seed, sampling_seed):
    """Conclusion (notebook 12, section 7, the reader's control r4): the samples start a row, and
    that is not where a typical sentence starts, but the few shapes at tau = 0.1 are the per-token
    effect. Of 300 samples, the share of parsed ones whose subject takes a relative clause ("that"):
    at tau = 1, at a row's start above the grammar's 0.3 and above the share after a complete first
    sentence ("some birds sleep."); at tau = 0.1, >= 0.95 at both; after the sentence the parsed
    samples at tau = 0.1 still show fewer than 20 of the 24 shapes. (That they show more shapes than
    at a row's start is not claimed: at seed 4, sampling seed 0, both show 11.)

    Written from model seeds 0-4 x sampling seeds 0, 1: tau = 1, row start 0.399-0.473, after the
    sentence 0.235-0.344; tau = 0.1, row start 1.000, after 0.993-1.000; shapes after the sentence
    at tau = 0.1: 11-16 (row start 8-13). Held-out seeds 5-9 afterwards, thresholds unchanged:
    tau = 1, row start 0.375-0.457, after 0.219-0.325; tau = 0.1, row start 1.000, after
    0.977-1.000; shapes after the sentence at tau = 0.1: 13-18 (row start 8-14)."""
    lm = _language_model(seed)

    def share(tau, prompt=""):
        texts = sample_sentences(lm, 300, seed=sampling_seed, temperature=tau, prompt=prompt)
        parsed = [t for t in (s[len(prompt):].strip() for s in texts) if tl.is_sentence(t)]
        return sum("that" in t.split() for t in parsed) / len(parsed), len({tl.shape(t) for t in parsed})

    after = "some birds sleep."
    (start_1, _), (after_1, _) = share(1.0), share(1.0, after)
    (start_01, _), (after_01, shapes_after) = share(0.1), share(0.1, after)
    assert start_1 > 0.3 and start_1 > after_1, (start_1, after_1)
    assert min(start_01, after_01) >= 0.95, (start_01, after_01)
    assert shapes_after < 20, shapes_after


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_loss_falls_fast_then_flattens_just_above_the_entropy_rate(seed):
    """Conclusion (notebook 12, section 4, after the loss plot): the logged training loss falls by
    more than 1 nat per token from step 25 to 100 and by less than 0.05 from step 200 to 300, and
    the validation loss ends above the entropy rate by less than 0.05. Seeds 0-4 (written) and
    held-out 5-9.

    Exploration (review r6, before the claim was written; the 300-step models of the cache):
    25 -> 100 fell by 1.264, 1.204, 1.233, 1.211, 1.291 at seeds 0-4 and 1.247, 1.252, 1.219, 1.200,
    1.218 at held-out 5-9; 200 -> 300 by 0.014-0.027 at seeds 0-4 and 0.021-0.028 at 5-9; the
    validation loss was 0.007-0.029 above the entropy rate at seeds 0-4 and 0.008-0.025 at 5-9."""
    model, history = train_toy_lm(seed=seed, device="cpu")
    logged = dict(zip(history["step"], history["loss"], strict=True))
    data = toy_lm_data()
    with torch.no_grad():
        logits = model(data["val_x"])
    val_loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), data["val_y"].flatten(),
                                                 ignore_index=-100).item()
    assert logged[25] - logged[100] > 1, logged
    assert logged[200] - logged[300] < 0.05, logged
    assert 0 < val_loss - tl.entropy_per_token() < 0.05, val_loss


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_a_rows_first_sentence_is_longer_and_more_often_takes_a_relative_clause(seed):
    """Conclusion (notebook 12, section 4): in the packed rows, a row's first sentence (the one that
    did not fit at the end of the previous row) is longer on average than the other sentences and
    than the grammar's expected length, and takes a relative clause more often than both. The
    notebook counts its own training rows (data seed 0); here the rows of 20,000 sentences drawn
    with data seeds 0-4 (written) and held-out 5-9, packed the same way.

    Exploration (review r6): first sentences 7.50-7.58 tokens with a relative-clause share of
    0.388-0.412 at data seeds 0-9, the other sentences 6.64-6.70 tokens and 0.260-0.274; the grammar
    6.87 tokens and 0.3."""
    _, labels = tl.pack_sentences(map(tl.encode, tl.sentences(20_000, seed=seed)), length=32)
    rows = [tl.decode(y[y >= 0]).split(".")[:-1] for y in labels]
    stats = []
    for group in ([r[0] for r in rows], [s for r in rows for s in r[1:]]):
        stats.append((sum(len(s.split()) + 1 for s in group) / len(group),
                      sum("that" in s.split() for s in group) / len(group)))
    (first_len, first_that), (other_len, other_that) = stats
    assert first_len > max(other_len, tl.expected_tokens_per_sentence()), stats
    assert first_that > max(other_that, tl.GRAMMAR["SUBJ_sg"][1][0]), stats
