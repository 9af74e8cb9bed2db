"""Checkers for the exercises of notebook 02 (softmax and scaling)."""

from __future__ import annotations

import torch

from ._common import call, checker

__all__ = ["check_softmax_jacobian", "check_stable_log_softmax"]


@checker("Exercise 1 (stable_log_softmax)")
def check_stable_log_softmax(fn) -> None:
    """``fn(x)`` returns log(softmax(x)) over the last dimension, without overflow or -inf."""
    g = torch.Generator().manual_seed(2)
    cases = [
        torch.tensor([1.0, 2.0, 3.0]),
        torch.randn(2, 3, 5, generator=g),
        torch.tensor([[1000.0, 0.0, -1000.0], [-500.0, -501.0, -502.0]]),
    ]
    for x in cases:
        got = torch.as_tensor(call(fn, x.clone()))
        assert got.shape == x.shape, (
            f"for input of shape {tuple(x.shape)} expected the same shape, got {tuple(got.shape)}")
        if not torch.isfinite(got).all():
            raise AssertionError(
                f"for x = {x.tolist()} expected finite numbers, got {got.tolist()}: exp "
                "overflows (inf, nan), or the softmax underflows to 0 and its log is -inf. "
                "Subtract the max first, and never take the log of the softmax itself")
        torch.testing.assert_close(
            got, torch.log_softmax(x, dim=-1),
            msg=lambda m, x=x: f"your result differs from torch.log_softmax for x of shape "
                               f"{tuple(x.shape)}:\n{m}")


@checker("Exercise 2 (softmax_jacobian)")
def check_softmax_jacobian(fn) -> None:
    """``fn(p)`` returns the (n, n) Jacobian d softmax(s)_i / d s_j given p = softmax(s)."""
    g = torch.Generator().manual_seed(3)
    for s in (torch.tensor([2.0, 1.0, 0.1]), torch.randn(5, generator=g) * 3):
        p = torch.softmax(s, dim=-1)
        got = torch.as_tensor(call(fn, p.clone()))
        want = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=-1), s)
        n = p.shape[0]
        assert got.shape == (n, n), (
            f"for p of {n} weights expected an ({n}, {n}) matrix, got shape {tuple(got.shape)}")
        if torch.allclose(got, torch.diag(p), atol=1e-5):
            raise AssertionError(
                f"for p = {[round(v, 4) for v in p.tolist()]} expected off-diagonal entries like "
                f"J[0, 1] = {want[0, 1].item():.4f}, got {got[0, 1].item():.4f}: diag(p) is only "
                "half of it, since raising one score also lowers every other weight")
        if torch.allclose(got, torch.diag(p) + torch.outer(p, p), atol=1e-5):
            raise AssertionError(
                f"expected each column of J to sum to 0 (the weights still sum to one), got column "
                f"sums {[round(v, 4) for v in got.sum(0).tolist()]}: check the sign of the p p^T "
                "term")
        torch.testing.assert_close(
            got, want, msg=lambda m: f"your Jacobian differs from torch.autograd's:\n{m}")
