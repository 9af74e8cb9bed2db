"""Notebook 13's experimental conclusions, re-checked at seeds 0, 1 and 2 (seed 0's models are the
notebook's own, shared through the cache of trained models; each model trains in seconds)."""

import math

import pytest
import torch
import torch.nn.functional as F

from helpers.data import toy_language as tl
from helpers.experiments import modern_data, train_modern

SEEDS = (0, 1, 2)
NAMES = ["MHA", "GQA", "MQA", "sinusoidal", "RoPE", "RoPE + QK-norm", "sinusoidal, balanced", "Llama-style"]


@pytest.fixture(scope="module")
def runs():
    return {seed: {name: train_modern(name, seed=seed, device="cpu") for name in NAMES} for seed in SEEDS}


@torch.no_grad()
def val_loss(model, n=32):
    x, y = modern_data()["val"][n]
    return F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=-100).item()


@pytest.mark.parametrize("seed", SEEDS)
def test_sharing_kv_heads_costs_nothing_measurable(seed, runs):
    """Section 3: MHA, GQA (2 kv heads) and MQA (1) end within 0.05 nats/token of each other."""
    losses = [val_loss(runs[seed][name][0]) for name in ("MHA", "GQA", "MQA")]
    assert max(losses) - min(losses) < 0.05, losses


@pytest.mark.parametrize("seed", SEEDS)
def test_a_window_costs_the_learned_model_even_where_nothing_left_it(seed, runs):
    """Section 4's control: on positions whose whole sentence (and the '.' before it) lies inside a
    window of 8, the learned-position model still loses more than 0.2 nats/token with the window,
    the RoPE model less than 0.02. Both send about half of their attention (0.35 to 0.65) more than
    7 positions back, so "how far attention reaches" does not separate them."""
    x, y = modern_data()["val"][32]
    last_dot = torch.cummax(torch.where(x == 1, torch.arange(32), -1), dim=1).values
    inside = (last_dot > torch.arange(32) - 8) & (torch.arange(32) >= 8) & (y >= 0)
    cost = {}
    for name in ("MHA", "RoPE"):
        model = runs[seed][name][0]
        losses = []
        for window in (None, 8):
            with torch.no_grad():
                per_token = F.cross_entropy(model.set_window(window)(x).transpose(1, 2), y, ignore_index=-100,
                                            reduction="none")
            losses.append(per_token[inside].mean().item())
        model.set_window(None)
        cost[name] = losses[1] - losses[0]
        with torch.no_grad():
            model(x[:256], need_weights=True)
        far = (torch.arange(32)[:, None] - torch.arange(32)[None, :] >= 8)[8:]  # (24, 32)
        for block in model.blocks:
            share = (block.self_attn.attn_weights[..., 8:, :] * far).sum(-1).mean().item()
            assert 0.35 < share < 0.65, (name, share)
    assert cost["MHA"] > 0.2 and cost["RoPE"] < 0.02, cost


@pytest.mark.parametrize("seed", SEEDS)
def test_no_attention_parked_on_the_first_token(seed, runs):
    """Section 5: no layer of the learned-position or the RoPE model puts even twice the uniform
    share of its attention on position 0 (queries from position 8 on)."""
    ids = modern_data()["val"][32][0][:256]
    uniform = sum(1 / (i + 1) for i in range(8, 32)) / 24
    for name in ("MHA", "RoPE"):
        model = runs[seed][name][0]
        with torch.no_grad():
            model(ids, need_weights=True)
        assert all(b.self_attn.attn_weights[..., 8:, 0].mean().item() < 2 * uniform for b in model.blocks), name


def _loss_by_position(model, x, y, length=512, bin_size=32):
    x, y = x[:, :length], y[:, :length]
    with torch.no_grad():
        per_token = torch.cat([F.cross_entropy(model(x[i:i + 8]).transpose(1, 2), y[i:i + 8], ignore_index=-100,
                                               reduction="none") for i in range(0, len(x), 8)])
    scored = (y >= 0).float()
    per_bin = (per_token * scored).view(len(x), -1, bin_size).sum((0, 2))
    return (per_bin / scored.view(len(x), -1, bin_size).sum((0, 2))).tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_streaming_16x_with_a_window_and_where_sinks_sit(seed, runs):
    """Section 5: on rows of 512 tokens (16x the training length), the RoPE model with full
    attention is > 0.15 above the window at positions 96-127; with a window of 8 every bin of 32
    positions stays within 0.15 of the first; 1 or 4 sinks at StreamingLLM's positions change every
    bin by < 0.01; 4 sinks kept at their own positions are worse beyond the trained length (the
    control that shows why StreamingLLM rotates by the place in the cache). Also with a window of
    16 (a variation)."""
    x, y = tl.pack_sentences(map(tl.encode, tl.sentences(3_000, seed=2)), length=512)
    x, y = x[:24], y[:24]
    rope = runs[seed]["RoPE"][0]
    full = _loss_by_position(rope.set_window(None), x, y, length=128)
    for window in (8, 16):
        stream = {(s, where): _loss_by_position(rope.set_window(window, s, where), x, y)
                  for s, where in ((0, "cache"), (1, "cache"), (4, "cache"), (4, "absolute"))}
        rope.set_window(None)
        plain = stream[(0, "cache")]
        if window == 8:
            assert full[-1] - plain[3] > 0.15, (full, plain[:4])
        assert max(abs(v - plain[0]) for v in plain) < 0.15, plain
        assert all(abs(a - b) < 0.01 for s in (1, 4) for a, b in zip(stream[(s, "cache")], plain, strict=True))
        assert sum(stream[(4, "absolute")][1:]) > sum(stream[(4, "cache")][1:])


@pytest.mark.parametrize("seed", SEEDS)
def test_qk_norm_bounds_the_logits(seed, runs):
    """Section 6: the final largest logit of RoPE + QK-norm is below half of RoPE's; the sinusoidal
    model's is the largest of the six; notebook 12's model's is below RoPE's; RoPE + QK-norm's lies
    between 4.5 and 5.0. (Across seeds, GQA's varies by more than 5: checked below.)"""
    final = {name: runs[seed][name][1]["max_logit"][-1] for name in NAMES[:6]}
    assert final["RoPE + QK-norm"] < 0.5 * final["RoPE"], final
    assert max(final, key=final.get) == "sinusoidal", final
    assert final["MHA"] < final["RoPE"], final
    assert 4.5 < final["RoPE + QK-norm"] < 5.0, final


def test_some_logits_vary_widely_from_seed_to_seed(runs):
    gqa = [runs[seed]["GQA"][1]["max_logit"][-1] for seed in SEEDS]
    assert max(gqa) - min(gqa) > 5, gqa


@pytest.mark.parametrize("seed", SEEDS)
def test_longer_rows_than_in_training(seed, runs):
    """Section 7: every model is worse at 4x than 1x; RoPE is the best of four at 2x; the balanced
    sinusoidal model beats notebook 09's scaling and the learned table at 1x; RoPE with a window of
    8 beats full RoPE at 4x and stays within 0.01 of its 1x loss; NTK-aware scaling lowers RoPE's
    loss at 2x and 4x, position interpolation raises it, and the window beats both at 4x."""
    models = {name: runs[seed][name][0] for name in ("MHA", "sinusoidal", "sinusoidal, balanced", "RoPE")}
    ext = {name: [val_loss(m, n) for n in (32, 64, 128)] for name, m in models.items()}
    assert all(v[2] > v[0] for v in ext.values()), ext
    assert min(ext, key=lambda k: ext[k][1]) == "RoPE", ext
    assert ext["sinusoidal, balanced"][0] < min(ext["sinusoidal"][0], ext["MHA"][0]), ext
    rope = models["RoPE"]
    windowed = [val_loss(rope.set_window(8), n) for n in (32, 64, 128)]
    rope.set_window(None)
    assert windowed[2] < ext["RoPE"][2] and abs(windowed[2] - windowed[0]) < 0.01, windowed
    stretched = {m: [val_loss(rope.set_rope_scaling(m, n / 32), n) for n in (64, 128)] for m in ("pi", "ntk")}
    rope.set_rope_scaling(None)
    assert all(a < b for a, b in zip(stretched["ntk"], ext["RoPE"][1:], strict=True)), stretched
    assert all(a > b for a, b in zip(stretched["pi"], ext["RoPE"][1:], strict=True)), stretched
    assert windowed[2] < min(stretched["ntk"][1], stretched["pi"][1])


def test_rope_is_not_always_best_at_4x_and_balanced_sinusoidal_varies(runs):
    """Section 7's limits: at 4x the learned table beat RoPE at one of the three seeds, so the
    notebook does not claim RoPE is best there; the balanced sinusoidal model's loss at 4x varies
    by more than 0.2 across seeds."""
    at_4x = {seed: {name: val_loss(runs[seed][name][0], 128) for name in ("MHA", "RoPE", "sinusoidal, balanced")}
             for seed in SEEDS}
    assert any(v["MHA"] < v["RoPE"] for v in at_4x.values()), at_4x
    balanced = [v["sinusoidal, balanced"] for v in at_4x.values()]
    assert max(balanced) - min(balanced) > 0.2, balanced


@pytest.mark.parametrize("seed", SEEDS)
def test_the_llama_style_block_matches_rope_with_fewer_parameters(seed, runs):
    """Section 9: at the trained length the Llama-style model is within 0.02 of the RoPE model and
    below notebook 12's, with the fewest parameters of the three."""
    losses = {name: val_loss(runs[seed][name][0]) for name in ("MHA", "RoPE", "Llama-style")}
    assert abs(losses["Llama-style"] - losses["RoPE"]) < 0.02 and losses["Llama-style"] < losses["MHA"], losses
    params = {name: sum(p.numel() for p in runs[seed][name][0].parameters()) for name in losses}
    assert min(params, key=params.get) == "Llama-style"
    assert math.isfinite(losses["Llama-style"])
