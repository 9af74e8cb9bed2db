"""What every exercise checker shares.

A checker raises AssertionError with a message that tells the learner what is wrong. An exercise
left as it was handed out (the function still raises NotImplementedError, or the answer is
``None`` or ``...``) is reported as not attempted instead, so the notebooks run green unsolved.
"""

from __future__ import annotations

import functools

__all__ = ["NotAttempted", "call", "checker"]


class NotAttempted(Exception):
    """Raised inside a checker when the learner's answer is still the placeholder."""


def call(fn, *args, **kwargs):
    """Call the learner's function; a NotImplementedError means it is not attempted yet."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise NotAttempted from None


def checker(name: str):
    """Decorate a check function: prints a verdict, raises AssertionError on a wrong answer."""

    def wrap(check):
        @functools.wraps(check)
        def run(answer, *args, **kwargs):
            if answer is None or answer is Ellipsis:
                print(f"{name}: not attempted yet. Fill in your answer above, then run this cell again.")
                return False
            try:
                check(answer, *args, **kwargs)
            except NotAttempted:
                print(f"{name}: not attempted yet. Fill in your answer above, then run this cell again.")
                return False
            print(f"{name}: correct!")
            return True

        return run

    return wrap

