"""helpers.modern (building blocks of notebook 13): GQA against PyTorch's enable_gqa, MHA as the
special case, the sliding-window mask, RMSNorm against nn.RMSNorm, the KV-cache size formula
against real tensors, and RoPE's two pairing conventions."""

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F
from traitlets import TraitError

from helpers import MultiHeadAttention, apply_rope, causal_mask
from helpers.modern import (
    GroupedQueryAttention,
    ModernAttention,
    ModernBlock,
    RMSNorm,
    RollingKVCache,
    kv_cache_bytes,
    kv_cache_curves,
    sliding_window_mask,
)
from helpers.plots import extrapolation_plot, kv_cache_plot, logit_curves_plot
from helpers.positional import interleaved_to_half, rope_half
from helpers.widgets import kv_cache_view


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_gqa_equals_sdpa_with_enable_gqa(kv_heads):
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(16, 4, kv_heads)
    x = torch.randn(2, 7, 16)  # (B, L, d_model)
    mask = causal_mask(7)
    q = gqa.q_proj(x).view(2, 7, 4, 4).transpose(1, 2)
    k = gqa.k_proj(x).view(2, 7, kv_heads, 4).transpose(1, 2)
    v = gqa.v_proj(x).view(2, 7, kv_heads, 4).transpose(1, 2)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    ref = gqa.out_proj(ref.transpose(1, 2).reshape(2, 7, 16))
    torch.testing.assert_close(gqa(x, x, x, mask=mask), ref)


def test_gqa_with_as_many_kv_heads_as_heads_is_multi_head_attention():
    torch.manual_seed(0)
    gqa, mha = GroupedQueryAttention(16, 4, 4), MultiHeadAttention(16, 4)
    with torch.no_grad():
        for mine, theirs in ((gqa.q_proj, mha.w_q), (gqa.k_proj, mha.w_k), (gqa.v_proj, mha.w_v),
                             (gqa.out_proj, mha.w_o)):
            mine.load_state_dict(theirs.state_dict())
    x = torch.randn(3, 5, 16)
    torch.testing.assert_close(gqa(x, x, x, mask=causal_mask(5)), mha(x, x, x, mask=causal_mask(5)))


def test_gqa_parameters_shrink_with_fewer_kv_heads():
    sizes = [sum(p.numel() for p in GroupedQueryAttention(64, 8, g).parameters()) for g in (8, 2, 1)]
    assert sizes[0] > sizes[1] > sizes[2]
    assert GroupedQueryAttention(64, 8, 2).k_proj.out_features == 16


@pytest.mark.parametrize("args, word", [((16, 4, 3), "multiple"), ((16, 3, 1), "divisible"),
                                        ((16, 4, 0), "num_kv_heads"), ((16, 4.0, 2), "num_heads")])
def test_gqa_bad_constructor(args, word):
    with pytest.raises((ValueError, TypeError), match=word):
        GroupedQueryAttention(*args)


def test_gqa_bad_inputs():
    gqa = GroupedQueryAttention(16, 4, 2)
    x = torch.randn(2, 5, 16)
    with pytest.raises(ValueError, match="query"):
        gqa(torch.randn(2, 5, 8), x, x)
    with pytest.raises(TypeError, match="boolean"):
        gqa(x, x, x, mask=torch.ones(5, 5))
    with pytest.raises(ValueError, match="broadcast"):
        gqa(x, x, x, mask=torch.ones(4, 1, 5, 5, dtype=torch.bool))


def test_sliding_window_mask():
    m = sliding_window_mask(5, 2)
    want = torch.tensor([[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0],
                         [0, 0, 0, 1, 1]], dtype=torch.bool)
    assert torch.equal(m, want)
    assert torch.equal(sliding_window_mask(6, 6), causal_mask(6))
    assert torch.equal(sliding_window_mask(6, 100), causal_mask(6))
    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(5, 0)
    with pytest.raises(TypeError, match="n"):
        sliding_window_mask(2.5, 2)


def test_rmsnorm_equals_pytorch():
    torch.manual_seed(0)
    mine, ref = RMSNorm(8, eps=1e-6), torch.nn.RMSNorm(8, eps=1e-6)
    with torch.no_grad():
        mine.weight.copy_(torch.randn(8))
        ref.weight.copy_(mine.weight)
    x = torch.randn(3, 4, 8) * 5
    torch.testing.assert_close(mine(x), ref(x))
    with pytest.raises(ValueError, match="d=8"):
        mine(torch.randn(3, 4))
    with pytest.raises(ValueError, match="eps"):
        RMSNorm(8, eps=0)


@pytest.mark.parametrize("kv_heads", [8, 2, 1])
def test_kv_cache_bytes_matches_real_tensors(kv_heads):
    layers, head_dim, length, batch = 3, 16, 40, 2
    cache = [(torch.zeros(batch, kv_heads, length, head_dim, dtype=torch.float16),) * 2
             for _ in range(layers)]
    held = sum(t.numel() * t.element_size() for layer in cache for t in layer)
    assert kv_cache_bytes(layers, kv_heads, head_dim, length, batch, torch.float16) == held


def test_kv_cache_bytes_bad_arguments():
    with pytest.raises(ValueError, match="num_layers"):
        kv_cache_bytes(0, 1, 8, 10)
    with pytest.raises(TypeError, match="dtype"):
        kv_cache_bytes(1, 1, 8, 10, dtype="float16")


def test_rope_conventions_are_the_same_rotation_up_to_a_permutation():
    torch.manual_seed(0)
    x = torch.randn(2, 9, 12)  # (B, L, d)
    perm = interleaved_to_half(12)
    torch.testing.assert_close(rope_half(x[..., perm]), apply_rope(x)[..., perm])
    # mixing the conventions silently gives other outputs
    assert not torch.allclose(rope_half(x), apply_rope(x), atol=1e-3)


def test_rope_half_keeps_relative_offsets():
    torch.manual_seed(0)
    q, k = torch.randn(1, 16), torch.randn(1, 16)
    def score(m, n):
        qs = rope_half(q.expand(20, 16))[m]
        ks = rope_half(k.expand(20, 16))[n]
        return qs @ ks
    torch.testing.assert_close(score(7, 3), score(15, 11), rtol=1e-4, atol=1e-4)


# ---- notebook 13's model parts, curves, plots and widget -------------------------------------

@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_modern_attention_equals_gqa_and_pytorch(kv_heads):
    torch.manual_seed(0)
    attn = ModernAttention(16, 4, kv_heads)
    ref = GroupedQueryAttention(16, 4, kv_heads)
    ref.load_state_dict(attn.state_dict())
    x = torch.randn(2, 7, 16)
    torch.testing.assert_close(attn(x, x, x, causal_mask(7)), ref(x, x, x, mask=causal_mask(7)))


def test_modern_attention_rope_and_qk_norm_against_sdpa():
    torch.manual_seed(0)
    attn = ModernAttention(16, 4, 2, qk_norm=True, rope=True)
    with torch.no_grad():
        attn.q_norm.weight.copy_(torch.rand(4) + 0.5)
        attn.k_norm.weight.copy_(torch.rand(4) + 0.5)
    x = torch.randn(2, 6, 16)
    q = attn.q_norm(attn.q_proj(x).view(2, 6, 4, 4).transpose(1, 2))
    k = attn.k_norm(attn.k_proj(x).view(2, 6, 2, 4).transpose(1, 2))
    v = attn.v_proj(x).view(2, 6, 2, 4).transpose(1, 2)
    out = F.scaled_dot_product_attention(apply_rope(q), apply_rope(k), v, attn_mask=causal_mask(6),
                                         enable_gqa=True)
    want = attn.out_proj(out.transpose(1, 2).reshape(2, 6, 16))
    torch.testing.assert_close(attn(x, x, x, causal_mask(6)), want)
    # with a rolling cache and positions continuing at `start`
    cache = RollingKVCache(window=10)
    steps = [attn(x[:, :2], x[:, :2], x[:, :2], causal_mask(2), cache=cache)]
    steps += [attn(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], cache=cache, start=t) for t in range(2, 6)]
    torch.testing.assert_close(torch.cat(steps, 1), want)


def test_rolling_cache_positions_and_size():
    cache = RollingKVCache(window=3, sinks=1)
    for t in range(7):
        k, _ = cache.update(torch.full((1, 1, 1, 2), float(t)), torch.zeros(1, 1, 1, 2))
        assert k[0, 0, :, 0].tolist() == [float(p) for p in range(t + 1) if p < 1 or t - p < 3]
    assert cache.positions.tolist() == [0, 5, 6] and cache.seen == 7 and len(cache) == 3
    assert "window=3, sinks=1, seen=7" in repr(cache)


def test_kv_cache_curves_use_the_formula():
    curves = kv_cache_curves(32, 32, 128, 8, max_context=8192, window=1024, points=8)
    assert list(curves) == ["MHA (32 kv heads)", "GQA (8 kv heads)", "MQA (1 kv head)", "GQA + window 1024"]
    lengths, mha = curves["MHA (32 kv heads)"]
    assert lengths == [0, 1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192]
    assert mha[-1] == 4 * 2**30 == kv_cache_bytes(32, 32, 128, 8192, dtype=torch.float16)
    assert curves["GQA + window 1024"][1][-1] == kv_cache_bytes(32, 8, 128, 1024, dtype=torch.float16)
    assert "GQA + window" not in "".join(kv_cache_curves(2, 4, 8, 2, 100))


@pytest.mark.parametrize("args, match", [((2, 4, 8, 3, 100), "multiple"), ((0, 4, 8, 2, 100), "num_layers"),
                                         ((2, 4, 8, 2, 0), "max_context")])
def test_kv_cache_curves_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        kv_cache_curves(*args)
    with pytest.raises(ValueError, match="dtype"):
        kv_cache_curves(2, 4, 8, 2, 100, dtype="float64")


def test_kv_cache_plot_draws_each_curve_in_its_unit():
    curves = {"a": ([0, 10], [0, 2048]), "b": ([0, 10], [0, 1024])}
    fig = kv_cache_plot(curves, unit="KiB", title="t")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    assert list(ax.get_lines()[0].get_ydata()) == [0, 2] and ax.get_ylabel() == "KV cache (KiB)"
    plt.close(fig)
    with pytest.raises(ValueError, match="unit"):
        kv_cache_plot(curves, unit="kB")


def test_kv_cache_view_figure_and_messages():
    fig = kv_cache_view(32, 32, 128, 8, 32768, window=4096)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["MHA (32 kv heads)", "GQA (8 kv heads)", "MQA (1 kv head)", "GQA + window 4096"]
    assert ax.get_lines()[0].get_ydata()[-1] == 16.0 and "16.00 GiB" in ax.get_title()
    plt.close(fig)
    message = kv_cache_view(32, 32, 128, 7, 32768)
    assert message.startswith("Cannot draw this: ") and message.endswith("(kv heads that fit 32 heads: 1, 2, 4, 8, 16, 32)")
    assert "dtype" in kv_cache_view(32, 32, 128, 8, 32768, dtype="float8")
    assert "max_context" in kv_cache_view(32, 32, 128, 8, 0)


def test_kv_head_choices_are_the_divisors_and_follow_the_learners_choice():
    from helpers.widgets import follow_kv_heads, kv_head_choices

    assert kv_head_choices(32) == [1, 2, 4, 8, 16, 32]
    assert kv_head_choices(35) == [1, 5, 7, 35] and kv_head_choices(1) == [1]
    assert follow_kv_heads(32, 8) == 8  # a divisor stays
    assert [follow_kv_heads(h, 8) for h in (33, 34, 35, 36)] == [11, 2, 7, 9]  # else the nearest divisor
    assert follow_kv_heads(12, 5) == 4  # 4 and 6 are equally near: the smaller
    assert follow_kv_heads(7, 100) == 7
    with pytest.raises(ValueError, match="num_heads must be an int >= 1, got 0"):
        kv_head_choices(0)
    with pytest.raises(TypeError, match="wanted must be an int"):
        follow_kv_heads(32, 8.0)


def test_kv_cache_widget_offers_only_valid_kv_heads_and_every_control_redraws():
    """The bug a browser found: heads 32 -> 35 in steps of 1 left kv heads at 8, the plot became an
    error message, and no other control drew anything new until the heads were a multiple of 8."""
    from helpers.widgets import kv_cache_widget

    w = kv_cache_widget()
    heads, kv = w.controls["num_heads"], w.controls["num_kv_heads"]
    assert w.initial_png is not None and list(kv.options) == [1, 2, 4, 8, 16, 32] and kv.value == 8
    calls = []
    view = w.view
    w.view = lambda **values: calls.append(values) or view(**values)
    for h, expected_kv in ((33, 11), (34, 2), (35, 7)):
        heads.value = h
        assert kv.value == expected_kv and list(kv.options) == [k for k in range(1, h + 1) if h % k == 0]
        assert not isinstance(w.result, str), w.result
    assert len(calls) == 3 and all(c["num_heads"] % c["num_kv_heads"] == 0 for c in calls)  # one draw each
    titles = set()
    for name, value in (("num_layers", 16), ("head_dim", 64), ("batch_size", 4), ("max_context", 8192),
                        ("window", 1024), ("dtype", "float32"), ("num_kv_heads", 5)):
        w.controls[name].value = value
        assert not isinstance(w.result, str), (name, w.result)
        titles.add((w.result.axes[0].get_title(), tuple(line.get_label() for line in w.result.axes[0].get_lines()),
                    tuple(w.result.axes[0].get_lines()[1].get_ydata())))
        plt.close("all")
    assert len(titles) == 7  # every control drew something new
    heads.value = 32
    assert kv.value == 4  # the nearest divisor of 32 to the 5 chosen last
    kv.value = 8
    heads.value = 35
    heads.value = 32
    assert kv.value == 8  # back where the learner left it
    with pytest.raises(TraitError, match="Invalid selection"):
        kv.value = 7  # the slider offers no value that does not fit
    plt.close("all")


def test_kv_cache_widget_refuses_bad_initial_heads():
    from helpers.widgets import kv_cache_widget

    with pytest.raises(ValueError, match="kv_cache_widget: num_kv_heads must be an int >= 1, got 0"):
        kv_cache_widget(num_kv_heads=0)
    assert kv_cache_widget(num_kv_heads=7).controls["num_kv_heads"].value == 8  # the nearest that fits 32
    plt.close("all")


def test_extrapolation_and_logit_plots():
    fig = extrapolation_plot([32, 64, 128], {"learned": [1.5, 1.6, 1.7], "RoPE": [1.4, 1.45, 1.5]},
                             trained_len=32, best=1.42)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:2] == ["learned", "RoPE"] and "trained length 32" in labels and "best possible" in labels
    assert list(ax.get_lines()[1].get_ydata()) == [1.4, 1.45, 1.5]
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["32", "64", "128"]
    plt.close(fig)
    with pytest.raises(ValueError, match="3 lengths"):
        extrapolation_plot([32, 64, 128], {"x": [1.0]}, 32)
    fig = logit_curves_plot([25, 50], {"a": [1.0, 3.0], "b": [2.0, 2.5]})
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["a", "b"]
    plt.close(fig)
    with pytest.raises(ValueError, match="2 steps"):
        logit_curves_plot([25, 50], {"a": [1.0]})


def test_kv_cache_widget_carries_a_static_fallback():
    from IPython.core.formatters import DisplayFormatter

    from helpers.widgets import kv_cache_widget

    data, _ = DisplayFormatter().format(kv_cache_widget())
    assert data["text/plain"].startswith("Interactive widget: KV-cache memory")
    assert "image/png" in data
    plt.close("all")


def test_modern_attention_takes_per_example_masks_and_refuses_bad_ones():
    torch.manual_seed(0)
    attn = ModernAttention(16, 4, 2)
    ref = GroupedQueryAttention(16, 4, 2)
    ref.load_state_dict(attn.state_dict())
    x = torch.randn(2, 5, 16)
    mask = causal_mask(5).expand(2, 1, 5, 5).clone()
    mask[1, 0, :, 0] = False  # example 1 may not look at position 0
    mask[1, 0, 0, 0] = True
    torch.testing.assert_close(attn(x, x, x, mask), ref(x, x, x, mask=mask))
    with pytest.raises(TypeError, match="boolean"):
        attn(x, x, x, causal_mask(5).float())
    with pytest.raises(ValueError, match="broadcast"):
        attn(x, x, x, torch.ones(3, 1, 5, 5, dtype=torch.bool))


def test_decode_step_cost_counts_bytes_and_flops():
    from helpers.modern import decode_step_cost

    # a Llama-3-8B-like shape: 8e9 weights, 32 layers, 32 query heads, 8 kv heads of 128, 16-bit
    step = decode_step_cost(8_000_000_000, 32, 32, 8, 128, context=8191)
    assert step["weight_bytes"] == 16_000_000_000
    assert step["kv_bytes"] == kv_cache_bytes(32, 8, 128, 8192, dtype=torch.float16) == 2**30
    assert step["flops"] == 2 * 8_000_000_000 + 32 * 4 * 32 * 128 * 8192
    assert step["intensity"] < 2  # about one multiply-add per weight read: memory-bound
    mha = decode_step_cost(8_000_000_000, 32, 32, 32, 128, context=8191)
    assert mha["kv_bytes"] == 4 * step["kv_bytes"] and mha["flops"] == step["flops"]  # same arithmetic
    prefill = decode_step_cost(8_000_000_000, 32, 32, 8, 128, context=0, new_tokens=2048)
    assert prefill["intensity"] > 500 * step["intensity"]
    batch = decode_step_cost(8_000_000_000, 32, 32, 8, 128, context=8191, batch_size=64)
    assert batch["weight_bytes"] == step["weight_bytes"] and batch["kv_bytes"] == 64 * step["kv_bytes"]
    with pytest.raises(ValueError, match="multiple of num_kv_heads"):
        decode_step_cost(10, 1, 4, 3, 8, 5)


def test_decode_step_cost_of_a_batch_shares_the_weights_read():
    """Notebook 13's batching: B sequences read the weights once, their caches B times."""
    from helpers.modern import decode_step_cost

    shape = dict(num_params=8_000_000_000, num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128)
    one, many = (decode_step_cost(**shape, context=1024, batch_size=b) for b in (1, 64))
    assert many["weight_bytes"] == one["weight_bytes"] and many["kv_bytes"] == 64 * one["kv_bytes"]
    assert many["flops"] == 64 * one["flops"]
    assert round(many["intensity"], 1) == 43.0 and round(one["intensity"], 1) == 1.0
    assert round(decode_step_cost(**shape, context=128, batch_size=1024)["intensity"], 1) == 493.9
    # long contexts: the caches cap it below (FLOPs per sequence) / (cache bytes per sequence)
    long = decode_step_cost(**shape, context=8191, batch_size=1024)
    assert long["intensity"] < (2 * 8e9 + 32 * 4 * 32 * 128 * 8192) / 2**30 < 20
    assert 64 < decode_step_cost(**shape, context=0, new_tokens=64)["intensity"] < 65  # prefill: about T


@pytest.mark.parametrize("context, new_tokens, batch_size", [(0, 1, 1), (0, 5, 2), (3, 4, 1), (7, 1, 3), (2, 6, 2)])
def test_decode_step_cost_counts_the_key_query_pairs_the_causal_mask_allows(context, new_tokens, batch_size):
    """A prefill's queries see (T + 1) / 2 keys on average, not all T: the count equals a brute-force
    count of the causal mask's allowed (new query, key) pairs, and attention's FLOPs follow from it."""
    from helpers.modern import decode_step_cost

    shape = dict(num_params=1000, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=8)
    mask = causal_mask(context + new_tokens)[context:]  # (new, context + new): the new tokens' rows
    pairs = sum(1 for t in range(new_tokens) for j in range(context + new_tokens) if mask[t, j])
    attention = 2 * 2 * 4 * 8 * 2 * pairs  # QK^T and AV: 2 FLOPs per multiply-add, h * d_k each, per layer
    got = decode_step_cost(**shape, context=context, new_tokens=new_tokens, batch_size=batch_size)
    assert got["flops"] == batch_size * (new_tokens * 2 * 1000 + attention)
    assert got["kv_bytes"] == kv_cache_bytes(2, 2, 8, context + new_tokens, batch_size, torch.float16)


def test_six_series_get_six_colours_and_markers():
    fig = logit_curves_plot([25, 50], {f"m{i}": [float(i), i + 1.0] for i in range(6)})
    lines = fig.axes[0].get_lines()
    assert len({tuple(line.get_color()) for line in lines}) == 6
    assert len({line.get_marker() for line in lines}) == 6
    plt.close(fig)


def test_loss_by_position_plot_draws_each_bin_at_its_centre():
    from helpers.plots import loss_by_position_plot

    fig = loss_by_position_plot([0, 32, 64], {"window 8": [1.45, 1.44, 1.43], "full": [1.46, 1.9, float("nan")]},
                                trained_len=32, bin_size=32)
    ax = fig.axes[0]
    window, full = ax.get_lines()[:2]
    assert list(window.get_xdata()) == [16, 48, 80] and list(window.get_ydata()) == [1.45, 1.44, 1.43]
    assert full.get_label() == "full" and ax.get_lines()[2].get_label() == "trained length 32"
    assert ax.get_xlim() == (0, 96)
    plt.close(fig)
    with pytest.raises(ValueError, match="3 bins"):
        loss_by_position_plot([0, 32, 64], {"x": [1.0]}, 32, 32)


def test_decode_bytes_plot_adds_the_cache_to_the_weights():
    from helpers.plots import decode_bytes_plot

    fig = decode_bytes_plot([0, 1024], 2**30, {"MHA": [0, 2**30], "GQA": [0, 2**28]})
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert lines[0].get_label() == "weights alone" and list(lines[0].get_ydata()) == [1.0, 1.0]
    assert lines[1].get_label() == "weights + MHA cache" and list(lines[1].get_ydata()) == [1.0, 2.0]
    assert list(lines[2].get_ydata()) == [1.0, 1.25] and ax.get_ylabel() == "bytes read per step (GiB)"
    plt.close(fig)
    with pytest.raises(ValueError, match="unit must be one of"):
        decode_bytes_plot([0], 1, {"a": [0]}, unit="TB")


# --------------------------------------------------------------------------------------------------
# Bad input found by the review of notebook 13 (notes/review_modern.md, findings 22-26): each of these
# returned NaN, a silently wrong answer or a message from inside PyTorch before its fix.


def test_modern_attention_query_with_nothing_to_attend_to_gets_zeros_not_nan():
    """A 2-D mask with an all-False row gave NaN (the per-example path and GroupedQueryAttention
    gave zeros)."""
    torch.manual_seed(0)
    attn, ref = ModernAttention(16, 4, 2), GroupedQueryAttention(16, 4, 2)
    ref.load_state_dict(attn.state_dict())
    x = torch.randn(2, 4, 16)
    mask = causal_mask(4).clone()
    mask[2] = False  # query 2 may attend to nothing
    out = attn(x, x, x, mask)
    assert not out.isnan().any()
    torch.testing.assert_close(out, ref(x, x, x, mask=mask))
    torch.testing.assert_close(out, attn(x, x, x, mask.expand(2, 4, 4)))  # the per-example path agrees


@pytest.mark.parametrize("rope, sinks", [(False, 0), (True, 0), (True, 2)])
def test_modern_attention_window_without_a_mask_applies_the_window(rope, sinks):
    """window=2 without a mask was full causal attention, silently."""
    from helpers.modern import window_sink_mask

    torch.manual_seed(0)
    attn = ModernAttention(16, 4, 2, rope=rope)
    x = torch.randn(2, 7, 16)
    mask = window_sink_mask(torch.arange(7), torch.arange(7), 2, sinks)
    out = attn(x, x, x, window=2, sinks=sinks)
    torch.testing.assert_close(out, attn(x, x, x, mask, window=2, sinks=sinks))
    assert (out - attn(x, x, x, causal_mask(7))).abs().max() > 1e-3  # not causal attention
    cache, steps = RollingKVCache(2, sinks), []
    for t in range(7):  # token by token through a rolling cache: the same
        steps.append(attn(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], cache=cache, start=t, window=2, sinks=sinks))
    torch.testing.assert_close(torch.cat(steps, 1), out, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"window": 0}, ValueError, r"ModernAttention: window must be None \(full causal attention\) or an int >= 1, got 0"),
    ({"window": 2.5}, ValueError, r"ModernAttention: window must be .* got 2.5"),
    ({"sinks": 2}, ValueError, r"ModernAttention: sinks=2 needs a window"),
    ({"window": 2, "sink_positions": "Cache"}, ValueError,
     r"ModernAttention: sink_positions must be one of \('cache', 'absolute'\), got 'Cache'"),
    ({"start": -1}, ValueError, r"ModernAttention: start must be an int >= 0"),
])
def test_modern_attention_refuses_bad_window_arguments(kwargs, error, message):
    """window=0, a typo in sink_positions (then treated as "absolute") and sinks without a window
    were accepted silently."""
    attn, x = ModernAttention(16, 4, 2, rope=True), torch.randn(1, 3, 16)
    with pytest.raises(error, match=message):
        attn(x, x, x, **kwargs)


@pytest.mark.parametrize("make, error, message", [
    (lambda: torch.randn(2, 3, 16).double(), TypeError,
     r"ModernAttention: query has dtype torch.float64 but the module's weights are torch.float32"),
    (lambda: torch.ones(2, 3, 16, dtype=torch.long), TypeError, r"ModernAttention: query must be a floating-point"),
    (lambda: torch.randn(3, 16), ValueError, r"ModernAttention: query must have shape \(B, L, d_model=16\), got \(3, 16\)"),
])
def test_modern_attention_names_bad_inputs(make, error, message):
    """Were "mat1 and mat2 must have the same dtype" and "not enough values to unpack"."""
    x = make()
    with pytest.raises(error, match=message):
        ModernAttention(16, 4, 2)(x, x, x)
    with pytest.raises(TypeError, match=r"ModernAttention: qk_norm must be True or False, got 'yes'"):
        ModernAttention(16, 4, 2, qk_norm="yes")


@pytest.mark.parametrize("args, error, message", [
    ((torch.arange(4), torch.arange(4), 0), ValueError, r"window_sink_mask: window must be None .* got 0"),
    ((torch.arange(4), torch.arange(4), -1), ValueError, r"window_sink_mask: window must be None .* got -1"),
    ((torch.arange(4), torch.arange(4), 2.5), ValueError, r"window_sink_mask: window must be None .* got 2.5"),
    ((torch.arange(4), torch.arange(4), None, 2), ValueError, r"window_sink_mask: sinks=2 needs a window"),
    ((torch.zeros(2, 2), torch.arange(4), 2), TypeError,
     r"window_sink_mask: query_pos must be a 1-D tensor \(or list\) of integer positions, got shape \(2, 2\)"),
    ((torch.arange(4), torch.arange(4.0), 2), TypeError, r"window_sink_mask: key_pos must be .* dtype torch.float32"),
])
def test_window_sink_mask_refuses_what_would_give_an_empty_or_wrong_mask(args, error, message):
    """window=0 or -1 gave an all-False mask (NaN downstream), 2.5 was used as is, sinks without a
    window were dropped silently."""
    from helpers.modern import window_sink_mask

    with pytest.raises(error, match=message):
        window_sink_mask(*args)
    assert window_sink_mask([0, 1, 2], [0, 1, 2], 2).tolist() == [[True, False, False], [True, True, False],
                                                                  [False, True, True]]  # lists work


def test_swiglu_and_cache_nbytes_and_max_attention_logit_name_bad_inputs():
    from helpers.modern import SwiGLU, cache_nbytes, max_attention_logit

    with pytest.raises(ValueError, match=r"SwiGLU: x must have last dimension d_model=16, got \(2, 8\)"):
        SwiGLU(16, 8)(torch.randn(2, 8))
    with pytest.raises(TypeError, match=r"SwiGLU: x must be a floating-point tensor"):
        SwiGLU(16, 8)(torch.ones(2, 16, dtype=torch.long))
    cache = RollingKVCache(4)
    cache.update(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    assert cache_nbytes(cache) == cache_nbytes([cache]) == 2 * 2 * 3 * 4 * 4  # one cache alone counts too
    with pytest.raises(TypeError, match=r"cache_nbytes: caches must be a KVCache or a list of them .* \['int'\]"):
        cache_nbytes([1, 2])
    with pytest.raises(TypeError, match=r"max_attention_logit: model must be a helpers.GPT, got Linear"):
        max_attention_logit(torch.nn.Linear(2, 2), torch.zeros(1, 2))


def _contrast_with_white(rgba) -> float:
    """WCAG contrast ratio of a colour against white (3:1 is the minimum for lines and marks)."""
    def linear(u):
        return u / 12.92 if u <= 0.03928 else ((u + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(u) for u in rgba[:3])
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def test_every_kv_cache_curve_stands_out_on_white():
    """The fourth curve (the widget's "GQA + window", viridis 0.9, pale yellow, dotted) had a contrast
    of about 1.5:1 against the white background (review of notebook 13, finding 17)."""
    import matplotlib.colors as mcolors

    fig = kv_cache_plot({str(i): ([0, 10], [0, 1024 * i]) for i in range(4)}, unit="KiB")
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4
    assert all(_contrast_with_white(mcolors.to_rgba(line.get_color())) >= 3 for line in lines)
    plt.close(fig)


def test_sliding_window_mask_is_the_offset_band_for_every_size():
    """Moved from notebook 13's lesson cell (equality on 72 inputs is a test of the code)."""
    for n in range(1, 9):
        offset = torch.arange(n)[:, None] - torch.arange(n)[None, :]  # i - j
        for w in range(1, 10):
            assert torch.equal(sliding_window_mask(n, w), (offset >= 0) & (offset < w)), (n, w)


def test_a_norm_that_is_not_layer_or_rms_is_refused():
    with pytest.raises(ValueError, match="norm must be 'layer'.*got 'batch'"):
        ModernBlock(16, 4, 2, 32, norm="batch")
