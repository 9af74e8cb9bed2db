"""Notebook 05, section 8: on a task that needs the first and the previous token at once, two heads
of width 8 learn it quickly, one head of width 16 with the same parameters learns it far more
slowly and is still behind after ten times the steps, and one head learns either relation alone
quickly (the control for the explanation "two relations in one weighted average"), and one head with an
MLP read-out learns both in 150 steps in 9 of 10 seeds (the control that locates the difficulty in the
linear read-out: the one weighted average holds both tokens).

Seeds 1-4 here; seed 0 is the notebook's own run, checked by its claims (nothing trains twice);
seed 6 for the failure the prose mentions (the single head locks onto the first token).
Variations: 150 steps (the notebook) and 1,500 steps (its "ten times the training"). Control: one
head trained on one relation only. The code is the notebook's own (tests/notebook_code.py).

Measured before the prose was written (seeds 0-9): after 150 steps two heads 1.000 and one
head 0.20-0.70; after 1,500 steps one head 0.86-0.91 (0.23 for seed 6, which never learns the
previous token); after 5,000 steps one head at most 0.96, two heads 1.000 from step 100 on.

The MLP read-out (issue 32; one hidden layer of 128 units, 150 steps, the notebook's code): written
from seeds 0-4 (both right 0.9964, 0.9239, 0.9867, 0.9890, 0.9686: threshold "more than 0.85"), then
checked unchanged at held-out seeds 5-9: 0.9576, 0.9637, 1.0000, 0.9521, and 0.1900 at seed 9, where
the head settled on the previous token alone (first 0.19, previous 1.00). The prose was re-scoped to
"9 of the 10 seeds we tried"; the test below asserts exactly that over seeds 1-9 (seed 0 is the
notebook's own run). A hidden layer of 64 units locked onto one relation in 4 of 10 seeds, 256 units
in none of 0-4 (0.93-1.00): the width matters, the notebook uses 128.
"""

import functools

import pytest
from notebook_code import notebook_definitions

SEEDS = (1, 2, 3, 4)


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


@pytest.mark.parametrize("seed", SEEDS)
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


@pytest.mark.parametrize("seed", SEEDS)
def test_one_head_of_the_same_size_is_far_behind_after_150_steps(seed):
    ns = nb()
    assert ns["n_params"](ns["TwoRelationModel"](1)) == ns["n_params"](ns["TwoRelationModel"](2))
    both, first, previous = accuracy(1, 150, seed)
    assert both <= 0.85, f"seed {seed}: one head already names both tokens at {both:.4f}"
    assert min(first, previous) < 0.9, f"seed {seed}: one head at {first:.4f} / {previous:.4f}"


@pytest.mark.parametrize("seed", SEEDS)
def test_one_head_is_slower_not_unable_and_still_behind_after_1500_steps(seed):
    both_150 = accuracy(1, 150, seed)[0]
    both_1500 = accuracy(1, 1500, seed)[0]
    assert both_1500 > both_150 + 0.1, f"seed {seed}: 1,500 steps {both_1500:.4f}, 150 steps {both_150:.4f}"
    assert both_1500 < 0.95, f"seed {seed}: one head reaches {both_1500:.4f} after 1,500 steps"


@pytest.mark.parametrize("seed", SEEDS)
def test_control_one_head_learns_either_relation_alone_in_150_steps(seed):
    only_first = accuracy(1, 150, seed, relations=("first",))[1]
    only_previous = accuracy(1, 150, seed, relations=("previous",))[2]
    assert min(only_first, only_previous) >= 0.99, (
        f"seed {seed}: one head trained on one relation: first {only_first:.4f}, previous {only_previous:.4f}")


@pytest.mark.parametrize("seed", [*SEEDS, 6])
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


WRITTEN_FROM, HELD_OUT = (1, 2, 3, 4), (5, 6, 7, 8, 9)


def test_control_one_head_with_an_mlp_read_out_learns_both_in_9_of_10_seeds():
    """The notebook: "with an MLP read-out, one head names both tokens at more than 85 % of
    positions after 150 steps ... in 9 of the 10 seeds we tried; in the tenth the head settled on
    the previous token alone". Seed 0 is the notebook's run; seeds 1-4 wrote the threshold, 5-9 are
    held out. Every seed that misses 85 % must be one that settled on one relation (one at 99 % or
    more, the other below 50 %), and at most one of the nine may miss. Where it learned both, it is
    more than 10 points above the same head with linear read-outs (the notebook's second claim)."""
    results = {seed: accuracy(1, 150, seed, mlp_width=128) for seed in WRITTEN_FROM + HELD_OUT}
    misses = {seed: r for seed, r in results.items() if r[0] <= 0.85}
    shown = {seed: [round(v, 4) for v in r] for seed, r in results.items()}
    assert not set(misses) & set(WRITTEN_FROM), f"a seed the threshold was written from misses it: {shown}"
    assert len(misses) <= 1, f"more than one seed in 10 misses 85 % with the MLP read-out: {shown}"
    for seed, (_, first, previous) in misses.items():
        assert max(first, previous) >= 0.99 and min(first, previous) < 0.5, (
            f"seed {seed} misses 85 % without settling on one relation: {shown[seed]}")
    for seed in set(results) - set(misses):
        linear = accuracy(1, 150, seed)[0]
        assert results[seed][0] > linear + 0.1, f"seed {seed}: MLP {shown[seed]}, linear {linear:.4f}"

