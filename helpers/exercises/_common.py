"""What every exercise checker shares.

A checker raises AssertionError with a message that tells the learner what is wrong. An exercise
left as it was handed out (the function still raises NotImplementedError, or the answer is
``None`` or ``...``) is reported as not attempted instead, so the notebooks run green unsolved.
"""

from __future__ import annotations

import functools

__all__ = ["NotAttempted", "Verdict", "call", "checker"]


class NotAttempted(Exception):
    """Raised inside a checker when the learner's answer is still the placeholder. An optional
    message replaces "not attempted yet" (for an exercise whose first part is already right)."""


def call(fn, *args, **kwargs):
    """Call the learner's function; a NotImplementedError means it is not attempted yet."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise NotAttempted from None


class Verdict:
    """What a checker returns: truthy when the answer is correct.

    It displays nothing in a notebook (the checker has already printed its verdict), so an
    exercise cell ends with the message alone instead of a stray ``True`` / ``False``.
    """

    def __init__(self, correct: bool):
        self.correct = correct

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return f"Verdict(correct={self.correct})"

    def _ipython_display_(self) -> None:
        pass


def checker(name: str):
    """Decorate a check function: prints a verdict, raises AssertionError on a wrong answer."""

    def wrap(check):
        @functools.wraps(check)
        def run(answer, *args, **kwargs):
            if answer is None or answer is Ellipsis:
                print(f"{name}: not attempted yet. Fill in your answer above, then run this cell again.")
                return Verdict(False)
            try:
                check(answer, *args, **kwargs)
            except NotAttempted as still_to_do:
                print(f"{name}: {still_to_do.args[0]}" if still_to_do.args else
                      f"{name}: not attempted yet. Fill in your answer above, then run this cell again.")
                return Verdict(False)
            print(f"{name}: correct!")
            return Verdict(True)

        return run

    return wrap

