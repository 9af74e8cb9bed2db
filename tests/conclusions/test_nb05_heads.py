"""Notebook 05, section 8: on a task that needs the first and the previous token at once, two heads
of width 8 learn it quickly, one head of width 16 with the same parameters learns it far more
slowly and is still behind after ten times the steps, and one head learns either relation alone
quickly (the control for the explanation "two relations in one weighted average"), and new MLP read-outs
on the trained single head, its attention frozen, name both tokens wherever the head had split its
weight, while new linear read-outs on it, trained ten times as long, stay behind (the controls that
locate the difficulty in the linear read-out: the one weighted average holds both tokens).

Seeds 1-4 (written) and held-out 5-9 here; seed 0 is the notebook's own run, checked by its claims
(nothing trains twice). Seed 6 is the failure the prose mentions (the single head locks onto the
first token), so the 1,500-step test leaves it out and a test of its own checks it.
Variations: 150 steps (the notebook) and 1,500 steps (its "ten times the training"). Control: one
head trained on one relation only. The code is the notebook's own (tests/notebook_code.py).

Measured before the prose was written (seeds 0-9): after 150 steps two heads 1.000 and one
head 0.20-0.70; after 1,500 steps one head 0.86-0.91 (0.23 for seed 6, which never learns the
previous token); after 5,000 steps one head at most 0.96, two heads 1.000 from step 100 on.

The MLP read-out control (one hidden layer of 128 units): the single head trained with linear
read-outs for 150 steps, its embeddings and attention frozen, new MLP read-outs trained for 150 steps.
Measured at seeds 0-9, pinned kernels / unpinned (plain python on an AVX-512 machine): both right
0.9670/0.9577, 0.9283/0.9267, 0.9239/0.9240, 0.8206/0.8179, 0.9657/0.9647 (seeds 0-4: thresholds
"more than 0.75" and "at least 0.2 above its linear read-outs", smallest gain 0.30), then held-out
0.9379/0.9360, 0.2081/0.2033 (seed 6: the linear head had settled on the first token), 0.9309/0.9316
(gain 0.23), 0.9243/0.9246, 0.9581/0.9579. Fresh *linear* read-outs on the frozen head stay near the
original (0.41-0.74).

The control for the linearity (in the notebook since a second expert read): fresh linear read-outs on
the same frozen head, 1,500 steps, both right (pinned), seeds 0-4: 0.7089, 0.5563, 0.4269, 0.5430,
0.4619 (thresholds "under 0.8" and "at least 0.1 below the MLP read-outs after 150 steps"; smallest
gap 0.26), held-out 5-9: 0.7206, 0.2060 (seed 6, no split), 0.7910, 0.7056, 0.7100 (smallest gap
0.14, seed 7): held unchanged. A fourth read ran seeds 10-19: the linear read-outs reached 0.7730, 0.7574,
0.7384, 0.6817, 0.7540, 0.3743, 0.8089, 0.7951, 0.8037, 0.7339, above the "under 0.8" bound at seeds 16
and 18; the notebook now claims the 10-point gap only (MLPs 0.899-0.942 there, narrowest gap 0.117 at
seed 16), and this test checks it at seeds 1-19. After 150 steps: 0.41-0.69 (seeds 0-4), 0.66-0.74 (5, 7-9). MLP
read-outs on an *untrained* frozen attention reach only 0.06-0.17 (seeds 0-9). The earlier control, an MLP read-out trained from scratch for 150 steps, moved
with the kernels (seed 0: 0.9894 pinned, 0.8990 unpinned; seed 3 0.9883 / 0.8697) and settled on one
relation at seed 9; it is no longer in the notebook.
"""

import copy
import functools

import pytest
from notebook_code import notebook_definitions
from seed_sets import ALL_SEEDS, seed_id

from helpers import seed_everything

SEEDS = ALL_SEEDS[1:]  # seed 0 is the notebook's own run
EXTRA_SEEDS = tuple(range(10, 20))  # a fourth read's sweep of the linear control (see its test)


@functools.cache
def nb():
    return notebook_definitions("05_multi_head_attention", "vocab_size", "two_relation_batch", "TwoRelationModel",
                                "read_out", "fit_two_relations", "train_two_relations", "test_ids", "accuracy",
                                "share_on", "n_params")


@functools.cache
def accuracy(num_heads: int, steps: int, seed: int, relations=("first", "previous"), mlp_width: int = 0):
    """(both right, first right, previous right) on the notebook's 1,000 test sequences."""
    ns = nb()
    return ns["accuracy"](ns["train_two_relations"](num_heads, steps=steps, seed=seed, relations=relations,
                                                     mlp_width=mlp_width))


@pytest.mark.parametrize("seed", SEEDS, ids=seed_id)
def test_two_heads_learn_both_relations_in_150_steps_one_head_each(seed):
    ns = nb()
    model = ns["train_two_relations"](2, steps=150, seed=seed)
    both, first, previous = ns["accuracy"](model)
    assert both >= 0.99, f"seed {seed}: two heads name both tokens at {both:.4f} of positions"
    model(ns["test_ids"])
    weights = model.attn.attn_weights  # (1000, 2, L, L)
    first_share, prev_share = ns["share_on"](weights, "first"), ns["share_on"](weights, "previous")
    first_head = int(first_share.argmax())
    assert first_share[first_head] > 0.9 and prev_share[1 - first_head] > 0.9, (
        f"seed {seed}: the heads do not split the relations: first {first_share.tolist()}, previous "
        f"{prev_share.tolist()}")


@pytest.mark.parametrize("seed", SEEDS, ids=seed_id)
def test_one_head_of_the_same_size_is_far_behind_after_150_steps(seed):
    ns = nb()
    assert ns["n_params"](ns["TwoRelationModel"](1)) == ns["n_params"](ns["TwoRelationModel"](2))
    both, first, previous = accuracy(1, 150, seed)
    assert both <= 0.85, f"seed {seed}: one head already names both tokens at {both:.4f}"
    assert min(first, previous) < 0.9, f"seed {seed}: one head at {first:.4f} / {previous:.4f}"


@pytest.mark.parametrize("seed", [s for s in SEEDS if s != 6], ids=seed_id)
def test_one_head_is_slower_not_unable_and_still_behind_after_1500_steps(seed):
    both_150 = accuracy(1, 150, seed)[0]
    both_1500 = accuracy(1, 1500, seed)[0]
    assert both_1500 > both_150 + 0.1, f"seed {seed}: 1,500 steps {both_1500:.4f}, 150 steps {both_150:.4f}"
    assert both_1500 < 0.95, f"seed {seed}: one head reaches {both_1500:.4f} after 1,500 steps"


@pytest.mark.parametrize("seed", SEEDS, ids=seed_id)
def test_control_one_head_learns_either_relation_alone_in_150_steps(seed):
    only_first = accuracy(1, 150, seed, relations=("first",))[1]
    only_previous = accuracy(1, 150, seed, relations=("previous",))[2]
    assert min(only_first, only_previous) >= 0.99, (
        f"seed {seed}: one head trained on one relation: first {only_first:.4f}, previous {only_previous:.4f}")


@pytest.mark.parametrize("seed", SEEDS, ids=seed_id)
def test_the_single_head_splits_its_weight_or_gives_up_a_relation(seed):
    """The explanation: one weighted average must serve both relations, so after 150 steps the
    single head either shares its weight between the first and the previous token, or it serves
    one of them and fails the other (seed 6 of the exploration did that)."""
    ns = nb()
    model = ns["train_two_relations"](1, steps=150, seed=seed)
    _, first, previous = ns["accuracy"](model)
    model(ns["test_ids"])
    split = [ns["share_on"](model.attn.attn_weights, r)[0].item() for r in ("first", "previous")]
    assert min(split) > 0.25 or min(first, previous) < 0.5, (
        f"seed {seed}: weights {split}, accuracies {first:.4f} / {previous:.4f}")


def test_some_runs_lock_the_single_head_onto_one_relation():
    """The notebook's "not every run gets even that far": with seed 6 the single head settles on
    the first token and still has not learned the previous one after 1,500 steps."""
    _, first, previous = accuracy(1, 1500, 6)
    assert first >= 0.99 and previous < 0.5, f"seed 6: first {first:.4f}, previous {previous:.4f}"


@functools.cache
def linear_head(seed: int):
    """The single head with linear read-outs after 150 steps: (model, accuracies, weight split)."""
    ns = nb()
    model = ns["train_two_relations"](1, steps=150, seed=seed)
    model(ns["test_ids"])
    split = [ns["share_on"](model.attn.attn_weights, r)[0].item() for r in ("first", "previous")]
    return model, ns["accuracy"](model), split


@functools.cache
def new_read_outs(seed: int, mlp_width: int, steps: int):
    """The notebook's cells: copy the trained single head, freeze it, new read-outs (linear for
    mlp_width 0), trained for ``steps``; their accuracies."""
    ns = nb()
    probe = copy.deepcopy(linear_head(seed)[0]).requires_grad_(False)
    seed_everything(seed)
    probe.read_first, probe.read_prev = ns["read_out"](mlp_width), ns["read_out"](mlp_width)
    ns["fit_two_relations"](probe, steps=steps, seed=seed)
    return ns["accuracy"](probe)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_control_new_mlp_read_outs_on_the_frozen_head_name_both_tokens_where_it_split_its_weight(seed):
    """The notebook's cells: copy the trained head, freeze it, new MLP read-outs (128 units), 150
    steps. Where the head split its weight (more than 25 % on each token): more than 75 % both right
    and at least 20 points above its linear read-outs. Where it had settled on one token (seed 6),
    the mixture lacks the other and no read-out finds it (both right below 50 %)."""
    _, (linear_both, _, _), split = linear_head(seed)
    both = new_read_outs(seed, 128, 150)[0]
    if min(split) > 0.25:
        assert both > 0.75, f"seed {seed}: frozen head + MLPs {both:.4f} (split {split})"
        assert both > linear_both + 0.2, f"seed {seed}: MLPs {both:.4f}, linear {linear_both:.4f}"
    else:
        assert both < 0.5, f"seed {seed}: split {split}, yet MLPs name both at {both:.4f}"


def test_the_head_splits_its_weight_in_9_of_seeds_0_to_9_not_at_seed_6():
    """The notebook: "9 of seeds 0 to 9 ... in the tenth (seed 6) it had settled on the first token"."""
    unsplit = [seed for seed in ALL_SEEDS if min(linear_head(seed)[2]) <= 0.25]
    assert unsplit == [6], unsplit


@pytest.mark.parametrize("seed", SEEDS + EXTRA_SEEDS, ids=lambda s: seed_id(s) if s in ALL_SEEDS else f"extra seed {s}")
def test_control_new_linear_read_outs_on_the_frozen_head_stay_behind_after_1500_steps(seed):
    """The control for the linearity: the same frozen head with new linear read-outs, trained for
    1,500 steps, stays at least 10 points below the MLP read-outs after 150 (if they caught up,
    retraining on fixed features, not the linear map, would be the cause). The notebook claims the
    gap, not a bound on the linear read-outs: they reach 0.8089 at seed 16 and 0.8037 at seed 18.
    Where the head had settled on one token (seed 6) no read-out finds the other; the MLP test above
    checks that case, and the notebook's prose names it. Seeds 10-19: the prose says the gap held there
    and that the head split its weight at each of them."""
    both = new_read_outs(seed, 0, 1500)[0]
    split = min(linear_head(seed)[2]) > 0.25
    assert split or seed in ALL_SEEDS, f"seed {seed}: the head did not split its weight {linear_head(seed)[2]}"
    if split:
        mlp = new_read_outs(seed, 128, 150)[0]
        assert both < mlp - 0.1, f"seed {seed}: new linear {both:.4f}, MLPs {mlp:.4f}"


MLP_LEAD_UNDER_20_POINTS = (16, 17, 18)  # of seeds 10-19: the prose's "20 points at only 7 of the 10"


def test_mlp_read_outs_lead_by_10_points_at_seeds_10_to_19_but_by_20_only_at_7():
    """The prose's scope of the claim "at least 20 points more than the same head's linear read-outs"
    (MLP read-outs after 150 steps against the head's own linear read-outs after 150): it held at the 9
    seeds of 0-9 where the head split its weight (the MLP test above). A fifth read found it failing at
    seed 16; measured at seeds 10-19 (pinned): leads 0.2310, 0.2260, 0.2737, 0.3643, 0.2399, 0.6499,
    0.1670, 0.1864, 0.1911, 0.2576, MLP read-outs 0.8991-0.9419. The prose claims 10 points at every
    one of them and 20 points at 7 of the 10; the notebook's threshold is not changed."""
    under_20 = []
    for seed in EXTRA_SEEDS:
        _, (linear_both, _, _), split = linear_head(seed)
        both = new_read_outs(seed, 128, 150)[0]
        assert min(split) > 0.25 and both > 0.75, f"seed {seed}: split {split}, MLPs {both:.4f}"
        assert both > linear_both + 0.1, f"seed {seed}: MLPs {both:.4f}, linear {linear_both:.4f}"
        if both <= linear_both + 0.2:
            under_20.append(seed)
    assert tuple(under_20) == MLP_LEAD_UNDER_20_POINTS, under_20


def test_seed_27_settles_on_an_uneven_split():
    """The prose's "try SEED = 27": after 150 steps the single head puts more than half of its weight
    on the first token and less than a quarter on the previous one, so the notebook's split check
    (more than 25 % on each) and its MLP read-outs' 75 % print a cross. A sixth read (seeds 20-29,
    pinned): split 0.563 / 0.190, MLP read-outs 0.6517, the head's own linear read-outs 0.2313; 1,500
    steps of joint training 0.8979. The same read found the 10-point gap of the linear control closing
    outside seeds 0-19 (0.104 at seed 29, 0.141-0.150 at seeds 21, 23, 28); the prose scopes it to 0-19."""
    _, _, split = linear_head(27)
    assert split[0] > 0.5 and split[1] < 0.25, f"seed 27: split {split}"
    both = new_read_outs(27, 128, 150)[0]
    assert both <= 0.75, f"seed 27: MLP read-outs {both:.4f}"
