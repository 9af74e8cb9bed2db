"""Notebook 07's conclusions, re-checked where they could break.

Section 7 (gradients at initialisation, ``helpers.layers.layer_grad_norms``, the notebook's own
measurement) claims three findings "in every seed, width and depth we tried": post-LN's top layer
gets more gradient than pre-LN's; pre-LN's top layer gets less than its bottom layer; pre-LN's
top-layer gradient gets smaller each time the stack doubles (2 -> 4 -> 8 -> 16 layers, for ten-seed
averages; for the notebook's three seeds 0-2 too, which its cells print), though not at every added layer (it rises at some single steps), and for single seeds 8 and
16 layers give less than 2 in most seeds, not all. It also says the *shape* of the post-LN curve is
not stable (exercise 4): that caution is checked too. Section 3 (residual connections) and exercises 3
and 4 have their own tests below.

Held-out seeds: the doubling statement was written from the triples inside seeds 0-4 and is checked
unchanged on the triples (5, 6, 7) and (7, 8, 9); section 3's He-initialisation thresholds (plain
between 0.01 and 10 x |g|, residual above 20 x |g|) were written from seeds 0-4 and are checked
unchanged on seeds 5-9, with the notebook's own ``he_ratios`` (its input x, fresh sublayers and g
per seed; seed 0 is the notebook's draw): seeds 0-4 plain 0.62-1.35, residual 45.5-171.3; seeds 5-9
plain 0.13-1.61, residual 47.3-66.8 (the same with and without the pinned kernels).

The doubling finding is claimed for ten-seed averages: an independent reader found it failing for
6 of 28 consecutive triples of seeds 10-39 at d_model 32 (e.g. seeds 16-18: 2 layers 0.1027 < 4
layers 0.1088) and narrowly for seeds 30-34, while ten-seed averages held in blocks 0-9, 10-19,
20-29 and 30-39; the notebook now says so.
The exploration before the rewrite: the old "8 and 16 layers always below 2 layers" failed at single
seeds 13, 18, 27, 33, 34 (d_model 32) and 30 (d_model 64) of seeds 0-39; the three-seed averages
rose between neighbouring depths in every triple (seeds 0-2: 4->5, 6->7, 8->9, 9->10, 11->12, 15->16).
"""

from __future__ import annotations

import functools
import math

import pytest
import torch
from notebook_code import notebook_definitions
from seed_sets import ALL_SEEDS, seed_id
from torch import nn

from helpers import FeedForward, PositionalEncoding, seed_everything
from helpers.exercises.nb07 import input_grad_norm
from helpers.layers import layer_grad_norms

DEPTHS = range(2, 17)
WIDTHS = (32, 64)
SEEDS = range(10)
TRIPLES = ((0, 1, 2), (3, 4, 5), (6, 7, 8))


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@functools.cache
def norms(depth: int, norm_first: bool, width: int, seed: int) -> tuple[float, ...]:
    return tuple(layer_grad_norms(depth, norm_first, d_model=width, d_ff=4 * width, seeds=(seed,)))


def averaged(depth: int, norm_first: bool, width: int, seeds) -> list[float]:
    per_seed = [norms(depth, norm_first, width, s) for s in seeds]
    return [sum(v) / len(seeds) for v in zip(*per_seed, strict=True)]


def settings():
    """Every (depth, width, seeds) the findings are claimed for: single seeds and three-seed averages."""
    for width in WIDTHS:
        for depth in DEPTHS:
            for seeds in [(s,) for s in SEEDS] + list(TRIPLES):
                yield depth, width, seeds


def test_the_mean_of_single_seeds_is_the_notebooks_three_seed_measurement():
    want = layer_grad_norms(4, False, seeds=(0, 1, 2))
    assert averaged(4, False, 32, (0, 1, 2)) == pytest.approx(want, rel=1e-6)


def test_post_ln_top_layer_gets_more_gradient_than_pre_ln_top_layer_everywhere():
    """Seeds 0-9 one by one and 0-8 in three triples, d_model 32 and 64, 2 to 16 layers (390 settings)."""
    failures = [(d, w, s) for d, w, s in settings()
                if not averaged(d, False, w, s)[-1] > averaged(d, True, w, s)[-1]]
    assert failures == []


def test_pre_ln_top_layer_gets_less_than_its_bottom_layer_everywhere():
    failures = [(d, w, s) for d, w, s in settings()
                if not averaged(d, True, w, s)[-1] < averaged(d, True, w, s)[0]]
    assert failures == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("seeds", TRIPLES)
def test_pre_ln_top_layer_gradient_shrinks_from_2_to_4_to_8_layers_for_three_seed_averages(width, seeds):
    top = [averaged(n, True, width, seeds)[-1] for n in (2, 4, 8)]
    assert top[0] > top[1] > top[2], top


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("seeds", [(0, 1, 2), (1, 2, 3), (2, 3, 4), (5, 6, 7), (7, 8, 9)])
def test_pre_ln_top_layer_gradient_falls_at_every_doubling_written_on_0_4_held_out_5_9(width, seeds):
    top = {n: averaged(n, True, width, seeds)[-1] for n in (2, 4, 8, 16)}
    assert top[2] > top[4] > top[8] > top[16], top


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("block", range(4))
def test_pre_ln_top_layer_gradient_falls_at_every_doubling_for_ten_seed_averages(width, block):
    """The notebook's finding 3 as claimed: ten-seed averages, blocks 0-9 (its cell), 10-19, 20-29, 30-39."""
    seeds = tuple(range(10 * block, 10 * block + 10))
    top = {n: averaged(n, True, width, seeds)[-1] for n in (2, 4, 8, 16)}
    assert top[2] > top[4] > top[8] > top[16], top


def test_three_seed_averages_can_break_the_doubling_rule():
    """The notebook's example: d_model 32, seeds 16-18, 4 layers above 2."""
    assert averaged(4, True, 32, (16, 17, 18))[-1] > averaged(2, True, 32, (16, 17, 18))[-1]


@pytest.mark.parametrize("width", WIDTHS)
def test_pre_ln_top_layer_gradient_is_not_monotone_in_the_depth(width):
    """What the notebook prints for seeds 0-2 and says: it rises at some added layer."""
    top = [averaged(n, True, width, (0, 1, 2))[-1] for n in DEPTHS]
    assert any(b > a for a, b in zip(top[:-1], top[1:], strict=True)), top


@pytest.mark.parametrize("width", WIDTHS)
def test_single_seeds_8_and_16_layers_below_2_layers_in_most_seeds_not_all(width):
    """"Most seeds, not all": at least 80 % of seeds 0-39 (measured 35/40 and 39/40); the exceptions
    the notebook names (d_model 32: 13, 18, 27, 33, 34) are real."""
    ok = [s for s in range(40) if norms(8, True, width, s)[-1] < norms(2, True, width, s)[-1]
          and norms(16, True, width, s)[-1] < norms(2, True, width, s)[-1]]
    assert len(ok) >= 32, len(ok)
    if width == 32:
        assert sorted(set(range(40)) - set(ok)) == [13, 18, 27, 33, 34]


def test_the_shape_of_the_post_ln_curve_is_not_stable():
    """Why the notebook claims nothing about it: top > bottom at d_model 32 (seeds 0-2, the plot),
    top < bottom at d_model 64 (seeds 0-2, exercise 4), top > bottom again at d_model 64 seeds 3-5."""
    assert averaged(8, False, 32, (0, 1, 2))[-1] > averaged(8, False, 32, (0, 1, 2))[0]
    assert averaged(8, False, 64, (0, 1, 2))[-1] < averaged(8, False, 64, (0, 1, 2))[0]
    assert averaged(8, False, 64, (3, 4, 5))[-1] > averaged(8, False, 64, (3, 4, 5))[0]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("depth", (4, 8, 16))
def test_single_seeds_post_ln_top_above_bottom_at_some_seeds_below_at_others_pre_ln_rises_somewhere(width, depth):
    """Cell 52's "with some seeds its top layer gets less than its bottom layer, with others more" and
    "pre-LN's does not always fall at every single step", which the notebook prints for d_model 32,
    seeds 0-9 (a reader: post-LN top above bottom at N = 4 seeds 3, 4, 7; N = 8 0, 1, 4, 5, 6, 8; N =
    16 all but 0, 5; pre-LN rising somewhere at N = 4 seeds 3, 4, 7, N = 8 2, 3, 5, 6, 9, N = 16 all).
    Also at d_model 64, except pre-LN at N = 4: no seed of 0-9 rises there (post-LN above bottom at
    N = 4 seeds 1, 5, 7, 8, 9; pre-LN rising at N = 8 seeds 1, 3, 4, N = 16 all), so the notebook
    says it for d_model 32 only."""
    up = [s for s in SEEDS if norms(depth, False, width, s)[-1] > norms(depth, False, width, s)[0]]
    assert 0 < len(up) < len(SEEDS), up
    pre = [norms(depth, True, width, s) for s in SEEDS]
    rises = [s for s, v in zip(SEEDS, pre, strict=True) if any(b > a for a, b in zip(v[:-1], v[1:], strict=True))]
    assert rises if (width, depth) != (64, 4) else rises == [], rises


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("block", range(4))
def test_pre_ln_top_layer_falls_more_slowly_than_one_over_sqrt_n_from_2_to_16_layers(width, block):
    """Cell 64: "agrees in direction ... falls more slowly than 1/sqrt(N)": ten-seed averages at 16
    layers keep more than sqrt(2/16) = 0.354 of the value at 2 layers, in every block of ten seeds and
    at both widths. The notebook's 0.5-0.6 range is printed and claimed for d_model 32 (0.5108,
    0.5330, 0.5765, 0.5338 for seeds 0-9 ... 30-39); at d_model 64 it does not hold (0.5602, 0.5018,
    0.5148, 0.4570), which is why the notebook states it for its d_model 32 alone."""
    seeds = tuple(range(10 * block, 10 * block + 10))
    kept = averaged(16, True, width, seeds)[-1] / averaged(2, True, width, seeds)[-1]
    assert kept > math.sqrt(2 / 16), kept
    if width == 32:
        assert 0.5 < kept < 0.6, kept


def test_exercise_4_answers_a_and_c_hold_for_both_seed_triples_b_flips():
    for seeds, b in (((0, 1, 2), False), ((3, 4, 5), True)):
        post, pre = averaged(8, False, 64, seeds), averaged(8, True, 64, seeds)
        assert post[-1] > pre[-1] and pre[-1] < pre[0]
        assert (post[-1] > post[0]) is b


# --- section 3: residual connections -----------------------------------------------------------

def residual_and_plain(seed: int, depth: int, he: bool = False) -> tuple[list[float], list[float], float]:
    """The notebook's set-up: its running example as input, ``depth`` FeedForward(16, 32)
    sublayers (PyTorch's default initialisation, or the notebook's He re-initialisation), one
    upstream gradient g."""
    seed_everything(seed)
    embed, pos = nn.Embedding(8, 16), PositionalEncoding(16, max_len=32)
    src = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 0]])
    x = pos(embed(src) * math.sqrt(16)).detach()  # (B, L, d_model)
    branches = [FeedForward(16, 32) for _ in range(depth)]
    g = torch.randn_like(x)
    if he:
        for f in branches:
            nn.init.kaiming_normal_(f.linear1.weight, nonlinearity="relu")
            nn.init.kaiming_normal_(f.linear2.weight, nonlinearity="linear")
            nn.init.zeros_(f.linear1.bias)
            nn.init.zeros_(f.linear2.bias)

    def grad_norms(residual):
        h = [x.clone().requires_grad_()]
        for f in branches:
            h.append(h[-1] + f(h[-1]) if residual else f(h[-1]))
        grads = torch.autograd.grad(h[-1], h[:-1], grad_outputs=g)
        return [gr.norm().item() for gr in grads] + [g.norm().item()]

    return grad_norms(False), grad_norms(True), g.norm().item()


@pytest.mark.parametrize("seed", range(10))
def test_twelve_plain_sublayers_vanish_each_shrinks_and_the_residual_stack_keeps_the_order_of_g(seed):
    plain, res, g = residual_and_plain(seed, 12)
    assert plain[0] < 1e-4 * g
    assert all(plain[i] < plain[i + 1] for i in range(12))  # every sublayer shrinks it
    assert 0.5 < res[0] / g < 2


@functools.cache
def nb07():
    return notebook_definitions("07_encoder", "words", "src", "d_model", "d_ff", "embed", "pos", "x", "FeedForward",
                                "grad_norms", "he_init", "he_ratios", "residual_factors", "residual_ratio")


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_vanishing_is_the_default_initialisations_with_he_init_plain_keeps_it_residual_grows(seed):
    """The control of "without the shortcuts the gradient has vanished": He initialisation, the
    notebook's own he_ratios. Thresholds written from seeds 0-4, seeds 5-9 held out."""
    plain, res = nb07()["he_ratios"](seed)
    assert 0.01 < plain < 10
    assert res > 20


def test_the_notebooks_ten_draw_range_is_what_its_prose_quotes():
    """The prose: "between 0.13 and 1.61 x |g| in the ten draws", residual "45 to 171 x |g|"."""
    plains, residuals = zip(*(nb07()["he_ratios"](seed) for seed in range(10)), strict=True)
    assert (round(min(plains), 2), round(max(plains), 2)) == (0.13, 1.61)
    assert (round(min(residuals)), round(max(residuals))) == (45, 171)


def test_no_he_initialised_residual_sublayer_shrinks_the_gradient_beyond_the_notebooks_ten_draws():
    """The prose: "every sublayer adds a term and none shrinks it" (the notebook claims it for its ten
    draws, seeds 0-9: factors 1.12 to 2.04). Its own residual_factors at seeds 10-39: 1.06 to 2.06."""
    factors = {seed: min(nb07()["residual_factors"](seed)) for seed in range(10, 40)}
    assert min(factors.values()) > 1, {s: f for s, f in factors.items() if f <= 1}


def test_the_notebooks_residual_ratio_at_12_sublayers_stays_within_half_and_twice_g_beyond_its_ten_draws():
    """The notebook prints its own residual_ratio for seeds 0-9 (12 sublayers between 0.5 and 2 x |g|,
    24 past 2 x |g| in some draws); seeds 10-39 held out (a reader measured 1.20-1.57 over 0-39)."""
    ratios = {seed: nb07()["residual_ratio"](seed, 12) for seed in range(10, 40)}
    assert all(0.5 < r < 2 for r in ratios.values()), ratios


def test_the_order_of_g_is_scoped_to_twelve_sublayers_deeper_stacks_pass_2g():
    """The notebook says deeper stacks of these sublayers let it grow past 2g (24: seeds 0-9)."""
    ratios = [residual_and_plain(seed, 24)[1][0] / residual_and_plain(seed, 24)[2] for seed in range(10)]
    assert max(ratios) > 2 and min(ratios) > 1


# --- exercise 3: the gradient that reaches the input -------------------------------------------

@functools.cache
def input_norm(depth: int, norm_first: bool, width: int, seed: int) -> float:
    return input_grad_norm(depth, norm_first, seeds=(seed,), d_model=width)


def input_averaged(depth: int, norm_first: bool, width: int, seeds) -> float:
    return sum(input_norm(depth, norm_first, width, s) for s in seeds) / len(seeds)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("block", range(4))
def test_pre_ln_passes_the_larger_input_gradient_at_8_12_16_layers_for_ten_seed_averages(width, block):
    """The checker's answer ("pre-LN", 12 layers, seeds 0-9) and the solution's statements, for
    ten-seed averages: pre-LN passes more at 8, 12 and 16 layers; post-LN's input gradient shrinks
    from 2 to 12 layers; pre-LN keeps more of it. Block 0 (seeds 0-9) is the exercise's; blocks
    10-19, 20-29 and 30-39 held out (a reader measured them all before the claim was re-scoped:
    narrowest, d_model 32 seeds 10-19 at 12 layers, post-LN 0.0242 vs pre-LN 0.0245)."""
    seeds = range(10 * block, 10 * block + 10)
    g = {(n, nf): input_averaged(n, nf, width, seeds) for n in (2, 8, 12, 16) for nf in (False, True)}
    assert all(g[n, True] > g[n, False] for n in (8, 12, 16)), g
    assert g[12, False] < g[2, False]
    assert g[12, True] / g[2, True] > g[12, False] / g[2, False]


def test_three_seed_averages_and_single_seeds_can_flip_the_input_gradient_comparison():
    """What the solution says and prints: at 12 layers, d_model 32, the triple 10-12 (post-LN 0.0300,
    pre-LN 0.0263) and seed 12 alone (post-LN 0.0614, pre-LN 0.0342) give post-LN the larger input
    gradient."""
    assert input_averaged(12, False, 32, (10, 11, 12)) > input_averaged(12, True, 32, (10, 11, 12))
    assert input_norm(12, False, 32, 12) > input_norm(12, True, 32, 12)
