"""Checkers for the exercises of notebook 07 (the encoder)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._common import call, checker

__all__ = ["check_layer_norm", "check_sublayer_connection"]


@checker("Exercise 1 (LayerNorm from scratch)")
def check_layer_norm(fn):
    """``fn(x, gamma, beta, eps)`` normalises the last dimension of x like ``F.layer_norm``."""
    gen = torch.Generator().manual_seed(7)
    x = 3.0 * torch.randn(2, 5, 6, generator=gen) + 1.5  # (B, L, d_model)
    gamma = torch.rand(6, generator=gen) + 0.5
    beta = torch.randn(6, generator=gen)
    got = call(fn, x, gamma, beta, 1e-5)
    assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
    assert got.shape == x.shape, f"the output keeps the input's shape {tuple(x.shape)}, got {tuple(got.shape)}"
    want = F.layer_norm(x, (6,), gamma, beta, 1e-5)
    mean = x.mean(-1, keepdim=True)
    unbiased = (x - mean) / torch.sqrt(x.var(-1, keepdim=True, unbiased=True) + 1e-5) * gamma + beta
    if torch.allclose(got, unbiased, atol=1e-5):
        raise AssertionError(
            "close, but you used the unbiased variance (divides by d - 1). LayerNorm divides by d: "
            "use x.var(-1, unbiased=False, keepdim=True) or ((x - mean) ** 2).mean(-1, keepdim=True)"
        )
    plain = F.layer_norm(x, (6,), None, None, 1e-5)
    if torch.allclose(got, plain, atol=1e-5):
        raise AssertionError("the normalisation is right; now scale by gamma and shift by beta")
    over_tokens = (x - x.mean(1, keepdim=True)) / torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
    if torch.allclose(got, over_tokens * gamma + beta, atol=1e-5):
        raise AssertionError("you normalised over the positions (dim 1); LayerNorm normalises each "
                             "token over its features, the last dimension")
    torch.testing.assert_close(got, want, msg=lambda m: "does not match F.layer_norm: " + m)


@checker("Exercise 2 (post-LN and pre-LN residual connection)")
def check_sublayer_connection(fn):
    """``fn(x, sublayer, norm, norm_first)``: post-LN norm(x + sublayer(x)); pre-LN
    x + sublayer(norm(x))."""
    torch.manual_seed(3)
    sublayer = nn.Linear(4, 4)
    norm = nn.LayerNorm(4)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    x = 2.0 * torch.randn(2, 3, 4) + 1.0  # (B, L, d_model)
    with torch.no_grad():
        post = norm(x + sublayer(x))
        pre = x + sublayer(norm(x))
        got_post = call(fn, x, sublayer, norm, False)
        got_pre = call(fn, x, sublayer, norm, True)
    for got, label in ((got_post, "norm_first=False"), (got_pre, "norm_first=True")):
        assert isinstance(got, torch.Tensor), f"{label}: return a tensor, got {type(got).__name__}"
        assert got.shape == x.shape, f"{label}: expected shape {tuple(x.shape)}, got {tuple(got.shape)}"
    if torch.allclose(got_post, pre) and torch.allclose(got_pre, post):
        raise AssertionError("post-LN and pre-LN are swapped: norm_first=False (the paper's post-LN) "
                             "normalises after the residual sum, norm_first=True before the sublayer")
    if torch.allclose(got_pre, sublayer(norm(x)).detach()):
        raise AssertionError("norm_first=True: you forgot the residual, add x back")
    if torch.allclose(got_post, norm(sublayer(x)).detach()):
        raise AssertionError("norm_first=False: you forgot the residual, normalise x + sublayer(x)")
    torch.testing.assert_close(got_post, post, msg=lambda m: "norm_first=False (post-LN) is wrong: " + m)
    torch.testing.assert_close(got_pre, pre, msg=lambda m: "norm_first=True (pre-LN) is wrong: " + m)
