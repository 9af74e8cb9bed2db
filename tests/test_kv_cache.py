"""KV cache, the fused paths of MultiHeadAttention and cached greedy decoding (notebook 11)."""

import pytest
import torch
from torch import nn

from helpers import (
    KVCache,
    MultiHeadAttention,
    Transformer,
    causal_mask,
    copy_attention_weights,
    greedy_decode,
    padding_mask,
    scaled_dot_product_attention,
)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _reference(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    ref = nn.MultiheadAttention(mha.d_model, mha.num_heads, batch_first=True).eval()
    copy_attention_weights(mha, ref)
    return ref


# ---------------------------------------------------------------- MultiHeadAttention paths


@pytest.mark.parametrize("grad", [False, True])
def test_self_attention_fused_path_matches_nn_multihead_attention(grad):
    mha = MultiHeadAttention(16, 4).eval()
    ref = _reference(mha)
    x = torch.randn(3, 7, 16)
    mask = causal_mask(7)
    with torch.set_grad_enabled(grad):
        expected, weights = ref(x, x, x, attn_mask=~mask, average_attn_weights=False)
        out = mha(x, x, x, mask)  # query is key is value: one fused projection
        assert mha.attn_weights.shape == (3, 4, 7, 7)
        torch.testing.assert_close(out, expected)
        torch.testing.assert_close(mha.attn_weights, weights)
        torch.testing.assert_close(mha(x, x, x, mask, need_weights=False), expected)
        assert mha.attn_weights is None


def test_fused_and_separate_projections_agree():
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 5, 16)
    fused = mha(x, x, x)
    separate = mha(x, x.clone(), x.clone())  # three different tensors: three matmuls
    y = x.clone()
    kv_fused = mha(x, y, y)  # key is value: one matmul for k and v
    torch.testing.assert_close(fused, separate)
    torch.testing.assert_close(fused, kv_fused)


def test_cross_attention_matches_reference_and_helpers_sdpa():
    mha = MultiHeadAttention(12, 3).eval()
    ref = _reference(mha)
    q, memory = torch.randn(2, 4, 12), torch.randn(2, 6, 12)
    tokens = torch.tensor([[1, 2, 3, 0, 0, 0], [1, 2, 3, 4, 5, 6]])
    mask = padding_mask(tokens, 0)  # (B, 1, 1, Lk)
    expected, _ = ref(q, memory, memory, key_padding_mask=tokens == 0)
    for need_weights in (True, False):
        torch.testing.assert_close(mha(q, memory, memory, mask, need_weights=need_weights), expected)
    # the weights equal the plain helpers function on the same heads
    qh, kh, vh = (mha.split_heads(w(t)) for w, t in ((mha.w_q, q), (mha.w_k, memory), (mha.w_v, memory)))
    mha(q, memory, memory, mask)
    torch.testing.assert_close(mha.attn_weights, scaled_dot_product_attention(qh, kh, vh, mask)[1])


def test_need_weights_true_false_equal_with_fully_masked_rows():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 5, 8)
    mask = causal_mask(5).clone()
    mask[2] = False  # query 2 may attend to nothing
    a = mha(x, x, x, mask, need_weights=True)
    assert (mha.attn_weights[:, :, 2] == 0).all()
    b = mha(x, x, x, mask, need_weights=False)
    assert torch.isfinite(a).all() and torch.isfinite(b).all()
    torch.testing.assert_close(a, b)


def test_gradients_equal_for_both_paths():
    mha = MultiHeadAttention(8, 2).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True)
    grads = []
    for need_weights in (True, False):
        mha.zero_grad()
        x.grad = None
        mha(x, x, x, causal_mask(5), need_weights=need_weights).pow(2).sum().backward()
        grads.append([x.grad.clone()] + [p.grad.clone() for p in mha.parameters()])
    for g1, g2 in zip(*grads, strict=True):
        torch.testing.assert_close(g1, g2)


def test_inference_softmax_in_place_leaves_weights_correct():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 4, 8)
    with torch.no_grad():
        mha(x, x, x)
        no_grad_weights = mha.attn_weights.clone()
    mha(x, x, x)
    torch.testing.assert_close(no_grad_weights, mha.attn_weights)
    torch.testing.assert_close(no_grad_weights.sum(-1), torch.ones(1, 2, 4))


def test_no_bias_and_dropout_in_training():
    mha = MultiHeadAttention(8, 2, dropout=0.5, bias=False).train()
    x = torch.randn(2, 6, 8)
    out = mha(x, x, x)
    assert out.shape == (2, 6, 8)
    kept = mha.attn_weights[mha.attn_weights > 0]
    assert kept.numel() > 0 and (mha.attn_weights == 0).any()  # some weights dropped
    mha.eval()
    torch.testing.assert_close(mha(x, x, x), mha(x, x, x, need_weights=False))


# ---------------------------------------------------------------- KVCache


def test_kv_cache_grows_and_matches_full_attention():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 6, 8)
    full = mha(x, x, x, causal_mask(6))  # all positions at once, causal
    cache = KVCache()
    steps = []
    for t in range(6):
        xt = x[:, t : t + 1]  # (B, 1, d_model)
        steps.append(mha(xt, xt, xt, cache=cache))
        assert len(cache) == t + 1
        assert cache.k.shape == (2, 2, t + 1, 4)
    torch.testing.assert_close(torch.cat(steps, dim=1), full)
    assert repr(cache) == "KVCache(length=6)"


def test_static_cache_computes_cross_attention_keys_once():
    mha = MultiHeadAttention(8, 2).eval()
    memory = torch.randn(1, 5, 8)
    cache = KVCache(static=True)
    q1, q2 = torch.randn(1, 1, 8), torch.randn(1, 1, 8)
    out1 = mha(q1, memory, memory, cache=cache)
    k_first = cache.k
    out2 = mha(q2, memory, memory, cache=cache)
    assert cache.k is k_first and len(cache) == 5
    assert repr(cache) == "KVCache(static, length=5)"
    torch.testing.assert_close(out1, mha(q1, memory, memory))
    torch.testing.assert_close(out2, mha(q2, memory, memory))


def test_kv_cache_update_errors():
    cache = KVCache()
    with pytest.raises(ValueError, match=r"expects k \(B, h, L_new, d_k\).*got k \(2, 3, 4\)"):
        cache.update(torch.randn(2, 3, 4), torch.randn(2, 3, 4))
    cache.update(torch.randn(2, 4, 1, 8), torch.randn(2, 4, 1, 8))
    with pytest.raises(ValueError, match=r"new keys \(3, 4, 1, 8\) do not match the cached keys "
                                         r"\(2, 4, 1, 8\)"):
        cache.update(torch.randn(3, 4, 1, 8), torch.randn(3, 4, 1, 8))


# ---------------------------------------------------------------- greedy decoding


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_greedy_ids_identical(norm_first):
    model = Transformer(20, 20, d_model=32, num_heads=4, num_layers=2, d_ff=64,
                        dropout=0.1, norm_first=norm_first)
    src = torch.randint(3, 20, (3, 9))
    src[0, 6:] = 0  # padding in one row
    src_mask = padding_mask(src, 0)
    kw = dict(max_len=24, bos_id=1, eos_id=-1)  # eos never comes: the full 24 tokens
    plain = greedy_decode(model, src, src_mask=src_mask, **kw)
    cached = greedy_decode(model, src, src_mask=src_mask, use_cache=True, **kw)
    assert plain.shape == (3, 24)
    assert torch.equal(plain, cached)
    assert model.training  # greedy_decode restores the mode


def test_cached_greedy_with_eos_stops_the_same_way():
    model = Transformer(12, 12, d_model=16, num_heads=2, num_layers=1, d_ff=32)
    src = torch.randint(3, 12, (4, 6))
    first = greedy_decode(model, src, max_len=12, bos_id=1, eos_id=-1)
    eos = int(first[0, 3])  # a token this random model produces: row 0 stops there
    plain = greedy_decode(model, src, max_len=12, bos_id=1, eos_id=eos)
    cached = greedy_decode(model, src, max_len=12, bos_id=1, eos_id=eos, use_cache=True)
    assert (plain[0] == eos).nonzero()[0].item() <= 3
    assert torch.equal(plain, cached)


def test_decode_with_cache_logits_match_full_decode():
    model = Transformer(15, 15, d_model=16, num_heads=2, num_layers=2, d_ff=32).eval()
    src, tgt = torch.randint(0, 15, (2, 5)), torch.randint(0, 15, (2, 7))
    with torch.no_grad():
        memory = model.encode(src)
        full = model.decode(tgt, memory, tgt_mask=causal_mask(7))  # (B, 7, V)
        cache = model.new_cache()
        steps = [model.decode(tgt[:, t : t + 1], memory, cache=cache) for t in range(7)]
    assert len(cache) == 7
    torch.testing.assert_close(torch.cat(steps, dim=1), full)
