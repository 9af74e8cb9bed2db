"""Each checker of notebooks 07-09: says "not attempted" for the stub, rejects plausible wrong
answers with a helpful message, accepts a right one."""

import pytest
import torch
import torch.nn.functional as F

from helpers.exercises import nb07, nb08, nb09

ALL = [nb07.check_layer_norm, nb07.check_sublayer_connection, nb08.check_torch_masks,
       nb08.check_most_attended, nb09.check_param_count, nb09.check_shift_targets]


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


def test_sublayer_connection(capsys):
    def right(x, f, norm, norm_first):
        return x + f(norm(x)) if norm_first else norm(x + f(x))

    accepts(nb07.check_sublayer_connection, right, capsys)
    rejects(nb07.check_sublayer_connection, lambda x, f, n, nf: right(x, f, n, not nf), "swapped")
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
    rejects(nb08.check_torch_masks, lambda t, s: (~t.T, ~s[:, 0, 0, :]), "above the diagonal")


def test_most_attended(capsys):
    def right(w, src):
        return [src[j] for j in w.mean(0).argmax(-1).tolist()]

    accepts(nb08.check_most_attended, right, capsys)
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w.mean(0).argmax(0).tolist()], "target axis")
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w[0].argmax(-1).tolist()], "head 0 only")
    rejects(nb08.check_most_attended, lambda w, src: src[:4], "expected")


# --- nb09 ---
def test_param_count(capsys):
    accepts(nb09.check_param_count, nb09.transformer_param_count, capsys)

    def no_norms(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - n * 14 * d

    def no_final(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, False, tie)

    def tied_twice(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, False)

    rejects(nb09.check_param_count, no_norms, "LayerNorms inside the layers")
    rejects(nb09.check_param_count, no_final, "one more")
    rejects(nb09.check_param_count, tied_twice, "count it once")
    rejects(nb09.check_param_count, lambda *a: 1000, "difference")


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
    rejects(nb09.check_shift_targets, lambda t: (t[:, :-1], t[:, :-1]), "shifted left")
    rejects(nb09.check_shift_targets, lambda t: t[:, :-1], "tuple")
