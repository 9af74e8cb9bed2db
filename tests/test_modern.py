"""helpers.modern (building blocks of notebook 13): GQA against PyTorch's enable_gqa, MHA as the
special case, the sliding-window mask, RMSNorm against nn.RMSNorm, the KV-cache size formula
against real tensors, and RoPE's two pairing conventions."""

import pytest
import torch
import torch.nn.functional as F

from helpers import MultiHeadAttention, apply_rope, causal_mask
from helpers.modern import (
    GroupedQueryAttention,
    RMSNorm,
    interleaved_to_half,
    kv_cache_bytes,
    rope_half,
    sliding_window_mask,
)


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
