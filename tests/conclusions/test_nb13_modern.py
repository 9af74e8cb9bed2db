"""Notebook 13's experimental conclusions, re-checked at seeds 0, 1 and 2, and at seeds 3 and 4 where
the notebook speaks of five seeds, and at held-out seeds 5-9 where a conclusion uses only the RoPE
models (thresholds written from seeds 0-4, unchanged there; seed 0's models are the notebook's own, shared through the cache of
trained models; each model trains in seconds, and only the models a test needs are trained).

The measurements are the notebook's own functions (``val_loss``, ``window_costs``, ``far_share``,
``first_token_weight``, ``loss_by_position``), read from the notebook by ``notebook_definitions``.

What the exploration behind the prose measured (review of 2026-11-28, seeds 0-4):
- MHA/GQA/MQA validation losses within 0.022 of each other at every seed (claim: < 0.05).
- Largest logit at the end of training: RoPE + QK-norm 4.5-5.1, always < half of RoPE's (14.1-21.1);
  sinusoidal the largest of the six at all five seeds; notebook 12's model 2.8-8.8 at four seeds but
  25.9 at seed 3, above RoPE's 18.2: "notebook 12's model keeps small logits" is not a conclusion.
- Balanced sinusoidal vs learned positions at 1x: better at seeds 0-2 (by 0.010-0.027), worse at
  seeds 3 and 4 (by 0.024 and 0.025); better than notebook 09's scaling at all five.
- The control for "what hurts RoPE at 4x": every offset > 31 computed as 31 (ReRoPE-style; all keys
  stay in view, none at an unseen offset) leaves the 4x loss 0.08-0.72 above the 1x loss (a window
  of 8: within 0.01), so unseen offsets alone do not explain it.

What the exploration for QK-norm's loss measured (2026-12-06; thresholds from seeds 0-4, then seeds 5-9
run once, unchanged):
- RoPE + QK-norm minus RoPE at 1x: within 0.0021 at seeds 0-4 (claim: < 0.01), within 0.0011 at 5-9.
- At 2x: +0.020 to +0.048 at seeds 0-4, +0.012 to +0.027 at 5-9 (claim: higher, at all ten).
- At 4x: +0.026 to +0.137 at seeds 0-4, but -0.043, -0.048, -0.024, +0.060, -0.049 at seeds 5-9: the
  "worse at 4x" of seeds 0-4 failed on held-out seeds, so it is re-scoped to "not reliable". (Those
  figures came from models trained with native kernels; pinned: +0.011 to +0.123 at seeds 0-4, and
  -0.043, -0.035, -0.027, +0.024, -0.076 at seeds 5-9, the same conclusion.)
- Largest logit with QK-norm 4.50-5.15 at all ten seeds, below half of RoPE's (9.88-21.07) at all ten.

Extension to held-out seeds (2026-12-06): the tests that ran at seeds 0, 1, 2 only (sharing kv heads,
the window's cost and its control, the first token, streaming at 16x with windows 8 and 16, the
largest logits, longer rows, PI/NTK, the Llama-style block) now run at seeds 0-9 with the same
thresholds; every one held at every seed (models trained afresh on one thread). On those fresh models
three older tests failed, which this extension did not change: QK-norm's 2x cost at seed 1 (-0.0023),
GQA's logit range over seeds 0-2 (2.39-6.18, not > 5) and the capped-offsets control at held-out
seed 5 (+0.042, not > 0.05); the models differ from the ones these were written on (seed 0's GQA
ends at 2.4 here, 16.5 in the notebook's stored run), so they are left for a decision, not re-tuned.

Decision (2026-12-06, models retrained from an empty cache under the pinned numerics of conftest.py):
those three failures were measured on models trained with native AVX-512 kernels; pinned, QK-norm's
2x cost is positive at all ten seeds (+0.012 to +0.044) and GQA's logits span 4.7-17.5 (seed 0:
17.5), so the notebook states the ten-seed range and calls the 2x cost usual, not certain. The capped-
offsets control is 0.049 at held-out seed 5 pinned too: "well above" is stated for seeds 0-4, the
held-out result recorded (test_capped_offsets_at_held_out_seeds). The window's cost was measured on
two more models: the balanced sinusoidal one loses like the learned one, the Llama-style one like
RoPE, and notebook 09's sinusoidal model anything from nothing to 0.63 depending on the seed.

Second expert read (2026-12-07; pinned models of seeds 0-9, and the reader's native-kernel models of
seeds 0-9, /tmp/readerE/native.json, which the tests cannot rebuild: conftest.py pins the kernels):
- Where the native models changed a figure the notebook quotes, the prose now covers both: GQA's final
  largest logit 4.72-17.51 pinned, 2.39-12.65 native ("about 2 to about 18"); balanced sinusoidal
  better than learned at 1x at 3 seeds pinned (0, 1, 7), 5 native (0, 1, 2, 7, 9), within 0.027 in
  both; RoPE not best at 4x at seeds 1, 5, 8 pinned (learned at 1, balanced at 5 and 8), 1, 5, 6, 7
  native (learned at 1, 6, 7, balanced at 5); the window's cost where the sentence is inside: MHA
  0.29-0.50 pinned, 0.30-0.43 native, balanced 0.46-0.65 and 0.42-0.66, rotary < 0.008 in both,
  notebook 09's sinusoidal -0.001 to 0.63 and -0.001 to 0.64.
- Position interpolation by 2 on rows of 32 (no offset beyond 31; each read as half itself: odd ones
  as fractions never seen, even ones as a smaller offset than the true one):
  +0.109 to +0.357 at ten seeds, against +0.088 to +0.253 on rows of 64. "At least as much as on rows
  of 64" was written from seeds 0-4 (more by 0.006-0.071) and failed at held-out seed 5 (0.0017
  less), so the notebook says "more at nine seeds, 0.002 less at the tenth"; its own claims (more
  than 0.05, more than half the cost at 2x) hold at all ten.
- NTK-aware scaling by 12, the smallest whole factor that keeps every pair within its trained angles on
  rows of 64: worse than by 2 at all ten seeds on those rows (by 0.003-0.025), and it costs +0.008 to
  +0.034 at the trained length against +0.0005 to +0.0014 for alpha = 2 (exercise 4's solution).
"""

import copy
import functools
import math
from unittest import mock

import pytest
import torch
import torch.nn.functional as F
from notebook_code import notebook_definitions
from seed_sets import ALL_SEEDS, HELD_OUT_SEEDS, WRITTEN_SEEDS, seed_id

from helpers.experiments import train_modern
from helpers.positional import apply_rope

SEEDS = (0, 1, 2)  # the limits ("at one seed of three") were found at these
FIVE = WRITTEN_SEEDS  # 0-4: every threshold below was written from these (most from 0, 1, 2)
HELD_OUT = HELD_OUT_SEEDS  # 5-9: not looked at when a threshold was written; checked unchanged
NAMES = ["MHA", "GQA", "MQA", "sinusoidal", "RoPE", "RoPE + QK-norm", "sinusoidal, balanced", "Llama-style"]


@functools.cache
def nb():
    return notebook_definitions("13_modern_attention", "data", "val", "val_loss", "sentence_masks", "per_token_loss",
                                "window_costs", "far_share", "first_token_weight", "stream_x", "stream_y",
                                "loss_by_position", "rope_angles64")


@functools.cache
def run(name, seed):
    """(model, history) of one of the notebook's models at one seed, trained once (cached on disk)."""
    return train_modern(name, seed=seed, device=nb()["device"])


def model(name, seed):
    return run(name, seed)[0]


def val_loss(m, n=32):
    return nb()["val_loss"](m, n)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_rolling_cache_gap_is_float32_rounding(seed):
    """Section 5's tolerance (1e-4) and its control: 512 tokens one at a time through the rolling
    cache (window 8, 4 sinks) against the whole row differ by the order of 1e-5 in float32 (more
    than 1e-6, less than 1e-4) and by less than 1e-10 with the same weights in float64, so the gap
    is rounding, not the method. Written from seed 0 (the third read: 2.6e-5 in float32, 2.7e-14 in
    float64), checked unchanged at seeds 1-9."""
    row = nb()["stream_x"][:1]  # (1, 512)
    gaps = {}
    for dtype in (torch.float32, torch.float64):
        m = copy.deepcopy(model("RoPE", seed)).to(dtype).set_window(8, sinks=4)
        with torch.no_grad():
            whole, cache = m(row), m.new_cache()
            steps = torch.cat([m(row[:, t : t + 1], cache=cache) for t in range(512)], dim=1)
        gaps[dtype] = (steps - whole).abs().max().item()
    assert 1e-6 < gaps[torch.float32] < 1e-4 and gaps[torch.float64] < 1e-10, gaps


@functools.cache
def _angles_control(seed):
    """(float32's largest difference, with only RoPE's angles in float64) along the rolling-cache row."""
    row = nb()["stream_x"][:1]  # (1, 512)
    m = copy.deepcopy(model("RoPE", seed)).set_window(8, sinks=4)
    gaps = []
    for angles in (apply_rope, nb()["rope_angles64"]):
        with torch.no_grad(), mock.patch("helpers.modern.apply_rope", angles):
            whole, cache = m(row), m.new_cache()
            steps = torch.cat([m(row[:, t : t + 1], cache=cache) for t in range(512)], dim=1)
        gaps.append((steps - whole).abs().max().item())
    return tuple(gaps)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_only_the_angles_in_float64_shrink_the_gap(seed):
    """Section 5's sharper control: with only RoPE's angles in float64 (rest float32) the largest
    difference is smaller than float32's. Written from seeds 0-4 (ratios 9.0, 2.5, 7.6, 2.8, 8.7);
    held-out seeds 5-9: 5.7, 4.5, 9.8, 1.5, 2.1."""
    float32, angles64 = _angles_control(seed)
    assert angles64 < float32, (float32, angles64)


def test_only_the_angles_in_float64_halve_the_gap_at_nine_seeds_of_ten():
    """The notebook's scope after the held-out check: "less than half" was written from seeds 0-4
    (all five) and failed at held-out seed 8 (1.5 times smaller), so the prose says nine of ten."""
    halved = [seed for seed in ALL_SEEDS if _angles_control(seed)[1] < _angles_control(seed)[0] / 2]
    assert len(halved) >= 9 and 0 in halved, halved


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_sharing_kv_heads_costs_nothing_measurable(seed):
    """Section 3: MHA, GQA (2 kv heads) and MQA (1) end within 0.05 nats/token of each other."""
    losses = [val_loss(model(name, seed)) for name in ("MHA", "GQA", "MQA")]
    assert max(losses) - min(losses) < 0.05, losses


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_a_window_costs_the_learned_model_even_where_nothing_left_it(seed):
    """Section 4's control: on positions whose whole sentence (and the '.' before it) lies inside a
    window of 8, the learned-position model and the balanced sinusoidal one still lose more than
    0.2 nats/token with the window, the RoPE and the Llama-style model less than 0.01 (the notebook's
    claims). (MHA and RoPE written from seeds 0-2; the balanced sinusoidal and the Llama-style model
    added with the same thresholds; all held at seeds 0-9: 0.29-0.50 and 0.46-0.65, below 0.008.) The
    prose's ranges over ten seeds, "0.3 to 0.5" and "0.4 to 0.7", are checked to one decimal.
    MHA and RoPE send between 0.35 and 0.65 of their attention more than 7 positions back in every
    layer, so "how far attention reaches" does not separate them."""
    cost = {}
    for name in ("MHA", "sinusoidal, balanced", "RoPE", "Llama-style"):
        losses, _ = nb()["window_costs"](model(name, seed))
        cost[name] = losses[8][0] - losses[None][0]
    for name in ("MHA", "RoPE"):
        shares = nb()["far_share"](model(name, seed))
        assert all(0.35 < s < 0.65 for s in shares), (name, shares)
    assert cost["MHA"] > 0.2 and cost["sinusoidal, balanced"] > 0.2, cost
    assert cost["RoPE"] < 0.01 and cost["Llama-style"] < 0.01, cost
    assert 0.3 <= round(cost["MHA"], 1) <= 0.5 and 0.4 <= round(cost["sinusoidal, balanced"], 1) <= 0.7, cost


def test_a_windows_cost_to_notebook_09s_sinusoidal_model_varies():
    """Section 4: notebook 09's sinusoidal model (positions added to the embeddings, and outweighing
    them) loses "anything from nothing (seed 0) to about 0.6" nats/token with a window of 8 where the
    sentence is inside it, depending on the seed: "absolute positions lose, rotary ones do not" is not
    the rule."""
    cost = {}
    for seed in ALL_SEEDS:
        losses, _ = nb()["window_costs"](model("sinusoidal", seed))
        cost[seed] = losses[8][0] - losses[None][0]
    assert cost[0] < 0.01 and min(cost.values()) < 0.01 and round(max(cost.values()), 1) == 0.6, cost


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_no_attention_parked_on_the_first_token(seed):
    """Section 5: no layer of the learned-position or the RoPE model puts even twice the uniform
    share of its attention on position 0 (queries from position 8 on)."""
    for name in ("MHA", "RoPE"):
        weights, uniform = nb()["first_token_weight"](model(name, seed))
        assert max(weights) < 2 * uniform, (name, weights, uniform)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_streaming_16x_with_a_window_and_where_sinks_sit(seed):
    """Section 5: on rows of 512 tokens (16x the training length), the RoPE model with full
    attention is > 0.15 above the window at positions 96-127; with a window of 8 every bin of 32
    positions stays within 0.15 of the first; 1 or 4 sinks at StreamingLLM's positions change every
    bin by < 0.01; 4 sinks kept at their own positions are worse beyond the trained length (the
    control that shows why StreamingLLM rotates by the place in the cache). Also with a window of
    16 (a variation)."""
    loss_by_position = nb()["loss_by_position"]
    rope = model("RoPE", seed)
    full = loss_by_position(rope.set_window(None), length=128)
    for window in (8, 16):
        stream = {(s, where): loss_by_position(rope.set_window(window, s, sink_positions=where))
                  for s, where in ((0, "cache"), (1, "cache"), (4, "cache"), (4, "absolute"))}
        rope.set_window(None)
        plain = stream[(0, "cache")]
        if window == 8:
            assert full[-1] - plain[3] > 0.15, (full, plain[:4])
        assert max(abs(v - plain[0]) for v in plain) < 0.15, plain
        assert all(abs(a - b) < 0.01 for s in (1, 4) for a, b in zip(stream[(s, "cache")], plain, strict=True))
        assert sum(stream[(4, "absolute")][1:]) > sum(stream[(4, "cache")][1:])


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_qk_norm_halves_the_largest_logit_and_sinusoidal_ends_highest(seed):
    """Section 6: the final largest logit of RoPE + QK-norm is below half of RoPE's; the sinusoidal
    model's is the largest of the six."""
    final = {name: run(name, seed)[1]["max_logit"][-1] for name in NAMES[:6]}
    assert final["RoPE + QK-norm"] < 0.5 * final["RoPE"], final
    assert max(final, key=final.get) == "sinusoidal", final


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_with_qk_norm_the_largest_logit_ends_near_5_below_half_of_ropes(seed):
    """Section 6: "with QK-norm the RoPE model's largest logit ended near 5, under its bound, at every
    seed (between 4 and 5.5 at five seeds)", below half of the RoPE model's without it; written from
    seeds 0-4 (4.5-5.1; RoPE 14.1-21.1), held at held-out seeds 5-9."""
    qk, rope = (run(name, seed)[1]["max_logit"][-1] for name in ("RoPE + QK-norm", "RoPE"))
    assert 4 < qk < 5.5 and qk < 0.5 * rope, (qk, rope)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_qk_norm_costs_nothing_at_the_trained_length(seed):
    """Section 6: at the trained length the RoPE model with and without QK-norm are within 0.01
    nats/token. Written from seeds 0-4 (within 0.0021), checked unchanged at held-out seeds 5-9."""
    rope, qk = (val_loss(model(name, seed)) for name in ("RoPE", "RoPE + QK-norm"))
    assert abs(qk - rope) < 0.01, (qk, rope)


def test_what_qk_norm_costs_at_2x():
    """Section 6: at 2x the loss with QK-norm is higher at each of ten seeds, by 0.012 to 0.044 (pinned
    numerics, 2026-12-06). On models trained with the processor's native AVX-512 kernels an
    independent reader found seed 1 lower by 0.0023 (and seed 7 higher by only 0.006), so the
    notebook calls the cost usual, not certain."""
    cost = {seed: val_loss(model("RoPE + QK-norm", seed), 64) - val_loss(model("RoPE", seed), 64) for seed in ALL_SEEDS}
    assert all(0.01 < v < 0.05 for v in cost.values()), cost


def test_at_4x_qk_norms_cost_is_not_reliable():
    """Section 6's limit: at 4x QK-norm's loss was higher at seeds 0-4 (by 0.011-0.123 pinned), but lower at
    four of the five held-out seeds 5-9, so the notebook claims nothing at 4x."""
    higher = {seed: val_loss(model("RoPE + QK-norm", seed), 128) > val_loss(model("RoPE", seed), 128)
              for seed in FIVE + HELD_OUT}
    assert all(higher[seed] for seed in FIVE), higher
    assert sum(not higher[seed] for seed in HELD_OUT) == 4, higher


def test_without_a_norm_notebook_12s_logits_are_not_reliably_small():
    """Section 6: notebook 12's model ends above the RoPE model at two seeds of ten (so the
    notebook does not claim that it keeps small logits); GQA's final largest logit ends "anywhere from
    about 2 to about 18": 4.7-17.5 at ten seeds pinned (checked here: within 2 to 18, the largest more
    than three times the smallest), 2.4-12.7 on the reader's native-kernel models."""
    mha_above = [seed for seed in ALL_SEEDS if run("MHA", seed)[1]["max_logit"][-1] > run("RoPE", seed)[1]["max_logit"][-1]]
    assert mha_above == [3, 9], mha_above
    gqa = [run("GQA", seed)[1]["max_logit"][-1] for seed in ALL_SEEDS]
    assert 2 <= min(gqa) and max(gqa) <= 18 and max(gqa) > 3 * min(gqa), gqa


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_longer_rows_than_in_training(seed):
    """Section 7: every model is worse at 4x than 1x; RoPE is the best of four at 2x; the balanced
    sinusoidal model beats notebook 09's scaling at 1x; RoPE with a window of 8 beats full RoPE at 4x
    and stays within 0.01 of its 1x loss; NTK-aware scaling lowers RoPE's loss at 2x and 4x,
    position interpolation raises it, and the window beats both at 4x."""
    models = {name: model(name, seed) for name in ("MHA", "sinusoidal", "sinusoidal, balanced", "RoPE")}
    ext = {name: [val_loss(m, n) for n in (32, 64, 128)] for name, m in models.items()}
    assert all(v[2] > v[0] for v in ext.values()), ext
    assert min(ext, key=lambda k: ext[k][1]) == "RoPE", ext
    assert ext["sinusoidal, balanced"][0] < ext["sinusoidal"][0], ext
    rope = models["RoPE"]
    windowed = [val_loss(rope.set_window(8), n) for n in (32, 64, 128)]
    rope.set_window(None)
    assert windowed[2] < ext["RoPE"][2] and abs(windowed[2] - windowed[0]) < 0.01, windowed
    stretched = {m: [val_loss(rope.set_rope_scaling(m, n / 32), n) for n in (64, 128)] for m in ("pi", "ntk")}
    rope.set_rope_scaling(None)
    assert all(a < b for a, b in zip(stretched["ntk"], ext["RoPE"][1:], strict=True)), stretched
    assert all(a > b for a, b in zip(stretched["pi"], ext["RoPE"][1:], strict=True)), stretched
    assert windowed[2] < min(stretched["ntk"][1], stretched["pi"][1])


def test_rope_is_not_always_best_at_4x_and_balanced_sinusoidal_varies():
    """Section 7's limits: "at 4x another model did better at three or four seeds of ten, depending on
    the kernels (the learned table at one to three of them, the balanced sinusoidal one at one or two)":
    pinned, the learned table at seed 1 and the balanced sinusoidal model at seeds 5 and 8 (checked
    here); natively the learned table at 1, 6, 7 and the balanced one at 5. The balanced sinusoidal
    model's loss at 4x varies by more than 0.2 across seeds 0-2."""
    kinds = ("MHA", "sinusoidal", "sinusoidal, balanced", "RoPE")
    at_4x = {seed: {name: val_loss(model(name, seed), 128) for name in kinds} for seed in ALL_SEEDS}
    beaten_by = {name: [seed for seed, v in at_4x.items() if v[name] < v["RoPE"]] for name in kinds[:3]}
    assert beaten_by == {"MHA": [1], "sinusoidal": [], "sinusoidal, balanced": [5, 8]}, at_4x
    balanced = [at_4x[seed]["sinusoidal, balanced"] for seed in SEEDS]
    assert max(balanced) - min(balanced) > 0.2, balanced


def test_balanced_sinusoidal_against_learned_at_the_trained_length_goes_both_ways():
    """Section 7: "within 0.03 of them at ten seeds, better at some seeds and worse at others (better
    at three of ten with the pinned kernels, at five with native ones)": pinned, checked here (seeds
    0, 1, 7); natively seeds 0, 1, 2, 7, 9, within 0.027 (the reader's models)."""
    diff = [val_loss(model("sinusoidal, balanced", seed)) - val_loss(model("MHA", seed)) for seed in ALL_SEEDS]
    assert sum(d < 0 for d in diff) == 3 and max(map(abs, diff)) < 0.03, diff


@torch.no_grad()
def _capped_offsets_loss(rope_model, n, cap=31):
    """The RoPE model's validation loss on rows of n tokens with full causal attention, every offset
    i - j > cap computed as cap (ReRoPE-style): all keys in view, none at an offset unseen in training."""
    x, y = nb()["val"][n]
    x, y = x.to(nb()["device"]), y.to(nb()["device"])
    h = rope_model.tok_embed(x)
    pos = torch.arange(n, device=x.device)
    offset = pos[:, None] - pos[None, :]
    for block in rope_model.blocks:
        attn, z = block.self_attn, block.norm1(h)
        q, k, v = (attn._heads(p(z), m) for p, m in ((attn.q_proj, attn.num_heads), (attn.k_proj, attn.num_kv_heads),
                                                      (attn.v_proj, attn.num_kv_heads)))
        group = attn.num_heads // attn.num_kv_heads
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)  # (B, h, n, d_k)
        near = apply_rope(q, pos) @ apply_rope(k, pos).transpose(-2, -1)  # offsets as they are
        far = apply_rope(q, torch.full((n,), cap, device=x.device)) @ k.transpose(-2, -1)  # offset cap
        scores = torch.where(offset > cap, far, near) / math.sqrt(attn.head_dim)
        weights = scores.masked_fill(offset < 0, float("-inf")).softmax(-1)
        h = h + attn.out_proj((weights @ v).transpose(1, 2).flatten(2))
        h = h + block.feed_forward(block.norm2(h))
    logits = rope_model.lm_head(rope_model.norm(h))
    return F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100).item()


def _capped_gap(seed):
    """The capped-offsets loss at 4x minus the loss at 1x, for the RoPE model of one seed."""
    rope = model("RoPE", seed)
    assert math.isclose(_capped_offsets_loss(rope, 32), val_loss(rope, 32), abs_tol=1e-4)  # no offset > 31 there
    return _capped_offsets_loss(rope, 128) - val_loss(rope, 32)


@pytest.mark.parametrize("seed", FIVE, ids=seed_id)
def test_unseen_offsets_alone_do_not_explain_what_hurts_rope_at_4x(seed):
    """Section 7's control: the window's flat loss might come from removing unseen offsets or from
    removing far keys. Keeping every key but computing every offset beyond 31 as 31 leaves the loss
    at 4x more than 0.05 above the loss at 1x (a window of 8: within 0.01, tested above), at each of
    the five seeds the notebook names."""
    assert _capped_gap(seed) > 0.05


def test_capped_offsets_at_held_out_seeds():
    """The same control at held-out seeds 5-9, as the notebook reports it: the loss at 4x stays above
    the loss at 1x at all five, but by more than 0.05 at only four of them (seed 5: 0.049), so
    the notebook's "well above" is stated for seeds 0-4 only."""
    gap = {seed: _capped_gap(seed) for seed in HELD_OUT}
    assert all(v > 0 for v in gap.values()), gap
    assert [seed for seed in HELD_OUT if gap[seed] <= 0.05] == [5], gap


def _pi_costs(seed):
    """Position interpolation by 2 against plain RoPE: (its cost on rows of 32, on rows of 64)."""
    rope = model("RoPE", seed)
    plain = [val_loss(rope, n) for n in (32, 64)]
    pi = [val_loss(rope.set_rope_scaling("pi", 2.0), n) for n in (32, 64)]
    rope.set_rope_scaling(None)
    return pi[0] - plain[0], pi[1] - plain[1]


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_interpolation_costs_even_where_no_offset_is_new(seed):
    """Section 7's control for "what hurts in interpolation is not the length": by 2 on rows of 32,
    where no offset is beyond 31, it costs more than 0.1 nats/token (the prose; the notebook's claim:
    more than 0.05) and more than half of its cost on rows of 64 (written from seeds 0-4: 0.109-0.223
    and 1.03-1.59 times the 2x cost; held at 5-9)."""
    at_1x, at_2x = _pi_costs(seed)
    assert at_1x > 0.1 and at_1x > 0.5 * at_2x, (at_1x, at_2x)


def test_interpolation_at_1x_against_2x():
    """"About as much as on rows of 64 (more at nine seeds, 0.002 less at the tenth)": "at least as
    much" was written from seeds 0-4 and failed at held-out seed 5, so the prose counts seeds."""
    costs = {seed: _pi_costs(seed) for seed in ALL_SEEDS}
    less = {seed: round(a - b, 4) for seed, (a, b) in costs.items() if a <= b}
    assert list(less) == [5] and -0.0025 < less[5] <= -0.0015, costs


def test_ntk_by_12_does_worse_than_by_2_on_rows_of_64():
    """Exercise 4's solution: alpha = 12, the smallest whole factor that leaves no pair past its
    trained angles on rows of 64, gives a higher loss there than alpha = 2 at each of ten seeds
    (written from seeds 0-4, held at 5-9), and costs more at the trained length."""
    for seed in ALL_SEEDS:
        rope = model("RoPE", seed)
        by = {a: [val_loss(rope.set_rope_scaling("ntk", a), n) for n in (32, 64)] for a in (2.0, 12.0)}
        rope.set_rope_scaling(None)
        assert by[12.0][1] > by[2.0][1] and by[12.0][0] > by[2.0][0], (seed, by)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_llama_style_block_matches_rope_with_fewer_parameters(seed):
    """Section 9: at the trained length the Llama-style model is within 0.02 of the RoPE model and
    below notebook 12's, with the fewest parameters of the three."""
    losses = {name: val_loss(model(name, seed)) for name in ("MHA", "RoPE", "Llama-style")}
    assert abs(losses["Llama-style"] - losses["RoPE"]) < 0.02 and losses["Llama-style"] < losses["MHA"], losses
    params = {name: sum(p.numel() for p in model(name, seed).parameters()) for name in losses}
    assert min(params, key=params.get) == "Llama-style"
    assert math.isfinite(losses["Llama-style"])
