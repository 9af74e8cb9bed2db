"""Notebook 03, section 6: training the query and key projections on two (query, key) pairs.

Conclusions checked: the asked weights pass 0.99; the projections grow more than 3 times, past the
hand-set ones; the untrained row of "cat" sharpens from below 0.5 to above 0.8; the gradient at W_q
peaks before step 50 and ends more than 10 times lower. The explanation of the last one (convergence,
not saturation) with its control: asked for new pairs, the trained model gets a LARGER gradient
than at its random start under -log a and learns them, while under the loss -a (the weight itself,
notebook 02's kind of loss) it gets less than a tenth of its starting gradient.

Issue 32 moved that control to the scores S: the ratio at W_q (24 times in the notebook's run)
mostly measured W_k's tenfold growth, since the gradient at W_q is the one at S multiplied through
K = X W_k. Measured at S, seed 0, 200 steps: -log a 0.9986 trained vs 0.6525 at the start (larger,
1.53 times; at W_q 2.2996 vs 0.0968); -a 0.0011 vs 0.1030 (94 times smaller). The thresholds
("larger", "ratio at W_q larger than at S", "less than a tenth") were written from seeds 0-4 and
checked unchanged at held-out seeds 5-9, at 200 and 600 steps.

Does the small -a gradient stop learning? That depends on the optimiser (a second expert read:
with Adam, the notebook's optimiser, -a taught the saturated model the new pairs at seed 0,
0.9998 and 0.9997 in 300 steps). The notebook's control is plain gradient descent (SGD, learning
rate 0.1, 300 steps, the notebook's own learn_new_pairs): SGD with -a leaves both new weights below
0.01, SGD with -log a lifts both above 0.8. Written from seeds 0-4, measured before writing: SGD -a at
most 0.0025 (0.0002 after 600 training steps), SGD -log a at least 0.8664. Held-out seeds 5-9, the same
thresholds: SGD -a at most 0.0024, SGD -log a at least 0.9641. Adam with -a depends on the seed: at seeds 0-4
(200 steps) it learned both new pairs at seed 0 and left one below 0.0002 at seeds 1-4; over seeds
0-9 it learned both (above 0.9) at 4 seeds (0, 5, 6, 7) and left one below 0.01 at the other 6; after
the Try-it's 600 training steps, both at 2 seeds (0, 7). The notebook's prose states these counts.

Seeds 0-4 (seed 0 is the notebook's; each run takes a fraction of a second) and held-out 5-9.
Variations: 200 steps (the notebook) and 600 steps (its "Try it"), and the Try-it's own sentence:
from step 200 to step 600 |W_q| and |W_k| keep growing, the gradient keeps shrinking, and the asked
rows and the row of "cat" get sharper (measured, seeds 0-4: |W_q| 4.85-6.06 -> 5.45-6.66, |grad W_q|
0.0023-0.0031 -> 0.0004-0.0006, cat's largest weight 0.894-0.992 -> 0.940-0.998; held-out seeds
5-9, by the second read: |W_q| 5.23-5.95, |W_k| 5.47-6.84, cat's row 0.844-0.991 at 200 steps,
gradient peak at steps 8-22, end/peak <= 0.0084, cat's row 0.901-0.997 at 600). The code is the
notebook's own.

How much training the SGD control needs (a third expert read: with STEPS = 100, SGD with -a lifted
big -> mouse to 0.9412 at seed 0). The notebook's table trains the same random start for 100, 150
and 200 steps. Measured, seeds 0-4 (-a gradient at S below the start's, times; largest new weight
after SGD with -a): 100 steps 23.3-35.2 times, 0.9412, 0.96, 0.1998, 0.0454, 0.9539; 150 steps
47.5-67.1 times, at most 0.0059; 200 steps at most 0.0025. Thresholds from these ("more than 10
times" at 100 steps; "both below 0.01" at 150 and 200) checked unchanged at held-out seeds 5-9:
100 steps 27.5-49.3 times; 150 steps at most 0.0049. The count the prose states, a new weight
above 0.9 after 100 training steps, is 4 of seeds 0-9 (0, 1, 4, 7; seed 2 lands at 0.1998).

The control "is SGD with -a merely slow?" (a fifth read: the notebook compared the SUM of the two new
weights' rises over 300 SGD steps from the random start and from the trained model, and one pair made
nearly all of it: from the random start chased -> cat rose only 0.0461 at seed 0 and fell at seed 9).
Now each pair on its own, 1,000 SGD steps with -a from both. Measured, seeds 0-4 (pinned): from the
random start both new weights 0.9888-0.9971; from the model trained 200 steps chased -> cat at most
0.0001, big -> mouse 0.9948-0.9967; after 600 training steps both at most 0.0003; |W_k| trained/start
7.3-21.5 times (200 and 600 steps). Thresholds ("both above 0.9"; "chased -> cat below 0.01"; "big -> mouse above 0.9";
600 steps "both below 0.01"; "W_k more than 5 times") checked unchanged at held-out seeds 5-9: random
start 0.9563-0.9972, chased -> cat at most 0.0010, after 600 steps at most 0.0004, |W_k| 6.0-11.2
times; big -> mouse 0.9691, 0.6292 (seed 6), 0.9927, 0.9864, 0.9908: it failed at seed 6, so the prose
states "9 of the 10 seeds" for it (a count test), not a threshold for every seed.
Adam with -a after only 100 training steps (the Try it STEPS = 100): learned both at seeds 4-7 only; at
seed 0 (the notebook's) it learned big -> mouse and left chased -> cat at 0.0000, although it learned
both after 200 and 600 steps: the prose says Adam's outcome does not follow how saturated the model is.
"""

import functools

import pytest
import torch
from notebook_code import notebook_definitions
from seed_sets import ALL_SEEDS, seed_id

STEPS = (200, 600)
ADAM_LEARNS_BOTH = {200: 4, 600: 2}  # seeds of 0-9 at which Adam with -a learns both new pairs (the prose)


@functools.cache
def nb():
    return notebook_definitions("03_self_attention_qkv", "tokens", "x", "L", "d_model", "d_k", "W_q", "W_k",
                                "SelfAttention", "log_loss", "weight_loss", "train_pairs", "first_gradient",
                                "learn_new_pairs", "sgd", "math", "rescaled", "learn_one_pair", "sgd_1",
                                "pair_sum_loss")


def pairs(*words):
    i = nb()["tokens"].index
    return torch.tensor([i(w) for w in words])


ROWS = ("big", "chased")
NEW = ("mouse", "cat")  # big -> mouse, chased -> cat: wrong for the trained model


@functools.cache
def trained(seed: int, steps: int):
    """(model at its start, trained model, history): the notebook's section 6 with another seed."""
    ns = nb()
    torch.manual_seed(seed)
    start = ns["SelfAttention"](ns["d_model"], ns["d_k"])
    torch.manual_seed(seed)
    model = ns["SelfAttention"](ns["d_model"], ns["d_k"])
    history = ns["train_pairs"](model, pairs(*ROWS), pairs("cat", "mouse"), steps=steps)
    return start, model, history


def weights(model):
    model(nb()["x"])
    return model.attn_weights.detach()


@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_training_finds_sharp_weights_and_grows_the_projections(seed, steps):
    ns = nb()
    start, model, history = trained(seed, steps)
    w0, w1 = weights(start), weights(model)
    asked = w1[pairs(*ROWS), pairs("cat", "mouse")]
    assert (asked > 0.99).all(), f"seed {seed}, {steps} steps: asked weights {asked.tolist()}"
    (_, _, wq0, wk0, _), (_, _, wq1, wk1, grad_last) = history[0], history[-1]
    assert wq1 > 3 * wq0 and wq1 > ns["W_q"].norm().item(), f"|W_q| {wq0:.4f} -> {wq1:.4f}"
    assert wk1 > 3 * wk0 and wk1 > ns["W_k"].norm().item(), f"|W_k| {wk0:.4f} -> {wk1:.4f}"
    cat = ns["tokens"].index("cat")
    assert w0[cat].max() < 0.5 < 0.8 < w1[cat].max(), f"cat's row {w0[cat].max():.4f} -> {w1[cat].max():.4f}"
    peak_step, grad_peak = max(((h[0], h[4]) for h in history), key=lambda t: t[1])
    assert peak_step < 50 and grad_last < grad_peak / 10, (
        f"seed {seed}: gradient peak {grad_peak:.4f} at step {peak_step}, end {grad_last:.4f}")


def use_new_pairs():
    """Point the notebook's globals rows and new_cols (read by first_gradient, learn_new_pairs) at the new pairs."""
    ns = nb()
    ns["rows"], ns["new_cols"] = pairs(*ROWS), pairs(*NEW)
    return ns


@functools.cache
def new_pairs_learned(seed: int, steps: int, how: str, model: str = "trained", new_steps: int = 300):
    """The new pairs' weights (2,) after the notebook's learn_new_pairs (`new_steps` steps) from the model at
    its start or after `steps` training steps; how: 'Adam, -log a', 'Adam, -a', 'SGD, -log a', 'SGD, -a'."""
    ns = use_new_pairs()
    optimiser, loss = how.split(", ")
    kwargs = dict(ns["sgd"]) if optimiser == "SGD" else {}
    kwargs["loss_of"] = ns["log_loss"] if loss == "-log a" else ns["weight_loss"]
    start, trained_model, _ = trained(seed, steps)
    return ns["learn_new_pairs"](start if model == "start" else trained_model, steps=new_steps, **kwargs)


@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_small_final_gradient_is_convergence_and_saturation_shows_only_without_the_log(seed, steps):
    ns = use_new_pairs()
    start, model, _ = trained(seed, steps)
    log_trained, log_start = (ns["first_gradient"](m, ns["log_loss"]) for m in (model, start))
    lin_trained, lin_start = (ns["first_gradient"](m, ns["weight_loss"]) for m in (model, start))
    # at the scores S (the notebook's claims), then at W_q, where W_k's growth multiplies it
    assert log_trained[0] > log_start[0], f"seed {seed}: -log a, |grad S| {log_trained[0]:.4f} vs start {log_start[0]:.4f}"
    assert log_trained[1] / log_start[1] > log_trained[0] / log_start[0], (
        f"seed {seed}: -log a, ratio at W_q {log_trained[1] / log_start[1]:.4f}, at S {log_trained[0] / log_start[0]:.4f}")
    assert lin_trained[0] < lin_start[0] / 10, f"seed {seed}: -a, |grad S| {lin_trained[0]:.4f} vs start {lin_start[0]:.4f}"
    learned = new_pairs_learned(seed, steps, "Adam, -log a")
    assert (learned > 0.9).all(), f"seed {seed}: new pairs after 300 steps {learned.tolist()}"


@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_saturation_stops_plain_gradient_descent_under_minus_a(seed, steps):
    """The notebook's SGD runs of 300 steps: with -a the saturated model's new weights stay below 0.01,
    with -log a they pass 0.8."""
    with_log, with_a = new_pairs_learned(seed, steps, "SGD, -log a"), new_pairs_learned(seed, steps, "SGD, -a")
    assert (with_log > 0.8).all(), f"seed {seed}, {steps} steps: SGD with -log a {with_log.tolist()}"
    assert (with_a < 0.01).all(), f"seed {seed}, {steps} steps: SGD with -a {with_a.tolist()}"


@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_control_1000_sgd_steps_with_minus_a_teach_the_random_start_both_pairs_not_the_trained_model(seed, steps):
    """The notebook's control, each new pair on its own: 1,000 SGD steps with -a lift both new weights
    above 0.9 from the random start; from the trained model they leave chased -> cat below 0.01 (after
    200 training steps) and both below 0.01 (after the Try-it's 600); the trained W_k is more than 5
    times the start's."""
    from_start = new_pairs_learned(seed, steps, "SGD, -a", model="start", new_steps=1000)
    from_trained = new_pairs_learned(seed, steps, "SGD, -a", new_steps=1000)
    assert (from_start > 0.9).all(), f"seed {seed}: from the random start {from_start.tolist()}"
    assert from_trained[1] < 0.01, f"seed {seed}, {steps} steps: chased -> cat {from_trained[1]:.4f}"
    if steps == 600:
        assert (from_trained < 0.01).all(), f"seed {seed}, 600 steps: {from_trained.tolist()}"
    start, model, _ = trained(seed, steps)
    wk_start, wk_trained = start.w_k.weight.norm().item(), model.w_k.weight.norm().item()
    assert wk_trained > 5 * wk_start, f"seed {seed}, {steps} steps: |W_k| {wk_start:.4f} -> {wk_trained:.4f}"


def test_control_big_to_mouse_creeps_past_0_9_at_9_of_seeds_0_to_9():
    """The prose: from the model trained for 200 steps, 1,000 SGD steps with -a lift big -> mouse above
    0.9 at seed 0 and at 9 of seeds 0-9 (seed 6: 0.6292)."""
    crept = [seed for seed in ALL_SEEDS if new_pairs_learned(seed, 200, "SGD, -a", new_steps=1000)[0] > 0.9]
    assert 0 in crept and len(crept) == 9, f"big -> mouse above 0.9 at seeds {crept}"


def test_try_it_100_steps_adam_with_minus_a_fails_at_seed_0():
    """The Try it's STEPS = 100 sentence: at seed 0 the Adam check prints a cross (one new weight below
    0.01), although Adam learned both after 200 and 600 training steps (the count test above)."""
    w = new_pairs_learned(0, 100, "Adam, -a")
    assert (w < 0.01).any(), f"seed 0, 100 steps: Adam with -a {w.tolist()}"


def adam_with_minus_a_learns_both(seed: int, steps: int) -> bool:
    """True when Adam with -a lifts both new weights above 0.9; False when one stays below 0.01
    (asserted: no seed lands in between)."""
    w = new_pairs_learned(seed, steps, "Adam, -a")
    assert (w > 0.9).all() or (w < 0.01).any(), f"seed {seed}, {steps} steps: Adam with -a {w.tolist()}"
    return bool((w > 0.9).all())


@pytest.mark.parametrize("steps", STEPS)
def test_adam_with_minus_a_learns_both_new_pairs_only_at_some_seeds(steps):
    """The prose: Adam with -a learned both new pairs at seed 0 (200 and 600 steps), at 4 of seeds 0-9
    after 200 training steps and at 2 of them after 600; at every other seed one weight stays below 0.01."""
    learned = [seed for seed in ALL_SEEDS if adam_with_minus_a_learns_both(seed, steps)]
    assert 0 in learned, f"{steps} steps: Adam with -a learned both new pairs only at seeds {learned}"
    assert len(learned) == ADAM_LEARNS_BOTH[steps], f"{steps} steps: Adam with -a learned both at seeds {learned}"


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_try_it_600_steps_keep_growing_sharpening_and_shrinking(seed):
    """The notebook's "Try it": from step 200 to step 600 the projections keep growing, the rows get
    sharper (the two asked rows and the untrained row of "cat") and the gradient keeps shrinking."""
    _, short, _ = trained(seed, 200)
    _, long, history = trained(seed, 600)
    (_, _, wq200, wk200, grad200), (_, _, wq600, wk600, grad600) = history[200], history[-1]
    assert wq600 > wq200 and wk600 > wk200, f"seed {seed}: |W_q| {wq200:.4f} -> {wq600:.4f}, |W_k| {wk200:.4f} -> {wk600:.4f}"
    assert grad600 < grad200, f"seed {seed}: |grad W_q| {grad200:.4f} -> {grad600:.4f}"
    rows = pairs(*ROWS, "cat")
    sharp200, sharp600 = weights(short)[rows].amax(-1), weights(long)[rows].amax(-1)
    assert (sharp600 > sharp200).all(), f"seed {seed}: largest weights {sharp200.tolist()} -> {sharp600.tolist()}"


SGD_LIFTS_AFTER_100 = 4  # seeds of 0-9 at which SGD with -a lifts a new weight above 0.9 after 100 training steps


def sgd_with_minus_a_after(seed: int, steps: int):
    """(times the -a gradient at S lies below the random start's, new weights after SGD with -a):
    a row of the notebook's table of training steps 100, 150, 200."""
    ns = use_new_pairs()
    start, model, _ = trained(seed, steps)
    below = ns["first_gradient"](start, ns["weight_loss"])[0] / ns["first_gradient"](model, ns["weight_loss"])[0]
    return below, new_pairs_learned(seed, steps, "SGD, -a")


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_sgd_with_minus_a_stalls_from_150_training_steps_on(seed):
    """The table's rows 150 and 200: SGD with -a leaves both new weights below 0.01; and the row 100:
    the -a gradient is already more than 10 times below the start's (saturated by section 6's test)."""
    below, _ = sgd_with_minus_a_after(seed, 100)
    assert below > 10, f"seed {seed}, 100 steps: -a gradient only {below:.1f} times below the start's"
    for steps in (150, 200):
        _, w = sgd_with_minus_a_after(seed, steps)
        assert (w < 0.01).all(), f"seed {seed}, {steps} steps: SGD with -a {w.tolist()}"


def test_after_100_training_steps_sgd_with_minus_a_lifts_a_new_pair_at_some_seeds():
    """The prose: after only 100 training steps SGD with -a still lifted "big" -> "mouse" above 0.9 at
    seed 0 (the notebook's), and a new weight above 0.9 at 4 of seeds 0-9."""
    lifted = [seed for seed in ALL_SEEDS if sgd_with_minus_a_after(seed, 100)[1].max() > 0.9]
    assert 0 in lifted, f"SGD with -a after 100 training steps lifted a new weight above 0.9 only at seeds {lifted}"
    assert len(lifted) == SGD_LIFTS_AFTER_100, f"SGD with -a after 100 training steps lifted one at seeds {lifted}"


def rescaled_run(seed: int, steps: int, s_q: float, s_k: float):
    """The notebook's size control: (times the -a gradient at S lies below the random start's, new weights
    after 300 SGD steps with -a, |W_q|^2 + |W_k|^2) for the trained model with W_q x s_q and W_k x s_k."""
    ns = use_new_pairs()
    start, model, _ = trained(seed, steps)
    m = ns["rescaled"](model, s_q, s_k)
    below = ns["first_gradient"](start, ns["weight_loss"])[0] / ns["first_gradient"](m, ns["weight_loss"])[0]
    size = (m.w_q.weight.norm() ** 2 + m.w_k.weight.norm() ** 2).item()
    return below, ns["learn_new_pairs"](m, loss_of=ns["weight_loss"], **ns["sgd"]), size


@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_size_control_un_saturated_the_same_model_learns_rebalanced_it_moves_faster(seed, steps):
    """The control for "saturation, not size" (a sixth read). W_q x 0.1 un-saturates the trained model
    and keeps its large W_k: the -a gradient at S is back to the start's (less than 2 times below it) and
    300 SGD steps learn both new pairs (above 0.9), after 200 and 600 training steps. W_q x 3, W_k / 3
    keeps every score (the same gradient at S), makes |W_q|^2 + |W_k|^2 larger, and after 200 training
    steps lifts big -> mouse above 0.9 (as trained: below 0.01); after the Try-it's 600 it does not
    (the prose says that check prints a cross). Written from seeds 0-4, measured (200 steps): W_q x 0.1
    0.73-0.86 times below, both 0.9929-0.9944; rebalanced big -> mouse 0.9983-0.9991. Held-out 5-9,
    unchanged thresholds: 0.82-1.02 times, both 0.9914-0.9933, big -> mouse 0.9984-0.9990. 600 steps:
    W_q x 0.1 0.76-1.06 times, both >= 0.9923; rebalanced big -> mouse at most 0.0004. Chased -> cat in
    the rebalanced model stayed below 0.01 at seeds 0-4 but not at held-out 5 and 9 (0.9898, 0.9694):
    the prose states it as a count, 8 of 10."""
    below_t, w_t, size_t = rescaled_run(seed, steps, 1, 1)
    below_s, w_s, _ = rescaled_run(seed, steps, 0.1, 1)
    below_b, w_b, size_b = rescaled_run(seed, steps, 3, 1 / 3)
    assert below_s < 2 and (w_s > 0.9).all(), f"seed {seed}, {steps} steps: W_q x 0.1 {below_s:.2f}, {w_s.tolist()}"
    assert abs(below_b / below_t - 1) < 1e-4 and size_b > size_t, f"seed {seed}: {below_b} vs {below_t}"
    if steps == 200:
        assert w_b[0] > 0.9 > 0.01 > w_t[0], f"seed {seed}: rebalanced {w_b.tolist()}, as trained {w_t.tolist()}"
    else:
        assert w_b[0] < 0.9, f"seed {seed}, 600 steps: rebalanced {w_b.tolist()}"


def test_size_control_rebalanced_chased_to_cat_stays_below_0_01_at_8_of_10():
    stuck = [seed for seed in ALL_SEEDS if rescaled_run(seed, 200, 3, 1 / 3)[1][1] < 0.01]
    assert stuck == [0, 1, 2, 3, 4, 6, 7, 8], stuck


def one_pair_control(seed: int, steps: int):
    """The notebook's one-pair control: ({optimiser: [big -> mouse alone, chased -> cat alone]},
    SGD lr 1 on both together (2,), SGD lr 1 from the random start on both together (2,)). The together
    runs sum -a over the two pairs (pair_sum_loss), so each pair gets the gradient, and the step, it gets alone."""
    ns = use_new_pairs()
    start, model, _ = trained(seed, steps)
    alone = {name: [ns["learn_one_pair"](model, k, **how) for k in (0, 1)] for name, how in (("Adam", {}),
                                                                                          ("SGD, lr 1", ns["sgd_1"]))}
    together = ns["learn_new_pairs"](model, loss_of=ns["pair_sum_loss"], **ns["sgd_1"])
    fresh = ns["learn_new_pairs"](start, loss_of=ns["pair_sum_loss"], **ns["sgd_1"])
    return alone, together, fresh


SGD_1_STUCK_ALONE_AFTER_600 = 5  # seeds of 0-9 at which SGD lr 1 leaves chased -> cat alone below 0.01 (600 steps)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_one_pair_control_each_pair_alone_is_learned_together_they_compete(seed):
    """The control for "why Adam is not a reliable rescue" (a sixth read): from the model trained 200
    steps, 300 steps under -a on one new pair alone: Adam learns either (above 0.9), and so does SGD at
    learning rate 1; together SGD at lr 1 learns big -> mouse and leaves chased -> cat below 0.01; from
    the random start it learns both. And Adam together (the count test above): whenever one pair is left
    behind it is chased -> cat. Written from seeds 0-4: Adam alone 0.9997-0.9999, SGD lr 1 alone
    0.9994-0.9999. Held-out 5-9, unchanged: Adam alone >= 0.9998, SGD lr 1 alone >= 0.9994. Together with
    the sum (a seventh read: the mean halved each pair's step): seeds 0-4 big -> mouse 0.9998, chased -> cat
    0.0000, random start 0.9994-0.9998; held-out 5-9, unchanged: 0.9998 / <= 0.0001, random start >= 0.9994."""
    alone, together, fresh = one_pair_control(seed, 200)
    assert min(alone["Adam"]) > 0.9 and min(alone["SGD, lr 1"]) > 0.9, f"seed {seed}: alone {alone}"
    assert together[0] > 0.9 > 0.01 > together[1], f"seed {seed}: SGD lr 1 together {together.tolist()}"
    assert (fresh > 0.9).all(), f"seed {seed}: SGD lr 1 from the random start {fresh.tolist()}"
    adam = new_pairs_learned(seed, 200, "Adam, -a")
    assert (adam > 0.9).all() or adam[0] > 0.9 > 0.01 > adam[1], f"seed {seed}: Adam together {adam.tolist()}"


def test_one_pair_control_after_600_training_steps():
    """The prose on the Try it: after 600 training steps Adam still learns either pair alone at every seed
    of 0-9, while SGD at lr 1 leaves chased -> cat below 0.01 even alone at 5 of them, seed 0 among them
    (measured: seeds 0, 3, 5, 8, 9 at 0.0004-0.0033; the others 0.9940-0.9991). Together with the sum, SGD
    at lr 1 still learns big -> mouse and leaves chased -> cat below 0.01 at every seed (written from 0-4:
    0.9996-0.9997 / 0.0000; held-out 5-9, unchanged: 0.9986-0.9996 / <= 0.0001)."""
    stuck = []
    for seed in ALL_SEEDS:
        alone, together, _ = one_pair_control(seed, 600)
        assert together[0] > 0.9 > 0.01 > together[1], f"seed {seed}, 600 steps: SGD lr 1 together {together.tolist()}"
        assert min(alone["Adam"]) > 0.9, f"seed {seed}, 600 steps: Adam alone {alone['Adam']}"
        assert alone["SGD, lr 1"][0] > 0.9, f"seed {seed}, 600 steps: SGD lr 1 big -> mouse alone {alone}"
        if alone["SGD, lr 1"][1] < 0.01:
            stuck.append(seed)
        else:
            assert alone["SGD, lr 1"][1] > 0.9, f"seed {seed}, 600 steps: SGD lr 1 chased -> cat alone {alone}"
    assert 0 in stuck and len(stuck) == SGD_1_STUCK_ALONE_AFTER_600, stuck
