"""Choosing the next token from a language model's logits (notebook 12): greedy, temperature,
top-k and top-p (nucleus) sampling, written from scratch.

Every function works on logits (..., |V|) and leaves the shape alone. A filter keeps a set of
tokens and puts ``-inf`` on the others, so that a softmax gives them probability 0.
"""

from __future__ import annotations

import math

import torch

__all__ = ["filtered_probs", "sample_next", "top_k_filter", "top_p_filter"]


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
    probs = torch.softmax(sorted_logits.float(), dim=-1)
    before = probs.cumsum(dim=-1) - probs  # probability of the tokens ranked above this one
    keep_sorted = before < p  # the first token always has before = 0 < p
    keep = torch.zeros_like(keep_sorted).scatter_(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def _check_temperature(temperature) -> None:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {temperature!r}")


def filtered_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    """The distribution ``sample_next`` draws from: softmax of the logits divided by the
    temperature, restricted to the top-k, then to the top-p of what is left. (..., |V|).

    Temperature 0 is greedy: all the probability on the largest logit.
    """
    _check_logits(logits)
    _check_temperature(temperature)
    if temperature == 0:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
    scaled = logits / temperature
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    if torch.isneginf(scaled).all(dim=-1).any():
        raise ValueError("a row of logits is -inf everywhere: there is no token to sample")
    return torch.softmax(scaled, dim=-1)


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw one token id per row of ``logits`` (..., |V|) -> ids (...).

    ``temperature=0`` is greedy (the argmax, no randomness). Otherwise the logits are divided by
    the temperature, filtered by ``top_k`` and then ``top_p`` (when given) and sampled with
    ``torch.multinomial`` using ``generator`` (a seeded ``torch.Generator`` makes it repeatable).
    """
    probs = filtered_probs(logits, temperature, top_k, top_p)  # (..., |V|)
    if temperature == 0:
        return logits.argmax(dim=-1)
    flat = probs.reshape(-1, probs.shape[-1]).float()  # (N, |V|)
    ids = torch.multinomial(flat, 1, generator=generator)  # (N, 1)
    return ids.reshape(probs.shape[:-1])
