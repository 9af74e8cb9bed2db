"""Choosing the next token from a language model's logits (notebook 12): greedy, temperature,
top-k and top-p (nucleus) sampling, written from scratch.

Every function works on logits (..., |V|) and leaves the shape alone. A filter keeps a set of
tokens and puts ``-inf`` on the others, so that a softmax gives them probability 0.
"""

from __future__ import annotations

import math

import torch

from . import _checks

__all__ = ["check_settings", "filtered_probs", "sample_next", "top_k_filter", "top_p_filter"]


def _check_logits(logits) -> None:
    if not isinstance(logits, torch.Tensor) or logits.dim() < 1 or logits.shape[-1] < 1:
        got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise ValueError(f"logits must be a tensor of shape (..., vocab_size), got {got}")
    if not logits.is_floating_point():
        raise TypeError(f"logits must be floating point, got {logits.dtype}")
    if torch.isnan(logits).any():
        raise ValueError("logits contain NaN")


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the ``k`` largest logits of each row (..., |V|), set the others to ``-inf``.

    Exactly ``k`` are kept (ties are broken by ``torch.topk``); ``k >= |V|`` keeps everything.
    """
    _check_logits(logits)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"top-k needs an int k >= 1, got {k!r}")
    if k >= logits.shape[-1]:
        return logits.clone()
    idx = logits.topk(k, dim=-1).indices  # (..., k)
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter_(-1, idx, True)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of most probable tokens whose probability reaches ``p`` (nucleus
    sampling), set the others to ``-inf``. At least one token is always kept; ``p = 1`` keeps all.
    """
    _check_logits(logits)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 < p <= 1.0:
        raise ValueError(f"top-p needs p in (0, 1], got {p!r}")
    if p == 1.0:
        return logits.clone()
    sorted_logits, order = logits.sort(dim=-1, descending=True)  # (..., |V|)
    probs = _softmax(sorted_logits.float())
    before = probs.cumsum(dim=-1) - probs  # probability of the tokens ranked above this one
    keep_sorted = before < p  # the first token always has before = 0 < p
    keep_sorted[..., 0] = True  # (also when a row is -inf everywhere: the caller refuses it)
    keep = torch.zeros_like(keep_sorted).scatter_(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def _check_temperature(temperature) -> None:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {_checks.short(temperature)}")


def _softmax(scaled: torch.Tensor) -> torch.Tensor:
    """``torch.softmax`` over the last dimension, where a row holding ``+inf`` logits (a token
    infinitely more likely than the others) shares all its probability among them instead of
    giving NaN."""
    probs = torch.softmax(scaled, dim=-1)
    top = torch.isposinf(scaled)  # (..., |V|)
    if top.any():
        share = top.to(probs.dtype) / top.sum(dim=-1, keepdim=True).clamp_min(1).to(probs.dtype)
        probs = torch.where(top.any(dim=-1, keepdim=True), share, probs)
    return probs


def _divide(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """``logits / temperature``. When a tiny temperature makes that overflow (e.g. 3 / 1e-39 in
    float32, or 30 / 1e-4 in float16), the gaps to each row's largest finite logit are divided
    instead, in float64: softmax and the filters see only differences, so the result is the same
    distribution, and never NaN."""
    scaled = logits / temperature
    if not (torch.isinf(scaled) & torch.isfinite(logits)).any():
        return scaled
    wide = logits.double()
    top = wide.masked_fill(~torch.isfinite(wide), float("-inf")).amax(dim=-1, keepdim=True)
    top = top.masked_fill(torch.isinf(top), 0.0)  # a row without a finite logit: nothing to shift
    return ((wide - top) / temperature).to(logits.dtype)


def check_settings(temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None) -> None:
    """Refuse a temperature, top-k or top-p that ``filtered_probs`` cannot use, with a message."""
    _check_temperature(temperature)
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"filtered_probs: top_k must be None (no top-k filter) or an int k >= 1, got "
                         f"{_checks.got(top_k)}")
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, (int, float))
                              or not 0.0 < top_p <= 1.0):
        raise ValueError(f"filtered_probs: top_p must be None (no top-p filter) or a number p in (0, 1], "
                         f"got {_checks.got(top_p)}")


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    """The distribution ``sample_next`` draws from: softmax of the logits divided by the
    temperature, restricted to the top-k, then to the top-p of what is left. (..., |V|).

    Temperature 0 is greedy: all the probability on the largest logit. A temperature so small
    that ``logits / temperature`` overflows gives that limit too (the largest logits share the
    probability), never NaN; a ``+inf`` logit takes all the probability (shared with other
    ``+inf`` logits of its row).
    """
    _check_logits(logits)
    check_settings(temperature, top_k, top_p)
    if torch.isneginf(logits).all(dim=-1).any():
        raise ValueError("a row of logits is -inf everywhere: there is no token to sample")
    if temperature == 0:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
    scaled = _divide(logits, temperature)
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    if torch.isneginf(scaled).all(dim=-1).any():
        raise ValueError("a row of logits is -inf everywhere: there is no token to sample")
    return _softmax(scaled)


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw one token id per row of ``logits`` (..., |V|) -> ids (...).

    ``temperature=0`` is greedy (the argmax, no randomness). Otherwise the logits are divided by
    the temperature, filtered by ``top_k`` and then ``top_p`` (when given) and sampled with
    ``torch.multinomial`` using ``generator`` (a seeded ``torch.Generator`` makes it repeatable).
    """
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"sample_next: generator must be None or a torch.Generator (e.g. "
                        f"torch.Generator().manual_seed(0)), got {_checks.got(generator)}")
    probs = filtered_probs(logits, temperature, top_k, top_p)  # (..., |V|)
    if temperature == 0:
        return logits.argmax(dim=-1)
    flat = probs.reshape(-1, probs.shape[-1]).float()  # (N, |V|)
    ids = torch.multinomial(flat, 1, generator=generator)  # (N, 1)
    return ids.reshape(probs.shape[:-1])
