"""Each checker of notebooks 07-09: says "not attempted" for the stub, rejects plausible wrong
answers with a helpful message, accepts a right one."""

import pytest
import torch
import torch.nn.functional as F

from helpers.exercises import nb07, nb08, nb09

ALL = [nb07.check_layer_norm, nb07.check_sublayer_connection, nb08.check_torch_masks,
       nb08.check_most_attended, nb08.check_cross_attention_zeros, nb09.check_param_count,
       nb09.check_shift_targets]


def stub(*args):
    raise NotImplementedError


def accepts(check, fn, capsys):
    assert check(fn)
    assert "correct!" in capsys.readouterr().out


def rejects(check, fn, match):
    with pytest.raises(AssertionError, match=match):
        check(fn)


@pytest.mark.parametrize("check", ALL)
def test_stub_is_not_attempted(check, capsys):
    assert not check(stub)
    assert not check(None)
    assert "not attempted yet" in capsys.readouterr().out


# --- nb07 ---
def ln(x, gamma, beta, eps, unbiased=False, dim=-1, affine=True):
    mean = x.mean(dim, keepdim=True)
    y = (x - mean) / torch.sqrt(x.var(dim, keepdim=True, unbiased=unbiased) + eps)
    return y * gamma + beta if affine else y


def test_layer_norm(capsys):
    accepts(nb07.check_layer_norm, ln, capsys)
    accepts(nb07.check_layer_norm, lambda x, g, b, e: F.layer_norm(x, x.shape[-1:], g, b, e), capsys)
    rejects(nb07.check_layer_norm, lambda x, g, b, e: ln(x, g, b, e, unbiased=True), "unbiased variance")
    rejects(nb07.check_layer_norm, lambda x, g, b, e: ln(x, g, b, e, affine=False), "gamma")
    rejects(nb07.check_layer_norm, lambda x, g, b, e: ln(x, g, b, e, dim=1), "positions")
    rejects(nb07.check_layer_norm, lambda x, g, b, e: x - x.mean(-1, keepdim=True), "F.layer_norm")
    rejects(nb07.check_layer_norm, lambda x, g, b, e: ln(x, g, b, e)[0], "shape")


def test_layer_norm_rejects_eps_outside_the_square_root(capsys):
    def outside(x, gamma, beta, eps):
        mean = x.mean(-1, keepdim=True)
        return (x - mean) / (x.var(-1, keepdim=True, unbiased=False).sqrt() + eps) * gamma + beta

    rejects(nb07.check_layer_norm, outside, r"eps=0\.1: largest difference .*standard deviation \+ eps")


def test_layer_norm_rejects_a_missing_eps(capsys):
    rejects(nb07.check_layer_norm, lambda x, g, b, e: ln(x, g, b, 0.0), r"eps=0\.1: does not match")


def test_input_gradient(capsys):
    accepts(lambda fn: nb07.check_input_gradient(fn, "pre-LN"), nb07.input_grad_norm, capsys)
    rejects(lambda fn: nb07.check_input_gradient(fn, "post-LN"), nb07.input_grad_norm,
            r"you predicted post-LN; measured with 12 layers, post-LN passes 0\.\d{4}")
    rejects(lambda fn: nb07.check_input_gradient(fn, "pre-LN"),
            lambda n, nf: nb07.input_grad_norm(n, not nf), r"returned 0\.\d{4}, the reference")
    rejects(lambda fn: nb07.check_input_gradient(fn, "both"), nb07.input_grad_norm, "must be")
    assert not nb07.check_input_gradient(nb07.input_grad_norm, ...)
    assert "not attempted" in capsys.readouterr().out


def test_input_gradient_claim_holds():
    """What the prediction is about: at 12 layers, pre-LN passes more gradient to the input."""
    assert nb07.input_grad_norm(12, True) > 1.2 * nb07.input_grad_norm(12, False)


def test_sublayer_connection(capsys):
    def right(x, f, norm, norm_first):
        return x + f(norm(x)) if norm_first else norm(x + f(x))

    accepts(nb07.check_sublayer_connection, right, capsys)
    rejects(nb07.check_sublayer_connection, lambda x, f, n, nf: right(x, f, n, not nf),
            r"norm_first=False returned the pre-LN result .*differences from the expected \d\.\d{4}")
    rejects(nb07.check_sublayer_connection,
            lambda x, f, n, nf: f(n(x)) if nf else n(x + f(x)), "forgot the residual")
    rejects(nb07.check_sublayer_connection,
            lambda x, f, n, nf: x + f(n(x)) if nf else n(f(x)), "forgot the residual")
    rejects(nb07.check_sublayer_connection,
            lambda x, f, n, nf: n(x + f(n(x))) if nf else n(x + f(x)), "pre-LN")


# --- nb08 ---
def test_torch_masks(capsys):
    accepts(nb08.check_torch_masks, lambda t, s: (~t, ~s[:, 0, 0, :]), capsys)
    rejects(nb08.check_torch_masks, lambda t, s: (t, ~s[:, 0, 0, :]), "polarity")
    rejects(nb08.check_torch_masks, lambda t, s: (~t, s[:, 0, 0, :]), "polarity")
    rejects(nb08.check_torch_masks, lambda t, s: (~t, ~s), r"\(B, Ls\)")
    rejects(nb08.check_torch_masks, lambda t, s: ((~t).float(), ~s[:, 0, 0, :]), "boolean")
    rejects(nb08.check_torch_masks, lambda t, s: (~t.T, ~s[:, 0, 0, :]),
            r"tgt_mask: 12 of 16 entries are wrong, e\.g\. \(query, key\)")
    rejects(nb08.check_torch_masks, lambda t, s: (~t, ~s[:, 0, 0, :].flip(0)),
            r"memory_key_padding_mask: 4 of 10 entries are wrong")


def test_most_attended(capsys):
    def right(w, src):
        return [src[j] for j in w.mean(0).argmax(-1).tolist()]

    accepts(nb08.check_most_attended, right, capsys)
    accepts(nb08.check_most_attended, lambda w, src: [src[j] for j in w.sum(0).argmax(-1).tolist()],
            capsys)
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w.mean(0).argmax(0).tolist()], "target axis|which dimension")
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w[0].argmax(-1).tolist()], "head 0 alone")
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w[1].argmax(-1).tolist()], "head 1 alone")
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w.amax(0).argmax(-1).tolist()], "largest weight of any head")
    rejects(nb08.check_most_attended, lambda w, src: src[:4], "wrong token at target position")


def test_cross_attention_zeros(capsys):
    def right(src, tgt, pad_id):
        return (src == pad_id)[:, None, :].expand(-1, tgt.shape[1], -1)

    accepts(nb08.check_cross_attention_zeros, right, capsys)
    rejects(nb08.check_cross_attention_zeros,
            lambda s, t, p: right(s, t, p) | torch.ones(4, 5, dtype=torch.bool).triu(1), "causal")
    rejects(nb08.check_cross_attention_zeros,
            lambda s, t, p: right(s, t, p) | (t == p)[:, :, None], "target's or the source's")
    rejects(nb08.check_cross_attention_zeros, lambda s, t, p: ~right(s, t, p), "swapped")
    rejects(nb08.check_cross_attention_zeros, lambda s, t, p: right(s, t, p).transpose(1, 2),
            r"\(B, Lt, Ls\) = \(2, 4, 5\).*got \(2, 5, 4\)")
    rejects(nb08.check_cross_attention_zeros, lambda s, t, p: right(s, t, p).float(), "boolean")
    rejects(nb08.check_cross_attention_zeros,
            lambda s, t, p: torch.zeros(2, 4, 5, dtype=torch.bool), "8 of 40 flags are wrong")


# --- nb09 ---
def test_param_count(capsys):
    accepts(nb09.check_param_count, nb09.transformer_param_count, capsys)

    def no_norms(s, t, d, n, f, nf, tie):  # 5 LayerNorms per layer pair forgotten
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - n * 5 * 2 * d

    def no_attention_biases(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - n * 3 * 4 * d

    def no_final(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, False, tie)

    def tied_twice(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, False)

    rejects(nb09.check_param_count, no_norms, r"got \d+, 320 too few: that is 10 blocks of 2·d_model")
    rejects(nb09.check_param_count, no_final, r"got \d+, 4·d_model = 64 too few")
    rejects(nb09.check_param_count, tied_twice, r"got \d+, d_model·tgt_vocab = 208 too many")
    rejects(nb09.check_param_count, no_attention_biases, "attention's biases")
    rejects(nb09.check_param_count, lambda *a: 1000, r"got 1000, expected \d+ \(difference -\d+\)")


def test_param_count_formula_matches_the_model():
    from helpers import Transformer

    for nf in (False, True):
        for tie in (False, True):
            m = Transformer(7, 9, d_model=8, num_heads=2, num_layers=3, d_ff=20, norm_first=nf,
                            tie_weights=tie)
            assert sum(p.numel() for p in m.parameters()) == nb09.transformer_param_count(
                7, 9, 8, 3, 20, nf, tie)


def test_shift_targets(capsys):
    accepts(nb09.check_shift_targets, lambda t: (t[:, :-1], t[:, 1:]), capsys)
    rejects(nb09.check_shift_targets, lambda t: (t[:, 1:], t[:, :-1]), "swapped")
    rejects(nb09.check_shift_targets, lambda t: (t, t), r"\(B, L - 1\)")
    rejects(nb09.check_shift_targets, lambda t: (t[:, :-1], t[:, :-1]), r"labels: for the target \[1, 5, 6, 7, 2\]")
    rejects(nb09.check_shift_targets, lambda t: (t[:, 1:], t[:, 1:]), "decoder_input: for the target")
    rejects(nb09.check_shift_targets, lambda t: t[:, :-1], "tuple")


RIGHT_SHAPES = {"decoder input": (4, 6), "memory": (4, 9, 64),
                "queries per head (cross-attention)": (4, 8, 6, 8),
                "cross-attention weights": (4, 8, 6, 9), "decoder self-attention weights": (4, 8, 6, 6),
                "feed-forward hidden (decoder)": (4, 6, 256), "logits": (4, 6, 40)}


def test_shapes(capsys):
    accepts(nb09.check_shapes, RIGHT_SHAPES, capsys)
    assert not nb09.check_shapes(dict.fromkeys(nb09.SHAPE_STEPS, ...))
    assert "not attempted" in capsys.readouterr().out

    def wrong(**changes):
        return {**RIGHT_SHAPES, **changes}

    rejects(nb09.check_shapes, wrong(**{"decoder input": (4, 7)}),
            r"first: 'decoder input', you gave \(4, 7\).*without one of its tokens")
    rejects(nb09.check_shapes, wrong(**{"queries per head (cross-attention)": (4, 8, 6, 64)}),
            "how wide is one head")
    rejects(nb09.check_shapes, wrong(**{"cross-attention weights": (4, 8, 9, 6)}), "keys of cross")
    rejects(nb09.check_shapes, wrong(logits=(4, 6, 30)), "which vocabulary")
    rejects(nb09.check_shapes, {k: v for k, v in RIGHT_SHAPES.items() if k != "memory"}, "memory")
    rejects(nb09.check_shapes, wrong(memory="big"), "tuple of ints")
