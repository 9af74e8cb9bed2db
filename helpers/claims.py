"""Checks a learner reads: a claim the lesson makes, checked where it is made.

A bare ``assert a and b and c`` tells a learner nothing when it passes and little when it fails.
``claim`` states one claim in words, prints it with a tick when it holds and raises an
``AssertionError`` that says what was found when it does not::

    claim("two heads learn both relations", acc >= 0.99, f"accuracy {acc:.4f}")
    # ✓ two heads learn both relations (accuracy 1.0000)

``claim_close`` does the same for "these two tensors are equal" (``torch.testing.assert_close``,
default float32 tolerances unless given). Print only what is the same on every machine and thread
count (rounded numbers, counts): the stored output of the cell is compared on every run.

**A learner's own settings.** A notebook whose settings cell a learner may change (seed, steps,
sizes) declares them, with the values its stored outputs were made with::

    settings = use_settings(SEED=SEED, STEPS=STEPS, stored=dict(SEED=0, STEPS=800))

and ends with ``report()``. Under the stored settings (the ones nbval runs) nothing changes: a
claim that fails raises. Under other settings a claim that fails prints ``✗ statement (shown;
under your settings: SEED = 5)`` and the notebook goes on; ``report()`` then lists which claims
held under those settings and which did not. A claim is about the stored run; under other
settings it is a question the learner's run answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

__all__ = ["Settings", "claim", "claim_close", "current_settings", "report", "use_settings"]


@dataclass(frozen=True)
class Settings:
    """The settings a notebook runs with (``values``) and those its stored outputs were made with
    (``stored``), as declared by ``use_settings``."""

    values: dict
    stored: dict

    @property
    def changed(self) -> dict:
        """{name: (yours, stored)} for every setting that differs from the stored one."""
        return {k: (v, self.stored[k]) for k, v in self.values.items() if v != self.stored[k]}

    @property
    def are_stored(self) -> bool:
        """True when every setting has its stored value: failing claims then raise."""
        return not self.changed

    def describe(self) -> str:
        """'SEED = 5, STEPS = 1600' (the settings that differ), or 'the stored settings'."""
        if self.are_stored:
            return "the stored settings"
        return ", ".join(f"{k} = {v!r}" for k, (v, _) in self.changed.items())


@dataclass
class _Session:
    settings: Settings | None = None
    record: list = field(default_factory=list)  # (statement, held, shown), in the order made


_session = _Session()


def use_settings(*, stored: dict, **values) -> Settings:
    """Declare a notebook's settings: ``use_settings(SEED=SEED, STEPS=STEPS, stored=dict(SEED=0,
    STEPS=800))``. Starts a new record of claims (for ``report``). Returns the ``Settings``.

    Under the stored values every failing claim raises, as without this call. Under any other
    values a failing claim prints "✗ … (under your settings: …)" and the notebook goes on. Prints
    one line saying so when the settings differ, nothing otherwise."""
    if not isinstance(stored, dict):
        raise TypeError(f"use_settings: stored must be a dict of the stored settings, got "
                        f"{type(stored).__name__}")
    if not values:
        raise TypeError("use_settings: name at least one setting, e.g. use_settings(SEED=SEED, "
                        "stored=dict(SEED=0))")
    if set(values) != set(stored):
        raise ValueError(f"use_settings: stored must name the same settings as given; given "
                         f"{sorted(values)}, stored {sorted(stored)}")
    settings = Settings(dict(values), {k: stored[k] for k in values})
    _session.settings, _session.record = settings, []
    if not settings.are_stored:
        print(f"Your settings: {settings.describe()} (stored: "
              + ", ".join(f"{k} = {v!r}" for k, (_, v) in settings.changed.items())
              + "). A claim that does not hold under them prints ✗ and the notebook goes on; "
              "the last cell lists what held.")
    return settings


def current_settings() -> Settings | None:
    """The settings of the last ``use_settings`` call, or None if there was none."""
    return _session.settings


def _learner() -> bool:
    return _session.settings is not None and not _session.settings.are_stored


def _check_statement(statement) -> str:
    if not isinstance(statement, str) or not statement.strip():
        raise TypeError(f"claim: statement must be a non-empty str saying what holds, got {statement!r}")
    return statement.strip()


def _outcome(statement: str, holds: bool, shown: str, failure: str) -> None:
    """Record the claim; print ✓, or on failure raise (stored settings) or print ✗ (others)."""
    _session.record.append((statement, holds, shown))
    if holds:
        print(f"✓ {statement}" + (f" ({shown})" if shown else ""))
    elif _learner():
        where = f"under your settings: {_session.settings.describe()}"
        print(f"✗ {statement} ({shown}; {where})" if shown else f"✗ {statement} ({where})")
    else:
        raise AssertionError(failure)


def claim(statement: str, holds, shown: str = "") -> None:
    """Print ``✓ statement (shown)`` if ``holds`` is true, else raise ``AssertionError`` with
    ``✗ statement: shown`` (under settings a learner changed, print ``✗ statement (shown; under
    your settings: …)`` instead and go on). ``holds`` is a bool (or a one-element bool tensor);
    ``shown`` is the evidence in words or rounded numbers, e.g. ``f"{acc:.4f} >= 0.99"``."""
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
    _outcome(statement, holds, shown, f"✗ {statement}" + (f": {shown}" if shown else ""))


def claim_close(statement: str, actual, expected, **tolerances) -> None:
    """Print ``✓ statement`` if ``actual`` equals ``expected`` within ``torch.testing.assert_close``'s
    tolerances (its defaults unless ``rtol``/``atol`` are given), else raise ``AssertionError``
    with ``✗ statement:`` and what ``assert_close`` found (how many elements differ, by how much);
    under settings a learner changed, print that and go on, as ``claim`` does."""
    statement = _check_statement(statement)
    try:
        torch.testing.assert_close(actual, expected, **tolerances)
    except AssertionError as err:
        found = str(err).strip().splitlines()
        _outcome(statement, False, " ".join(line.strip() for line in found),
                 f"✗ {statement}: {err}")
        return
    _outcome(statement, True, "", "")


def report() -> None:
    """The last cell of a notebook that called ``use_settings``: under the stored settings, how
    many claims held (all of them, or the notebook would have stopped); under a learner's
    settings, every claim made since ``use_settings``, those that did not hold first."""
    if _session.settings is None:
        raise RuntimeError("report: call use_settings(...) in the settings cell first (and run it)")
    record = _session.record
    held = [r for r in record if r[1]]
    if _learner():
        missed = [r for r in record if not r[1]]
        print(f"Under your settings ({_session.settings.describe()}): {len(held)} of {len(record)} "
              f"claims held.")
        if missed:
            print("Did not hold:")
            for statement, _, shown in missed:
                print(f"  ✗ {statement}" + (f" ({shown})" if shown else ""))
        if held:
            print("Held:")
            for statement, _, shown in held:
                print(f"  ✓ {statement}" + (f" ({shown})" if shown else ""))
    else:
        print(f"Under the stored settings all {len(record)} claims held (a claim that failed would "
              "have stopped the notebook).")
