"""The toy data set of notebook 10: human-readable dates -> ISO dates, and a character tokenizer.

Everything is generated from a seed: nothing is downloaded. Dates run from 1970-01-01 to
2049-12-31 (80 years), so a two-digit year is never ambiguous ('69 cannot occur; '70-'99 are
19xx and '00-'49 are 20xx). Numeric formats always put the day before the month (or the year
first, as in ISO), never month before day, so "03.04.2021" has exactly one reading.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Sequence

__all__ = [
    "DATE_FORMATS",
    "FIRST_DATE",
    "LAST_DATE",
    "CharTokenizer",
    "date_splits",
    "format_date",
    "parse_iso",
]

FIRST_DATE = dt.date(1970, 1, 1)
LAST_DATE = dt.date(2049, 12, 31)

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# name -> function(date) -> text. Every format names the day, the month and the year.
DATE_FORMATS = {
    "weekday, d month yyyy": lambda d: f"{_WEEKDAYS[d.weekday()]}, {d.day} {_MONTHS[d.month - 1]} {d.year}",
    "d mon yyyy": lambda d: f"{d.day} {_MONTHS[d.month - 1][:3]} {d.year}",
    "month d, yyyy": lambda d: f"{_MONTHS[d.month - 1]} {d.day}, {d.year}",
    "dd.mm.yyyy": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",
    "yyyy/mm/dd": lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}",
    "mon d 'yy": lambda d: f"{_MONTHS[d.month - 1][:3]} {d.day} '{d.year % 100:02d}",
    "the dth of month yyyy": lambda d: f"the {_ordinal(d.day)} of {_MONTHS[d.month - 1]} {d.year}",
    "dd-mon-yy": lambda d: f"{d.day:02d}-{_MONTHS[d.month - 1][:3]}-{d.year % 100:02d}",
}


def format_date(date: dt.date, fmt: str) -> str:
    """The date written in one of the ``DATE_FORMATS`` (by name)."""
    if fmt not in DATE_FORMATS:
        raise ValueError(f"unknown date format {fmt!r}; expected one of {sorted(DATE_FORMATS)}")
    if not FIRST_DATE <= date <= LAST_DATE:
        raise ValueError(f"date {date} is outside the data set's range {FIRST_DATE} .. {LAST_DATE}")
    return DATE_FORMATS[fmt](date)


def parse_iso(text: str) -> dt.date:
    """'2021-03-12' -> date(2021, 3, 12); raises ValueError for anything that is not a valid ISO date."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        raise ValueError(f"not an ISO date YYYY-MM-DD: {text!r}")
    return dt.date.fromisoformat(text)


def date_splits(n_train: int, n_val: int, n_test: int, seed: int = 0):
    """(train, val, test): lists of (source, target) pairs, e.g. ("12 mar 2021", "2021-03-12").

    The dates themselves are held out: a date used in val or test never appears in train (in any
    format), and the three splits share no date and hence no source string. Each pair's format is
    drawn uniformly from ``DATE_FORMATS``. The same seed gives the same splits.
    """
    for name, n in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test)):
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"{name} must be a non-negative int, got {n!r}")
    n_days = (LAST_DATE - FIRST_DATE).days + 1
    n_held = n_val + n_test
    if n_held >= n_days:
        raise ValueError(f"n_val + n_test = {n_held} leaves no dates for training ({n_days} dates)")
    rng = random.Random(seed)
    days = list(range(n_days))
    rng.shuffle(days)
    held, train_days = days[:n_held], days[n_held:]
    fmts = list(DATE_FORMATS)

    def pair(day: int) -> tuple[str, str]:
        date = FIRST_DATE + dt.timedelta(days=day)
        return format_date(date, rng.choice(fmts)), date.isoformat()

    val = [pair(d) for d in held[:n_val]]
    test = [pair(d) for d in held[n_val:]]
    # Training dates may repeat (in different formats); a (source, target) pair is used once.
    train, seen = [], set()
    while len(train) < n_train:
        src, tgt = pair(rng.choice(train_days))
        if src not in seen:
            seen.add(src)
            train.append((src, tgt))
    return train, val, test


class CharTokenizer:
    """One id per character, plus ``<pad>`` (0), ``<bos>`` (1) and ``<eos>`` (2).

    Build it from texts (``CharTokenizer(texts)``): the characters are sorted, so the same texts
    always give the same ids. ``encode`` raises ValueError naming characters it does not know.
    """

    PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"

    def __init__(self, texts: Iterable[str]):
        chars = sorted({c for t in texts for c in t})
        self.itos: list[str] = [self.PAD, self.BOS, self.EOS, *chars]
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"CharTokenizer({len(self)} tokens: 3 special + {len(self) - 3} characters)"

    def unknown(self, text: str) -> list[str]:
        """The distinct characters of ``text`` this tokenizer has no id for, in order of appearance."""
        return list(dict.fromkeys(c for c in text if c not in self.stoi))

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """'12 mar' -> list of ids (optionally framed by bos / eos)."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        try:
            ids = [self.stoi[c] for c in text]
        except KeyError:
            bad = self.unknown(text)
            known = "".join(self.itos[3:])
            raise ValueError(f"unknown character(s) {', '.join(map(repr, bad))} in {text!r}; "
                             f"this tokenizer knows only {known!r}") from None
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids: Sequence[int] | Iterable[int]) -> str:
        """ids -> text: skips pad and bos, stops at the first eos."""
        out = []
        for i in (int(i) for i in ids):
            if i == self.eos_id:
                break
            if i in (self.pad_id, self.bos_id):
                continue
            if not 0 <= i < len(self.itos):
                raise ValueError(f"id {i} is outside this tokenizer's vocabulary of {len(self)} tokens")
            out.append(self.itos[i])
        return "".join(out)
