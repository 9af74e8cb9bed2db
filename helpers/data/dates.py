"""The toy data set of notebook 10: dates as people write them -> ISO dates, and the
translator's tokenizer (``DateTokenizer``), which reads a date as pieces (numbers, words, marks).

Everything is generated from a seed: nothing is downloaded. Dates run from 1970-01-01 to
2049-12-31 (80 years), so a two-digit year is never ambiguous ('70-'99 are 19xx, '00-'49 are 20xx).

A written date is **composed from parts** (a ``DateStyle``): the day (``1``, ``01``, ``1st``,
``the 1st of``), the month (``3``, ``03``, ``march``, ``mar``, ``mar.``), the year (``2021``,
``21``, ``'21``), a separator (space, ``-``, ``/``, ``.``, ``", "``), an optional weekday
(``friday, ``, ``fri ``, ...), how abbreviations are spelled (``sep``/``sept``, ``thu``/``thur``/
``thurs``, ...) and an arrangement: day-month-year, year-month-day or month-day-year.

**The reading order.** Written in numbers only, ``03/04/2021`` is 3 April to most of the world
and March 4 in the United States. The text cannot say which, so the reader must: every source
starts with a token that states the **order** in which day and month are read when both are
numbers, ``<dmy>`` (day first, the default) or ``<mdy>`` (month first). A four-digit year first
is always year-month-day, and a month word says itself which number is the day, so the order
changes nothing there (the data gives such dates either token, so the model learns to ignore it).

``normalize_date_text`` (lower case, single spaces) is the one place where typed text is cleaned;
``read_date`` is a small rule-based reading of a text under an order; ``check_date_text`` says in
words what is wrong with text that names no single complete, possible date (a missing day, month
or year; a month 13; 31 February; a weekday that does not match; a word it cannot read);
``iso_or_none`` accepts a model output only if it is a real ISO date.
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
    "DAY_STYLES",
    "FIRST_DATE",
    "HELD_OUT_GROUPS",
    "LAST_DATE",
    "MONTHS",
    "MONTH_STYLES",
    "ORDERS",
    "READING_ORDERS",
    "SEPARATORS",
    "SPELLINGS",
    "UNSEEN_FORMATS",
    "WEEKDAYS",
    "WEEKDAY_STYLES",
    "YEAR_STYLES",
    "DateReading",
    "DateStyle",
    "DateTokenizer",
    "check_date_text",
    "date_splits",
    "date_tokenizer",
    "family_of",
    "held_out_combination_pairs",
    "held_out_group",
    "held_out_group_pairs",
    "held_out_styles",
    "in_distribution_styles",
    "iso_or_none",
    "normalize_date_text",
    "order_marker",
    "parse_iso",
    "read_date",
    "reading_of",
    "split_order",
]

# Bump when the generator changes: it is part of the trained-model cache key.
DATA_VERSION = 6

FIRST_DATE = dt.date(1970, 1, 1)
LAST_DATE = dt.date(2049, 12, 31)

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# Abbreviations in three spellings (the SPELLINGS of a style): three letters, then longer common
# forms. Only September and Tuesday-Thursday have longer ones.
_MONTH_ABBR = [(m[:3],) * 3 for m in MONTHS]
_MONTH_ABBR[8] = ("sep", "sept", "sept")
_WEEKDAY_ABBR = [(w[:3],) * 3 for w in WEEKDAYS]
_WEEKDAY_ABBR[1] = ("tue", "tues", "tues")
_WEEKDAY_ABBR[2] = ("wed", "weds", "weds")
_WEEKDAY_ABBR[3] = ("thu", "thur", "thurs")

ORDERS = ("dmy", "ymd", "mdy")  # how the parts are arranged in the text
READING_ORDERS = ("dmy", "mdy")  # how two numbers for day and month are read: the `order` argument
DAY_STYLES = ("d", "dd", "dth", "the dth of")
MONTH_STYLES = ("m", "mm", "month", "mon", "mon.")
YEAR_STYLES = ("yyyy", "yy", "'yy")
SEPARATORS = (" ", "-", "/", ".", ", ", "")
WEEKDAY_STYLES = ("", "weekday, ", "weekday ", "wkd, ", "wkd ")
SPELLINGS = (0, 1, 2)  # abbreviations: sep/tue/wed/thu, sept/tues/weds/thur, sept/tues/weds/thurs
_WORD_MONTHS = ("month", "mon", "mon.")


def _ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _check_order(order, where="order") -> str:
    if order not in READING_ORDERS:
        raise ValueError(f"{where} must be 'dmy' (day first) or 'mdy' (month first), got {order!r}")
    return order


def order_marker(order: str) -> str:
    """The token that starts every source and states the reading order: '<dmy>' or '<mdy>'."""
    return f"<{_check_order(order)}>"


_MARKER = re.compile(r"<(dmy|mdy)>")


def split_order(source: str, default: str | None = "dmy") -> tuple[str | None, str]:
    """'<mdy>03/12/2021' -> ('mdy', '03/12/2021'); a text without a marker gets ``default``
    (None: no order). Spaces after the marker are not part of the text ('<dmy> 03/04/2021')."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, got {type(source).__name__}")
    found = _MARKER.match(source)
    if found:
        return found.group(1), source[found.end():].lstrip()
    return (None if default is None else _check_order(default, "default")), source


@dataclass(frozen=True)
class DateStyle:
    """One way to write a date, composed from parts (see the module docstring).

    ``DateStyle("dmy", "dd", "mm", "yyyy", ".")`` writes 12 March 2021 as ``12.03.2021``;
    ``DateStyle("mdy", "d", "month", "yyyy", ", ", "weekday, ")`` as ``friday, march 12, 2021``;
    ``DateStyle("mdy", "dd", "mm", "yyyy", "/")`` as ``03/12/2021``, which is read as 12 March
    only with the order ``mdy`` (``reading_order``).
    """

    order: str
    day: str
    month: str
    year: str
    sep: str
    weekday: str = ""
    spelling: int = 0

    def problem(self) -> str | None:
        """Why this combination is not allowed (it would be ambiguous or odd), or None."""
        return _problem(self)

    @property
    def words(self) -> bool:
        """Is the month a word (march, mar, mar.)?"""
        return self.month in _WORD_MONTHS

    @property
    def reading_order(self) -> str | None:
        """The order a reader needs for this style ('dmy' or 'mdy'), or None when the text says
        it itself (a month word, or a four-digit year first)."""
        return None if self.words or self.order == "ymd" else self.order

    def _problem(self) -> str | None:
        for name, value, allowed in (("order", self.order, ORDERS), ("day", self.day, DAY_STYLES),
                                     ("month", self.month, MONTH_STYLES),
                                     ("year", self.year, YEAR_STYLES),
                                     ("sep", self.sep, SEPARATORS),
                                     ("weekday", self.weekday, WEEKDAY_STYLES),
                                     ("spelling", self.spelling, SPELLINGS)):
            if value not in allowed:
                return f"{name} must be one of {allowed}, got {value!r}"
        word = self.words
        if self.spelling and not (self.month in ("mon", "mon.") or self.weekday.startswith("wkd")):
            return "spelling varies only abbreviations ('sept', 'tues', 'thurs')"
        if self.sep == "" and (self.order, self.day, self.month, self.year, self.weekday) != (
                "ymd", "dd", "mm", "yyyy", ""):
            return "no separator only in ISO 8601's basic form, yyyymmdd ('20210312')"
        if self.order == "ymd" and self.year != "yyyy":
            return "year-first needs a four-digit year (21/03/12 could be day-first)"
        if self.day in ("dth", "the dth of") and (not word or self.sep not in (" ", ", ")):
            return "ordinal days go with month names and spaces ('12th march 2021')"
        if self.day == "the dth of" and (self.order != "dmy" or self.sep != " "):
            return "'the 12th of march 2021' is day-month-year with spaces"
        if self.order == "ymd" and self.day == "dth":
            return "year-first dates use a plain day"
        if self.sep == ", " and (not word or self.order == "ymd"):
            return "', ' separates a day or month word from the year only"
        if self.month == "mon." and self.sep == ".":
            return "'mar..2021' doubles the dot"
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
        """The date written in this style (lower case), without the order token."""
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
                 if style == "month" else _MONTH_ABBR[m - 1][self.spelling] if style == "mon"
                 else _MONTH_ABBR[m - 1][self.spelling] + ".")
        year = str(y) if self.year == "yyyy" else f"{y % 100:02d}" if self.year == "yy" else f"'{y % 100:02d}"
        weekday = self.weekday
        if weekday:
            w = date.weekday()
            weekday = weekday.replace("weekday", WEEKDAYS[w]).replace("wkd", _WEEKDAY_ABBR[w][self.spelling])
        return self._compose(day, month, year, weekday)

    def family(self) -> str:
        """A coarse family for reporting: arrangement and whether the month is a number or a word."""
        order = {"dmy": "day-month-year", "ymd": "year-month-day", "mdy": "month-day-year"}[self.order]
        kind = "words" if self.words else "numbers"
        return f"{order}, {kind}" + (", weekday" if self.weekday else "")


@functools.cache
def _problem(style: DateStyle) -> str | None:
    return style._problem()


def _all_styles() -> list[DateStyle]:
    styles = [DateStyle(*parts) for parts in product(ORDERS, DAY_STYLES, MONTH_STYLES, YEAR_STYLES,
                                                     SEPARATORS, WEEKDAY_STYLES, SPELLINGS)]
    return [s for s in styles if s.problem() is None]


def _is_held_out(s: DateStyle) -> bool:
    """The combinations that never appear in training: each part is seen, never together."""
    return ((s.order == "ymd" and s.sep == ".")                                 # 2021.03.12
            or (s.order == "mdy" and s.month == "mon." and s.year == "'yy")    # mar. 12 '21
            or (s.order == "ymd" and s.weekday.startswith("wkd"))             # fri 2021-03-12
            or (s.day == "the dth of" and s.weekday != ""))                    # friday, the 12th of march 2021


_STYLES = _all_styles()
_TRAIN_STYLES = [s for s in _STYLES if not _is_held_out(s)]
_HELD_STYLES = [s for s in _STYLES if _is_held_out(s)]
ISO_STYLE = DateStyle("ymd", "dd", "mm", "yyyy", "-")
ISO_BASIC_STYLE = DateStyle("ymd", "dd", "mm", "yyyy", "")  # ISO 8601's basic form: 20210312


def in_distribution_styles() -> list[DateStyle]:
    """Every allowed style that training data may use."""
    return list(_TRAIN_STYLES)


def held_out_styles() -> list[DateStyle]:
    """Allowed styles that never appear in training (held-out combinations of seen parts):
    year-first with '.', 'mar. 12 '21', a short weekday before a year-first date, and a weekday
    before 'the 12th of'."""
    return list(_HELD_STYLES)


# The mixture: ISO itself one time in ten (half of them in its basic form, 20210312); otherwise
# one of the six families (day-month-year,
# month-day-year or year-month-day, with a numeric or a word month) with equal probability, a
# weekday half the time, and then any in-distribution style of that group with equal probability
# (a style that varies only the spelling of an abbreviation counts as one, its spellings sharing
# its weight). Numeric dates thus get as much data as word dates, although far fewer styles
# exist for them.
def _group(s: DateStyle) -> tuple[str, bool, bool]:
    return s.order, s.words, bool(s.weekday)


def _spellings(s: DateStyle) -> int:
    return len(SPELLINGS) if s.month in ("mon", "mon.") or s.weekday.startswith("wkd") else 1


_GROUP_SIZES = Counter(_group(s) for s in _TRAIN_STYLES if s.spelling == 0)


def _style_weight(s: DateStyle) -> float:
    return 0.5 / _GROUP_SIZES[_group(s)] / _spellings(s)


_TRAIN_CUM_WEIGHTS = list(accumulate(_style_weight(s) for s in _TRAIN_STYLES))


def _draw_style(rng: random.Random) -> DateStyle:
    """ISO itself one time in ten (extended or basic form, 2021-03-12 or 20210312, equally often);
    otherwise a family uniformly, a weekday or none with equal probability, then a style of that
    group uniformly (see above)."""
    if rng.random() < 0.1:
        return ISO_STYLE if rng.random() < 0.5 else ISO_BASIC_STYLE
    return rng.choices(_TRAIN_STYLES, cum_weights=_TRAIN_CUM_WEIGHTS)[0]


def _marked(style: DateStyle, date: dt.date, rng: random.Random) -> str:
    """The source: the order token, then the text. A style that needs an order gets its own; for
    the others (a month word, a year first) the token is drawn, so that it carries no signal."""
    order = style.reading_order or rng.choice(READING_ORDERS)
    return f"<{order}>" + style._render(date)


def parse_iso(text: str) -> dt.date:
    """'2021-03-12' -> date(2021, 3, 12); raises ValueError for anything that is not a valid ISO date."""
    if not isinstance(text, str):
        raise TypeError(f"parse_iso: text must be a str such as '2021-03-12', got {type(text).__name__}")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise ValueError(f"parse_iso: text is not an ISO date YYYY-MM-DD: {_cut(text)}")
    try:
        return dt.date.fromisoformat(text)
    except ValueError as err:
        raise ValueError(f"parse_iso: {text!r} is not a real date ({err})") from None


def iso_or_none(text: str) -> str | None:
    """``text`` if it is a real date written as YYYY-MM-DD (e.g. a model's output), else None.

    '2021-02-31' -> None (February has no 31st); '2021-3-12' -> None (not ISO)."""
    if not isinstance(text, str):
        raise TypeError(f"iso_or_none: text must be a str (a model's output), got {type(text).__name__}")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return None
    return text


# Marks that phones and word processors write for the ASCII ones: dashes (en, em, minus, the
# Unicode hyphens) are '-', curly and prime apostrophes are "'".
_SAME_MARKS = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212"}
                            | {c: "'" for c in "\u2018\u2019\u2032"})


def normalize_date_text(text: str) -> str:
    """Lower case, no leading or trailing spaces, every run of white space one space, the dashes
    and apostrophes phones and word processors write ('–', '—', '’') as '-' and "'".

    The one place where typed text is cleaned: training data, evaluation and the widget all go
    through it. '  Friday,  12 MARCH 2021 ' -> 'friday, 12 march 2021'; 'Mar 12 ’21' ->
    "mar 12 '21"."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return " ".join(text.lower().translate(_SAME_MARKS).split())


# --- Reading a date by rules -------------------------------------------------------------------
MONTH_WORDS = {m: i + 1 for i, m in enumerate(MONTHS)} | {
    a: i + 1 for i, abbr in enumerate(_MONTH_ABBR) for a in abbr}
WEEKDAY_WORDS = {w: i for i, w in enumerate(WEEKDAYS)} | {
    a: i for i, abbr in enumerate(_WEEKDAY_ABBR) for a in abbr}
_MONTH_WORD_SET, _WEEKDAY_WORD_SET = frozenset(MONTH_WORDS), frozenset(WEEKDAY_WORDS)
FILLER_WORDS = ("the", "of")
ORDINAL_SUFFIXES = ("st", "nd", "rd", "th")
MARKS = (" ", "'", ",", "-", ".", "/")
_SCAN = re.compile(r"[0-9]+|[^\W\d_]+|.", re.S)  # ASCII digits: int("³") fails, int("١") reads


def _year_of(digits: str) -> int:
    """'2021' -> 2021, '21' -> 2021, '99' -> 1999, '55' -> 2055 (outside the range; refused later)."""
    y = int(digits)
    if len(digits) == 2:
        y += 1900 if y >= 70 else 2000
    return y


def split_eight_digits(digits: str) -> list[str]:
    """Eight digits in a row that start with a year of 1970-2049 are ISO 8601's basic form and
    are cut after the year and the month ('20210312' -> ['2021', '03', '12']); anything else is
    left whole (['12032021']: day and month first could be either, so it is refused)."""
    if len(digits) == 8 and digits.isdigit() and 1970 <= int(digits[:4]) <= 2049:
        return [digits[:4], digits[4:6], digits[6:]]
    return [digits]


@dataclass(frozen=True)
class DateReading:
    """What the rules read in a text: the date's parts (year, month, day), which reading order
    decided it (``order``, None when the text says it itself), and whether the other order would
    give another date (``swapped``: that date as (year, month, day), or None). ``year_first`` is
    the date a two-digit year *first* would give ('21-12-31': 2021-12-31), when that is a real
    date of 1970-2049: the rules read a two-digit year last, as the orders 'dmy' and 'mdy' say."""

    year: int
    month: int
    day: int
    order: str | None = None
    swapped: tuple[int, int, int] | None = None
    year_first: tuple[int, int, int] | None = None

    @property
    def parts(self) -> tuple[int, int, int]:
        return self.year, self.month, self.day


def _scan(text: str) -> tuple[list[tuple[str, str]], str | None]:
    """Classify the pieces of a normalised text: ('num', '12'), ('ord', '12') (12th), ('apos', '21')
    ('21), ('month', 'mar'), ('weekday', 'fri'), ('filler', 'the'). Marks are dropped. Returns
    (pieces, problem)."""
    time = _time_problem(text)
    if time is not None:
        return [], time
    raw = _SCAN.findall(text)
    out, unknown = [], []
    i = 0
    while i < len(raw):
        p = raw[i]
        if p.isascii() and p.isdigit():
            parts = split_eight_digits(p)
            if len(parts) == 1 and len(p) == 8:
                return out, (f"{p!r}: eight digits in a row are read only as year, month, day (ISO "
                             f"8601's basic form, e.g. 20210312), and {p[:4]} is not a year from "
                             f"1970 to 2049; write this date with separators, e.g. 12.03.2021")
            if len(parts) == 1 and len(p) > 4:
                return out, (f"{_cut(p, 20)}: {len(p)} digits in a row could be read several ways; write the "
                             f"date with separators, e.g. 12.03.2021 or 2021-03-12")
            if len(p) == 3:
                return out, f"{p!r} is not a day, a month or a year (three digits)"
            nxt = raw[i + 1] if i + 1 < len(raw) else ""
            prev = raw[i - 1] if i else ""
            if nxt in ORDINAL_SUFFIXES and len(p) <= 2:
                out.append(("ord", p))
                i += 2
                continue
            kind = "apos" if prev == "'" and len(p) == 2 else "num"
            out.extend((kind, q) for q in parts)
        elif p.isalpha() and p.isascii():
            if p in MONTH_WORDS:
                out.append(("month", p))
            elif p in WEEKDAY_WORDS:
                out.append(("weekday", p))
            elif p in FILLER_WORDS:
                out.append(("filler", p))
            else:
                unknown.append(p)
        elif p not in MARKS:
            unknown.append(p)
        i += 1
    loose = [u for u in unknown if u in ORDINAL_SUFFIXES]
    if loose:  # '12 th march': the suffix is known, but only right after its number
        example = {"st": "1st", "nd": "2nd", "rd": "3rd", "th": "12th"}[loose[0]]
        weekday = (f" For {WEEKDAYS[WEEKDAY_WORDS[_TWO_LETTER_WEEKDAYS[loose[0]]]].capitalize()} "
                   f"write {_TWO_LETTER_WEEKDAYS[loose[0]]!r}." if loose[0] in _TWO_LETTER_WEEKDAYS else "")
        return out, (f"{_cut(text)}: {loose[0]!r} is read only right after its number, as in "
                     f"{example!r}.{weekday}")
    if unknown:
        unknown = list(dict.fromkeys(unknown))
        names = ", ".join(_cut(u, 20) for u in unknown)
        return out, (f"Cannot read {names}: a date here is numbers, English month and weekday names "
                     f"(full or abbreviated), 'the', 'of', 'st', 'nd', 'rd', 'th' and the marks "
                     f"' , - . /. {_unknown_hint(unknown)}")
    return out, None


_TWO_LETTER_WEEKDAYS = {"mo": "mon", "tu": "tue", "we": "wed", "th": "thu", "fr": "fri", "sa": "sat",
                        "su": "sun"}
# A time of day after a date: '10:30', '10:30:00 +0000' (an e-mail header), 't10:30:00z' (ISO 8601)
_TIME = re.compile(r"(?:t|\s)?\d{1,2}:\d{2}\S*(?:\s+(?:z|utc|gmt|[+-]\d{2}:?\d{2}|[ap]\.?m\.?))*")


def _unknown_hint(unknown: list[str]) -> str:
    """What to change so that the rules can read the text (one sentence per kind of problem)."""
    hints = []
    short = [u for u in unknown if u in _TWO_LETTER_WEEKDAYS]
    if short:
        hints.append("A weekday has at least three letters: write " + ", ".join(
            f"{_TWO_LETTER_WEEKDAYS[u]!r} for {u!r}" for u in short) + ".")
    if "(" in unknown or ")" in unknown:
        hints.append("Leave out the brackets: a weekday goes first ('friday, 12 march 2021').")
    digits = [u for u in unknown if any(c.isnumeric() for c in u)]
    if digits:
        hints.append(f"Write the numbers {', '.join(_cut(u, 20) for u in digits)} with the digits 0-9.")
    rest = [u for u in unknown if u not in _TWO_LETTER_WEEKDAYS and u not in "()" and u not in digits]
    if rest:
        hints.append(f"Leave out {', '.join(_cut(u, 20) for u in rest)} (e.g. 'friday, 12 march 2021').")
    return " ".join(hints)


def _time_problem(text: str) -> str | None:
    """A message naming the time of day in ``text`` (the translator reads dates only), or None."""
    found = _TIME.search(text)
    if found is None:
        return None
    return (f"{_cut(text)} has a time of day, {_cut(found.group().strip(), 30)}: the translator reads "
            f"dates only. Leave the time out ({_cut(text[:found.start()].strip(' ,'), 40)}).")


def _missing(have: set[str]) -> str:
    lacking = [p for p in ("day", "month", "year") if p not in have]
    if len(lacking) == 3:
        return "no day, no month and no year"
    return "no " + " and no ".join(lacking)


def reading_of(text: str, order: str | None = "dmy") -> DateReading | str:
    """The rules' reading of ``text`` under ``order``: a ``DateReading`` (not yet checked for
    being a real date of 1970-2049), or a message that says why the text names no single
    complete date (what is missing, a word it cannot read, too many numbers, ...).

    ``order=None`` (no order given) reads a date in numbers only when a single reading is a real
    date: '03/12/2021' could be 3 December or 12 March, '21-12-31' 21 December 2031 or (a
    two-digit year first) 31 December 2021, and the message names them all; '25/12/2021' is
    read day first, '12/25/2021' month first.

    The rules: a month word is the month; a four-digit number, or two digits after an apostrophe,
    is the year; an ordinal (12th) is always the day. With a month word the other number is the
    day (of two small numbers the first is the day); without one, a four-digit year first means
    year-month-day, otherwise the year comes last and ``order`` says whether the day or the month
    comes first, unless an ordinal says which number is the day ('03/12th/2021' is 12 March in
    both orders). What contradicts these (an apostrophe year that is not last, two ordinals, an
    ordinal where the month or the year must stand) is refused."""
    if order is not None:
        _check_order(order)
    if not isinstance(text, str):
        raise TypeError(f"reading_of: text must be a str, got {type(text).__name__}")
    if not normalize_date_text(text):
        return "Type a date, for example: 12 march 2021"
    text = normalize_date_text(text)
    pieces, problem = _scan(text)
    if problem:
        return problem
    months = [w for k, w in pieces if k == "month"]
    weekdays = [w for k, w in pieces if k == "weekday"]
    numbers = [(k, n) for k, n in pieces if k in ("num", "ord", "apos")]
    said = _cut(text)
    if len(months) > 1:
        return f"{said} names {len(months)} months ({', '.join(months)}): a date has one."
    if len(weekdays) > 1:
        return f"{said} names {len(weekdays)} weekdays: a date has one."
    if months:
        month = MONTH_WORDS[months[0]]
        if len(numbers) > 2:
            return (f"{said} has {len(numbers)} numbers besides the month: a date has a day and a year "
                    f"(a range of days, or a time, is not one date).")
        if len(numbers) < 2:
            have = {"month"}
            if numbers:
                kind, n = numbers[0]
                have.add("year" if kind == "apos" or len(n) == 4 else "day")
            return f"{said} is not a complete date: it has {_missing(have)}."
        (_, a), (_, b) = numbers
        yearish = [k == "apos" or len(n) == 4 for k, n in numbers]
        dayish = [k == "ord" for k, _ in numbers]
        if all(yearish):
            return f"{said} has two years ({a}, {b}) and no day."
        if all(dayish):
            return f"{said} has two days ({_ordinal(int(a))}, {_ordinal(int(b))}) and no year."
        if any(yearish):
            year, day = (a, b) if yearish[0] else (b, a)
        elif any(dayish):
            day, year = (a, b) if dayish[0] else (b, a)
        else:
            month_at = next(i for i, (k, _) in enumerate(pieces) if k == "month")
            first_at = next(i for i, (k, _) in enumerate(pieces) if k in ("num", "ord", "apos"))
            if month_at > first_at and all(
                    i < month_at for i, (k, _) in enumerate(pieces) if k in ("num", "ord", "apos")):
                return (f"{said}: which of {a} and {b} is the day and which the year? Write the year "
                        f"with four digits.")
            day, year = a, b
        return DateReading(_year_of(year), month, int(day))
    if len(numbers) > 3:
        return f"{said} has {len(numbers)} numbers: a date has three (day, month, year)."
    if len(numbers) < 3:
        if len(numbers) == 0:
            have = set()
        elif any(k == "apos" or len(n) == 4 for k, n in numbers):
            have = {"year"} | ({"month"} if len(numbers) == 2 else set())
        else:
            have = {"day", "month"} if len(numbers) == 2 else {"day"}
        return f"{said} is not a complete date: it has {_missing(have)}."
    values = [n for _, n in numbers]
    kinds = [k for k, _ in numbers]
    if "apos" in kinds[:2]:
        n = values[kinds.index("apos")]
        return (f"{said}: '{n} is a year (the apostrophe says so), but in a date in numbers a "
                f"two-digit year comes last; a year that comes first needs four digits "
                f"({_year_of(n)}).")
    ordinals = [i for i, k in enumerate(kinds) if k == "ord"]
    if len(ordinals) > 1:
        days = " and ".join(_ordinal(int(values[i])) for i in ordinals)
        return (f"{said} writes two numbers as days ({days}): a date has one day; write the month "
                f"as a word or a plain number.")
    if len(values[0]) == 4:
        y, m, d = values
        if len(m) == 4 or len(d) == 4:
            return f"{said} has more than one four-digit year."
        if ordinals == [1]:
            return (f"{said}: the {_ordinal(int(m))} is a day, but a date that starts with the year "
                    f"has the month second (year-month-day).")
        return DateReading(_year_of(y), int(m), int(d))
    if len(values[1]) == 4:
        return f"{said}: a four-digit year stands first or last, not between the day and the month."
    first, second, y = values
    if ordinals == [2]:
        return f"{said}: the {_ordinal(int(y))} is a day, not a year; a date in numbers ends with its year."
    if len(first) == 2 and int(first) > 31 and len(y) == 2:
        return (f"{said}: {first} is neither a day nor a month, and a two-digit year comes last in a "
                f"date in numbers: write a year-first date with four digits (e.g. {_year_of(first)}-"
                f"{second.zfill(2)}-{y.zfill(2)}).")
    if ordinals:  # an ordinal is the day whatever the order: '03/12th/2021' is 12 March
        day, month = (first, second) if ordinals == [0] else (second, first)
        return DateReading(_year_of(y), int(month), int(day))
    year_first = None
    if len(first) == 2 and len(y) <= 2 and _real((_year_of(first), int(second), int(y))):
        year_first = (_year_of(first), int(second), int(y))
    if order is None:  # no order given: read only what one order alone makes a real date
        dmy = (_year_of(y), int(second), int(first))
        mdy = (_year_of(y), int(first), int(second))
        found = [r for r in dict.fromkeys((dmy, mdy, year_first)) if r is not None and _real(r)]
        if len(found) > 1:
            names = {dmy: "day first, 'dmy'", mdy: "month first, 'mdy'"}
            readings = " or ".join(f"{_spoken(r)} ({names.get(r, 'a two-digit year first')})" for r in found)
            return (f"{said} could be {readings}: give the order ('dmy' or 'mdy'), or write the month "
                    f"as a word or the year with four digits.")
        order = "mdy" if mdy in found else "dmy"
        day, month = (first, second) if order == "dmy" else (second, first)
        return DateReading(_year_of(y), int(month), int(day), order, None, None)
    day, month = (first, second) if order == "dmy" else (second, first)
    swapped = None
    if int(first) != int(second) and int(first) <= 12 and int(second) <= 12:
        swapped = (_year_of(y), int(day), int(month))
    return DateReading(_year_of(y), int(month), int(day), order, swapped, year_first)


def _real(parts: tuple[int, int, int]) -> bool:
    """Is (year, month, day) a real date of 1970-2049?"""
    y, m, d = parts
    return 1970 <= y <= 2049 and 1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1]


def _spoken(parts: tuple[int, int, int]) -> str:
    y, m, d = parts
    return f"{d} {MONTHS[m - 1].capitalize()} {y}"


def read_date(text: str, order: str | None = "dmy") -> tuple[int, int, int] | None:
    """The rules' reading of ``text`` as (year, month, day) under ``order`` (not checked for
    being a real date); None when the text names no single complete date. See ``reading_of``.

    It backs ``check_date_text`` (which also says why) and the tests; the translator itself is
    the trained model, not this function."""
    reading = reading_of(text, order)
    return reading.parts if isinstance(reading, DateReading) else None


def _date_problem(text: str, reading: DateReading) -> str | None:
    """What is impossible about a reading (None if it is a real date of 1970-2049)."""
    y, m, d = reading.parts
    said = _cut(text)
    other = {"dmy": "mdy", "mdy": "dmy"}.get(reading.order or "")
    if not 1 <= m <= 12:
        hint = ""
        if reading.order and 1 <= d <= 12:
            hint = f" If the {'day' if other == 'dmy' else 'month'} comes first, choose the order {other!r}."
        how = f" (read {'day' if reading.order == 'dmy' else 'month'} first)" if reading.order else ""
        return f"{said} is not a date: there is no month {m}{how}.{hint}"
    if not 1970 <= y <= 2049:
        if 2050 <= y < 2070 and str(y) not in text:  # written with two digits
            return (f"{said}: the two-digit year {y % 100:02d} could be 19{y % 100:02d} or "
                    f"20{y % 100:02d}, both outside the years this model knows (1970 to 2049).")
        return f"{said} lies outside the years this model knows (1970 to 2049)."
    last = calendar.monthrange(y, m)[1]
    if not 1 <= d <= last:
        return (f"{said} is not a date: {MONTHS[m - 1].capitalize()} {y} has {last} days "
                f"(got day {d}).")
    date = dt.date(y, m, d)
    named = [w for w in _SCAN.findall(normalize_date_text(text)) if w in WEEKDAY_WORDS]
    if named and WEEKDAY_WORDS[named[0]] != date.weekday():
        said_day = WEEKDAYS[WEEKDAY_WORDS[named[0]]]
        hint = "check the date"
        if reading.swapped is not None and other is not None:
            y2, m2, d2 = reading.swapped
            if dt.date(y2, m2, d2).weekday() == WEEKDAY_WORDS[named[0]]:
                first = "month" if other == "mdy" else "day"
                hint = (f"read {first} first it is {d2} {MONTHS[m2 - 1].capitalize()} {y2}, a "
                        f"{said_day}: choose the order {other!r}")
        return f"{date:%d %B %Y} was a {WEEKDAYS[date.weekday()]}, not a {said_day}: {hint}."
    return None


def check_date_text(text, tokenizer=None, max_len: int | None = None,
                    order: str | None = "dmy") -> str | None:
    """None if ``text`` can be given to the translator with reading ``order``, else a message that
    says what is wrong.

    Refused: no text; a word or mark that is not part of a date; a date without a day, a month or
    a year (the message says which); two months, or more numbers than a date has; a date that
    cannot exist (31.02.2021, month 13 -- under the order given) or lies outside 1970-2049; a
    weekday that does not match the date; pieces the tokenizer has no id for; text longer than
    ``max_len`` tokens (with the order token). ``order=None``: no order given, and a date in
    numbers that more than one reading makes a real date is refused (see ``reading_of``)."""
    if order is not None:
        _check_order(order)
    if not isinstance(text, str):
        raise TypeError(f"check_date_text: text must be a str, got {type(text).__name__}")
    if not normalize_date_text(text):
        return "Type a date, for example: 12 march 2021"
    text = normalize_date_text(text)
    reading = reading_of(text, order)
    if isinstance(reading, str):
        return reading
    message = _date_problem(text, reading)
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
        n = len(tokenizer.pieces(text)) + 1 if hasattr(tokenizer, "pieces") else len(text)
        unit = "tokens" if hasattr(tokenizer, "pieces") else "characters"
        if n > max_len:
            return f"That is {n} {unit}; this model reads at most {max_len}."
    return None


# --- The splits -------------------------------------------------------------------------------
def _class_key(date: dt.date) -> tuple:
    # Which renderings coincide depends only on: one-digit day (d == dd), one-digit month
    # (m == mm), May (may == may), September (sep/sept), the weekday's spellings (tue/tues,
    # wed/weds, thu/thur/thurs, one for the others) and day == month (03/03/2021 is the same text
    # in both orders, with its own order token each). tests/test_data.py checks it by brute force.
    w = date.weekday()
    return (date.day < 10, date.month < 10, date.month == 5, date.month == 9,
            0 if w not in (1, 2, 3) else 1 if w in (1, 2) else 2, date.day == date.month)


_CLASS_COUNTS: dict[tuple, int] = {}


def _sources_of(date: dt.date, styles) -> set[str]:
    """Every distinct source (order token + text) the styles can give for one date."""
    out = set()
    for s in styles:
        text = s._render(date)
        orders = (s.reading_order,) if s.reading_order else READING_ORDERS
        out.update(f"<{o}>{text}" for o in orders)
    return out


def _distinct_renderings(day: int) -> int:
    """How many different sources the training styles give for one date (by its class)."""
    date = FIRST_DATE + dt.timedelta(days=day)
    key = _class_key(date)
    if key not in _CLASS_COUNTS:
        _CLASS_COUNTS[key] = len(_sources_of(date, _TRAIN_STYLES))
    return _CLASS_COUNTS[key]


def date_splits(n_train: int, n_val: int, n_test: int, seed: int = 0):
    """(train, val, test): lists of (source, target) pairs, e.g. ("<dmy>12 mar 2021", "2021-03-12").

    Each source starts with its order token (``<dmy>`` or ``<mdy>``, see the module docstring).
    The dates themselves are held out: a date used in val or test never appears in train (in any
    style), and the three splits share no date and hence no source string. Each pair's style is
    drawn from the in-distribution styles (``in_distribution_styles()``): ISO itself one time in
    ten, else each family (arrangement, month as number or word) equally often, half of them with
    a weekday. Training sources are distinct. The same seed gives the same splits.
    Raises ValueError when more training pairs are asked for than the training dates allow.
    """
    for name, n in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"{name} must be a non-negative int, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"date_splits: seed must be an int, got {type(seed).__name__} {seed!r}")
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
        return _marked(_draw_style(rng), date, rng), date.isoformat()

    val = [pair(d) for d in held[:n_val]]
    test = [pair(d) for d in held[n_val:]]
    if n_train > possible // 2:  # close to all of them: enumerate, then sample (never a long search)
        everything = sorted({(src, (FIRST_DATE + dt.timedelta(days=d)).isoformat())
                             for d in train_days
                             for src in _sources_of(FIRST_DATE + dt.timedelta(days=d), _TRAIN_STYLES)})
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
    "mon. d 'yy": "mar. 12 '21",
    "short weekday + year-first": "fri 2021-03-12",
    "weekday + 'the 12th of'": "friday, the 12th of march 2021",
}


def held_out_group(style: DateStyle) -> str:
    """Which of the held-out combinations (``HELD_OUT_GROUPS``) a held-out style belongs to."""
    if not _is_held_out(style):
        raise ValueError(f"{style.name!r} is not a held-out style")
    if style.order == "ymd":
        return "year-first with '.'" if style.sep == "." else "short weekday + year-first"
    return "mon. d 'yy" if style.order == "mdy" else "weekday + 'the 12th of'"


def held_out_group_pairs(pairs: Sequence[tuple[str, str]], seed: int = 0, year: str | None = None):
    """{group name: the dates of ``pairs`` each written in a style of that held-out group, one
    style (and an order token) drawn per date}: every held-out combination on the same dates.
    ``year`` ("yyyy", "yy" or "'yy") keeps only the styles that write the year that way (a group
    with none is left out): the same combinations with four-digit years, say."""
    if year is not None and year not in YEAR_STYLES:
        raise ValueError(f"held_out_group_pairs: year must be None or one of {YEAR_STYLES}, got {year!r}")
    rng = random.Random(seed)
    groups: dict[str, list[DateStyle]] = {name: [] for name in HELD_OUT_GROUPS}
    for s in _HELD_STYLES:
        if year is None or s.year == year:
            groups[held_out_group(s)].append(s)
    return {name: [(_marked(rng.choice(styles), parse_iso(t), rng), t) for _, t in pairs]
            for name, styles in groups.items() if styles}


def held_out_combination_pairs(pairs: Sequence[tuple[str, str]], seed: int = 0):
    """The dates of ``pairs`` (e.g. the test split) written in held-out styles only: combinations of
    parts that training never shows (``held_out_styles()``), one style drawn per date."""
    rng = random.Random(seed)
    return [(_marked(rng.choice(_HELD_STYLES), parse_iso(t), rng), t) for _, t in pairs]


def family_of(source: str, target: str) -> str:
    """The format family (``DateStyle.family``) of a generated pair: that of the styles that write
    ``target`` as ``source`` and read it with the source's order token ('' if none does)."""
    order, text = split_order(source)
    date = parse_iso(target)
    # Only styles with a weekday write a weekday word, only word months a month word, and every style
    # writes its separator: the other styles cannot write ``text`` and are not rendered at all.
    words = set(re.findall(r"[a-z]+", text))
    kind = (bool(words & _WEEKDAY_WORD_SET), bool(words & _MONTH_WORD_SET))
    found = sorted({s.family() for s in _styles_by_kind().get(kind, ()) if s.sep in text
                    and s._render(date) == text and s.reading_order in (None, order)})
    return " / ".join(found)


@functools.cache
def _styles_by_kind() -> dict[tuple[bool, bool], list[DateStyle]]:
    """``_STYLES`` grouped by (has a weekday, month as a word)."""
    groups: dict[tuple[bool, bool], list[DateStyle]] = {}
    for s in _STYLES:
        groups.setdefault((bool(s.weekday), s.words), []).append(s)
    return groups


# Unambiguous ways to write a date that no style generates (tests/test_data.py checks that), tried
# by hand to see how far the translator reads beyond its data. The last one has a word the
# translator does not read ('on'): it is answered with a message.
UNSEEN_FORMATS = {
    "12th of march 2021": lambda d: f"{_ordinal(d.day)} of {MONTHS[d.month - 1]} {d.year}",
    "the 12th of march, 2021": lambda d: f"the {_ordinal(d.day)} of {MONTHS[d.month - 1]}, {d.year}",
    "march the 12th, 2021": lambda d: f"{MONTHS[d.month - 1]} the {_ordinal(d.day)}, {d.year}",
    "12 - 03 - 2021": lambda d: f"{d.day:02d} - {d.month:02d} - {d.year}",
    "2021 / 03 / 12": lambda d: f"{d.year} / {d.month:02d} / {d.day:02d}",
    "12. march 2021": lambda d: f"{d.day}. {MONTHS[d.month - 1]} {d.year}",
    "fri. 12 mar 2021": lambda d: f"{WEEKDAYS[d.weekday()][:3]}. {d.day} {MONTHS[d.month - 1][:3]} {d.year}",
    "12th-mar-2021": lambda d: f"{_ordinal(d.day)}-{MONTHS[d.month - 1][:3]}-{d.year}",
    "2021, 12 march": lambda d: f"{d.year}, {d.day} {MONTHS[d.month - 1]}",
    "12 march 2021, friday": lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}, {WEEKDAYS[d.weekday()]}",
    "12march2021": lambda d: f"{d.day}{MONTHS[d.month - 1]}{d.year}",
    "12.3.'21": lambda d: f"{d.day}.{d.month}.'{d.year % 100:02d}",
    "12-mar 2021": lambda d: f"{d.day}-{MONTHS[d.month - 1][:3]} {d.year}",
    "march/12, 2021": lambda d: f"{MONTHS[d.month - 1]}/{d.day}, {d.year}",
    "on 12 march 2021": lambda d: f"on {d.day} {MONTHS[d.month - 1]} {d.year}",
}


_PIECE = re.compile(r"<(?:dmy|mdy)>|[0-9]+|[^\W\d_]+|\s|.", re.S)  # order token, digits, letters, one other


class DateTokenizer(CharTokenizer):
    """The translator's tokenizer: one id per *piece* of a date, not per character.

    A text is cut into pieces: the order token that starts a source (``<dmy>``, ``<mdy>``), runs
    of digits (``2021``, ``03``, ``12``), runs of letters (``march``, ``fri``, ``th``, ``märz``)
    and single other characters (``" "``, ``-``, ``/``, ``.``, ``,``, ``'``). Eight digits in a
    row that start with a year are cut after the year and the month (``20210312`` -> ``2021 03 12``).
    Nothing is dropped or rewritten: joining the pieces gives the text back. The vocabulary holds
    every number of one or two digits, every year 1970..2049, month and weekday names (full,
    three letters and the common longer abbreviations ``sept``, ``tues``, ``weds``, ``thur``,
    ``thurs``), ``the``, ``of``, the ordinal suffixes, the marks and the two order tokens, plus
    ``<pad>`` (0), ``<bos>`` (1) and ``<eos>`` (2). A piece outside it (``on``, ``1969``,
    ``090107``, ``€``) cannot be read: ``unknown`` names it and ``encode`` raises ValueError.
    An ISO date is five pieces: ``2021 - 03 - 12``.
    """

    def __init__(self):
        numbers = [str(i) for i in range(10)] + [f"{i:02d}" for i in range(100)]
        years = [str(y) for y in range(FIRST_DATE.year, LAST_DATE.year + 1)]
        words = [*MONTH_WORDS, *WEEKDAY_WORDS, "the", "of", *ORDINAL_SUFFIXES]
        marks = [" ", "'", ",", "-", ".", "/"]
        orders = [f"<{o}>" for o in READING_ORDERS]
        self.itos: list[str] = [self.PAD, self.BOS, self.EOS, *orders, *numbers, *years,
                                *dict.fromkeys(words), *marks]
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    def __repr__(self) -> str:
        return f"DateTokenizer({len(self)} tokens: 3 special + 2 order tokens + {len(self) - 5} pieces)"

    @staticmethod
    def pieces(text: str) -> list[str]:
        """'12th mar, 2021' -> ['12', 'th', ' ', 'mar', ',', ' ', '2021'] (joined: the text again)."""
        if not isinstance(text, str):
            raise TypeError(f"pieces expects a str, got {type(text).__name__}")
        return [q for p in _PIECE.findall(text) for q in split_eight_digits(p)]

    def unknown(self, text: str) -> list[str]:
        """The distinct pieces of ``text`` this tokenizer has no id for, in order of appearance."""
        return self._unknown(self.pieces(text))

    def _unknown(self, pieces: list[str]) -> list[str]:
        return list(dict.fromkeys(p for p in pieces if p not in self.stoi))

    def describe(self) -> str:
        """What this tokenizer can read, in words (for messages)."""
        return (f"numbers of one or two digits, years {FIRST_DATE.year}-{LAST_DATE.year}, month "
                f"and weekday names (full or abbreviated), 'the', 'of', 'st', 'nd', 'rd', 'th', "
                f"spaces and the marks ' , - . /")

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """'12 mar 2021' -> list of ids, one per piece (optionally framed by bos / eos)."""
        if not isinstance(text, str):
            raise TypeError(f"encode: text must be a str, got {type(text).__name__}")
        pieces = self.pieces(text)
        bad = self._unknown(pieces)  # split once: the pieces serve the check and the ids
        if bad:
            raise ValueError(f"cannot read {', '.join(_cut(b, 20) for b in bad[:10])} in {_cut(text)}; this "
                             f"tokenizer reads {self.describe()}")
        return [self.bos_id] * add_bos + [self.stoi[p] for p in pieces] + [self.eos_id] * add_eos


def date_tokenizer() -> DateTokenizer:
    """The tokenizer of the translator: a ``DateTokenizer`` (the same ids whatever the data's seed)."""
    return DateTokenizer()
