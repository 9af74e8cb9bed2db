"""The toy data set of notebook 10: dates as people write them -> ISO dates; the translator's
tokenizer, which reads a date as pieces (numbers, words, marks).

Everything is generated from a seed: nothing is downloaded. Dates run from 1970-01-01 to
2049-12-31 (80 years), so a two-digit year is never ambiguous ('70-'99 are 19xx, '00-'49 are 20xx).

A written date is **composed from parts** (a ``DateStyle``): the day (``1``, ``01``, ``1st``,
``the 1st of``), the month (``3``, ``03``, ``march``, ``mar``, ``mar.``), the year (``2021``,
``21``, ``'21``), a separator (space, ``-``, ``/``, ``.``, ``", "``), an optional weekday
(``friday, ``, ``fri ``, ...) and an order: day-month-year, year-month-day, or month-day-year.
The rule that keeps every string unambiguous: the month comes first only when it is a word
(``march 12, 2021``), and the year comes first only with four digits (``2021/03/12``), so a
numeric date is always read day-month-year unless it starts with a four-digit year.

``normalize_date_text`` (lower case, single spaces) is the one place where typed text is cleaned
before a model sees it; ``check_date_text`` says in words what is wrong with text that names no
possible date; ``iso_or_none`` accepts a model output only if it is a real ISO date.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, product

from .tokenizers import CharTokenizer, _cut

__all__ = [
    "DATA_VERSION",
    "HELD_OUT_GROUPS",
    "UNSEEN_FORMATS",
    "DAY_STYLES",
    "FIRST_DATE",
    "LAST_DATE",
    "MONTH_STYLES",
    "ORDERS",
    "SEPARATORS",
    "WEEKDAY_STYLES",
    "YEAR_STYLES",
    "DateStyle",
    "DateTokenizer",
    "family_of",
    "held_out_group",
    "held_out_group_pairs",
    "check_date_text",
    "date_splits",
    "date_tokenizer",
    "held_out_combination_pairs",
    "held_out_styles",
    "in_distribution_styles",
    "iso_or_none",
    "normalize_date_text",
    "parse_iso",
    "read_date",
]

# Bump when the generator changes: it is part of the trained-model cache key (helpers.training).
DATA_VERSION = 5

FIRST_DATE = dt.date(1970, 1, 1)
LAST_DATE = dt.date(2049, 12, 31)

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

ORDERS = ("dmy", "ymd", "mdy")
DAY_STYLES = ("d", "dd", "dth", "the dth of")
MONTH_STYLES = ("m", "mm", "month", "mon", "mon.")
YEAR_STYLES = ("yyyy", "yy", "'yy")
SEPARATORS = (" ", "-", "/", ".", ", ")
WEEKDAY_STYLES = ("", "weekday, ", "weekday ", "wkd, ", "wkd ")
_WORD_MONTHS = ("month", "mon", "mon.")


def _ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class DateStyle:
    """One way to write a date, composed from parts (see the module docstring).

    ``DateStyle("dmy", "dd", "mm", "yyyy", ".")`` writes 12 March 2021 as ``12.03.2021``;
    ``DateStyle("mdy", "d", "month", "yyyy", ", ", "weekday, ")`` as ``friday, march 12, 2021``.
    """

    order: str
    day: str
    month: str
    year: str
    sep: str
    weekday: str = ""

    def problem(self) -> str | None:
        """Why this combination is not allowed (it would be ambiguous or odd), or None."""
        return _problem(self)

    def _problem(self) -> str | None:
        for name, value, allowed in (("order", self.order, ORDERS), ("day", self.day, DAY_STYLES),
                                     ("month", self.month, MONTH_STYLES),
                                     ("year", self.year, YEAR_STYLES),
                                     ("sep", self.sep, SEPARATORS),
                                     ("weekday", self.weekday, WEEKDAY_STYLES)):
            if value not in allowed:
                return f"{name} must be one of {allowed}, got {value!r}"
        word = self.month in _WORD_MONTHS
        if self.order == "mdy" and not word:
            return "month-first is allowed only when the month is a word (03/12/2021 is ambiguous)"
        if self.order == "ymd" and self.year != "yyyy":
            return "year-first needs a four-digit year (21/03/12 could be day-first)"
        if self.day in ("dth", "the dth of") and (not word or self.sep not in (" ", ", ")):
            return "ordinal days go with month names and spaces ('12th march 2021')"
        if self.day == "the dth of" and (self.order != "dmy" or self.sep != " "):
            return "'the 12th of march 2021' is day-month-year with spaces"
        if self.order == "ymd" and self.day == "dth":
            return "year-first dates use a plain day"
        if self.order == "mdy" and self.sep not in (" ", ", "):
            return "month-first dates are written with spaces ('march 12, 2021')"
        if self.sep == ", " and (not word or self.order == "ymd"):
            return "', ' separates a day or month word from the year only"
        if word and self.sep == ".":
            return "dots separate numbers only ('12.03.2021')"
        if self.year == "'yy" and (not word or self.sep not in (" ", ", ")):
            return "an apostrophe year follows a month name and a space ('mar 12 \'21')"
        return None

    @property
    def name(self) -> str:
        """The style written as a pattern, e.g. 'dd.mm.yyyy' or 'weekday, month d, yyyy'."""
        return self._compose(self.day, self.month, self.year, self.weekday)

    def _compose(self, day: str, month: str, year: str, weekday: str) -> str:
        first, second = (self.sep, self.sep) if self.sep != ", " else (" ", ", ")
        if self.order == "dmy":
            body = f"{day}{first}{month}{second}{year}"
        elif self.order == "mdy":
            body = f"{month}{first}{day}{second}{year}"
        else:  # ymd: the separator ', ' is not allowed here
            body = f"{year}{first}{month}{second}{day}"
        return weekday + body

    def render(self, date: dt.date) -> str:
        """The date written in this style (lower case)."""
        problem = _problem(self)
        if problem:
            raise ValueError(f"{self}: {problem}")
        if not FIRST_DATE <= date <= LAST_DATE:
            raise ValueError(f"date {date} is outside the data set's range {FIRST_DATE} .. {LAST_DATE}")
        return self._render(date)

    def _render(self, date: dt.date) -> str:
        d, m, y = date.day, date.month, date.year
        style = self.day
        day = (str(d) if style == "d" else f"{d:02d}" if style == "dd" else _ordinal(d)
               if style == "dth" else f"the {_ordinal(d)} of")
        style = self.month
        month = (str(m) if style == "m" else f"{m:02d}" if style == "mm" else MONTHS[m - 1]
                 if style == "month" else MONTHS[m - 1][:3] if style == "mon"
                 else MONTHS[m - 1][:3] + ".")
        year = str(y) if self.year == "yyyy" else f"{y % 100:02d}" if self.year == "yy" else f"'{y % 100:02d}"
        weekday = self.weekday
        if weekday:
            wd = WEEKDAYS[date.weekday()]
            weekday = weekday.replace("weekday", wd).replace("wkd", wd[:3])
        return self._compose(day, month, year, weekday)

    def family(self) -> str:
        """A coarse family for reporting: order and whether the month is a number or a word."""
        order = {"dmy": "day-month-year", "ymd": "year-month-day", "mdy": "month-day-year"}[self.order]
        kind = "words" if self.month in _WORD_MONTHS else "numbers"
        return f"{order}, {kind}" + (", weekday" if self.weekday else "")


@functools.cache
def _problem(style: DateStyle) -> str | None:
    return style._problem()


def _all_styles() -> list[DateStyle]:
    styles = [DateStyle(*parts) for parts in product(ORDERS, DAY_STYLES, MONTH_STYLES, YEAR_STYLES,
                                                     SEPARATORS, WEEKDAY_STYLES)]
    return [s for s in styles if s.problem() is None]


def _is_held_out(s: DateStyle) -> bool:
    """The combinations that never appear in training: each part is seen, never together."""
    return ((s.order == "ymd" and s.sep == ".")                       # 2021.03.12
            or (s.order == "dmy" and s.month in ("m", "mm") and s.sep == " ")  # 12 03 2021
            or (s.order == "mdy" and s.month == "mon." and s.year == "'yy")    # mar. 12 '21
            or (s.order == "ymd" and s.weekday.startswith("wkd")))   # fri 2021-03-12


_STYLES = _all_styles()
_TRAIN_STYLES = [s for s in _STYLES if not _is_held_out(s)]
_HELD_STYLES = [s for s in _STYLES if _is_held_out(s)]
ISO_STYLE = DateStyle("ymd", "dd", "mm", "yyyy", "-")


def in_distribution_styles() -> list[DateStyle]:
    """Every allowed style that training data may use."""
    return list(_TRAIN_STYLES)


def held_out_styles() -> list[DateStyle]:
    """Allowed styles that never appear in training (held-out combinations of seen parts):
    year-first with '.', day-first numeric with spaces, 'mar. 12 '21', a short weekday before
    a year-first date."""
    return list(_HELD_STYLES)


# The mixture: ISO itself one time in ten; otherwise one of the five families (day-month-year or
# year-month-day with a numeric or a word month, month-day-year) with equal probability, a weekday
# half the time, and then any allowed in-distribution style of that group with equal probability.
# Numeric dates thus get as much data as word dates, although far fewer styles exist for them.
def _group(s: DateStyle) -> tuple[str, bool, bool]:
    return s.order, s.month in _WORD_MONTHS, bool(s.weekday)


_GROUP_SIZES = Counter(_group(s) for s in _TRAIN_STYLES)


def _style_weight(s: DateStyle) -> float:
    return 0.5 / _GROUP_SIZES[_group(s)]


_TRAIN_CUM_WEIGHTS = list(accumulate(_style_weight(s) for s in _TRAIN_STYLES))


def _draw_style(rng: random.Random) -> DateStyle:
    """ISO itself one time in ten; otherwise a family (order, month as number or word) uniformly,
    a weekday or none with equal probability, then a style of that group uniformly (see above)."""
    if rng.random() < 0.1:
        return ISO_STYLE
    return rng.choices(_TRAIN_STYLES, cum_weights=_TRAIN_CUM_WEIGHTS)[0]


def parse_iso(text: str) -> dt.date:
    """'2021-03-12' -> date(2021, 3, 12); raises ValueError for anything that is not a valid ISO date."""
    if not isinstance(text, str) or len(text) != 10 or text[4] != "-" or text[7] != "-":
        raise ValueError(f"not an ISO date YYYY-MM-DD: {text!r}")
    return dt.date.fromisoformat(text)


def iso_or_none(text: str) -> str | None:
    """``text`` if it is a real date written as YYYY-MM-DD (e.g. a model's output), else None.

    '2021-02-31' -> None (February has no 31st); '2021-3-12' -> None (not ISO)."""
    if not isinstance(text, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return None
    return text


def normalize_date_text(text: str) -> str:
    """Lower case, no leading or trailing spaces, every run of white space one space.

    The one place where typed text is cleaned: training data, evaluation and the widget all go
    through it. '  Friday,  12 MARCH 2021 ' -> 'friday, 12 march 2021'."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return " ".join(text.lower().split())


_MONTH_OF = {m: i + 1 for i, m in enumerate(MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(MONTHS)}
_MONTH_OF["sept"] = 9
_WEEKDAY_OF = {w: i for i, w in enumerate(WEEKDAYS)} | {w[:3]: i for i, w in enumerate(WEEKDAYS)}
_TOKEN = re.compile(r"'\d{2}\b|\d+(?:st|nd|rd|th)?|[a-z]+")


def read_date(text: str) -> tuple[int, int, int] | None:
    """A small rule-based reading of ``text`` as (year, month, day), by the unambiguity rule of
    this module, without checking that the date exists; None when the rules do not apply.

    It backs ``check_date_text`` (to name an impossible date such as 31.02.2021) and the tests;
    the translator itself is the trained model, not this function."""
    text = normalize_date_text(text)
    tokens = _TOKEN.findall(text)
    words = [t for t in tokens if t.isalpha() and t not in ("the", "of")]
    months = [_MONTH_OF[w] for w in words if w in _MONTH_OF]
    if len(months) > 1 or any(w not in _MONTH_OF and w not in _WEEKDAY_OF for w in words):
        return None
    numbers = [t for t in tokens if not t.isalpha()]
    if months:  # a month word: the numbers are the day and the year
        if len(numbers) != 2:
            return None
        a, b = numbers  # the day always comes before the year, unless the year has four digits
        year, day = (a, b) if len(a) == 4 and a.isdigit() else (b, a)
        month = months[0]
    else:
        if len(numbers) != 3 or not all(n.isdigit() for n in numbers):
            return None
        if len(numbers[0]) == 4:
            year, month, day = numbers[0], int(numbers[1]), numbers[2]
        else:
            day, month, year = numbers[0], int(numbers[1]), numbers[2]
    day_digits = re.match(r"\d+", day)
    if day_digits is None or not re.fullmatch(r"'?\d{2}|\d{4}", year):
        return None
    y = int(year.lstrip("'"))
    if len(year.lstrip("'")) == 2:
        y += 1900 if y >= 70 else 2000
    return y, month, int(day_digits.group())


def check_date_text(text, tokenizer=None, max_len: int | None = None) -> str | None:
    """None if ``text`` can be given to the translator, else a message that says what is wrong.

    Caught: no text; a date that cannot exist (31.02.2021, month 13) or lies outside 1970-2049;
    a weekday that does not match the date; pieces (or characters) the tokenizer has no id for;
    text longer than ``max_len`` tokens (the tokenizer's pieces, or characters). Text the rules of
    ``read_date`` cannot read is passed on if the tokenizer can read it (the model may)."""
    if not isinstance(text, str) or not normalize_date_text(text):
        return "Type a date, for example: 12 march 2021"
    text = normalize_date_text(text)
    message = _date_problem(text)
    if message is not None:
        return message
    if tokenizer is not None:
        unknown = tokenizer.unknown(text)
        if unknown:
            knows = (tokenizer.describe() if hasattr(tokenizer, "describe")
                     else f"the characters {''.join(tokenizer.itos[3:])!r}")
            return (f"Cannot read {', '.join(_cut(u, 20) for u in unknown[:10])}: the model reads only "
                    f"{knows}. Try e.g. 'friday, 12 march 2021' or '12.03.2021'.")
    if max_len is not None:
        pieces = tokenizer.pieces(text) if hasattr(tokenizer, "pieces") else text
        unit = "pieces" if hasattr(tokenizer, "pieces") else "characters"
        if len(pieces) > max_len:
            return f"That is {len(pieces)} {unit}; this model reads at most {max_len}."
    return None


def _date_problem(text: str) -> str | None:
    """What is impossible about the date ``read_date`` finds in ``text`` (None if fine or unread)."""
    reading = read_date(text)
    if reading is None:
        return None
    y, m, d = reading
    if not 1 <= m <= 12:
        return f"{_cut(text)} is not a date: there is no month {m}."
    if not 1970 <= y <= 2049:
        return f"{_cut(text)} lies outside the years this model knows (1970 to 2049)."
    last = calendar.monthrange(y, m)[1]
    if not 1 <= d <= last:
        return (f"{_cut(text)} is not a date: {MONTHS[m - 1].capitalize()} {y} has {last} days "
                f"(got day {d}).")
    date = dt.date(y, m, d)
    named = [w for w in _TOKEN.findall(text) if w in _WEEKDAY_OF]
    if named and _WEEKDAY_OF[named[0]] != date.weekday():
        return (f"{date:%d %B %Y} was a {WEEKDAYS[date.weekday()]}, not a "
                f"{WEEKDAYS[_WEEKDAY_OF[named[0]]]}: check the date.")
    return None


def _distinct_renderings(day: int) -> int:
    """How many different source strings the training styles give for one date (by its class)."""
    date = FIRST_DATE + dt.timedelta(days=day)
    return _CLASS_COUNTS[(date.day < 10, date.month < 10, date.month == 5)]


def _class_counts() -> dict[tuple[bool, bool, bool], int]:
    # Which renderings coincide depends only on: one-digit day (d == dd), one-digit month
    # (m == mm) and May (may == may). tests/test_data.py checks this against brute force.
    reps = {(True, True, False): dt.date(2021, 3, 5), (True, True, True): dt.date(2021, 5, 5),
            (True, False, False): dt.date(2021, 11, 5), (False, True, False): dt.date(2021, 3, 15),
            (False, True, True): dt.date(2021, 5, 15), (False, False, False): dt.date(2021, 11, 15)}
    styles = _TRAIN_STYLES + [ISO_STYLE] * (ISO_STYLE not in _TRAIN_STYLES)
    return {k: len({s.render(d) for s in styles}) for k, d in reps.items()}


_CLASS_COUNTS = _class_counts()


def date_splits(n_train: int, n_val: int, n_test: int, seed: int = 0):
    """(train, val, test): lists of (source, target) pairs, e.g. ("12 mar 2021", "2021-03-12").

    The dates themselves are held out: a date used in val or test never appears in train (in any
    style), and the three splits share no date and hence no source string. Each pair's style is
    drawn from the in-distribution styles (``in_distribution_styles()``): ISO itself one time in
    ten, else each family (order, month as number or word) equally often, half of them with a
    weekday. Training sources are distinct. The same seed gives the same splits.
    Raises ValueError when more training pairs are asked for than the training dates allow.
    """
    for name, n in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"{name} must be a non-negative int, got {n!r}")
    n_days = (LAST_DATE - FIRST_DATE).days + 1
    n_held = n_val + n_test
    if n_held >= n_days and n_train > 0:
        raise ValueError(f"n_val + n_test = {n_held} leaves no dates for training "
                         f"({n_days} dates from {FIRST_DATE} to {LAST_DATE})")
    if n_held > n_days:
        raise ValueError(f"n_val + n_test = {n_held}, but there are only {n_days} dates")
    rng = random.Random(seed)
    days = list(range(n_days))
    rng.shuffle(days)
    held, train_days = days[:n_held], days[n_held:]
    possible = sum(_distinct_renderings(d) for d in train_days)
    if n_train > possible:
        raise ValueError(
            f"n_train = {n_train}, but only {possible} distinct (source, target) pairs are possible "
            f"with the {len(train_days)} dates left for training (n_val + n_test = {n_held} of "
            f"{n_days} dates are held out)")

    def pair(day: int) -> tuple[str, str]:
        date = FIRST_DATE + dt.timedelta(days=day)
        return _draw_style(rng)._render(date), date.isoformat()

    val = [pair(d) for d in held[:n_val]]
    test = [pair(d) for d in held[n_val:]]
    if n_train > possible // 2:  # close to all of them: enumerate, then sample (never a long search)
        styles = _TRAIN_STYLES
        everything = sorted({(s._render(FIRST_DATE + dt.timedelta(days=d)),
                              (FIRST_DATE + dt.timedelta(days=d)).isoformat())
                             for d in train_days for s in styles})
        return rng.sample(everything, n_train), val, test
    # Training dates may repeat (in different styles); a (source, target) pair is used once.
    train, seen = [], set()
    while len(train) < n_train:
        src, tgt = pair(rng.choice(train_days))
        if src not in seen:
            seen.add(src)
            train.append((src, tgt))
    return train, val, test


HELD_OUT_GROUPS = {
    "year-first with '.'": "2021.03.12",
    "day-first numbers with spaces": "12 03 2021",
    "mon. d 'yy": "mar. 12 '21",
    "short weekday + year-first": "fri 2021-03-12",
}


def held_out_group(style: DateStyle) -> str:
    """Which of the four held-out combinations (``HELD_OUT_GROUPS``) a held-out style belongs to."""
    if not _is_held_out(style):
        raise ValueError(f"{style.name!r} is not a held-out style")
    if style.order == "ymd":
        return "year-first with '.'" if style.sep == "." else "short weekday + year-first"
    return "day-first numbers with spaces" if style.order == "dmy" else "mon. d 'yy"


def held_out_group_pairs(pairs: Sequence[tuple[str, str]], seed: int = 0):
    """{group name: the dates of ``pairs`` each written in a style of that held-out group, one
    style drawn per date}: every held-out combination measured on the same dates."""
    rng = random.Random(seed)
    groups: dict[str, list[DateStyle]] = {name: [] for name in HELD_OUT_GROUPS}
    for s in _HELD_STYLES:
        groups[held_out_group(s)].append(s)
    return {name: [(rng.choice(styles).render(parse_iso(t)), t) for _, t in pairs]
            for name, styles in groups.items()}


def family_of(source: str, target: str) -> str:
    """The format family (``DateStyle.family``) of a generated pair: that of the styles that write
    ``target`` as ``source`` ('' if none does)."""
    date = parse_iso(target)
    found = sorted({s.family() for s in [*_STYLES, ISO_STYLE] if s._render(date) == source})
    return " / ".join(found)


# Unambiguous ways to write a date that no style generates (tests/test_data.py checks that), tried
# by hand to see how far the translator reads beyond its data. The last two cannot be read by the
# tokenizer at all ('on', an 8-digit number): the widget answers them with a message.
UNSEEN_FORMATS = {
    "12th of march 2021": lambda d: f"{_ordinal(d.day)} of {MONTHS[d.month - 1]} {d.year}",
    "the 12th of march, 2021": lambda d: f"the {_ordinal(d.day)} of {MONTHS[d.month - 1]}, {d.year}",
    "march the 12th, 2021": lambda d: f"{MONTHS[d.month - 1]} the {_ordinal(d.day)}, {d.year}",
    "12 - 03 - 2021": lambda d: f"{d.day:02d} - {d.month:02d} - {d.year}",
    "2021 / 03 / 12": lambda d: f"{d.year} / {d.month:02d} / {d.day:02d}",
    "12. march 2021": lambda d: f"{d.day}. {MONTHS[d.month - 1]} {d.year}",
    "12.mar.2021": lambda d: f"{d.day}.{MONTHS[d.month - 1][:3]}.{d.year}",
    "fri. 12 mar 2021": lambda d: f"{WEEKDAYS[d.weekday()][:3]}. {d.day} {MONTHS[d.month - 1][:3]} {d.year}",
    "mar-12-2021": lambda d: f"{MONTHS[d.month - 1][:3]}-{d.day}-{d.year}",
    "march/12/2021": lambda d: f"{MONTHS[d.month - 1]}/{d.day}/{d.year}",
    "12th-mar-2021": lambda d: f"{_ordinal(d.day)}-{MONTHS[d.month - 1][:3]}-{d.year}",
    "2021, 12 march": lambda d: f"{d.year}, {d.day} {MONTHS[d.month - 1]}",
    "12 march 2021, friday": lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}, {WEEKDAYS[d.weekday()]}",
    "12march2021": lambda d: f"{d.day}{MONTHS[d.month - 1]}{d.year}",
    "12.3.'21": lambda d: f"{d.day}.{d.month}.'{d.year % 100:02d}",
    "on 12 march 2021": lambda d: f"on {d.day} {MONTHS[d.month - 1]} {d.year}",
    "20210312": lambda d: f"{d.year}{d.month:02d}{d.day:02d}",
}


def held_out_combination_pairs(pairs: Sequence[tuple[str, str]], seed: int = 0):
    """The dates of ``pairs`` (e.g. the test split) written in held-out styles only: combinations of
    parts that training never shows (``held_out_styles()``), one style drawn per date."""
    rng = random.Random(seed)
    return [(rng.choice(_HELD_STYLES).render(parse_iso(t)), t) for _, t in pairs]


def date_tokenizer() -> DateTokenizer:
    """The tokenizer of the translator: a ``DateTokenizer``, whose pieces cover everything any
    style can write and every ISO date (the same ids whatever the data's seed)."""
    return DateTokenizer()


_PIECE = re.compile(r"\d+|[^\W\d_]+|\s|.", re.S)  # digits, letters (any alphabet), one other


class DateTokenizer(CharTokenizer):
    """The translator's tokenizer: one id per *piece* of a date, not per character.

    A text is cut into pieces: runs of digits (``2021``, ``03``, ``12``), runs of letters
    (``march``, ``fri``, ``th``, ``märz``) and single other characters (``" "``, ``-``, ``/``, ``.``,
    ``,``, ``'``). Nothing is dropped or rewritten: joining the pieces gives the text back. The
    vocabulary holds every number of one or two digits, every year 1970..2049, month and weekday
    names (full and three letters), ``the``, ``of``, the ordinal suffixes and the separators, plus
    ``<pad>`` (0), ``<bos>`` (1) and ``<eos>`` (2). A piece outside it (``on``, ``1969``,
    ``20210312``, ``€``) cannot be read: ``unknown`` names it and ``encode`` raises ValueError.

    A ``CharTokenizer`` whose tokens are pieces: the same ``itos``, ``stoi``, ``encode``,
    ``decode`` (which joins the pieces) and ``unknown``, plus ``pieces`` and ``describe``. An ISO date is five pieces: ``2021 - 03 - 12``.
    """

    def __init__(self):
        numbers = [str(i) for i in range(10)] + [f"{i:02d}" for i in range(100)]
        years = [str(y) for y in range(FIRST_DATE.year, LAST_DATE.year + 1)]
        words = MONTHS + [m[:3] for m in MONTHS] + WEEKDAYS + [w[:3] for w in WEEKDAYS]
        words += ["the", "of", "st", "nd", "rd", "th"]
        marks = [" ", "'", ",", "-", ".", "/"]
        self.itos: list[str] = [self.PAD, self.BOS, self.EOS, *numbers, *years,
                                *dict.fromkeys(words), *marks]
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    def __repr__(self) -> str:
        return f"DateTokenizer({len(self)} tokens: 3 special + {len(self) - 3} pieces)"

    @staticmethod
    def pieces(text: str) -> list[str]:
        """'12th mar, 2021' -> ['12', 'th', ' ', 'mar', ',', ' ', '2021'] (joined: the text again)."""
        if not isinstance(text, str):
            raise TypeError(f"pieces expects a str, got {type(text).__name__}")
        return _PIECE.findall(text)

    def unknown(self, text: str) -> list[str]:
        """The distinct pieces of ``text`` this tokenizer has no id for, in order of appearance."""
        return list(dict.fromkeys(p for p in self.pieces(text) if p not in self.stoi))

    def describe(self) -> str:
        """What this tokenizer can read, in words (for messages)."""
        return (f"numbers of one or two digits, years {FIRST_DATE.year}-{LAST_DATE.year}, month "
                f"and weekday names (full or three letters), 'the', 'of', 'st', 'nd', 'rd', 'th', "
                f"spaces and the marks ' , - . /")

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """'12 mar 2021' -> list of ids, one per piece (optionally framed by bos / eos)."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        bad = self.unknown(text)
        if bad:
            raise ValueError(f"cannot read {', '.join(_cut(b, 20) for b in bad[:10])} in {_cut(text)}; this "
                             f"tokenizer reads {self.describe()}")
        return [self.bos_id] * add_bos + [self.stoi[p] for p in self.pieces(text)] + [self.eos_id] * add_eos
