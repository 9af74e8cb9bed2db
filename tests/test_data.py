"""The date data set and the character tokenizer of notebook 10."""

import datetime as dt
import re

import pytest

from helpers import CharTokenizer, date_splits
from helpers.data import DATE_FORMATS, FIRST_DATE, LAST_DATE, format_date, parse_iso

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]


@pytest.fixture(scope="module")
def splits():
    return date_splits(3000, 300, 500, seed=1)


def read_back(src: str) -> dt.date:
    """An independent parser for the generated formats (the tests' own reading of each source)."""
    month_of = {m: i + 1 for i, m in enumerate(MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(MONTHS)}

    def year2(yy):
        return 1900 + int(yy) if int(yy) >= 70 else 2000 + int(yy)

    patterns = [
        (r"[a-z]+day, (\d{1,2}) ([a-z]+) (\d{4})", lambda d, m, y: (int(y), month_of[m], int(d))),
        (r"(\d{1,2}) ([a-z]{3}) (\d{4})", lambda d, m, y: (int(y), month_of[m], int(d))),
        (r"([a-z]+) (\d{1,2}), (\d{4})", lambda m, d, y: (int(y), month_of[m], int(d))),
        (r"(\d{2})\.(\d{2})\.(\d{4})", lambda d, m, y: (int(y), int(m), int(d))),
        (r"(\d{4})/(\d{2})/(\d{2})", lambda y, m, d: (int(y), int(m), int(d))),
        (r"([a-z]{3}) (\d{1,2}) '(\d{2})", lambda m, d, y: (year2(y), month_of[m], int(d))),
        (r"the (\d{1,2})(?:st|nd|rd|th) of ([a-z]+) (\d{4})", lambda d, m, y: (int(y), month_of[m], int(d))),
        (r"(\d{2})-([a-z]{3})-(\d{2})", lambda d, m, y: (year2(y), month_of[m], int(d))),
    ]
    matches = [f(*m.groups()) for p, f in patterns if (m := re.fullmatch(p, src))]
    assert len(matches) == 1, f"{src!r} matches {len(matches)} formats"
    return dt.date(*matches[0])


def test_sizes_and_determinism(splits):
    train, val, test = splits
    assert (len(train), len(val), len(test)) == (3000, 300, 500)
    assert date_splits(3000, 300, 500, seed=1) == splits
    assert date_splits(3000, 300, 500, seed=2) != splits


def test_no_source_in_two_splits_and_held_out_dates(splits):
    train, val, test = splits
    sources = [{s for s, _ in part} for part in splits]
    assert not sources[0] & sources[1] and not sources[0] & sources[2] and not sources[1] & sources[2]
    train_dates = {t for _, t in train}
    assert not train_dates & {t for _, t in val + test}
    assert len({s for s, _ in train}) == len(train)  # no duplicate training pair


def test_targets_are_valid_iso_dates_equal_to_the_source_date(splits):
    for part in splits:
        for src, tgt in part:
            date = parse_iso(tgt)
            assert FIRST_DATE <= date <= LAST_DATE
            assert date.isoformat() == tgt
            assert read_back(src) == date, (src, tgt)


def test_every_format_appears(splits):
    train, _, _ = splits
    seen = {next(name for name in DATE_FORMATS if format_date(parse_iso(t), name) == s)
            for s, t in train}
    assert seen == set(DATE_FORMATS) and len(DATE_FORMATS) >= 6


def test_formats_are_unambiguous():
    # Every date in range, in every format, has exactly one reading, and different dates never
    # share a source string.
    seen = {}
    day = FIRST_DATE
    while day <= LAST_DATE:
        for name in DATE_FORMATS:
            src = format_date(day, name)
            assert seen.setdefault(src, day) == day, f"{src!r} is both {seen[src]} and {day}"
        day += dt.timedelta(days=17)  # a spread of days, months and years
    for src, date in list(seen.items())[:3000]:
        assert read_back(src) == date


def test_weekday_names_are_right():
    assert format_date(dt.date(2021, 3, 12), "weekday, d month yyyy") == "friday, 12 march 2021"
    assert format_date(dt.date(2001, 1, 22), "the dth of month yyyy") == "the 22nd of january 2001"
    assert format_date(dt.date(2011, 1, 11), "the dth of month yyyy") == "the 11th of january 2011"


def test_format_date_and_parse_iso_errors():
    with pytest.raises(ValueError, match="unknown date format 'dd/mm'"):
        format_date(dt.date(2021, 3, 12), "dd/mm")
    with pytest.raises(ValueError, match="outside the data set's range"):
        format_date(dt.date(1969, 12, 31), "dd.mm.yyyy")
    with pytest.raises(ValueError, match="not an ISO date"):
        parse_iso("12.03.2021")
    with pytest.raises(ValueError):
        parse_iso("2021-02-30")


def test_date_splits_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_val must be a non-negative int, got -1"):
        date_splits(10, -1, 10)
    with pytest.raises(ValueError, match="leaves no dates for training"):
        date_splits(10, 20000, 20000)


def test_tokenizer_round_trip_and_special_ids(splits):
    train, _, test = splits
    tok = CharTokenizer(s + t for s, t in train)
    assert (tok.pad_id, tok.bos_id, tok.eos_id) == (0, 1, 2)
    assert len(tok) == 3 + len({c for s, t in train for c in s + t})
    for src, tgt in test[:200]:
        assert tok.decode(tok.encode(src)) == src
        ids = tok.encode(tgt, add_bos=True, add_eos=True)
        assert ids[0] == tok.bos_id and ids[-1] == tok.eos_id
        assert tok.decode(ids) == tgt
    assert tok.decode([tok.bos_id, *tok.encode("12"), tok.pad_id, *tok.encode("3"),
                       tok.eos_id, *tok.encode("99")]) == "123"  # skips pad/bos, stops at eos
    assert CharTokenizer(["ba", "c"]).itos == CharTokenizer(["cab"]).itos  # order-independent


def test_tokenizer_names_unknown_characters():
    tok = CharTokenizer(["12 march 2021"])
    with pytest.raises(ValueError, match=r"unknown character\(s\) 'ä', 'z' in '12 märz 2021'"):
        tok.encode("12 märz 2021")
    assert tok.unknown("12 MARCH") == ["M", "A", "R", "C", "H"]
    with pytest.raises(TypeError, match="encode expects a str, got int"):
        tok.encode(12)
    with pytest.raises(ValueError, match="id 99 is outside"):
        tok.decode([99])
