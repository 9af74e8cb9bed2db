"""Notebook 14's data: sequences of random tokens that repeat. Every sequence is ``n`` random tokens
followed by the same ``n`` tokens again, so the second half can be predicted only by finding the
earlier occurrence of the current token and reading the token that followed it.

The first half is drawn with replacement, so a token can occur twice in it; then "the token after
the earlier occurrence" is ambiguous, and even a perfect induction head, which matches the current
token alone, cannot be sure: ``perfect_induction_loss`` gives the loss it would reach on a batch.
A copier that compares the whole context instead resolves almost every such tie:
``prefix_match_loss`` gives its loss, for contrast."""

from __future__ import annotations

import torch

from .._checks import int_at_least

__all__ = ["induction_lookups", "perfect_induction_loss", "prefix_match_loss", "repeated_tokens"]


def repeated_tokens(batch_size: int, n: int, vocab_size: int,
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """(batch_size, 2n) token ids: n random tokens, then the same n tokens again."""
    int_at_least("repeated_tokens", "batch_size", batch_size, 1)
    int_at_least("repeated_tokens", "n", n, 2)
    int_at_least("repeated_tokens", "vocab_size", vocab_size, 2)
    first = torch.randint(0, vocab_size, (batch_size, n), generator=generator)  # (B, n)
    return torch.cat([first, first], dim=1)  # (B, 2n)


def _check_repeated(ids, n, func: str) -> torch.Tensor:
    int_at_least(func, "n", n, 2)
    if (not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype != torch.long
            or ids.shape[1] != 2 * n):
        got = f"{ids.dtype} of shape {tuple(ids.shape)}" if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise ValueError(f"{func}: ids must be a (B, 2n) = (B, {2 * n}) torch.long tensor, got {got}")
    if not torch.equal(ids[:, :n], ids[:, n:]):
        raise ValueError(f"{func}: ids must repeat their first n = {n} tokens (see repeated_tokens)")
    return ids


def induction_lookups(ids: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """What an induction head finds at each query t = n, ..., 2n-2 of repeated sequences ids (B, 2n)
    (predicting token t+1): the keys j <= t whose previous token x[j-1] equals the current token
    x[t]. Returns ``(candidates, right)``, two (B, n-1) counts: how many such keys, and how many of
    them hold the token that comes next, x[t+1]. There is always at least one right candidate
    (j = t - n + 1)."""
    x = _check_repeated(ids, n, "induction_lookups")
    t = torch.arange(n, 2 * n - 1, device=x.device)  # the queries of the repeated half, (n-1,)
    j = torch.arange(1, 2 * n, device=x.device)  # every key with a previous token, (2n-1,)
    follows = x[:, j - 1][:, None, :] == x[:, t][:, :, None]  # (B, n-1, 2n-1): x[j-1] == x[t]
    candidate = follows & (j[None, :] <= t[:, None])  # causal: only keys j <= t are visible
    right = candidate & (x[:, j][:, None, :] == x[:, t + 1][:, :, None])  # x[j] == x[t+1]
    return candidate.sum(-1), right.sum(-1)  # (B, n-1) each


def perfect_induction_loss(ids: torch.Tensor, n: int) -> torch.Tensor:
    """(B, n-1): the loss at each query t = n, ..., 2n-2 of a perfect induction head, one that
    attends equally to every candidate of ``induction_lookups`` and copies exactly the tokens they
    hold: ln(candidates / right). It is 0 where the lookup is unambiguous. Its mean is the lowest
    repeated-half loss of a head that matches one previous token; a copier that compares more of the
    context goes lower (``prefix_match_loss``)."""
    candidates, right = induction_lookups(ids, n)
    return (candidates.double() / right.double()).log().float()  # (B, n-1), never -0.0


def prefix_match_loss(ids: torch.Tensor, n: int) -> torch.Tensor:
    """(B, n-1): the loss at each query t = n, ..., 2n-2 of a copier that compares the whole
    context, not only the current token. It keeps every period p (1 <= p <= t) with which all the
    tokens seen so far repeat, x[i] = x[i + p] for every i <= t - p, and bets equally on the tokens
    x[t + 1 - p] those periods predict: ln(kept / right). The true period n is always kept, so the
    loss is finite; it is 0 where n is the only period kept or all kept periods agree."""
    x = _check_repeated(ids, n, "prefix_match_loss")
    losses = []
    for t in range(n, 2 * n - 1):
        p = torch.arange(1, t + 1, device=x.device)  # candidate periods, (t,)
        i = torch.arange(t + 1, device=x.device)  # positions seen so far, (t + 1,)
        later = i[None, :] + p[:, None]  # (t, t + 1): position i + p
        inside = later <= t  # the pairs (i, i + p) that have both been seen
        same = x[:, None, :t + 1] == x[:, later.clamp(max=t)]  # (B, t, t + 1): x[i] == x[i + p]
        kept = (same | ~inside).all(-1)  # (B, t): periods with which everything so far repeats
        right = kept & (x[:, t + 1 - p] == x[:, t + 1, None])  # (B, t): ... and predict x[t + 1]
        losses.append((kept.sum(-1).double() / right.sum(-1).double()).log())
    return torch.stack(losses, dim=-1).float()  # (B, n-1)
