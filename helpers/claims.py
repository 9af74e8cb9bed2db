"""Checks a learner reads: a claim the lesson makes, checked where it is made.

A bare ``assert a and b and c`` tells a learner nothing when it passes and little when it fails.
``claim`` states one claim in words, prints it with a tick when it holds and raises an
``AssertionError`` that says what was found when it does not::

    claim("two heads learn both relations", acc >= 0.99, f"accuracy {acc:.4f}")
    # ✓ two heads learn both relations (accuracy 1.0000)

``claim_close`` does the same for "these two tensors are equal" (``torch.testing.assert_close``,
default float32 tolerances unless given). Print only what is the same on every machine and thread
count (rounded numbers, counts): the stored output of the cell is compared on every run.
"""

from __future__ import annotations

import torch

__all__ = ["claim", "claim_close"]


def _check_statement(statement) -> str:
    if not isinstance(statement, str) or not statement.strip():
        raise TypeError(f"claim: statement must be a non-empty str saying what holds, got {statement!r}")
    return statement.strip()


def claim(statement: str, holds, shown: str = "") -> None:
    """Print ``✓ statement (shown)`` if ``holds`` is true, else raise ``AssertionError`` with
    ``✗ statement: shown``. ``holds`` is a bool (or a one-element bool tensor); ``shown`` is the
    evidence in words or rounded numbers, e.g. ``f"{acc:.4f} >= 0.99"``."""
    statement = _check_statement(statement)
    if isinstance(holds, torch.Tensor):
        if holds.numel() != 1:
            raise TypeError(f"claim: holds must be one bool, got a tensor of shape {tuple(holds.shape)}; "
                            "reduce it first (.all() or .any())")
        holds = bool(holds)
    if not isinstance(holds, bool):
        raise TypeError(f"claim: holds must be a bool (the result of the check), got "
                        f"{type(holds).__name__} {holds!r}")
    if not isinstance(shown, str):
        raise TypeError(f"claim: shown must be a str (the evidence, rounded), got {type(shown).__name__}")
    if not holds:
        raise AssertionError(f"✗ {statement}" + (f": {shown}" if shown else ""))
    print(f"✓ {statement}" + (f" ({shown})" if shown else ""))


def claim_close(statement: str, actual, expected, **tolerances) -> None:
    """Print ``✓ statement`` if ``actual`` equals ``expected`` within ``torch.testing.assert_close``'s
    tolerances (its defaults unless ``rtol``/``atol`` are given), else raise ``AssertionError``
    with ``✗ statement:`` and what ``assert_close`` found (how many elements differ, by how much)."""
    statement = _check_statement(statement)
    try:
        torch.testing.assert_close(actual, expected, **tolerances)
    except AssertionError as err:
        raise AssertionError(f"✗ {statement}: {err}") from None
    print(f"✓ {statement}")
