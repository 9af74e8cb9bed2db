"""online_softmax, tiled_attention and peak_memory (helpers/efficient.py, notebook 11)."""

import math

import matplotlib
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from helpers import (
    causal_mask,
    online_softmax,
    padding_mask,
    scaled_dot_product_attention,
    tiled_attention,
)
from helpers.efficient import (
    count_flops,
    loglog_slope,
    median_time,
    online_softmax_steps,
    ops_called,
    peak_memory,
)
from helpers.plots import cost_plot, online_softmax_figure


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# ---------------------------------------------------------------- online_softmax


@pytest.mark.parametrize("shape, dim", [((10,), 0), ((4, 37), -1), ((3, 50, 6), 1), ((2, 3, 5), 0)])
@pytest.mark.parametrize("block_size", [1, 7, 16, 128])
def test_online_softmax_equals_torch(shape, dim, block_size):
    x = torch.randn(shape) * 5
    torch.testing.assert_close(online_softmax(x, dim=dim, block_size=block_size),
                               torch.softmax(x, dim=dim))


def test_online_softmax_large_values_do_not_overflow():
    x = torch.tensor([[1000.0, 999.0, 998.0, -1000.0, 1001.0]])
    out = online_softmax(x, block_size=2)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, torch.softmax(x, dim=-1))


def test_online_softmax_minus_inf_entries():
    x = torch.randn(3, 9)
    x[0, :4] = float("-inf")  # a whole first block of -inf: the running max starts at -inf
    x[1, 5:] = float("-inf")  # -inf at the end
    x[2, ::2] = float("-inf")  # scattered
    out = online_softmax(x, block_size=4)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1))
    assert (out[x == float("-inf")] == 0).all()


def test_online_softmax_float64_and_tight_tolerance():
    x = torch.randn(5, 33, dtype=torch.float64)
    out = online_softmax(x, block_size=5)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, torch.softmax(x, dim=-1), rtol=1e-12, atol=1e-12)


def test_online_softmax_errors():
    with pytest.raises(ValueError, match=r"block_size must be >= 1, got 0"):
        online_softmax(torch.randn(3), block_size=0)
    with pytest.raises(ValueError, match=r"dim=2 is out of range for a tensor of shape \(3, 4\)"):
        online_softmax(torch.randn(3, 4), dim=2)
    with pytest.raises(TypeError, match=r"floating-point tensor.*torch.int64"):
        online_softmax(torch.arange(4))
    with pytest.raises(TypeError, match=r"online_softmax: x must be .* got \[1.0, 2.0\] \(list\)"):
        online_softmax([1.0, 2.0])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_online_softmax_sums_in_float32(dtype):
    """A half-precision running sum once of 70,000 terms stalled (0 in float16, 2.14 in
    bfloat16, where torch.softmax gives 1): the running max and sum are kept in float32."""
    x = torch.zeros(70_000, dtype=dtype)
    out = online_softmax(x)
    assert out.dtype == dtype
    assert float(out.float().sum()) == pytest.approx(1.0, abs=0.01)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1))
    y = torch.randn(4, 3000, generator=torch.Generator().manual_seed(0)).to(dtype) * 3
    torch.testing.assert_close(online_softmax(y, block_size=100), torch.softmax(y, dim=-1))


def test_online_softmax_float32_is_unchanged_bit_for_bit():
    """Valid float32 input takes the same operations as before the float32-accumulator fix:
    the reference here is the algorithm written out with float32 running values."""
    x = torch.randn(3, 300, generator=torch.Generator().manual_seed(1)) * 5
    m, total = torch.full((3,), float("-inf")), torch.zeros(3)
    for start in range(0, 300, 128):
        block = x[:, start:start + 128]
        new = torch.maximum(m, block.amax(-1))
        total = total * torch.exp(m - new) + torch.exp(block - new[:, None]).sum(-1)
        m = new
    assert torch.equal(online_softmax(x), torch.exp(x - m[:, None]) / total[:, None])


# ---------------------------------------------------------------- tiled_attention


def _qkv(b=2, h=3, lq=11, lk=13, d=8, dv=5):
    return torch.randn(b, h, lq, d), torch.randn(b, h, lk, d), torch.randn(b, h, lk, dv)


@pytest.mark.parametrize("block_size", [1, 4, 5, 13, 64])
def test_tiled_equals_naive_without_mask(block_size):
    q, k, v = _qkv()
    out = tiled_attention(q, k, v, block_size=block_size)
    assert out.shape == (2, 3, 11, 5)
    torch.testing.assert_close(out, scaled_dot_product_attention(q, k, v)[0])


@pytest.mark.parametrize("block_size", [3, 8])
def test_tiled_with_causal_mask_lq_lk(block_size):
    q, k, v = _qkv(lq=13, lk=13)
    mask = causal_mask(13)  # (Lq, Lk)
    torch.testing.assert_close(tiled_attention(q, k, v, mask, block_size=block_size),
                               scaled_dot_product_attention(q, k, v, mask)[0])


@pytest.mark.parametrize("block_size", [2, 5, 64])
def test_tiled_with_broadcast_padding_mask(block_size):
    tokens = torch.tensor([[5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4]])
    mask = padding_mask(tokens, pad_id=0)  # (B, 1, 1, Lk)
    q, k, v = _qkv()
    torch.testing.assert_close(tiled_attention(q, k, v, mask, block_size=block_size),
                               scaled_dot_product_attention(q, k, v, mask)[0])


def test_tiled_fully_masked_rows_give_zeros():
    q, k, v = _qkv(b=1, h=1, lq=4, lk=10)
    mask = torch.ones(4, 10, dtype=torch.bool)
    mask[1] = False  # query 1 may attend to nothing
    mask[2, :6] = False  # query 2: its first blocks are all masked
    out = tiled_attention(q, k, v, mask, block_size=3)
    assert torch.isfinite(out).all()
    assert (out[0, 0, 1] == 0).all()
    torch.testing.assert_close(out, scaled_dot_product_attention(q, k, v, mask)[0])


def test_tiled_broadcast_batch_and_3d_inputs():
    q = torch.randn(2, 1, 6, 4)  # broadcast over heads
    k, v = torch.randn(1, 3, 9, 4), torch.randn(1, 3, 9, 4)
    torch.testing.assert_close(tiled_attention(q, k, v, block_size=4),
                               scaled_dot_product_attention(q, k, v)[0])
    q3, k3, v3 = torch.randn(2, 7, 4), torch.randn(2, 9, 4), torch.randn(2, 9, 3)
    torch.testing.assert_close(tiled_attention(q3, k3, v3, block_size=2),
                               scaled_dot_product_attention(q3, k3, v3)[0])


def test_tiled_equals_pytorch_sdpa():
    q, k, v = _qkv(lq=9, lk=9)
    mask = causal_mask(9)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(tiled_attention(q, k, v, mask, block_size=4), expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_tiled_attention_sums_in_float32(dtype):
    """8,192 keys with equal scores and values 10 once overflowed the half-precision running
    output (inf) where F.scaled_dot_product_attention gives 10."""
    q = torch.zeros(1, 1, 16, dtype=dtype)
    k = torch.randn(1, 8192, 16, dtype=dtype)
    v = torch.full((1, 8192, 16), 10.0, dtype=dtype)
    out = tiled_attention(q, k, v)
    assert out.dtype == dtype
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(out, torch.full_like(out, 10.0))
    q, k, v = (t.to(dtype) for t in _qkv(lq=40, lk=300))
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    torch.testing.assert_close(tiled_attention(q, k, v, block_size=32), ref.to(dtype))


def test_tiled_gradients_match():
    q, k, v = (t.double().requires_grad_() for t in _qkv(b=1, h=2, lq=5, lk=7))
    tiled_attention(q, k, v, block_size=3).sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    scaled_dot_product_attention(q, k, v)[0].sum().backward()
    for g, t in zip(grads, (q, k, v), strict=True):
        torch.testing.assert_close(g, t.grad)


def test_tiled_errors():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=r"block_size must be >= 1, got 0"):
        tiled_attention(q, k, v, block_size=0)
    with pytest.raises(ValueError, match=r"query and key must have the same last dimension"):
        tiled_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) cannot be broadcast"):
        tiled_attention(q, k, v, torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"mask must have dtype torch.bool"):
        tiled_attention(q, k, v, torch.ones(11, 13))


# ---------------------------------------------------------------- peak_memory


def test_peak_memory_counts_new_tensors_exactly():
    x = torch.randn(1000)  # made outside: not counted
    assert peak_memory(lambda: x * 2) == 4000  # one new float32 tensor
    assert peak_memory(lambda: x[10:].view(-1, 10)) == 0  # views create nothing
    assert peak_memory(lambda: x.mul_(1.0)) == 0  # in place

    def two_then_one():
        a = x * 2  # 4000 bytes
        b = a + 1  # 4000 more, both alive
        del a
        return b.sum()  # 4 bytes while b (4000) is alive

    assert peak_memory(two_then_one) == 8000


def test_peak_memory_naive_attention_is_quadratic_tiled_linear():
    sizes = (256, 512, 1024)
    naive = [peak_memory(scaled_dot_product_attention, *[torch.randn(1, t, 16)] * 3) for t in sizes]
    tiled = [peak_memory(tiled_attention, *[torch.randn(1, t, 16)] * 3, block_size=32)
             for t in sizes]
    for t, n in zip(sizes, naive, strict=True):
        assert n >= 2 * t * t * 4  # scores and weights, float32
    assert naive[2] / naive[1] > 3.5 and naive[1] / naive[0] > 3.5  # x4 when T doubles
    assert tiled[2] / tiled[1] < 2.2 and tiled[1] / tiled[0] < 2.2  # x2 when T doubles


# ---------------------------------------------------------------- helpers for notebook 11


def test_online_softmax_steps_and_errors():
    x = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.0])
    steps = online_softmax_steps(x, 2)
    assert [(s["start"], s["stop"]) for s in steps] == [(0, 2), (2, 4), (4, 5)]
    assert [s["max"] for s in steps] == [3.0, 5.0, 5.0]
    assert steps[0]["sum"] == pytest.approx(math.exp(1 - 3) + 1)
    assert steps[-1]["sum"] == pytest.approx(float(torch.exp(x - 5).sum()))
    with pytest.raises(ValueError, match=r"non-empty 1-D tensor, got \(2, 2\)"):
        online_softmax_steps(torch.ones(2, 2), 2)
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        online_softmax_steps(x, 0)
    with pytest.raises(TypeError, match=r"online_softmax_steps: x must be a floating-point .* torch.int64"):
        online_softmax_steps(torch.arange(4), 2)  # was accepted: integer scores


def test_loglog_slope():
    assert loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]) == pytest.approx(2.0)
    assert loglog_slope([10, 100], [5, 50]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same length >= 2"):
        loglog_slope([1, 2], [1, 2, 3])


@pytest.mark.parametrize("x, y, message", [
    ([0, 1, 2], [1, 2, 3], r"x must hold finite numbers > 0 .* got 0 at position 0"),
    ([1, 2, 3], [1, -2, 3], r"y must hold finite numbers > 0 .* got -2 at position 1"),
    ([1, 2, 3], [1, float("nan"), 3], r"y must hold finite numbers > 0 .* got nan"),
    ([1, 2, float("inf")], [1, 2, 3], r"x must hold finite numbers > 0 .* got inf"),
    ([2, 2, 2], [1, 2, 3], r"x needs at least two different values"),
])
def test_loglog_slope_refuses_what_has_no_logarithm(x, y, message):
    """These once returned NaN."""
    with pytest.raises(ValueError, match=rf"^loglog_slope: {message}"):
        loglog_slope(x, y)


def test_loglog_slope_refuses_what_is_not_numbers():
    with pytest.raises(TypeError, match=r"loglog_slope: x must be a sequence of numbers > 0, got 'abc'"):
        loglog_slope("abc", [1, 2, 3])
    with pytest.raises(TypeError, match=r"loglog_slope: y must be a sequence .* got None"):
        loglog_slope([1, 2], None)


def test_median_time_and_ops_called():
    calls = []
    assert median_time(lambda: calls.append(1), repeats=3, warmup=2) >= 0
    assert len(calls) == 5
    durations = iter([0.0, 0.5, 0.0, 0.1])  # the second call is slow

    def uneven():
        import time
        time.sleep(next(durations))

    assert median_time(uneven, repeats=3, warmup=1, best=True) < 0.09
    q = torch.randn(1, 2, 8, 4)
    names = ops_called(torch.nn.functional.scaled_dot_product_attention, q, q, q)
    assert any("scaled_dot_product" in n for n in names)
    assert ops_called(lambda: q + 1) == ["aten.add"]


@pytest.mark.parametrize("call, error, message", [
    (lambda: median_time(lambda: None, repeats=0), ValueError,
     r"median_time: repeats must be an int >= 1, got 0"),  # was statistics.StatisticsError
    (lambda: median_time(lambda: None, repeats=-1), ValueError, r"repeats must be an int >= 1"),
    (lambda: median_time(lambda: None, repeats=True), TypeError, r"repeats must be .* got True"),
    (lambda: median_time(lambda: None, repeats=2.5), TypeError, r"repeats must be .* got 2.5"),
    (lambda: median_time(lambda: None, warmup=-1), ValueError, r"warmup must be an int >= 0, got -1"),
    (lambda: median_time(lambda: None, best="yes"), TypeError, r"best must be True or False"),
    (lambda: median_time(None), TypeError, r"median_time: fn must be a function .* got None"),
    (lambda: peak_memory(3), TypeError, r"peak_memory: fn must be a function"),
    (lambda: ops_called("x"), TypeError, r"ops_called: fn must be a function"),
    (lambda: count_flops(None), TypeError, r"count_flops: fn must be a function"),
])
def test_timing_and_counting_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_cost_plot_draws_each_series_with_its_slope():
    fig = cost_plot([128, 256, 512], {"naive": [1, 4, 16], "tiled": [2, 4, 8]}, "bytes",
                    title="memory")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "naive (slope 2.00)", "tiled (slope 1.00)"]
    assert list(ax.lines[0].get_ydata()) == [1, 4, 16]
    assert list(ax.lines[1].get_xdata()) == [128, 256, 512]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "sequence length L" and ax.get_ylabel() == "bytes"
    plt.close(fig)
    with pytest.raises(ValueError, match="has 2 values for 3 lengths"):
        cost_plot([1, 2, 3], {"a": [1, 2]}, "s")


def test_online_softmax_figure_shows_values_running_max_and_sums():
    x = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.0, -1.0, 4.0])
    fig = online_softmax_figure(x, 3)
    top, bottom = fig.axes
    assert [p.get_height() for p in top.patches if p.get_width() == 0.8] == x.tolist()
    segments = top.collections[0].get_segments()
    assert [(s[0][0], s[1][0], s[0][1]) for s in segments] == [
        (-0.5, 2.5, 3.0), (2.5, 5.5, 5.0), (5.5, 6.5, 5.0)]
    sums = [s["sum"] for s in online_softmax_steps(x, 3)]
    heights = [p.get_height() for p in bottom.patches if p.get_height() > 0 and p.get_y() == 0]
    assert heights[-3:] == pytest.approx(sums)
    assert "3 blocks" in fig._suptitle.get_text()
    plt.close(fig)


# ---------------------------------------------------------------- memory traffic and recomputation

from helpers.efficient import (  # noqa: E402
    attention_training_flops,
    naive_attention_traffic,
    saved_for_backward,
    tiled_attention_traffic,
)


def _naive(q, k, v):
    return scaled_dot_product_attention(q, k, v)[0]


@pytest.mark.parametrize("L, d", [(16, 8), (100, 64), (4096, 128)])
def test_naive_traffic_is_three_passes_over_the_l_by_l_matrices(L, d):
    t = naive_attention_traffic(L, d, bytes_per_value=4)
    # S: read Q, K (2Ld), write L^2; P: read L^2, write L^2; O: read L^2 + Ld, write Ld
    assert t["slow_bytes"] == 4 * (2 * L * d + L * L + L * L + L * L + L * L + L * d + L * d)
    assert t["flops"] == 4 * L * L * d
    assert t["intensity"] == t["flops"] / t["slow_bytes"]


@pytest.mark.parametrize("L, d", [(32, 8), (96, 16)])
def test_the_traffic_models_count_the_flops_that_count_flops_measures(L, d):
    q, k, v = (torch.randn(1, 1, L, d) for _ in range(3))
    measured = count_flops(_naive, q, k, v)
    assert measured == naive_attention_traffic(L, d)["flops"] == tiled_attention_traffic(L, d, 8, 8)["flops"]


def test_tiled_traffic_by_hand():
    # L = 10, d = 4, blocks of 4 queries: 3 query blocks, each reads all of K and V
    t = tiled_attention_traffic(10, 4, block_q=4, block_k=2, bytes_per_value=1)
    assert t["slow_bytes"] == 10 * 4 + 3 * 2 * 10 * 4 + 10 * 4 + 10
    assert t["fast_bytes"] == 2 * 4 * 4 + 2 * 2 * 4 + 4 * 2 + 2 * 4


def test_tiling_queries_keeps_the_working_set_fixed_and_keys_only_moves_the_fewest_bytes():
    d = 64
    both = [tiled_attention_traffic(L, d, 128, 128) for L in (256, 1024, 8192)]
    assert len({t["fast_bytes"] for t in both}) == 1
    keys_only = [tiled_attention_traffic(L, d, L, 64) for L in (256, 1024, 8192)]
    assert keys_only[0]["fast_bytes"] < keys_only[1]["fast_bytes"] < keys_only[2]["fast_bytes"]
    for L in (256, 1024, 8192):
        slow = {bq: tiled_attention_traffic(L, d, bq, 64)["slow_bytes"] for bq in (16, 64, 128, L)}
        assert slow[16] > slow[64] > slow[128] >= slow[L]  # larger query blocks, fewer bytes
        assert slow[128] < naive_attention_traffic(L, d)["slow_bytes"]


def test_the_tiled_to_naive_ratio_approaches_2_block_over_d():
    L, d, bq = 1 << 16, 64, 128
    ratio = naive_attention_traffic(L, d)["slow_bytes"] / tiled_attention_traffic(L, d, bq, bq)["slow_bytes"]
    assert ratio == pytest.approx(2 * bq / d, rel=0.01)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (2.5, TypeError), (True, TypeError), ("8", TypeError)])
def test_traffic_functions_reject_bad_sizes(bad, error):
    with pytest.raises(error, match="seq_len"):
        naive_attention_traffic(bad, 64)
    with pytest.raises(error, match="head_dim"):
        tiled_attention_traffic(64, bad, 8, 8)
    with pytest.raises(error, match="block_q"):
        tiled_attention_traffic(64, 8, bad, 8)
    with pytest.raises(error, match="seq_len"):
        attention_training_flops(bad, 8)


def test_blocks_larger_than_the_sequence_are_refused():
    with pytest.raises(ValueError, match="block_k must be at most seq_len=16, got 32"):
        tiled_attention_traffic(16, 8, 8, 32)


def test_attention_training_flops_matches_autograd_and_a_recomputing_backward():
    L, d = 64, 16
    q, k, v = (torch.randn(1, 2, L, d, dtype=torch.float64, requires_grad=True) for _ in range(3))
    assert count_flops(lambda: _naive(q, k, v).sum().backward()) == 2 * attention_training_flops(L, d)

    class Recomputed(torch.autograd.Function):
        """FlashAttention's backward in miniature: keeps O and the row log-sum-exp, recomputes P."""

        @staticmethod
        def forward(ctx, q, k, v):
            s = q @ k.transpose(-2, -1) / math.sqrt(d)
            lse = s.logsumexp(-1, keepdim=True)
            out = torch.exp(s - lse) @ v
            ctx.save_for_backward(q, k, v, out, lse)
            return out

        @staticmethod
        def backward(ctx, d_out):
            q, k, v, out, lse = ctx.saved_tensors
            p = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(d) - lse)  # recomputed
            d_v = p.transpose(-2, -1) @ d_out
            d_p = d_out @ v.transpose(-2, -1)
            d_s = p * (d_p - (d_out * out).sum(-1, keepdim=True))
            return d_s @ k / math.sqrt(d), d_s.transpose(-2, -1) @ q / math.sqrt(d), d_v

    g = torch.randn(1, 2, L, d, dtype=torch.float64)
    want = torch.autograd.grad(_naive(q, k, v), (q, k, v), g)
    got = torch.autograd.grad(Recomputed.apply(q, k, v), (q, k, v), g)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b)
    flops = count_flops(lambda: torch.autograd.grad(Recomputed.apply(q, k, v), (q, k, v), g))
    assert flops == 2 * attention_training_flops(L, d, recompute=True)  # 2 heads
    kept = saved_for_backward(Recomputed.apply, q, k, v)
    assert kept == (L * d + L) * 2 * 8  # O and the log-sum-exp, 2 heads, float64: nothing (L, L)


def test_saved_for_backward_sees_the_weights_of_naive_attention_and_not_the_inputs():
    L, d = 128, 16
    q, k, v = (torch.randn(1, 1, L, d, requires_grad=True) for _ in range(3))
    assert saved_for_backward(_naive, q, k, v) >= L * L * 4
    assert saved_for_backward(lambda a, b, c: a + b + c, q, k, v) == 0  # nothing to keep
    assert saved_for_backward(lambda a: a * a, q) == 0  # the input itself is not counted
    x = torch.randn(L, d)
    assert saved_for_backward(lambda a: a * a, x) == 0  # no gradient, nothing saved


def test_saved_for_backward_of_the_fused_cpu_kernel_is_output_and_logsumexp():
    L, d = 256, 32
    q, k, v = (torch.randn(1, 1, L, d, requires_grad=True) for _ in range(3))
    import torch.nn.functional as F

    assert saved_for_backward(F.scaled_dot_product_attention, q, k, v) == (L * d + L) * 4


def test_saved_for_backward_and_flops_reject_bad_input():
    with pytest.raises(TypeError, match="saved_for_backward: fn must be a function"):
        saved_for_backward(3)
    with pytest.raises(TypeError, match="recompute"):
        attention_training_flops(8, 8, recompute="yes")


def test_threads_sets_and_restores_the_thread_count():
    from helpers.efficient import threads

    before = torch.get_num_threads()
    with threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(KeyError), threads(1):
        raise KeyError("an error inside the block")
    assert torch.get_num_threads() == before  # restored after an error too
    with pytest.raises(ValueError), threads(0):
        pass
