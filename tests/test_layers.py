"""FeedForward, EncoderLayer, DecoderLayer, Encoder, Decoder: shapes, equality with torch.nn,
masks, pre/post-LN, caches, error messages, and the notebook-07/08 plots and widgets."""

from __future__ import annotations

import matplotlib
import pytest
import torch
from torch import nn

from helpers import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    FeedForward,
    causal_mask,
    copy_attention_weights,
    padding_mask,
    target_mask,
)
from helpers.layers import layer_grad_norms

matplotlib.use("Agg")
D, H, FF = 16, 4, 32
SRC = torch.tensor([[5, 6, 7, 0, 0], [5, 6, 7, 8, 9]])  # (B, Ls), 0 = <pad>
TGT = torch.tensor([[1, 3, 4, 0], [1, 3, 4, 2]])  # (B, Lt)


def copy_common(mine, ref) -> None:
    ref.linear1.load_state_dict(mine.feed_forward.linear1.state_dict())
    ref.linear2.load_state_dict(mine.feed_forward.linear2.state_dict())
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(mine, name):
            getattr(ref, name).load_state_dict(getattr(mine, name).state_dict())


def encoder_pair(norm_first):
    torch.manual_seed(0)
    mine = EncoderLayer(D, H, FF, 0.0, norm_first).eval()
    ref = nn.TransformerEncoderLayer(D, H, FF, 0.0, batch_first=True, norm_first=norm_first).eval()
    copy_attention_weights(mine.self_attn, ref.self_attn)
    copy_common(mine, ref)
    return mine, ref


def decoder_pair(norm_first):
    torch.manual_seed(0)
    mine = DecoderLayer(D, H, FF, 0.0, norm_first).eval()
    ref = nn.TransformerDecoderLayer(D, H, FF, 0.0, batch_first=True, norm_first=norm_first).eval()
    copy_attention_weights(mine.self_attn, ref.self_attn)
    copy_attention_weights(mine.cross_attn, ref.multihead_attn)
    copy_common(mine, ref)
    return mine, ref


def test_feed_forward_shape_and_formula():
    torch.manual_seed(0)
    ff = FeedForward(D, FF)
    assert (ff.linear1.in_features, ff.linear1.out_features) == (D, FF)
    assert (ff.linear2.in_features, ff.linear2.out_features) == (FF, D)
    x = torch.randn(2, 5, D)
    out = ff(x)
    assert out.shape == (2, 5, D)
    torch.testing.assert_close(out, ff.linear2(torch.relu(ff.linear1(x))))


def test_feed_forward_is_position_wise():
    torch.manual_seed(0)
    ff = FeedForward(D, FF)
    x = torch.randn(1, 5, D)
    torch.testing.assert_close(ff(x)[:, 2], ff(x[:, 2:3])[:, 0])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("use_mask", [False, True])
def test_encoder_layer_equals_torch(norm_first, use_mask):
    mine, ref = encoder_pair(norm_first)
    x = torch.randn(2, 5, D)
    mask = padding_mask(SRC, 0) if use_mask else None
    kpm = ~mask[:, 0, 0, :] if use_mask else None
    torch.testing.assert_close(mine(x, mask), ref(x, src_key_padding_mask=kpm))


def test_encoder_layer_pre_and_post_ln_differ_and_follow_their_formulas():
    post, _ = encoder_pair(False)
    pre, _ = encoder_pair(True)
    pre.load_state_dict(post.state_dict())
    x = torch.randn(2, 5, D)
    assert not torch.allclose(post(x), pre(x))
    sa = pre.self_attn
    h = x + sa(pre.norm1(x), pre.norm1(x), pre.norm1(x))
    torch.testing.assert_close(pre(x), h + pre.feed_forward(pre.norm2(h)))
    h = post.norm1(x + sa(x, x, x))
    torch.testing.assert_close(post(x), post.norm2(h + post.feed_forward(h)))


def test_encoder_layer_padding_changes_nothing_for_real_tokens():
    mine, _ = encoder_pair(False)
    x = torch.randn(1, 5, D)
    mask = padding_mask(SRC[:1], 0)  # last two are padding
    other = x.clone()
    other[:, 3:] = 100.0  # whatever sits at the padded positions is never read
    torch.testing.assert_close(mine(x, mask)[:, :3], mine(other, mask)[:, :3])


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_equals_torch(norm_first):
    mine, ref = decoder_pair(norm_first)
    x, memory = torch.randn(2, 4, D), torch.randn(2, 5, D)
    tgt_mask = causal_mask(4)
    src_mask = padding_mask(SRC, 0)
    want = ref(x, memory, tgt_mask=~tgt_mask, memory_key_padding_mask=~src_mask[:, 0, 0, :])
    torch.testing.assert_close(mine(x, memory, tgt_mask, src_mask), want)


def test_decoder_layer_with_padded_target_mask_equals_torch():
    mine, ref = decoder_pair(False)
    x, memory = torch.randn(2, 4, D), torch.randn(2, 5, D)
    got = mine(x, memory, target_mask(TGT, 0), padding_mask(SRC, 0))
    want = ref(x, memory, tgt_mask=~causal_mask(4), tgt_key_padding_mask=TGT == 0,
               memory_key_padding_mask=SRC == 0)
    torch.testing.assert_close(got[:, :3], want[:, :3])  # row 0's last position is padding


def test_decoder_layer_is_causal():
    mine, _ = decoder_pair(False)
    x, memory = torch.randn(1, 4, D), torch.randn(1, 5, D)
    changed = x.clone()
    changed[:, 2:] += 5.0  # change the future of positions 0 and 1
    a = mine(x, memory, causal_mask(4))
    b = mine(changed, memory, causal_mask(4))
    torch.testing.assert_close(a[:, :2], b[:, :2])
    assert not torch.allclose(a[:, 2:], b[:, 2:])


def test_decoder_cross_attention_weights_shape():
    mine, _ = decoder_pair(False)
    mine(torch.randn(2, 4, D), torch.randn(2, 5, D), causal_mask(4), padding_mask(SRC, 0))
    w = mine.cross_attn.attn_weights
    assert w.shape == (2, H, 4, 5)  # (B, h, Lt, Ls)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, H, 4))
    assert (w[0, :, :, 3:] == 0).all()  # padded source tokens get no weight


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_equals_torch(norm_first):
    torch.manual_seed(0)
    mine = Encoder(3, D, H, FF, 0.0, norm_first).eval()
    layer = nn.TransformerEncoderLayer(D, H, FF, 0.0, batch_first=True, norm_first=norm_first)
    ref = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(D) if norm_first else None,
                                enable_nested_tensor=False).eval()
    for m, r in zip(mine.layers, ref.layers, strict=True):
        copy_attention_weights(m.self_attn, r.self_attn)
        copy_common(m, r)
    assert (mine.norm is None) == (not norm_first)
    x = torch.randn(2, 5, D)
    mask = padding_mask(SRC, 0)
    torch.testing.assert_close(mine(x, mask), ref(x, src_key_padding_mask=~mask[:, 0, 0, :]))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_stack_shapes_and_final_norm(norm_first):
    torch.manual_seed(0)
    dec = Decoder(2, D, H, FF, 0.0, norm_first)
    out = dec(torch.randn(2, 4, D), torch.randn(2, 5, D), causal_mask(4))
    assert out.shape == (2, 4, D)
    assert (dec.norm is not None) == norm_first
    if norm_first:  # a final LayerNorm: each position has mean 0, variance 1
        torch.testing.assert_close(out.mean(-1), torch.zeros(2, 4), atol=1e-5, rtol=0)


def test_decoder_cache_gives_the_same_output():
    torch.manual_seed(0)
    dec = Decoder(2, D, H, FF).eval()
    from helpers import DecoderCache

    x, memory = torch.randn(1, 4, D), torch.randn(1, 5, D)
    full = dec(x, memory, causal_mask(4))
    cache = DecoderCache(2)
    steps = [dec(x[:, t : t + 1], memory, cache=cache) for t in range(4)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full)
    assert len(cache) == 4


def test_need_weights_false_gives_the_same_output():
    torch.manual_seed(0)
    enc = Encoder(2, D, H, FF).eval()
    x = torch.randn(2, 5, D)
    mask = padding_mask(SRC, 0)
    torch.testing.assert_close(enc(x, mask, need_weights=False), enc(x, mask))


def test_layer_errors_name_what_they_got():
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by num_heads=4"):
        EncoderLayer(10, 4, 32)
    with pytest.raises(ValueError, match=r"d_ff must be >= 1, got 0"):
        DecoderLayer(16, 4, 0)
    with pytest.raises(ValueError, match=r"num_layers must be >= 1, got 0"):
        Encoder(0, 16, 4, 32)
    with pytest.raises(ValueError, match=r"x must have shape \(B, L, d_model=16\), got \(5, 16\)"):
        EncoderLayer(16, 4, 32, norm_first=True)(torch.randn(5, 16))
    with pytest.raises(ValueError, match=r"memory must have shape \(B, L, d_model=16\), got \(2, 5, 8\)"):
        DecoderLayer(16, 4, 32)(torch.randn(2, 4, 16), torch.randn(2, 5, 8))
    with pytest.raises(TypeError, match=r"dtype torch.bool"):
        EncoderLayer(16, 4, 32)(torch.randn(2, 5, 16), torch.ones(5, 5))
    with pytest.raises(ValueError, match=r"cannot be broadcast"):
        EncoderLayer(16, 4, 32)(torch.randn(2, 5, 16), torch.ones(3, 3, dtype=torch.bool))


def test_layer_grad_norms_post_ln_vs_pre_ln():
    post = layer_grad_norms(8, norm_first=False, seeds=(0,))
    pre = layer_grad_norms(8, norm_first=True, seeds=(0,))
    assert len(post) == len(pre) == 8 and all(v > 0 for v in post + pre)
    assert post[-1] > pre[-1]  # the top of a post-LN stack gets the larger gradients
    assert pre[0] > pre[-1]  # pre-LN: they shrink towards the output
    assert layer_grad_norms(8, False, seeds=(0,)) == post  # deterministic
    with pytest.raises(ValueError, match="num_layers must be >= 1"):
        layer_grad_norms(0, False)


def test_grad_norm_lines_draws_the_series():
    import matplotlib.pyplot as plt

    from helpers.plots import grad_norm_lines

    fig = grad_norm_lines({"post-LN": [3.0, 2.0, 1.0], "pre-LN": [1.0, 1.0, 0.5]}, title="t")
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["post-LN", "pre-LN"]
    assert list(lines[0].get_xdata()) == [1, 2, 3] and list(lines[0].get_ydata()) == [3.0, 2.0, 1.0]
    assert ax.get_xlabel().startswith("layer") and ax.get_title() == "t"
    plt.close(fig)
    with pytest.raises(ValueError, match="has 2 values but x has 3"):
        grad_norm_lines({"a": [1, 2]}, x=[1, 2, 3])


def test_grad_norm_view_and_widget():
    import matplotlib.pyplot as plt

    from helpers.widgets import grad_norm_view, grad_norm_widget

    fig = grad_norm_view(3)
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["post-LN", "pre-LN"]
    want = layer_grad_norms(3, norm_first=False)
    assert list(lines[0].get_ydata()) == pytest.approx(want)
    assert "3-layer" in fig.axes[0].get_title()
    plt.close(fig)
    assert grad_norm_view(0).startswith("Cannot draw this: depth must be")
    assert grad_norm_view(1).startswith("Cannot draw this: depth must be")  # top and bottom: one layer
    assert "2..24" in grad_norm_view("six")
    w = grad_norm_widget(2)
    slider = w.children[0]
    assert (slider.min, slider.max, slider.value) == (2, 16, 2)
    slider.value = 3  # the callback redraws without error
    plt.close("all")


def test_cross_attention_view_and_widget():
    import matplotlib.pyplot as plt

    from helpers.widgets import cross_attention_view, cross_attention_widget

    torch.manual_seed(0)
    weights = [torch.softmax(torch.randn(2, 3, 4), -1) for _ in range(2)]  # per layer (h, Lt, Ls)
    src, tgt = ["a", "b", "c", "d"], ["x", "y", "z"]
    fig = cross_attention_view(weights, 1, 0, src, tgt)
    ax = fig.axes[0]
    torch.testing.assert_close(torch.tensor(ax.images[0].get_array()), weights[1][0])
    assert [t.get_text() for t in ax.get_xticklabels()] == src
    assert [t.get_text() for t in ax.get_yticklabels()] == tgt
    assert "$L_s$ = 4" in ax.get_xlabel() and "$L_t$ = 3" in ax.get_ylabel()
    plt.close(fig)
    fig = cross_attention_view(weights, 0, "mean", src, tgt)
    torch.testing.assert_close(torch.tensor(fig.axes[0].images[0].get_array()), weights[0].mean(0))
    plt.close(fig)
    assert cross_attention_view(weights, 2, 0).startswith("Cannot draw this: layer must be in 0..1")
    assert "head must be in 0..1" in cross_attention_view(weights, 0, 5)
    w = cross_attention_widget(weights, src, tgt)
    layer, head = w.children[0].children
    assert [v for _, v in head.options] == [0, 1, "mean"]
    layer.value, head.value = 1, 1  # callbacks redraw without error
    plt.close("all")
