"""The toy data set of notebook 10: human-readable dates -> ISO dates, and a character tokenizer.

PLACEHOLDER: the notebook-10 work replaces this module.
"""

from __future__ import annotations

__all__ = ["CharTokenizer", "date_splits"]


class CharTokenizer:  # pragma: no cover - placeholder
    def __init__(self, texts):
        raise NotImplementedError


def date_splits(n_train, n_val, n_test, seed=0):  # pragma: no cover - placeholder
    raise NotImplementedError
