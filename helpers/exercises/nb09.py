"""Checkers for the exercises of notebook 09 (the full Transformer)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["check_param_count", "check_shift_targets", "transformer_param_count"]


def transformer_param_count(src_vocab, tgt_vocab, d_model, num_layers, d_ff, norm_first=False,
                            tie_weights=False) -> int:
    """The reference formula (used by the checker and the unit tests)."""
    d = d_model
    mha = 4 * d * d + 4 * d
    ffn = 2 * d * d_ff + d_ff + d
    norm = 2 * d
    enc_layer = mha + ffn + 2 * norm
    dec_layer = 2 * mha + ffn + 3 * norm
    final_norms = 2 * norm if norm_first else 0
    out = (0 if tie_weights else d * tgt_vocab) + tgt_vocab
    return (src_vocab + tgt_vocab) * d + num_layers * (enc_layer + dec_layer) + final_norms + out


@checker("Exercise 1 (parameter count)")
def check_param_count(fn):
    """``fn(src_vocab, tgt_vocab, d_model, num_layers, d_ff, norm_first, tie_weights)`` -> int."""
    cases = [(11, 13, 16, 2, 32, False, False), (11, 13, 16, 2, 32, True, False),
             (11, 13, 16, 2, 32, False, True), (40, 30, 64, 3, 256, True, True),
             (1000, 1000, 512, 6, 2048, False, False)]
    for case in cases:
        got = call(fn, *case)
        want = transformer_param_count(*case)
        args = dict(zip(("src_vocab", "tgt_vocab", "d_model", "num_layers", "d_ff", "norm_first",
                         "tie_weights"), case, strict=True))
        s, t, d, n, f, nf, tie = case
        if got == want:
            continue
        if got == want - n * (7 * 2 * d):
            raise AssertionError(f"{args}: you forgot the LayerNorms inside the layers "
                                 "(2 per encoder layer, 3 per decoder layer, 2·d_model each)")
        if nf and got == want - 4 * d:
            raise AssertionError(f"{args}: with norm_first=True each stack ends with one more "
                                 "LayerNorm (2·d_model parameters each)")
        if tie and got == want + d * t:
            raise AssertionError(f"{args}: with tie_weights=True the output projection's matrix IS "
                                 "the target embedding: count it once (its bias stays)")
        raise AssertionError(f"{args}: got {got}, expected {want} (difference {got - want})")


@checker("Exercise 2 (teacher forcing: shift the targets)")
def check_shift_targets(fn):
    """``fn(tgt)``: tgt (B, L) = <bos> y1 .. yn <eos> -> (decoder_input, labels), each (B, L - 1)."""
    tgt = torch.tensor([[1, 5, 6, 7, 2], [1, 8, 9, 2, 0]])  # (B, L): 1 = <bos>, 2 = <eos>, 0 = <pad>
    got = call(fn, tgt)
    assert isinstance(got, tuple) and len(got) == 2, "return a tuple (decoder_input, labels)"
    inp, lab = got
    for name, v in (("decoder_input", inp), ("labels", lab)):
        assert isinstance(v, torch.Tensor), f"{name} must be a tensor, got {type(v).__name__}"
        assert v.shape == (2, 4), f"{name} must be (B, L - 1) = (2, 4), got {tuple(v.shape)}"
    if torch.equal(inp, tgt[:, 1:]) and torch.equal(lab, tgt[:, :-1]):
        raise AssertionError("swapped: the decoder reads <bos> y1 .. yn (drop the last token) and "
                             "must predict y1 .. yn <eos> (drop the first)")
    assert torch.equal(inp, tgt[:, :-1]), "decoder_input must start with <bos> and drop the last token"
    assert torch.equal(lab, tgt[:, 1:]), "labels must be the targets shifted left by one (drop <bos>)"
