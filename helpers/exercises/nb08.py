"""Checkers for the exercises of notebook 08 (the decoder and cross-attention)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["check_cross_attention_zeros", "check_most_attended", "check_torch_masks"]


@checker("Exercise 1 (masks for nn.TransformerDecoderLayer)")
def check_torch_masks(fn):
    """``fn(tgt_mask, src_mask)``: our (Lt, Lt) causal mask and our (B, 1, 1, Ls) padding mask,
    both True = may attend -> (tgt_mask for torch (Lt, Lt), memory_key_padding_mask (B, Ls)),
    both True = ignore."""
    tgt_mask = torch.ones(4, 4, dtype=torch.bool).tril()  # (Lt, Lt)
    src_ok = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])
    src_mask = src_ok[:, None, None, :]  # (B, 1, 1, Ls)
    got = call(fn, tgt_mask, src_mask)
    assert isinstance(got, tuple) and len(got) == 2, "return a tuple (tgt_mask, memory_key_padding_mask)"
    t, m = got
    for name, v in (("tgt_mask", t), ("memory_key_padding_mask", m)):
        assert isinstance(v, torch.Tensor) and v.dtype == torch.bool, (
            f"{name} must be a boolean tensor, got {getattr(v, 'dtype', type(v).__name__)}")
    assert t.shape == (4, 4), f"tgt_mask for torch stays (Lt, Lt) = (4, 4), got {tuple(t.shape)}"
    assert m.shape == (2, 5), (f"memory_key_padding_mask must be (B, Ls) = (2, 5): one flag per source "
                               f"token, got {tuple(m.shape)}")
    if torch.equal(t, tgt_mask):
        raise AssertionError(f"tgt_mask is True at {int(t.sum())} of 16 entries, on and below the "
                             "diagonal: that is our polarity (True = may attend); torch's boolean "
                             "masks mean True = ignore")
    if torch.equal(m, src_ok):
        raise AssertionError(f"memory_key_padding_mask is True at the {int(m.sum())} real tokens: that "
                             "is our polarity; torch wants True = padding (ignore)")
    bad_t = (t != ~tgt_mask).nonzero().tolist()
    assert not bad_t, (f"tgt_mask: {len(bad_t)} of 16 entries are wrong, e.g. (query, key) = "
                       f"{tuple(bad_t[0])}, where you put {bool(t[tuple(bad_t[0])])}; True should mark "
                       "the keys a query may not see")
    bad_m = (m != ~src_ok).nonzero().tolist()
    assert not bad_m, (f"memory_key_padding_mask: {len(bad_m)} of 10 entries are wrong, e.g. "
                       f"(b, j) = {tuple(bad_m[0])}; True should mark the source padding")


@checker("Exercise 2 (which source token does each target token read?)")
def check_most_attended(fn):
    """``fn(weights, src_tokens)``: weights (num_heads, Lt, Ls) -> list of Lt source tokens, the
    one with the largest head-averaged weight for each target position."""
    gen = torch.Generator().manual_seed(1)  # a case where the mean, the max and each head disagree
    weights = torch.softmax(3.0 * torch.randn(2, 4, 5, generator=gen), dim=-1)  # (h, Lt, Ls)
    src = ["le", "chat", "noir", "dort", "<eos>"]
    got = call(fn, weights, src)
    assert isinstance(got, list | tuple), f"return a list of tokens, got {type(got).__name__}"
    got = list(got)
    mean = weights.mean(0)  # (Lt, Ls)
    want = [src[j] for j in mean.argmax(-1).tolist()]
    wrong_axis = [src[j] for j in mean.argmax(0).tolist()]
    if got == wrong_axis:
        raise AssertionError(f"expected {len(want)} tokens (one per target position), got {len(got)}: "
                             "rows are target positions (Lt), columns source positions (Ls); which "
                             "dimension should the argmax run along?")
    assert len(got) == len(want), f"one token per target position: expected {len(want)}, got {len(got)}"
    for h in range(weights.shape[0]):
        one_head = [src[j] for j in weights[h].argmax(-1).tolist()]
        if got == one_head:
            raise AssertionError(f"your tokens {got} are those of head {h} alone; the exercise "
                                 "combines all heads")
    largest = [src[j] for j in weights.amax(0).argmax(-1).tolist()]
    if got == largest:
        raise AssertionError(f"your tokens {got} follow the largest weight of any head; the exercise "
                             "asks for the head-averaged weight")
    wrong = [t for t, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    assert not wrong, f"wrong token at target position(s) {wrong}; you gave {got}"


@checker("Exercise 3 (which cross-attention weights are exactly zero?)")
def check_cross_attention_zeros(fn):
    """``fn(src, tgt, pad_id)``: source ids (B, Ls) and decoder-input ids (B, Lt) -> a boolean
    (B, Lt, Ls) tensor, True exactly where a decoder's cross-attention weight is 0 (for every head
    and layer). Verified by running a decoder."""
    from ..attention import padding_mask, target_mask
    from ..layers import Decoder

    src = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0]])  # (B, Ls) = (2, 5), 0 = <pad>
    tgt = torch.tensor([[1, 3, 4, 5], [1, 3, 0, 0]])  # (B, Lt) = (2, 4), padded target too
    got = call(fn, src, tgt, 0)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, (
        f"return a boolean tensor, got {getattr(got, 'dtype', type(got).__name__)}")
    assert got.shape == (2, 4, 5), (f"expected shape (B, Lt, Ls) = (2, 4, 5), one flag per target "
                                    f"position and source position, got {tuple(got.shape)}")
    torch.manual_seed(0)
    dec = Decoder(2, 8, 2, 16).eval()
    y, memory = torch.randn(2, 4, 8), torch.randn(2, 5, 8)  # (B, Lt, d_model), (B, Ls, d_model)
    with torch.no_grad():
        dec(y, memory, target_mask(tgt, 0), padding_mask(src, 0))
    zero = torch.stack([layer.cross_attn.attn_weights == 0 for layer in dec.layers])  # (N, B, h, Lt, Ls)
    want = zero.all(0).all(1)  # (B, Lt, Ls): zero in every layer and head
    if torch.equal(got, ~want):
        raise AssertionError("your True and False are swapped: True should mark the weights that are 0")
    causal = torch.ones(4, 5, dtype=torch.bool).triu(1)
    if torch.equal(got, want | causal):
        raise AssertionError("you marked cells above the diagonal too: does cross-attention use the "
                             "causal mask? (count how many source positions exist when decoding starts)")
    if torch.equal(got, want | (tgt == 0)[:, :, None]):
        raise AssertionError("you marked whole rows of the padded target positions: which mask does "
                             "cross-attention receive, the target's or the source's?")
    wrong = (got != want).nonzero().tolist()
    assert not wrong, (f"{len(wrong)} of 40 flags are wrong, e.g. (b, t, j) = {wrong[0]}: you said "
                       f"{bool(got[tuple(wrong[0])])} there, the decoder's weight there is "
                       f"{'0' if want[tuple(wrong[0])] else 'not 0'}")
