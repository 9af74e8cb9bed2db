"""Checkers for the exercises of notebook 08 (the decoder and cross-attention)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["check_most_attended", "check_torch_masks"]


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
        raise AssertionError("tgt_mask has our polarity (True = may attend); torch's boolean masks mean "
                             "True = ignore: flip it with ~")
    if torch.equal(m, src_ok):
        raise AssertionError("memory_key_padding_mask has our polarity (True = real token); torch wants "
                             "True = padding (ignore): flip it with ~")
    assert torch.equal(t, ~tgt_mask), "tgt_mask must be True strictly above the diagonal (the future)"
    assert torch.equal(m, ~src_ok), "memory_key_padding_mask must be True exactly at the padding"


@checker("Exercise 2 (which source token does each target token read?)")
def check_most_attended(fn):
    """``fn(weights, src_tokens)``: weights (num_heads, Lt, Ls) -> list of Lt source tokens, the
    one with the largest head-averaged weight for each target position."""
    gen = torch.Generator().manual_seed(11)
    weights = torch.softmax(3.0 * torch.randn(2, 4, 5, generator=gen), dim=-1)  # (h, Lt, Ls)
    src = ["le", "chat", "noir", "dort", "<eos>"]
    got = call(fn, weights, src)
    assert isinstance(got, list | tuple), f"return a list of tokens, got {type(got).__name__}"
    mean = weights.mean(0)  # (Lt, Ls)
    want = [src[j] for j in mean.argmax(-1).tolist()]
    wrong_axis = [src[j] for j in mean.argmax(0).tolist()]
    if list(got) == wrong_axis[: len(got)] and len(got) != len(want):
        raise AssertionError("you took the argmax over the target axis: rows are target positions "
                             "(Lt), columns source positions (Ls), so take it along the last dimension")
    assert len(got) == len(want), f"one token per target position: expected {len(want)}, got {len(got)}"
    head0 = [src[j] for j in weights[0].argmax(-1).tolist()]
    if list(got) == head0 and head0 != want:
        raise AssertionError("that is head 0 only: average the weights over the heads (dim 0) first")
    assert list(got) == want, f"expected {want}, got {list(got)}"
