"""Each checker of notebooks 03-06: says "not attempted" for the stub, rejects plausible wrong
answers with a helpful message, accepts a right one."""

import math

import pytest
import torch

from helpers.exercises import nb03, nb04, nb05, nb06


def stub(*args):
    raise NotImplementedError


def _attn(x_q, x_kv, w_q, w_k, w_v, scale=True):
    q, k, v = x_q @ w_q, x_kv @ w_k, x_kv @ w_v
    s = q @ k.T / (math.sqrt(k.shape[-1]) if scale else 1.0)
    return torch.softmax(s, dim=-1) @ v


def accepts(check, fn, capsys):
    assert check(fn)
    assert "correct!" in capsys.readouterr().out


def rejects(check, fn, match):
    with pytest.raises(AssertionError, match=match):
        check(fn)


@pytest.mark.parametrize("check", [nb03.check_self_attention_from_params, nb03.check_cross_attention,
                                   nb04.check_sliding_window_mask, nb04.check_decoder_mask,
                                   nb05.check_split_heads, nb05.check_mha_param_count,
                                   nb06.check_rope_score_at_offset])
def test_stub_is_not_attempted(check, capsys):
    assert not check(stub)
    assert "not attempted yet" in capsys.readouterr().out


def test_nb03_self_attention(capsys):
    accepts(nb03.check_self_attention_from_params, lambda x, a, b, c: _attn(x, x, a, b, c), capsys)
    rejects(nb03.check_self_attention_from_params, lambda x, a, b, c: _attn(x, x, a, b, c, scale=False),
            "not scaled")
    rejects(nb03.check_self_attention_from_params, lambda x, a, b, c: x @ a, r"expected shape \(L, d_v\)")
    rejects(nb03.check_self_attention_from_params, lambda x, a, b, c: _attn(x, x, a, a, c), "differs")


def test_nb03_cross_attention(capsys):
    accepts(nb03.check_cross_attention, _attn, capsys)
    rejects(nb03.check_cross_attention, lambda xq, xkv, a, b, c: _attn(xkv, xq, a, b, c), "one output per query")
    rejects(nb03.check_cross_attention, lambda xq, xkv, a, b, c: _attn(xq, xkv, a, b, c, scale=False),
            "keys and values from x_kv")


def test_nb04_sliding_window(capsys):
    def right(n, w):
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        return (j <= i) & (i - j < w)

    accepts(nb04.check_sliding_window_mask, right, capsys)
    rejects(nb04.check_sliding_window_mask, lambda n, w: ~right(n, w), "inverted")
    rejects(nb04.check_sliding_window_mask, lambda n, w: torch.ones(n, n, dtype=torch.bool).tril(),
            "just the causal mask")
    rejects(nb04.check_sliding_window_mask, lambda n, w: right(n, w + 1), "off by one")
    rejects(nb04.check_sliding_window_mask, lambda n, w: right(n, w).int(), "torch.bool")


def test_nb04_decoder_mask(capsys):
    def right(tokens, pad_id):
        n = tokens.shape[1]
        return torch.ones(n, n, dtype=torch.bool).tril() & (tokens != pad_id)[:, None, None, :]

    def with_or(tokens, pad_id):
        n = tokens.shape[1]
        return torch.ones(n, n, dtype=torch.bool).tril() | (tokens != pad_id)[:, None, None, :]

    def on_queries(tokens, pad_id):
        n = tokens.shape[1]
        return torch.ones(n, n, dtype=torch.bool).tril() & (tokens != pad_id)[:, None, :, None]

    accepts(nb04.check_decoder_mask, right, capsys)
    rejects(nb04.check_decoder_mask, with_or, "OR")
    rejects(nb04.check_decoder_mask, on_queries, "columns")
    rejects(nb04.check_decoder_mask, lambda t, p: right(t, p)[:, 0], r"\(B, 1, L, L\)")


def test_nb05_split_heads(capsys):
    def right(x, h):
        b, n, d = x.shape
        return x.view(b, n, h, d // h).transpose(1, 2)

    accepts(nb05.check_split_heads, right, capsys)
    rejects(nb05.check_split_heads, lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1), "plain reshape")
    rejects(nb05.check_split_heads, lambda x, h: right(x, h).transpose(2, 3), "expected")


def test_nb05_param_count(capsys):
    accepts(nb05.check_mha_param_count, lambda d, h, b: 4 * d * d + (4 * d if b else 0), capsys)
    rejects(nb05.check_mha_param_count, lambda d, h, b: 3 * d * d + (3 * d if b else 0), "W_o")
    rejects(nb05.check_mha_param_count, lambda d, h, b: 4 * d * d, "biases")
    rejects(nb05.check_mha_param_count, lambda d, h, b: h * (4 * d * d + (4 * d if b else 0)), "number of heads")


def _decoder_right(tokens, pad_id):
    n = tokens.shape[1]
    return torch.ones(n, n, dtype=torch.bool).tril() & (tokens != pad_id)[:, None, None, :]


def test_nb04_decoder_mask_left_padding_tells_padding_by_id_not_by_length():
    def by_length(tokens, pad_id):  # right only when the padding comes at the end
        n = tokens.shape[1]
        lengths = (tokens != pad_id).sum(-1)
        keys = torch.arange(n)[None, :] < lengths[:, None]
        return torch.ones(n, n, dtype=torch.bool).tril() & keys[:, None, None, :]

    rejects(nb04.check_decoder_mask, by_length, "left-padded")
    rejects(nb04.check_decoder_mask, lambda t, p: _decoder_right(t, p).transpose(-2, -1), "future")
    with pytest.raises(AssertionError, match=r"sequence 0, query 3: expected 3 allowed keys, got 0"):
        nb04.check_decoder_mask(lambda t, p: _decoder_right(t, p) & (t != p)[:, None, :, None])


def test_nb04_sliding_window_message_names_rows_not_the_answer():
    def window_from_the_future(n, w):
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        return (j >= i) & (j - i < w)

    with pytest.raises(AssertionError, match=r"query 1: expected 2 allowed keys, got 2") as info:
        nb04.check_sliding_window_mask(window_from_the_future)
    assert "expected\n" not in str(info.value)


def test_nb04_allowed_keys(capsys):
    assert not nb04.check_allowed_keys(None)
    assert "not attempted yet" in capsys.readouterr().out
    accepts(nb04.check_allowed_keys, {1: [], 3: [2, 3], 5: [3, 4, 5]}, capsys)
    rejects(nb04.check_allowed_keys, {1: [0, 1], 3: [1, 2, 3], 5: [3, 4, 5]}, "padding key")
    rejects(nb04.check_allowed_keys, {1: [], 3: [2, 3], 5: [2, 3, 4, 5]}, "further back than the window")
    rejects(nb04.check_allowed_keys, {1: [], 3: [2, 3, 4], 5: [3, 4, 5]}, "future key")
    rejects(nb04.check_allowed_keys, {1: [], 3: [3], 5: [3, 4, 5]}, r"leaves out 1 allowed")
    rejects(nb04.check_allowed_keys, [[], [2, 3], [3, 4, 5]], r"expected a dict with the queries \[1, 3, 5\]")


def test_nb05_messages_say_what_was_got():
    with pytest.raises(AssertionError, match=r"got 3 \* 2\*\*2|d_model=8, num_heads=2, bias=True: got 264"):
        nb05.check_mha_param_count(lambda d, h, b: 4 * d * d + 4 * d - 24)
    with pytest.raises(AssertionError, match=r"head 0 of token 0 \(batch 0\) holds"):
        nb05.check_split_heads(lambda x, h: x.view(x.shape[0], x.shape[1], h, -1).transpose(1, 2).flip(-1))


def _rope_score(q, k, offset):
    d = q.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = offset * omega
    a, b = k[0::2], k[1::2]
    k_rot = torch.stack([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1).flatten()
    return (q * k_rot).sum()


def test_nb06_rope_score_at_offset(capsys):
    from helpers import apply_rope

    def with_apply_rope(q, k, offset):  # q at position 0, k at position offset
        return apply_rope(q[None], torch.tensor([0])) @ apply_rope(k[None], torch.tensor([offset]))[0]

    accepts(nb06.check_rope_score_at_offset, _rope_score, capsys)
    accepts(nb06.check_rope_score_at_offset, lambda q, k, o: with_apply_rope(q, k, o).item(), capsys)
    rejects(nb06.check_rope_score_at_offset, lambda q, k, o: _rope_score(q, k, -o), "the score for offset")
    rejects(nb06.check_rope_score_at_offset, lambda q, k, o: (q * k).sum(), "without any rotation")
    rejects(nb06.check_rope_score_at_offset, lambda q, k, o: _rope_score(q, k, 2 * o), r"expected -?\d")
    rejects(nb06.check_rope_score_at_offset, lambda q, k, o: q * k, "one score")


def test_nb05_shapes(capsys):
    right = {"q": (2, 10, 64), "q_split": (2, 10, 8, 8), "q_heads": (2, 8, 10, 8), "scores": (2, 8, 10, 10),
             "merged": (2, 10, 64)}
    assert not nb05.check_shapes(None)
    assert "not attempted yet" in capsys.readouterr().out
    accepts(nb05.check_shapes, right, capsys)
    rejects(nb05.check_shapes, {**right, "scores": (2, 10, 10)}, "head axis stays")
    rejects(nb05.check_shapes, {**right, "q_heads": (2, 8, 10, 64)}, "d_k = d_model / num_heads")
    rejects(nb05.check_shapes, {**right, "scores": (2, 8, 10, 8)}, "summed away")
    rejects(nb05.check_shapes, {**right, "q_heads": (2, 10, 8, 8)}, r"q_heads: got \(2, 10, 8, 8\)")
    rejects(nb05.check_shapes, {**right, "q_split": (2, 8, 10, 8)}, "wrong order")
    rejects(nb05.check_shapes, [(2, 10, 64)], "expected a dict with the keys")
