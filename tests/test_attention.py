"""Unit tests for helpers.attention: scaled_dot_product_attention, the masks, MultiHeadAttention."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers import (
    MultiHeadAttention,
    causal_mask,
    copy_attention_weights,
    padding_mask,
    scaled_dot_product_attention,
    target_mask,
)


@pytest.fixture
def qkv():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(2, 3, 5, 4, generator=g), torch.randn(2, 3, 6, 4, generator=g),
            torch.randn(2, 3, 6, 7, generator=g))


def test_sdpa_matches_formula_and_pytorch(qkv):
    q, k, v = qkv
    out, w = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 3, 5, 7) and w.shape == (2, 3, 5, 6)
    want_w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(4), dim=-1)
    torch.testing.assert_close(w, want_w)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5))


@pytest.mark.parametrize("mask_shape", [(5, 6), (2, 1, 1, 6), (2, 3, 5, 6), (1, 5, 6)])
def test_sdpa_mask_matches_pytorch(qkv, mask_shape):
    q, k, v = qkv
    g = torch.Generator().manual_seed(1)
    mask = torch.rand(mask_shape, generator=g) > 0.3
    mask[..., 0] = True  # every row keeps one key, so PyTorch's result is defined too
    out, w = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert not w.masked_select(~mask.expand_as(w)).any(), "masked keys must get weight 0"


def test_fully_masked_row_gives_zeros_not_nan(qkv):
    q, k, v = qkv
    mask = causal_mask(6)[:5].clone()
    mask[2] = False  # query 2 has nothing to attend to
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    torch.testing.assert_close(w[..., 2, :], torch.zeros(2, 3, 6))
    torch.testing.assert_close(out[..., 2, :], torch.zeros(2, 3, 7))
    torch.testing.assert_close(w[..., [0, 1, 3, 4], :].sum(-1), torch.ones(2, 3, 4))


def test_gradients_finite_with_fully_masked_rows(qkv):
    q, k, v = (t.clone().requires_grad_() for t in qkv)
    mask = torch.ones(5, 6, dtype=torch.bool)
    mask[1] = False
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    torch.testing.assert_close(q.grad[..., 1, :], torch.zeros(2, 3, 4))  # that query had no effect


def test_mha_gradients_finite_with_fully_padded_sequence():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 4, 8, requires_grad=True)
    mask = padding_mask(torch.tensor([[1, 2, 0, 0], [0, 0, 0, 0]]), pad_id=0)  # 2nd: all padding
    out = mha(x, x, x, mask)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in mha.parameters())
    torch.testing.assert_close(mha.attn_weights[1], torch.zeros(2, 4, 4))


def test_sdpa_dropout_scales_kept_weights(qkv):
    q, k, v = qkv
    torch.manual_seed(0)
    _, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    _, w0 = scaled_dot_product_attention(q, k, v)
    kept = w != 0
    assert 0.3 < kept.float().mean() < 0.7
    torch.testing.assert_close(w[kept], w0[kept] / 0.5)


def test_sdpa_shape_errors_name_the_shapes():
    q, k, v = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)
    with pytest.raises(ValueError, match=r"same last dimension d_k: got query \(3, 4\) and key \(5, 3\)"):
        scaled_dot_product_attention(q, torch.randn(5, 3), v)
    with pytest.raises(ValueError, match=r"same length Lk: got key \(5, 4\) and value \(6, 2\)"):
        scaled_dot_product_attention(q, k, torch.randn(6, 2))
    with pytest.raises(ValueError, match=r"at least 2 dimensions .* got shape \(4,\)"):
        scaled_dot_product_attention(torch.randn(4), k, v)
    with pytest.raises(ValueError, match="do not broadcast"):
        scaled_dot_product_attention(torch.randn(2, 3, 4), torch.randn(3, 5, 4), torch.randn(3, 5, 2))
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        scaled_dot_product_attention(q, k, v, dropout_p=1.0)


def test_sdpa_mask_errors():
    q, k, v = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)
    with pytest.raises(TypeError, match=r"dtype torch.bool .* got torch.float32.*mask == 0"):
        scaled_dot_product_attention(q, k, v, torch.zeros(3, 5))
    with pytest.raises(TypeError, match="got list"):
        scaled_dot_product_attention(q, k, v, [[True] * 5] * 3)
    with pytest.raises(ValueError, match=r"mask of shape \(3, 4\) cannot be broadcast .* \(3, 5\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(3, 4, dtype=torch.bool))


def test_causal_mask():
    m = causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    assert torch.equal(m, torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]).bool())
    with pytest.raises(ValueError, match="n >= 1, got 0"):
        causal_mask(0)


def test_padding_mask_and_target_mask():
    tokens = torch.tensor([[4, 5, 0], [6, 0, 0]])
    m = padding_mask(tokens, pad_id=0)
    assert m.shape == (2, 1, 1, 3) and m.dtype == torch.bool
    assert m[:, 0, 0].tolist() == [[True, True, False], [True, False, False]]
    t = target_mask(tokens, pad_id=0)
    assert t.shape == (2, 1, 3, 3)
    assert torch.equal(t, causal_mask(3) & m)
    assert torch.equal(target_mask(tokens), causal_mask(3))
    with pytest.raises(ValueError, match=r"tokens must have shape \(B, L\), got \(3,\)"):
        padding_mask(torch.tensor([1, 2, 0]), 0)


def _copy_to_torch_mha(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    ref = nn.MultiheadAttention(mha.d_model, mha.num_heads, batch_first=True)
    copy_attention_weights(mha, ref)
    return ref


def test_mha_matches_torch_multihead_attention():
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3).eval()
    ref = _copy_to_torch_mha(mha).eval()
    q, kv = torch.randn(2, 4, 12), torch.randn(2, 6, 12)
    out = mha(q, kv, kv)
    want, want_w = ref(q, kv, kv, average_attn_weights=False)
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(mha.attn_weights, want_w)
    assert mha.attn_weights.shape == (2, 3, 4, 6)


def test_mha_with_mask_matches_torch_and_fused_path():
    torch.manual_seed(1)
    mha = MultiHeadAttention(8, 2).eval()
    ref = _copy_to_torch_mha(mha).eval()
    x = torch.randn(2, 5, 8)
    tokens = torch.tensor([[1, 2, 3, 0, 0], [1, 2, 3, 4, 5]])
    mask = target_mask(tokens, pad_id=0)  # (B, 1, L, L)
    out = mha(x, x, x, mask)
    ref_mask = (~mask).expand(2, 2, 5, 5).reshape(4, 5, 5)  # True = ignore, one per (batch, head)
    want, _ = ref(x, x, x, attn_mask=ref_mask)
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(mha(x, x, x, mask, need_weights=False), out)


def test_mha_is_causal_equals_the_causal_mask_on_both_paths():
    torch.manual_seed(2)
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 6, 8)  # (B, L, d_model)
    want = mha(x, x, x, causal_mask(6))
    want_w = mha.attn_weights
    torch.testing.assert_close(mha(x, x, x, is_causal=True), want)
    torch.testing.assert_close(mha.attn_weights, want_w)  # the weights are kept as with the mask
    torch.testing.assert_close(mha(x, x, x, is_causal=True, need_weights=False), want)
    assert mha.attn_weights is None
    y = torch.randn(2, 6, 8)  # not self-attention: separate projections, same contract
    torch.testing.assert_close(mha(x, y, y, is_causal=True, need_weights=False), mha(x, y, y, causal_mask(6)))


def test_mha_is_causal_builds_no_square_mask_on_the_fused_path():
    from helpers.efficient import ops_called

    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 64, 8)
    with torch.no_grad():
        flag = ops_called(mha, x, x, x, is_causal=True, need_weights=False)
        mask = ops_called(mha, x, x, x, causal_mask(64), need_weights=False)
    assert "aten.masked_fill" in mask or "aten.where" in mask  # the mask's own passes ...
    assert "aten.masked_fill" not in flag and "aten.where" not in flag  # ... which the flag avoids


def test_mha_is_causal_errors():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 4, 8)
    with pytest.raises(ValueError, match="either mask or is_causal=True"):
        mha(x, x, x, causal_mask(4), is_causal=True)
    with pytest.raises(ValueError, match="same length and no cache"):
        mha(x[:, :1], x, x, is_causal=True)
    from helpers import KVCache

    with pytest.raises(ValueError, match="same length and no cache"):
        mha(x, x, x, is_causal=True, cache=KVCache())
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        mha(x, x, x, is_causal=1)


def test_mha_errors():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=3"):
        MultiHeadAttention(10, 3)
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"query must have shape \(B, L, d_model=8\), got \(2, 3, 6\)"):
        mha(torch.randn(2, 3, 6), torch.randn(2, 3, 8), torch.randn(2, 3, 8))
    with pytest.raises(ValueError, match=r"key must have shape \(B, L, d_model=8\), got \(3, 8\)"):
        mha(torch.randn(2, 3, 8), torch.randn(3, 8), torch.randn(2, 3, 8))
    with pytest.raises(ValueError, match="must share"):
        mha(torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 5, 8))
    with pytest.raises(TypeError, match="torch.bool"):
        mha(torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.ones(3, 3))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        mha(torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(2, 3, 8), causal_mask(4))


def test_mha_parameter_count():
    for d, h in ((8, 2), (64, 8)):
        assert sum(p.numel() for p in MultiHeadAttention(d, h).parameters()) == 4 * d * d + 4 * d
        assert sum(p.numel() for p in MultiHeadAttention(d, h, bias=False).parameters()) == 4 * d * d


def test_split_and_merge_heads_roundtrip():
    mha = MultiHeadAttention(8, 4)
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).reshape(2, 3, 8)
    s = mha.split_heads(x)
    assert s.shape == (2, 4, 3, 2)
    torch.testing.assert_close(s[1, 2, 0], x[1, 0, 4:6])
    torch.testing.assert_close(mha.merge_heads(s), x)


def test_copy_attention_weights_refuses_a_module_of_another_size():
    with pytest.raises(ValueError, match=r"d_model=12, num_heads=3\) into nn.MultiheadAttention\(embed_dim=8"):
        copy_attention_weights(MultiHeadAttention(12, 3), nn.MultiheadAttention(8, 2))
