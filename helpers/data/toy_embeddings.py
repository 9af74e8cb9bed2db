"""The hand-made sentence of notebooks 01 and 03: "the big cat chased a mouse".

Each word has 4 features that mean something: is it an article, an animal, an action, and its size
(big is positive, small is negative). Notebook 01 scores these vectors with plain dot products;
notebook 03 gives them learned query, key and value projections.
"""

from __future__ import annotations

import torch

__all__ = ["FEATURES", "TOKENS", "toy_embeddings"]

TOKENS = ("the", "big", "cat", "chased", "a", "mouse")
FEATURES = ("article", "animal", "action", "size")

_VECTORS = (
    # article animal action size
    (1.0, 0.0, 0.0, 0.0),  # the
    (0.0, 0.0, 0.2, 1.0),  # big
    (0.0, 1.0, 0.0, 0.5),  # cat
    (0.0, 0.1, 1.0, 0.0),  # chased
    (0.9, 0.0, 0.0, 0.0),  # a
    (0.0, 1.0, 0.0, -0.8),  # mouse
)


def toy_embeddings(device: torch.device | str | None = None) -> torch.Tensor:
    """The (L, d_model) = (6, 4) embeddings of TOKENS, one row per word, columns FEATURES."""
    return torch.tensor(_VECTORS, dtype=torch.float32, device=device)
