"""Checkers for the exercises of notebook 07 (the encoder)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._common import NotAttempted, call, checker

__all__ = ["check_input_gradient", "check_layer_norm", "check_sublayer_connection", "input_grad_norm"]


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


@checker("Exercise 1 (LayerNorm from scratch)")
def check_layer_norm(fn):
    """``fn(x, gamma, beta, eps)`` normalises the last dimension of x like ``F.layer_norm``.

    Two cases: features of spread about 3 with eps = 1e-5, and features of spread about 0.1 with
    eps = 0.1, where it matters whether eps is added to the variance or to the standard deviation.
    """
    gen = torch.Generator().manual_seed(7)
    cases = [(3.0 * torch.randn(2, 5, 6, generator=gen) + 1.5, 1e-5),  # (B, L, d_model)
             (0.1 * torch.randn(2, 5, 6, generator=gen) - 0.2, 0.1)]
    gamma = torch.rand(6, generator=gen) + 0.5
    beta = torch.randn(6, generator=gen)
    for x, eps in cases:
        got = call(fn, x, gamma, beta, eps)
        assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
        assert got.shape == x.shape, (f"the output keeps the input's shape {tuple(x.shape)}, "
                                      f"got {tuple(got.shape)}")
        want = F.layer_norm(x, (6,), gamma, beta, eps)
        mean = x.mean(-1, keepdim=True)
        centred = x - mean
        unbiased = centred / torch.sqrt(x.var(-1, keepdim=True, unbiased=True) + eps) * gamma + beta
        if torch.allclose(got, unbiased, atol=1e-5):
            raise AssertionError(
                f"eps={eps}: largest difference from F.layer_norm {_max_diff(got, want):.4f}, and your "
                "result matches the unbiased variance (divides by d - 1); LayerNorm divides by d"
            )
        std = x.var(-1, keepdim=True, unbiased=False).sqrt()
        outside = centred / (std + eps) * gamma + beta
        if not torch.allclose(outside, want, atol=1e-5) and torch.allclose(got, outside, atol=1e-5):
            raise AssertionError(
                f"eps={eps}: largest difference from F.layer_norm {_max_diff(got, want):.4f}; your "
                "result divides by (standard deviation + eps). Check the formula: where is eps added?"
            )
        plain = F.layer_norm(x, (6,), None, None, eps)
        if torch.allclose(got, plain, atol=1e-5):
            raise AssertionError(f"eps={eps}: each token has mean 0 and spread 1, as expected before "
                                 "the affine step, but gamma and beta are not applied")
        over = (x - x.mean(1, keepdim=True)) / torch.sqrt(x.var(1, keepdim=True, unbiased=False) + eps)
        if torch.allclose(got, over * gamma + beta, atol=1e-5):
            raise AssertionError(f"eps={eps}: you normalised over the positions (dim 1); LayerNorm "
                                 "normalises each token over its features, the last dimension")
        torch.testing.assert_close(got, want, msg=lambda m, eps=eps: f"eps={eps}: does not match "
                                   "F.layer_norm: " + m)


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
    far_post, far_pre = _max_diff(got_post, post), _max_diff(got_pre, pre)
    if torch.allclose(got_post, pre) and torch.allclose(got_pre, post):
        raise AssertionError(f"norm_first=False returned the pre-LN result and norm_first=True the "
                             f"post-LN one (largest differences from the expected {far_post:.4f}, "
                             f"{far_pre:.4f}): norm_first=False is the paper's post-LN")
    with torch.no_grad():
        no_res_pre, no_res_post = sublayer(norm(x)), norm(sublayer(x))
    if torch.allclose(got_pre, no_res_pre):
        raise AssertionError(f"norm_first=True: largest difference from the expected {far_pre:.4f}; "
                             "your output is sublayer(norm(x)) alone: you forgot the residual")
    if torch.allclose(got_post, no_res_post):
        raise AssertionError(f"norm_first=False: largest difference from the expected {far_post:.4f}; "
                             "your output is norm(sublayer(x)): you forgot the residual")
    torch.testing.assert_close(got_post, post, msg=lambda m: "norm_first=False (post-LN) is wrong: " + m)
    torch.testing.assert_close(got_pre, pre, msg=lambda m: "norm_first=True (pre-LN) is wrong: " + m)

def input_grad_norm(num_layers: int, norm_first: bool, seeds=(0, 1, 2), d_model: int = 32) -> float:
    """The reference measurement of exercise 3: the norm of the gradient of the loss with respect
    to the encoder's input, at initialisation (the set-up of section 6), averaged over ``seeds``."""
    from ..layers import Encoder

    total = 0.0
    for seed in seeds:
        gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        encoder = Encoder(num_layers, d_model, 4, 4 * d_model, 0.0, norm_first)
        head = nn.Linear(d_model, 32)
        for p in encoder.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        x = torch.randn(32, 16, d_model, generator=gen, requires_grad=True)  # (B, L, d_model)
        labels = torch.randint(32, (32, 16), generator=gen)  # (B, L)
        F.cross_entropy(head(encoder(x)).flatten(0, 1), labels.flatten()).backward()
        total += float(x.grad.norm())
    return total / len(seeds)


@checker("Exercise 3 (the gradient that reaches the input)")
def check_input_gradient(fn, prediction):
    """``fn(num_layers, norm_first)`` -> float, the measurement; ``prediction``: which arrangement,
    "post-LN" or "pre-LN", passes the larger gradient to the input of a 12-layer stack."""
    for n, norm_first in ((2, False), (3, True)):
        got = call(fn, n, norm_first)
        assert isinstance(got, float | int | torch.Tensor), (
            f"input_grad_norm({n}, {norm_first}): return a number, got {type(got).__name__}")
        want = input_grad_norm(n, norm_first)
        if abs(float(got) - want) > 1e-4 * max(1.0, want):
            raise AssertionError(
                f"input_grad_norm({n}, norm_first={norm_first}) returned {float(got):.4f}, the "
                f"reference measures {want:.4f}: use the set-up of section 6 (seeds 0, 1, 2, "
                "Xavier-uniform matrices) and take the norm of the gradient of the input x")
    if prediction is None or prediction is Ellipsis:
        raise NotAttempted
    assert prediction in ("post-LN", "pre-LN"), (
        f'prediction must be "post-LN" or "pre-LN", got {prediction!r}')
    post, pre = input_grad_norm(12, False), input_grad_norm(12, True)
    larger = "post-LN" if post > pre else "pre-LN"
    if prediction != larger:
        raise AssertionError(f"you predicted {prediction}; measured with 12 layers, post-LN passes "
                             f"{post:.4f} to the input and pre-LN {pre:.4f}. Where does each "
                             "arrangement put a LayerNorm on the identity path?")
