"""Notebook 14's data: sequences of random tokens that repeat. Every sequence is ``n`` random tokens
followed by the same ``n`` tokens again, so the second half can be predicted only by finding the
earlier occurrence of the current token and reading the token that followed it."""

from __future__ import annotations

import torch

from .._checks import int_at_least

__all__ = ["repeated_tokens"]


def repeated_tokens(batch_size: int, n: int, vocab_size: int,
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """(batch_size, 2n) token ids: n random tokens, then the same n tokens again."""
    int_at_least("repeated_tokens", "batch_size", batch_size, 1)
    int_at_least("repeated_tokens", "n", n, 2)
    int_at_least("repeated_tokens", "vocab_size", vocab_size, 2)
    first = torch.randint(0, vocab_size, (batch_size, n), generator=generator)  # (B, n)
    return torch.cat([first, first], dim=1)  # (B, 2n)
