"""What a learner experimenting with bad input meets. Each test here failed before the fix.

Silent wrong answers become right answers or errors; raw tracebacks from deep inside PyTorch
become a ValueError/TypeError that names the function called, the argument, what it got and
what it expected.
"""

import re

import pytest
import torch
from torch import nn

from helpers import (
    EncoderLayer,
    FeedForward,
    KVCache,
    MultiHeadAttention,
    PositionalEncoding,
    Transformer,
    apply_rope,
    beam_search,
    causal_mask,
    copy_attention_weights,
    greedy_decode,
    scaled_dot_product_attention,
    seed_everything,
    target_mask,
    tiled_attention,
)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# ------------------------------------------------------------------ silent wrong answers


def test_mha_3d_mask_is_per_example_never_per_head():
    """B = h = 2: example 1's padding must mask example 1 (every head), not head 1."""
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 4, 8)  # (B, L, d_model)
    mask = torch.ones(2, 4, 4, dtype=torch.bool)  # (B, Lq, Lk)
    mask[1, :, 2:] = False  # example 1: its last two tokens are padding
    out = mha(x, x, x, mask)  # (B, L, d_model)
    weights = mha.attn_weights  # (B, h, Lq, Lk)
    for b in range(2):  # each example alone, with its own (Lq, Lk) mask
        alone = mha(x[b : b + 1], x[b : b + 1], x[b : b + 1], mask[b])
        torch.testing.assert_close(out[b : b + 1], alone)
    assert weights[1, :, :, 2:].abs().max() == 0  # both heads of example 1 skip its padding
    assert weights[0, :, :, 2:].abs().min() > 0  # example 0 has no padding
    torch.testing.assert_close(mha(x, x, x, mask, need_weights=False), out)


def test_mha_3d_mask_with_another_batch_size_is_refused():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(3, 4, 8)
    with pytest.raises(ValueError, match=r"MultiHeadAttention: mask of shape \(2, 1, 4, 4\)"):
        mha(x, x, x, torch.ones(2, 4, 4, dtype=torch.bool))


def test_sdpa_mask_must_broadcast_to_the_scores_not_enlarge_them():
    q, k, v = torch.randn(2, 5, 6), torch.randn(2, 7, 6), torch.randn(2, 7, 6)
    with pytest.raises(ValueError, match=r"mask of shape \(4, 1, 5, 7\) cannot be broadcast to "
                                         r"the attention scores of shape \(2, 5, 7\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(4, 1, 5, 7, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"tiled_attention: mask of shape \(4, 1, 5, 7\)"):
        tiled_attention(q, k, v, torch.ones(4, 1, 5, 7, dtype=torch.bool))


def test_sdpa_3d_mask_never_lands_on_the_heads():
    q = torch.randn(2, 2, 5, 4)  # (B, h, Lq, d_k) with B = h
    mask = torch.ones(2, 5, 5, dtype=torch.bool)  # (B, Lq, Lk): per example
    mask[1, :, 3:] = False
    with pytest.raises(ValueError, match=r"fewer dimensions .* mask\[:, None\]"):
        scaled_dot_product_attention(q, q, q, mask)
    out, w = scaled_dot_product_attention(q, q, q, mask[:, None])  # (B, 1, Lq, Lk): per example
    assert w[1, :, :, 3:].abs().max() == 0 and w[0, :, :, 3:].abs().min() > 0
    ones = torch.ones(1, 5, 5, dtype=torch.bool)  # leading size-1 axes are unambiguous
    torch.testing.assert_close(scaled_dot_product_attention(q, q, q, ones)[0],
                               scaled_dot_product_attention(q, q, q)[0])


def test_static_kv_cache_refuses_another_batch():
    mha = MultiHeadAttention(8, 2).eval()
    cache = KVCache(static=True)
    memory1, memory4 = torch.randn(1, 5, 8), torch.randn(4, 5, 8)
    mha(torch.randn(1, 1, 8), memory1, memory1, cache=cache)
    with pytest.raises(ValueError, match=r"static cache holds keys for B=1, Lk=5 .* key has shape "
                                         r"\(4, 5, 8\)"):
        mha(torch.randn(4, 1, 8), memory4, memory4, cache=cache)


def test_tensors_on_different_devices_are_refused():
    q = torch.randn(2, 3, 4)
    k_meta = torch.empty(2, 3, 4, device="meta")  # stands in for a GPU tensor
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: key is on device meta "
                                         r"but query is on cpu"):
        scaled_dot_product_attention(q, k_meta, q)
    with pytest.raises(ValueError, match=r"mask is on device meta but the scores are on cpu"):
        scaled_dot_product_attention(q, q, q, torch.ones(3, 3, dtype=torch.bool, device="meta"))
    with pytest.raises(ValueError, match=r"MultiHeadAttention: query is on device meta but the "
                                         r"module's weights are on cpu"):
        MultiHeadAttention(4, 2)(k_meta, k_meta, k_meta)
    with pytest.raises(ValueError, match=r"PositionalEncoding: x is on device meta"):
        PositionalEncoding(4, 10)(k_meta)


def test_negative_positional_start_is_refused():
    pe = PositionalEncoding(6, max_len=10)
    with pytest.raises(ValueError, match=r"PositionalEncoding: start must be a position >= 0, got -5"):
        pe(torch.zeros(1, 3, 6), start=-5)
    with pytest.raises(TypeError, match=r"start must be an int, got 1.5 \(float\)"):
        pe(torch.zeros(1, 3, 6), start=1.5)


# ------------------------------------------------------------------ dtypes and shapes


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16])
def test_input_dtype_must_match_the_module(dtype):
    x = torch.randn(2, 3, 8, dtype=dtype)
    with pytest.raises(TypeError, match=rf"MultiHeadAttention: query has dtype {dtype} but the "
                                        r"module's weights are torch.float32"):
        MultiHeadAttention(8, 2)(x, x, x)
    with pytest.raises(TypeError, match=rf"EncoderLayer: x has dtype {dtype}"):
        EncoderLayer(8, 2, 16)(x)
    with pytest.raises(TypeError, match=rf"FeedForward: x has dtype {dtype}"):
        FeedForward(8, 16)(x)
    with pytest.raises(TypeError, match=r"MultiHeadAttention: query must be a floating-point"):
        MultiHeadAttention(8, 2)(x.long(), x.long(), x.long())


def test_query_and_key_dtypes_must_agree():
    q, k = torch.randn(3, 4), torch.randn(5, 4, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"key has dtype torch.float64 but query has torch.float32"):
        scaled_dot_product_attention(q, k, k.float())
    with pytest.raises(TypeError, match=r"query must be a floating-point tensor .* got dtype torch.int64"):
        scaled_dot_product_attention(q.long(), k.long(), k.long())
    with pytest.raises(TypeError, match=r"query must be a floating-point torch.Tensor .* got \[1, 2\]"):
        scaled_dot_product_attention([1, 2], k, k)


def test_feed_forward_checks_the_last_dimension():
    with pytest.raises(ValueError, match=r"FeedForward: x must have shape \(\.\.\., d_model=8\), "
                                         r"got \(2, 3, 6\)"):
        FeedForward(8, 16)(torch.randn(2, 3, 6))


def test_d_k_zero_is_refused_not_nan():
    q = torch.randn(2, 3, 0)
    with pytest.raises(ValueError, match=r"d_k >= 1"):
        scaled_dot_product_attention(q, q, torch.randn(2, 3, 4))


# ------------------------------------------------------------------ constructors


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((0, 1), {}, ValueError, r"MultiHeadAttention: d_model must be an int >= 1, got 0"),
    ((-4, 2), {}, ValueError, r"d_model must be an int >= 1, got -4"),
    ((8, 2.0), {}, TypeError, r"num_heads must be an int >= 1, got 2.0 \(float\)"),
    ((8, 2), {"dropout": 1.5}, ValueError, r"dropout must be a number in \[0, 1\], got 1.5"),
    ((8, 2), {"dropout": -0.5}, ValueError, r"dropout must be a number in \[0, 1\], got -0.5"),
    ((8, 2), {"dropout": "0.1"}, TypeError, r"dropout must be a number .* got '0.1' \(str\)"),
    ((8, 2), {"bias": "no"}, TypeError, r"bias must be True or False, got 'no' \(str\)"),
])
def test_multi_head_attention_constructor(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        MultiHeadAttention(*args, **kwargs)


@pytest.mark.parametrize("build, message", [
    (lambda: EncoderLayer(8, 2, 16, dropout=-0.5), r"EncoderLayer: dropout must be"),
    (lambda: EncoderLayer(8, 2, 16.5), r"EncoderLayer: d_ff must be an int, got 16.5"),
    (lambda: FeedForward(8, 16, dropout=2), r"FeedForward: dropout must be"),
    (lambda: PositionalEncoding(8, max_len=10.5), r"PositionalEncoding: max_len must be an int"),
    (lambda: Transformer(0, 10), r"Transformer: src_vocab_size must be an int >= 1, got 0"),
    (lambda: Transformer(10, 10, num_layers=1.0), r"Transformer: num_layers must be an int"),
    (lambda: Transformer(10, 10, norm_first="yes"), r"Transformer: norm_first must be True or False"),
])
def test_layer_constructors(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


# ------------------------------------------------------------------ decoding


def test_beam_larger_than_the_vocabulary_is_exact_search():
    """With a beam as wide as every candidate list, beam search is exhaustive: compare with a
    brute-force search over every sequence (length penalty 0: rank by total log-probability)."""
    import itertools

    torch.manual_seed(3)
    vocab, max_len, bos, eos = 4, 4, 1, 2
    model = Transformer(5, vocab, d_model=8, num_heads=2, num_layers=1, d_ff=16, dropout=0.0,
                        max_len=16).eval()
    src = torch.tensor([[1, 3, 4]])
    best, best_logp = None, float("-inf")
    for n in range(1, max_len):
        for tail in itertools.product(range(vocab), repeat=n):
            if eos in tail[:-1] or (n < max_len - 1 and tail[-1] != eos):
                continue  # a sequence ends at its first eos, or when it reaches max_len
            ys = torch.tensor([[bos, *tail]])
            with torch.no_grad():
                logp = torch.log_softmax(model(src, ys[:, :-1], None, causal_mask(n)), -1)
            total = logp[0, torch.arange(n), ys[0, 1:]].sum().item()
            if total > best_logp:
                best, best_logp = ys, total
    beam = vocab ** (max_len - 1)  # 64 > |V|: every hypothesis survives every step
    out = beam_search(model, src, beam_size=beam, max_len=max_len, bos_id=bos, eos_id=eos)
    assert torch.equal(out, best)


def test_decoding_arguments():
    model = Transformer(5, 6, d_model=8, num_heads=2, num_layers=1, d_ff=16, max_len=16)
    src = torch.tensor([[1, 3, 4]])
    with pytest.raises(TypeError, match=r"beam_search: beam_size must be an int, got 2.0"):
        beam_search(model, src, 2.0, 5, 1, 2)
    with pytest.raises(ValueError, match=r"greedy_decode: bos_id must be a target token id in 0..5, got 9"):
        greedy_decode(model, src, 5, 9, 2)
    with pytest.raises(TypeError, match=r"greedy_decode: max_len must be an int, got '5' \(str\)"):
        greedy_decode(model, src, "5", 1, 2)


# ------------------------------------------------------------------ other entry points


@pytest.mark.parametrize("their_bias", [True, False])
def test_copy_attention_weights_without_bias(their_bias):
    mine = MultiHeadAttention(8, 2, bias=False).eval()
    theirs = nn.MultiheadAttention(8, 2, bias=their_bias, batch_first=True).eval()
    copy_attention_weights(mine, theirs)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(mine(x, x, x), theirs(x, x, x)[0])


def test_copy_attention_weights_refuses_what_cannot_be_copied():
    with pytest.raises(ValueError, match=r"theirs was built with bias=False"):
        copy_attention_weights(MultiHeadAttention(8, 2), nn.MultiheadAttention(8, 2, bias=False))
    with pytest.raises(TypeError, match=r"copy_attention_weights: theirs must be a "
                                        r"torch.nn.MultiheadAttention, got"):
        copy_attention_weights(MultiHeadAttention(8, 2), nn.Linear(8, 8))


def test_seed_everything_refuses_bad_seeds_before_seeding_anything():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    for seed, error in [(-1, ValueError), (2**32, ValueError), (1.5, TypeError), ("0", TypeError)]:
        with pytest.raises(error, match=r"seed_everything: seed must be an int in 0 \.\. 2\*\*32 - 1"):
            seed_everything(seed)
    torch.testing.assert_close(torch.rand(3), expected)  # torch was not reseeded


@pytest.mark.parametrize("call, error, message", [
    (lambda: causal_mask(2.5), TypeError, r"causal_mask: n must be an int, got 2.5 \(float\)"),
    (lambda: causal_mask(True), TypeError, r"causal_mask: n must be an int, got True \(bool\)"),
    (lambda: tiled_attention(torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4),
                             block_size=2.5), TypeError, r"tiled_attention: block_size must be an int"),
    (lambda: apply_rope(torch.randn(3, 4), base=-1.0), ValueError, r"apply_rope: base must be"),
])
def test_non_integer_sizes(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_causal_mask_accepts_integer_like_sizes():
    import numpy as np

    expected = torch.ones(3, 3, dtype=torch.bool).tril()
    assert torch.equal(causal_mask(np.int64(3)), expected)
    assert torch.equal(causal_mask(torch.tensor(3)), expected)


def test_errors_name_the_function_the_learner_called():
    with pytest.raises(ValueError, match=r"^target_mask: tgt must hold at least one position .* "
                                         r"got shape \(2, 0\)"):
        target_mask(torch.zeros(2, 0, dtype=torch.long))
    q = torch.randn(3, 4)
    with pytest.raises(TypeError, match=r"^tiled_attention: key has dtype torch.float64"):
        tiled_attention(q, q.double(), q)


@pytest.mark.parametrize("call", [
    lambda long: causal_mask(long),
    lambda long: MultiHeadAttention(long, 2),
    lambda long: PositionalEncoding(8)(torch.zeros(1, 2, 8), start=long),
    lambda long: seed_everything(long),
    lambda long: MultiHeadAttention(8, 2, dropout=long),
])
def test_long_inputs_are_cut_in_messages(call):
    long = "x" * 10_000
    with pytest.raises(TypeError) as info:
        call(long)
    message = str(info.value)
    assert len(message) < 250, message
    assert "(10002 characters)" in message  # says how long it was


def test_mask_errors_name_the_mask_and_the_block_called():
    model = Transformer(6, 6, d_model=8, num_heads=2, num_layers=1, d_ff=16, max_len=16)
    src, tgt = torch.tensor([[1, 2, 3]]), torch.tensor([[1, 2]])
    wrong = torch.ones(1, 1, 1, 5, dtype=torch.bool)  # 5 keys, but the source has 3 tokens
    with pytest.raises(ValueError, match=r"^Transformer.encode: src_mask of shape \(1, 1, 1, 5\)"):
        model.encode(src, wrong)
    memory = model.encode(src)
    with pytest.raises(ValueError, match=r"^Transformer.decode: tgt_mask of shape \(3, 3\)"):
        model.decode(tgt, memory, None, causal_mask(3))
    with pytest.raises(ValueError, match=r"^Encoder: mask of shape"):
        model.encoder(torch.randn(1, 3, 8), wrong)
    with pytest.raises(ValueError, match=r"^Decoder: memory_mask of shape"):
        model.decoder(torch.randn(1, 2, 8), memory, None, wrong)


# ======================================================================================
# Probes of the Part II API (sampling, efficient, positional RoPE, modern's
# RMSNorm and GroupedQueryAttention, toy_language.decode, warmup_lr, train_lm, caches, diagrams).
# Each test failed before its fix. (The "gpt" and "translator" blocks are at the end of the file.)
# ======================================================================================


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_rmsnorm_takes_its_statistic_in_float32_like_nn_rmsnorm(dtype):
    """In float16 one value >= 256 squared to inf and zeroed its whole row; nn.RMSNorm does not."""
    from helpers import RMSNorm

    ours, theirs = RMSNorm(8, eps=1e-6).to(dtype), nn.RMSNorm(8, eps=1e-6).to(dtype)
    with torch.no_grad():
        ours.weight.copy_(torch.rand(8) + 0.5)
        theirs.weight.copy_(ours.weight)
    x = (torch.randn(3, 8) * 3).to(dtype)
    x[0, 0] = 300
    out = ours(x)
    assert out.dtype == dtype and out[0].abs().max() > 1  # the row is not zeroed
    assert torch.equal(out, theirs(x))
    with pytest.raises(ValueError, match=r"RMSNorm: x is on device meta but the weight is on cpu"):
        ours(torch.empty(2, 8, dtype=dtype, device="meta"))  # was a RuntimeError from torch


@pytest.mark.parametrize("which", ["GroupedQueryAttention"])  # ModernAttention: the "gpt" block
def test_gqa_3d_mask_is_per_example_like_multi_head_attention(which):
    """B = h = 2: a (B, Lq, Lk) mask was applied per head; notebook 04's rule is per example."""
    import helpers.modern as modern

    torch.manual_seed(0)
    attn = getattr(modern, which)(8, 2, 2).eval()  # h = 2 heads, as many kv heads
    mha = MultiHeadAttention(8, 2).eval()
    for mine, theirs in ((attn.q_proj, mha.w_q), (attn.k_proj, mha.w_k), (attn.v_proj, mha.w_v),
                         (attn.out_proj, mha.w_o)):
        mine.load_state_dict(theirs.state_dict())
    x = torch.randn(2, 4, 8)  # (B, L, d_model)
    mask = torch.ones(2, 4, 4, dtype=torch.bool)  # (B, Lq, Lk)
    mask[1, :, 2:] = False  # example 1: its last two tokens are padding
    with torch.no_grad():
        out = attn(x, x, x, mask)
        torch.testing.assert_close(out, mha(x, x, x, mask))  # one rule for both
        for b in range(2):  # each example alone, with its own (Lq, Lk) mask
            torch.testing.assert_close(out[b:b + 1], attn(x[b:b + 1], x[b:b + 1], x[b:b + 1], mask[b]))
        with pytest.raises(ValueError, match=rf"^{which}: mask of shape \(1, 1, 1, 4, 4\)|"
                                             rf"^{which}: mask must be \(Lq, Lk\)"):
            attn(x, x, x, torch.ones(1, 1, 1, 4, 4, dtype=torch.bool))
        with pytest.raises(ValueError, match=rf"{which}: mask of shape \(3, 1, 4, 4\) cannot be broadcast"):
            attn(x, x, x, torch.ones(3, 4, 4, dtype=torch.bool))  # 3 examples' masks for B = 2


@pytest.mark.parametrize("which", ["GroupedQueryAttention"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int64])
def test_gqa_input_dtype_is_named_like_multi_head_attention(which, dtype):
    """Was a RuntimeError "mat1 and mat2 must have the same dtype" from inside nn.Linear."""
    import helpers.modern as modern

    attn = getattr(modern, which)(8, 2, 1)
    x = torch.randn(2, 3, 8).to(dtype)
    message = (rf"{which}: query must be a floating-point tensor" if dtype == torch.int64 else
               rf"{which}: query has dtype {dtype} but the module's weights are torch.float32")
    with pytest.raises(TypeError, match=message):
        attn(x, x, x)
    with pytest.raises(ValueError, match=rf"{which}: query is on device meta"):
        attn(*(torch.empty(2, 3, 8, device="meta"),) * 3)


def test_gqa_constructor_and_mask_arguments():
    from helpers import GroupedQueryAttention

    with pytest.raises(TypeError, match=r"GroupedQueryAttention: bias must be True or False, got 'no'"):
        GroupedQueryAttention(8, 2, 1, bias="no")  # was accepted (a bias was built)
    x = torch.randn(2, 3, 8)
    with pytest.raises(ValueError, match=r"GroupedQueryAttention: mask is on device meta"):
        GroupedQueryAttention(8, 2, 1)(x, x, x, torch.ones(3, 3, dtype=torch.bool, device="meta"))


@pytest.mark.parametrize("call, error, message", [
    (lambda: __import__("helpers").positional.rope_half(torch.arange(8).reshape(2, 4)), TypeError,
     r"rope_half: x must be a floating-point tensor .* got dtype torch.int64"),  # was: rows of 0
    (lambda: __import__("helpers").positional.rope_half(torch.ones(2, 4, dtype=torch.bool)), TypeError,
     r"rope_half: x must be a floating-point tensor"),
    (lambda: __import__("helpers").positional.rope_half(torch.randn(2, 4), base=0), ValueError,
     r"rope_half: base must be a number > 0, got 0"),  # was NaN
    (lambda: __import__("helpers").positional.rope_half(torch.randn(2, 4), base=-1.0), ValueError,
     r"rope_half: base must be a number > 0, got -1"),
    (lambda: __import__("helpers").positional.rope_half(torch.randn(2, 4), base=float("nan")), ValueError,
     r"rope_half: base must be a finite number, got nan"),
    (lambda: __import__("helpers").positional.rope_half(torch.randn(2, 4), base=None), TypeError,
     r"rope_half: base must be a finite number, got None"),
    (lambda: __import__("helpers").positional.rope_half(torch.randn(3, 4), torch.arange(5)), ValueError,
     r"rope_half: positions must have shape \(L,\) = \(3,\) .* got \(5,\)"),  # was a RuntimeError
    (lambda: __import__("helpers").positional.rope_half(torch.randn(3, 4), "abc"), TypeError,
     r"rope_half: positions must be a tensor or list of 3 numbers, got 'abc'"),
    (lambda: __import__("helpers").positional.rope_half(torch.randn(2, 4), torch.tensor([0.0, float("nan")])),
     ValueError, r"rope_half: positions must be finite numbers"),
    (lambda: apply_rope(torch.randn(2, 4), torch.tensor([0.0, float("nan")])), ValueError,
     r"apply_rope: positions must be finite numbers"),  # was NaN
])
def test_rope_half_refuses_what_apply_rope_refuses(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_rope_half_still_rotates_valid_input():
    from helpers.positional import interleaved_to_half, rope_half

    x = torch.randn(2, 9, 16)
    perm = interleaved_to_half(16)
    torch.testing.assert_close(rope_half(x[..., perm]), apply_rope(x)[..., perm])
    torch.testing.assert_close(rope_half(x, [0, 1, 2, 3, 4, 5, 6, 7, 8]), rope_half(x))  # a list


@pytest.mark.parametrize("ids, error, message", [
    ([2.7], TypeError, r"decode: ids must be ints \(token ids\), got 2.7 \(float\)"),  # was 'big'
    ([True], TypeError, r"decode: ids must be ints, got True"),  # was '.'
    (torch.tensor([2.0, 3.0]), TypeError, r"decode: ids must hold integer token ids .* torch.float32"),
    (torch.tensor([[2, 3], [4, 5]]), ValueError,  # was "only one element tensors can be converted"
     r"decode: ids must be one sequence of token ids \(L,\), got shape \(2, 2\); for a batch"),
    (torch.tensor(3), ValueError, r"decode: ids must be one sequence .* got shape \(\)"),
    ("2 3", TypeError, r"decode: ids must be a sequence of token ids \(ints\), got '2 3' \(str\)"),
    (None, TypeError, r"decode: ids must be a sequence of token ids \(ints\), got None"),
    ([99], ValueError, r"id 99 is outside the vocabulary"),
])
def test_toy_language_decode_refuses_what_is_not_token_ids(ids, error, message):
    from helpers.data import toy_language as tl

    with pytest.raises(error, match=message):
        tl.decode(ids)


def test_toy_language_decode_takes_every_kind_of_int():
    import numpy as np

    from helpers.data import toy_language as tl

    expected = "the big cat sleeps."
    ids = tl.encode(expected)
    for form in (ids, tuple(ids), torch.tensor(ids), torch.tensor(ids, dtype=torch.int32),
                 [np.int64(i) for i in ids], list(torch.tensor(ids)), (i for i in ids)):
        assert tl.decode(form) == expected


@pytest.mark.parametrize("args, error, message", [
    ((-5, 1e-3, 10, 100), ValueError, r"warmup_lr: step must be an int >= 0, got -5"),  # was -0.0004
    ((2.5, 1e-3, 10, 100), TypeError, r"warmup_lr: step must be an int >= 0, got 2.5 \(float\)"),
    ((None, 1e-3, 10, 100), TypeError, r"warmup_lr: step must be an int >= 0, got None"),
    ((1, float("nan"), 10, 100), ValueError, r"warmup_lr: peak_lr must be a number >= 0, got nan"),
    ((1, -1.0, 10, 100), ValueError, r"warmup_lr: peak_lr must be a number >= 0, got -1"),
    ((1, "1e-3", 10, 100), TypeError, r"warmup_lr: peak_lr must be a number >= 0, got '1e-3' \(str\)"),
    ((1, 1e-3, None, 100), TypeError, r"warmup_lr: warmup_steps must be an int, got None"),
    ((1, 1e-3, 10, None), TypeError, r"warmup_lr: total_steps must be an int, got None"),
    ((1, 1e-3, 10, 10), ValueError, r"need 0 <= warmup_steps < total_steps, got 10 and 10"),
])
def test_warmup_lr_refuses_like_its_siblings(args, error, message):
    from helpers.training import warmup_lr

    with pytest.raises(error, match=message):
        warmup_lr(*args)


def _tiny_lm():
    from helpers import GPT

    torch.manual_seed(0)
    return GPT(12, d_model=8, num_heads=2, num_layers=1, d_ff=16, max_len=8)


_LM_IDS = torch.randint(1, 12, (6, 8), generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"batch_size": 0}, ValueError, r"train_lm: batch_size must be an int >= 1, got 0"),  # was min(): ...
    ({"batch_size": -1}, ValueError, r"train_lm: batch_size must be an int >= 1, got -1"),
    ({"batch_size": 2.5}, TypeError, r"train_lm: batch_size must be an int >= 1, got 2.5 \(float\)"),
    ({"log_every": 0}, ValueError, r"train_lm: log_every must be an int >= 1, got 0"),  # ZeroDivisionError
    ({"steps": 2.5}, TypeError, r"train_lm: steps must be an int >= 1, got 2.5 \(float\)"),  # from range
    ({"steps": True}, TypeError, r"train_lm: steps must be an int >= 1, got True \(bool\)"),  # trained 1 step
    ({"steps": "3"}, TypeError, r"train_lm: steps must be an int >= 1, got '3' \(str\)"),
    ({"seed": "a"}, TypeError, r"train_lm: seed must be an int, got 'a' \(str\)"),
    ({"warmup_steps": 3}, ValueError, r"train_lm: warmup_steps must be < steps .* got warmup_steps=3 and steps=3"),
    ({"warmup_steps": -1}, ValueError, r"train_lm: warmup_steps must be an int >= 0, got -1"),
    ({"peak_lr": 0}, ValueError, r"train_lm: peak_lr must be a finite number > 0, got 0"),  # learned nothing
    ({"peak_lr": -1.0}, ValueError, r"train_lm: peak_lr must be a finite number > 0, got -1"),  # AdamW's words
    ({"peak_lr": float("inf")}, ValueError, r"train_lm: peak_lr must be a finite number, got inf"),  # NaN loss
    ({"clip_norm": 0}, ValueError, r"train_lm: clip_norm must be None \(no clipping\) or a number > 0 .* got 0"),
    ({"clip_norm": float("nan")}, ValueError, r"train_lm: clip_norm must be None .* got nan"),  # NaN loss
    ({"callback": 3}, TypeError, r"train_lm: callback must be None or a function .* got 3 \(int\)"),
])
def test_train_lm_arguments_are_named(kwargs, error, message):
    from helpers.training import train_lm

    args = {"steps": 3, "batch_size": 2, "warmup_steps": 0, **kwargs}
    steps = args.pop("steps")
    with pytest.raises(error, match=message):
        train_lm(_tiny_lm(), _LM_IDS, _LM_IDS, steps, **args)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"clip_norm": None}, ValueError, r"train_seq2seq: clip_norm must be a number > 0 .* got None"),
    ({"clip_norm": -1.0}, ValueError, r"train_seq2seq: clip_norm must be a number > 0 .* got -1.0"),
    ({"peak_lr": float("nan")}, ValueError, r"train_seq2seq: peak_lr must be a finite number, got nan"),
    ({"callback": 3}, TypeError, r"train_seq2seq: callback must be None or a function"),
    ({"warmup_steps": 5}, ValueError, r"train_seq2seq: warmup_steps must be < steps"),
])
def test_train_seq2seq_shares_the_schedule_checks(kwargs, error, message):
    """The same checks guard the shared loop's schedule for the encoder-decoder (clip_norm=None was
    a TypeError from float(None) when the gradient norm was logged; -1 and NaN were accepted)."""
    from helpers.data import CharTokenizer
    from helpers.training import train_seq2seq

    train = [("12 mar 2021", "2021-03-12")]
    tok = CharTokenizer(s + t for s, t in train)
    model = Transformer(len(tok), len(tok), 16, 2, 1, 32, dropout=0.0, max_len=40)
    args = {"warmup_steps": 0, **kwargs}
    with pytest.raises(error, match=message):
        train_seq2seq(model, train, tok, steps=2, **args)


@pytest.mark.parametrize("inputs, targets, model, error, message", [
    (_LM_IDS[:0], _LM_IDS[:0], _tiny_lm, ValueError, r"train_lm: inputs must hold at least one row"),
    (_LM_IDS.float(), _LM_IDS, _tiny_lm, TypeError, r"train_lm: inputs must hold integer token ids"),
    (_LM_IDS.tolist(), _LM_IDS, _tiny_lm, TypeError, r"train_lm: inputs must be a tensor of token ids"),
    (_LM_IDS, _LM_IDS[:, :4], _tiny_lm, ValueError, r"inputs and targets must both be \(N, L\)"),
    (_LM_IDS, _LM_IDS + 20, _tiny_lm, ValueError,  # was IndexError "Target 31 is out of bounds"
     r"train_lm: targets hold ids 21..31, but the model's vocabulary has 12 tokens"),
    (_LM_IDS, _LM_IDS, lambda: None, TypeError, r"train_lm: model must be an nn.Module"),
])
def test_train_lm_data_is_checked_before_training(inputs, targets, model, error, message):
    from helpers.training import train_lm

    with pytest.raises(error, match=message):
        train_lm(model(), inputs, targets, 3, batch_size=2, warmup_steps=0)


def test_train_lm_cached_names_and_builder(tmp_path, monkeypatch):
    from helpers.training import train_lm_cached

    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path / "cache"))
    for name in ("../outside", "a/b", "/abs", ""):
        with pytest.raises(ValueError, match=r"train_lm_cached: name must be a file name"):
            train_lm_cached(_tiny_lm, _LM_IDS, _LM_IDS, 3, name=name, batch_size=2, warmup_steps=0)
    with pytest.raises(TypeError, match=r"train_lm_cached: name must be a str .* got None"):
        train_lm_cached(_tiny_lm, _LM_IDS, _LM_IDS, 3, name=None)
    with pytest.raises(TypeError, match=r"train_lm_cached: make_model must be a function .* got GPT"):
        train_lm_cached(_tiny_lm(), _LM_IDS, _LM_IDS, 3)  # a model, not a function that builds one
    assert not tmp_path.exists() or not list(tmp_path.rglob("*.pt"))
    _, hist = train_lm_cached(_tiny_lm, _LM_IDS, _LM_IDS, 3, name="RoPE + QK-norm", batch_size=2,
                              warmup_steps=0)
    assert hist["cached"] is False and [p.parent for p in tmp_path.rglob("*.pt")] == [tmp_path / "cache"]


@pytest.mark.parametrize("name", ["/etc/passwd", "../imgs/01_attention_matrix", "../../x", "a/b",
                                  "x" * 10_000])
def test_show_diagram_serves_only_the_diagrams_of_imgs(name, tmp_path):
    """An absolute path or "../" read any .svg on disk; a 10,000-character name was an OSError."""
    from helpers.diagrams import IMGS, show_diagram

    with pytest.raises(ValueError, match=r"^show_diagram: (name must be the name of a diagram in imgs/ "
                                         r"\(no folders or paths\)|no diagram named)"):
        show_diagram(name)
    outside = tmp_path / "evil.svg"
    outside.write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    for path in (str(outside), str(outside.with_suffix("")), str(IMGS / "01_attention_matrix.svg")):
        with pytest.raises(ValueError, match=r"no folders or paths"):
            show_diagram(path)
    assert show_diagram("01_attention_matrix").data == show_diagram("01_attention_matrix.svg").data


# ======================================================================================
# End of the block of "probes".
# ======================================================================================


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU (the meta-device test above "
                    "stands in for one)")
def test_cpu_and_gpu_tensors_are_refused():
    q = torch.randn(2, 3, 4)
    with pytest.raises(ValueError, match=r"key is on device cuda:0 but query is on cpu"):
        scaled_dot_product_attention(q, q.cuda(), q)
    with pytest.raises(ValueError, match=r"query is on device cuda:0 but the module's weights are on cpu"):
        MultiHeadAttention(4, 2)(q.cuda(), q.cuda(), q.cuda())


# ================================================================== Part II: GPT
# A block of its own so that other Part II probes merge beside it.


def _gpt(**options):
    from helpers import GPT

    torch.manual_seed(0)
    return GPT(11, d_model=16, num_heads=4, num_layers=2, d_ff=32, max_len=20, **options).eval()


def test_gpt_num_heads_zero_blames_num_heads():
    from helpers import GPT

    with pytest.raises(ValueError, match="GPT: num_heads must be an int >= 1, got 0"):
        GPT(11, num_heads=0)


def test_gpt_rope_with_an_odd_head_width_is_refused_at_construction():
    from helpers import GPT

    with pytest.raises(ValueError, match=r"rotates pairs of dimensions.*12/4 = 3 must be even"):
        GPT(11, d_model=12, num_heads=4, positions="rope")


def test_gpt_generate_on_an_empty_batch_names_ids():
    with pytest.raises(ValueError, match=r"GPT.generate: ids is an empty batch of shape \(0, 3\)"):
        _gpt().generate(torch.zeros(0, 3, dtype=torch.long), 2)
    with pytest.raises(ValueError, match=r"GPT: ids is an empty batch"):
        _gpt()(torch.zeros(0, 3, dtype=torch.long))


@pytest.mark.parametrize("cache, got", [
    (lambda m: m.new_cache()[:1], "a list of 1 items"),
    (lambda m: KVCache(), "a KVCache"),
    (lambda m: [KVCache(), "x"], "a list of 2 items"),
])
def test_gpt_cache_must_be_one_kv_cache_per_block(cache, got):
    m = _gpt()
    with pytest.raises(ValueError, match=f"cache must be a list of 2 KVCaches, one per block.*got {got}"):
        m(torch.zeros(1, 3, dtype=torch.long), cache=cache(m))


def test_gpt_window_needs_its_rolling_cache():
    m = _gpt()
    cache = m.new_cache()  # made before the window was set
    m.set_window(4)
    with pytest.raises(ValueError, match="window=4, sinks=0: its cache must be model.new_cache()"):
        m(torch.zeros(1, 3, dtype=torch.long), cache=cache)


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_sample_sentences_needs_a_positive_count(n):
    from helpers import GPT
    from helpers.data import toy_language as tl
    from helpers.gpt import sample_sentences

    model = GPT(len(tl.VOCAB), d_model=16, num_heads=2, num_layers=1, d_ff=16, max_len=32)
    with pytest.raises(ValueError, match=r"sample_sentences: n must be an int >= 1"):
        sample_sentences(model, n=n)


def test_complete_greedy_without_prompts():
    from helpers.gpt import complete_greedy

    with pytest.raises(ValueError, match="complete_greedy: prompts is empty"):
        complete_greedy(_gpt(), [], 3)


# ================================================================== end of the GPT block


# ================================================================== the translator
# Each problem as found by the probes; each failed before (a made-up date, garbage, a
# raw traceback) and now gets a message. More in tests/test_data.py and tests/test_training.py.
@pytest.fixture(scope="module")
def _untrained_translator():
    from helpers.data import date_tokenizer
    from helpers.translator import make_translator

    tok = date_tokenizer()
    return make_translator(len(tok), device="cpu").eval(), tok


@pytest.mark.parametrize("text, message", [
    ("March 12th", "it has no year"), ("12 Mar", "it has no year"), ("Fri 12 Mar", "it has no year"),
    ("March 2021", "it has no day"), ("12.03", "it has no year"), ("2021", "no day and no month"),
    ("Monday", "no day, no month and no year"), ("", "Type a date"),
    ("12.03.69", "could be 1969 or 2069"), ("<dmy>09/25/2003", "there is no month 25 (read day first)"),
])
def test_translator_refuses_what_it_would_invent(_untrained_translator, text, message):
    from helpers.translator import translate

    model, tok = _untrained_translator
    with pytest.raises(ValueError, match=r"translate refuses 1 of 1 sources.*" + re.escape(message)):
        translate(model, [text], tok)


def test_translator_refuses_a_tokenizer_of_another_model_and_no_sources(_untrained_translator):
    from helpers.data import CharTokenizer
    from helpers.translator import translate

    model, tok = _untrained_translator
    with pytest.raises(ValueError, match=r"the tokenizer has 8 tokens but the model's src_embed was built for 249"):
        translate(model, ["12 mar 2021"], CharTokenizer(["abcde"]))
    with pytest.raises(TypeError, match="translate: sources must be a list of strings.*got NoneType"):
        translate(model, None, tok)


@pytest.mark.parametrize("ids", [[2.7], [True], "ab", None])
def test_tokenizers_refuse_ids_that_are_not_ints(ids):
    from helpers.data import CharTokenizer, date_tokenizer

    for tok in (CharTokenizer(["abc"]), date_tokenizer()):
        with pytest.raises(TypeError, match="decode: "):
            tok.decode(ids)


# ================================================================== end of the translator block


# ======================================================================================
# Issue 33: the newer Part II helpers made exact. Each test failed before its fix.
# ======================================================================================


def _windowed_gpt(**kwargs):
    from helpers.gpt import GPT

    torch.manual_seed(0)
    config = {"d_model": 16, "num_heads": 2, "num_layers": 2, "d_ff": 32, "max_len": 64,
              "positions": "rope", "window": 4, "sinks": 2, **kwargs}
    return GPT(11, **config).eval()


def _flop_count(fn) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter, torch.no_grad():
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize("kwargs", [{}, {"sinks": 0}, {"window": None, "sinks": 0},
                                    {"positions": "none"}, {"num_kv_heads": 1, "norm": "rms"}])
@pytest.mark.parametrize("context", [1, 5, 6, 40])
def test_flops_per_token_is_what_flop_counter_mode_counts(kwargs, context):
    """Window 4 + 2 sinks at context 40: the token attends to 6 keys, but all 40 were counted."""
    from helpers.gpt import flops_per_token

    model = _windowed_gpt(**kwargs)
    cache = model.new_cache()
    if context > 1:
        with torch.no_grad():
            model(torch.zeros(1, context - 1, dtype=torch.long), cache=cache)
    step = _flop_count(lambda: model(torch.zeros(1, 1, dtype=torch.long), cache=cache))
    assert flops_per_token(model, context) == step
    assert flops_per_token(model, context, training=True) == 3 * step


# (Notebook 12's blocks, positions="learned" without notebook 13's options, call
# F.scaled_dot_product_attention, whose fused CPU kernel FlopCounterMode does not count.)
@pytest.mark.parametrize("kwargs", [{}, {"sinks": 0}, {"window": None, "sinks": 0}, {"positions": "none"},
                                    {"positions": "none", "sinks": 0}, {"num_kv_heads": 1, "activation": "swiglu"}])
@pytest.mark.parametrize("length", [1, 2, 7, 40])
def test_forward_flops_is_what_flop_counter_mode_counts(kwargs, length):
    """With RoPE, a window and sinks the sinks' second Q K^T product was missed (98,880 vs
    100,160 in the issue's model)."""
    from helpers.gpt import forward_flops

    model = _windowed_gpt(**kwargs)
    assert forward_flops(model, length) == _flop_count(lambda: model(torch.zeros(1, length, dtype=torch.long)))


@pytest.mark.parametrize("call", ["forward_flops", "flops_per_token"])
def test_flop_counts_refuse_a_model_that_is_not_a_gpt(call):
    import helpers.gpt as gpt

    with pytest.raises(TypeError, match=rf"{call}: model must be a helpers.GPT .* got Linear"):
        getattr(gpt, call)(nn.Linear(3, 3), 4)


@pytest.mark.parametrize("dtype, big", [(torch.float32, 1e20), (torch.float64, 1e200), (torch.float16, 3e4),
                                        (torch.bfloat16, 1e30)])
def test_rmsnorm_does_not_overflow_to_zeros(dtype, big):
    """[[1e20, -1e20, 2e20, 0]] in float32 (and 1e200 in float64) gave zeros: the mean of the
    squares overflowed."""
    from helpers import RMSNorm

    x = torch.tensor([[big, -big, 2 * big, 0.0], [1.0, -2.0, 0.5, 3.0]], dtype=torch.float64)
    expected = x / (x.abs().amax(-1, keepdim=True) * (x / x.abs().amax(-1, keepdim=True)).pow(2).mean(-1, keepdim=True).sqrt())
    out = RMSNorm(4, eps=1e-6).to(dtype)(x.to(dtype))
    torch.testing.assert_close(out.double(), expected, rtol=1e-2 if dtype.itemsize == 2 else 1e-6, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_rmsnorm_is_bit_for_bit_unchanged_on_normal_inputs(dtype):
    """The overflow guard must not change a single bit where nothing overflows: values and
    gradients equal the plain formula's exactly (trained models and notebook 13 stay the same)."""
    from helpers import RMSNorm

    torch.manual_seed(0)
    norm = RMSNorm(8, eps=1e-6).to(dtype)
    with torch.no_grad():
        norm.weight.copy_(torch.rand(8) + 0.5)
    x = (torch.randn(5, 8) * 3).to(dtype).requires_grad_(True)
    x_ref = x.detach().clone().requires_grad_(True)
    wide = x_ref.to(torch.promote_types(dtype, torch.float32))
    ref = (wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + 1e-6) * norm.weight.to(wide.dtype)).to(dtype)
    out = norm(x)
    assert torch.equal(out, ref)
    grad = torch.randn_like(out)
    out.backward(grad)
    ref.backward(grad)
    assert torch.equal(x.grad, x_ref.grad)


def test_apply_rope_computes_float64_angles_in_float64():
    """At position 1e6 the float32 angles were 1.1e-4 off for float64 inputs."""
    from helpers.positional import apply_rope

    x = torch.randn(1, 1, 3, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    pos = torch.tensor([0.0, 1e6, 123456.5], dtype=torch.float64)
    inv = 1.0 / 10000.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8)
    angle = pos[:, None] * inv  # (L, d/2)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    ref = torch.stack([x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()], -1).flatten(-2)
    torch.testing.assert_close(apply_rope(x, pos), ref, rtol=0, atol=1e-12)
    x32 = x.float()  # float32 inputs keep float32 angles, as before
    assert apply_rope(x32, pos.float()).dtype == torch.float32


def test_modern_attention_rotates_float64_at_float64_positions():
    from helpers.modern import ModernAttention
    from helpers.positional import apply_rope

    attn = ModernAttention(8, 2, 2, rope=True).double()
    x = torch.randn(1, 2, 3, 4, dtype=torch.float64)
    pos = torch.tensor([1e6 + 0.0, 1e6 + 1, 1e6 + 2], dtype=torch.float64)
    torch.testing.assert_close(attn._rotate(x, pos), apply_rope(x, pos), rtol=0, atol=0)


@pytest.mark.parametrize("bad", [[1.5], [True], [torch.tensor(1.0)], [torch.tensor(True)], ["1"]])
def test_generate_suppress_holds_ids_only(bad):
    """suppress=[1.5] or [True] silently banned id 1."""
    model = _windowed_gpt()
    with pytest.raises(TypeError, match=r"GPT.generate: suppress must hold token ids \(ints\), but suppress\[0\]"):
        model.generate(torch.zeros(1, 2, dtype=torch.long), 2, temperature=0, suppress=bad)
    model.generate(torch.zeros(1, 2, dtype=torch.long), 2, temperature=0, suppress=[1, torch.tensor(2)])


@pytest.mark.parametrize("first, second, name", [
    (torch.zeros(4, 4), torch.eye(4), "first"), (torch.eye(4), torch.zeros(4, 4), "second"),
    (torch.full((4, 4), float("nan")), torch.eye(4), "first")])
def test_composition_score_refuses_what_has_no_score(first, second, name):
    """composition_score(zeros, eye) returned nan."""
    from helpers.induction import composition_score

    with pytest.raises(ValueError, match=rf"composition_score: {name} (is all zeros|holds NaN)"):
        composition_score(first, second)


def test_copying_share_refuses_an_empty_circuit():
    from helpers.induction import copying_share

    with pytest.raises(ValueError, match=r"copying_share: circuit is empty, shape \(0, 0\)"):
        copying_share(torch.ones(0, 0))


def test_gpt_without_bias_has_no_layer_norm_bias_either():
    """bias=False kept the LayerNorms' biases although the docstring says every bias goes."""
    from helpers.gpt import GPT

    model = GPT(11, d_model=16, num_heads=2, num_layers=2, d_ff=32, bias=False, norm="layer")
    assert [n for n, _ in model.named_parameters() if n.endswith("bias")] == []
    with_bias = GPT(11, d_model=16, num_heads=2, num_layers=2, d_ff=32, norm="layer")
    assert any(n.endswith("norm.bias") for n, _ in with_bias.named_parameters())


@pytest.mark.parametrize("factor, message", [(2.0, r"needs a head width d_k > 2; this model's is 2"),
                                             (1e300, r"needs a head width d_k > 2")])
def test_ntk_scaling_refuses_a_head_width_of_two(factor, message):
    """head_dim 2: ZeroDivisionError at the next forward."""
    from helpers.gpt import GPT

    model = GPT(11, d_model=4, num_heads=2, num_layers=1, d_ff=8, max_len=16, positions="rope")
    with pytest.raises(ValueError, match=rf"GPT.set_rope_scaling: 'ntk' .*{message}"):
        model.set_rope_scaling("ntk", factor)


def test_ntk_scaling_refuses_a_factor_that_overflows_the_base():
    from helpers.gpt import GPT

    model = GPT(11, d_model=16, num_heads=2, num_layers=1, d_ff=8, max_len=16, positions="rope")
    with pytest.raises(ValueError, match=r"GPT.set_rope_scaling: factor=1e\+300 makes the NTK base"):
        model.set_rope_scaling("ntk", 1e300)
    model.set_rope_scaling("ntk", 4.0)  # an ordinary factor still works
    assert torch.isfinite(model(torch.zeros(1, 3, dtype=torch.long))).all()


@pytest.mark.parametrize("kwargs", [{}, {"positions": "rope", "qk_norm": True, "norm": "rms"},
                                    {"positions": "rope", "window": 2, "sinks": 1}])
def test_gpt_and_modern_block_run_on_the_meta_device(kwargs):
    """Their checks called .item() (RuntimeError on 'meta'); RMSNorm, GQA and apply_rope worked."""
    from helpers.gpt import GPT
    from helpers.modern import ModernBlock

    model = GPT(11, d_model=8, num_heads=2, num_layers=1, d_ff=16, max_len=16, **kwargs).to("meta")
    assert model(torch.zeros(1, 3, dtype=torch.long, device="meta")).shape == (1, 3, 11)
    block = ModernBlock(8, 2, 1, 16, rope=True, qk_norm=True, norm="rms").to("meta")
    assert block(torch.zeros(1, 3, 8, device="meta"), window=2, sinks=1).shape == (1, 3, 8)


@pytest.mark.parametrize("length, n_pad, error, name", [
    (4.0, 1, TypeError, "length"), (True, 0, TypeError, "length"), ("4", 1, TypeError, "length"),
    (4, 1.0, TypeError, "n_pad"), (4, True, TypeError, "n_pad"), (4, "1", TypeError, "n_pad")])
def test_build_mask_refuses_lengths_that_are_not_ints(length, n_pad, error, name):
    from helpers.widgets.masks import build_mask, mask_explorer_view

    with pytest.raises(error, match=rf"build_mask: {name} must be an int, got"):
        build_mask("padding", length, n_pad)
    assert isinstance(mask_explorer_view("padding", length, n_pad), str)  # the widget says why
