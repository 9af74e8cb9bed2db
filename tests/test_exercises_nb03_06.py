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
                                   nb06.check_pe_with_base, nb06.check_rotate_pair])
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


def _pe(max_len, d, base, interleave=True):
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    angle = pos / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    if not interleave:
        return torch.cat([angle.sin(), angle.cos()], dim=-1)[:, :d]
    pe = torch.zeros(max_len, d)
    pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()[:, : d // 2]
    return pe


def test_nb06_pe_with_base(capsys):
    accepts(nb06.check_pe_with_base, _pe, capsys)
    rejects(nb06.check_pe_with_base, lambda n, d, b: _pe(n, d, b, interleave=False), "interleaved")
    rejects(nb06.check_pe_with_base, lambda n, d, b: _pe(n, d, 10000.0), "ignored `base`")
    rejects(nb06.check_pe_with_base, lambda n, d, b: _pe(n, d, b) + 0.01, "wrong table")


def test_nb06_rotate_pair(capsys):
    def rot(x, a, sign=1.0):
        c, s = math.cos(a), sign * math.sin(a)
        return torch.stack([x[..., 0] * c - x[..., 1] * s, x[..., 0] * s + x[..., 1] * c], dim=-1)

    accepts(nb06.check_rotate_pair, rot, capsys)
    rejects(nb06.check_rotate_pair, lambda x, a: rot(x, a, -1.0), "clockwise")
    rejects(nb06.check_rotate_pair, lambda x, a: rot(x, 2 * a), "wrong rotation")
    rejects(nb06.check_rotate_pair, lambda x, a: rot(x, a)[:, 0], "same shape")
