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
        want = torch.log_softmax(x, dim=-1)
        if x.dim() > 1 and _same(got, _global_shift(x)) and not _same(got, want):
            raise AssertionError(
                f"for x = {x.tolist()} you got {got.tolist()}: you subtracted the largest entry of "
                f"the whole tensor ({x.max().item():g}), so in a row whose own scores are far below it "
                "every exponential underflows to 0 and log(0) = -inf. Subtract each row's own maximum: "
                "s.amax(dim=-1, keepdim=True)")
        if not torch.isfinite(got).all():
            raise AssertionError(
                f"for x = {x.tolist()} expected finite numbers, got {got.tolist()}: exp "
                "overflows (inf, nan), or the softmax underflows to 0 and its log is -inf. "
                "Subtract each row's maximum first, and never take the log of the softmax itself")
        if not torch.allclose(got, want, rtol=1e-4, atol=1e-4):
            i = int((got - want).abs().flatten().argmax())
            raise AssertionError(
                f"for x of shape {tuple(x.shape)} expected log softmax over the last dimension, e.g. "
                f"{want.flatten()[i].item():.4f} at flat position {i}, got {got.flatten()[i].item():.4f}"
                + _log_softmax_hint(got, x))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True) \
        and bool((torch.isinf(a) == torch.isinf(b)).all())


def _global_shift(x: torch.Tensor) -> torch.Tensor:
    shifted = x - x.max()
    return shifted - torch.log(torch.exp(shifted).sum(dim=-1, keepdim=True))


def _log_softmax_hint(got: torch.Tensor, x: torch.Tensor) -> str:
    """A hint for the usual mistakes that stay finite."""
    if _same(got, x - x.amax(dim=-1, keepdim=True)):
        return ": that is s - max(s) only; the log of the sum, log(sum(exp(s - max(s)))), is missing"
    if x.dim() > 1 and _same(got, torch.log_softmax(x, dim=0)):
        return ": you normalised over the first dimension; the softmax runs over the last one (dim=-1)"
    lse = got.exp().sum(dim=-1)
    if not torch.allclose(lse, torch.ones_like(lse), atol=1e-3):
        return (f": exp of your result should sum to 1 along the last dimension, it sums to "
                f"{[round(v, 4) for v in lse.flatten()[:3].tolist()]}")
    return ""


@checker("Exercise 2 (softmax_jacobian)")
def check_softmax_jacobian(fn) -> None:
    """``fn(a)`` returns the (n, n) Jacobian d softmax(s)_i / d s_j given the weights a = softmax(s)."""
    g = torch.Generator().manual_seed(3)
    for s in (torch.tensor([2.0, 1.0, 0.1]), torch.randn(5, generator=g) * 3):
        a = torch.softmax(s, dim=-1)
        got = torch.as_tensor(call(fn, a.clone()))
        want = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=-1), s)
        n = a.shape[0]
        assert got.shape == (n, n), (
            f"for a of {n} weights expected an ({n}, {n}) matrix, got shape {tuple(got.shape)}")
        if torch.allclose(got, torch.diag(a), atol=1e-5):
            raise AssertionError(
                f"for a = {[round(v, 4) for v in a.tolist()]} expected off-diagonal entries like "
                f"J[0, 1] = {want[0, 1].item():.4f}, got {got[0, 1].item():.4f}: diag(a) is only "
                "half of it, since raising one score also lowers every other weight")
        if torch.allclose(got, torch.diag(a) - a @ a, atol=1e-5) or torch.allclose(got, a @ a - torch.diag(a), atol=1e-5):
            raise AssertionError(
                f"expected off-diagonal entries -a_i a_j that differ from pair to pair, got the same number "
                f"{got[0, 1].item():.4f} everywhere off the diagonal: for a 1-D tensor a, a @ a is ONE number "
                "(the sum of the a_j squared), not a matrix. The matrix of all products a_i a_j is "
                "torch.outer(a, a)")
        if any(torch.allclose(got, sign * (torch.diag(a) - a * a), atol=1e-5) for sign in (1, -1)):
            raise AssertionError(
                f"expected off-diagonal entries -a_i a_j, e.g. J[1, 0] = {want[1, 0].item():.4f}, got "
                f"{got[1, 0].item():.4f}, a_0 squared up to its sign: a * a is the elementwise square (a_j squared, one number "
                "per column, the same in every row), not the products a_i a_j of every pair. The matrix of "
                "all products a_i a_j is torch.outer(a, a)")
        if any(torch.allclose(got, sign * (torch.diag(a) - (a * a)[:, None]), atol=1e-5) for sign in (1, -1)):
            raise AssertionError(
                f"expected off-diagonal entries -a_i a_j, e.g. J[0, 1] = {want[0, 1].item():.4f}, got "
                f"{got[0, 1].item():.4f}, a_0 squared up to its sign: a[:, None] * a[:, None] multiplies each "
                "a_i by itself (a_i squared, one number per row, the same in every column), not by every a_j. "
                "The matrix of all products a_i a_j is torch.outer(a, a) (or a[:, None] * a[None, :])")
        if torch.allclose(got, torch.diag(a) + torch.outer(a, a), atol=1e-5):
            raise AssertionError(
                f"expected each column of J to sum to 0 (the weights still sum to one), got column "
                f"sums {[round(v, 4) for v in got.sum(0).tolist()]}: check the sign of the a a^T "
                "term")
        if torch.allclose(got, -want, atol=1e-5):
            raise AssertionError(
                f"expected diagonal entries a_i(1 - a_i) > 0, e.g. J[0, 0] = {want[0, 0].item():.4f}, got "
                f"{got[0, 0].item():.4f}: your signs are flipped (a a^T - diag(a) instead of "
                "diag(a) - a a^T)")
        if torch.allclose(got.diagonal(), want.diagonal(), atol=1e-5) and \
                torch.allclose(got - torch.diag(got.diagonal()), torch.zeros_like(got), atol=1e-8):
            raise AssertionError(
                f"expected off-diagonal entries -a_i a_j, e.g. J[0, 1] = {want[0, 1].item():.4f}, got "
                f"{got[0, 1].item():.4f}: the diagonal a_i(1 - a_i) is right, but raising score j also "
                "lowers every other weight i")
        if not torch.allclose(got, want, atol=1e-5):
            i, j = divmod(int((got - want).abs().argmax()), n)
            raise AssertionError(
                f"for a = {[round(v, 4) for v in a.tolist()]} expected J[{i}, {j}] = a_{i}(delta_{i}{j} "
                f"- a_{j}) = {want[i, j].item():.4f}, got {got[i, j].item():.4f} (the entry that is "
                f"furthest off; J[i, j] = da_i / ds_j)")
