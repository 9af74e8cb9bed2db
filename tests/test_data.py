"""The date data set and the tokenizers of notebook 10 (pieces of a date; characters)."""

import datetime as dt
import re

import pytest
import torch

from helpers import CharTokenizer, date_splits
from helpers.data import (
    FIRST_DATE,
    LAST_DATE,
    DateStyle,
    check_date_text,
    date_tokenizer,
    held_out_combination_pairs,
    held_out_styles,
    in_distribution_styles,
    iso_or_none,
    normalize_date_text,
    parse_iso,
    read_date,
)

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]


@pytest.fixture(scope="module")
def splits():
    return date_splits(3000, 300, 500, seed=1)


def independent_reading(src: str) -> dt.date:
    """The tests' own reading of a generated source, by the stated rule: a four-digit number first
    is the year, then month and day; otherwise the day comes before the year, and the month is the
    middle number or the one word that names a month."""
    month_of = {m: i + 1 for i, m in enumerate(MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(MONTHS)}
    body = re.sub(r"^[a-z]+day,? |^(mon|tue|wed|thu|fri|sat|sun),? ", "", src)
    body = re.sub(r"^the (\d+)(st|nd|rd|th) of ", r"\1 ", body)
    parts = [p for p in re.split(r"[ ,/.\-]+", body) if p]
    assert len(parts) == 3, (src, parts)
    words = [p for p in parts if p.isalpha()]
    nums = [re.sub(r"(st|nd|rd|th)$", "", p) for p in parts if not p.isalpha()]
    if words:
        month = month_of[words[0]]
        a, b = nums
        year, day = (a, b) if len(a) == 4 else (b, a)
    else:
        year, month, day = ((nums[0], int(nums[1]), nums[2]) if len(nums[0]) == 4
                            else (nums[2], int(nums[1]), nums[0]))
    y = int(year.strip("'"))
    if len(year.strip("'")) == 2:
        y += 1900 if y >= 70 else 2000
    return dt.date(y, month, int(day))


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
            assert independent_reading(src) == date, (src, tgt)
            assert read_date(src) == (date.year, date.month, date.day), src
            assert normalize_date_text(src) == src


def test_the_running_example_in_a_few_styles():
    d = dt.date(2021, 3, 12)
    assert DateStyle("dmy", "dd", "mm", "yyyy", ".").render(d) == "12.03.2021"
    assert DateStyle("ymd", "dd", "mm", "yyyy", "-").render(d) == "2021-03-12"
    assert DateStyle("mdy", "d", "month", "yyyy", ", ", "weekday, ").render(d) == "friday, march 12, 2021"
    assert DateStyle("mdy", "dth", "mon.", "'yy", " ", "wkd ").render(d) == "fri mar. 12th '21"
    assert DateStyle("dmy", "the dth of", "month", "yyyy", " ").render(d) == "the 12th of march 2021"
    assert DateStyle("dmy", "d", "m", "yy", "/").render(dt.date(2001, 1, 2)) == "2/1/01"
    assert DateStyle("dmy", "dth", "mon", "yyyy", " ").render(dt.date(2011, 1, 22)) == "22nd jan 2011"
    assert DateStyle("dmy", "dth", "mon", "yyyy", " ").render(dt.date(2011, 1, 11)) == "11th jan 2011"
    assert DateStyle("dmy", "dd", "mm", "yyyy", ".").name == "dd.mm.yyyy"


def test_ambiguous_combinations_are_refused():
    assert "month-first" in DateStyle("mdy", "dd", "mm", "yyyy", "/").problem()
    assert "four-digit" in DateStyle("ymd", "dd", "mm", "yy", "/").problem()
    with pytest.raises(ValueError, match="month-first"):
        DateStyle("mdy", "dd", "mm", "yyyy", "/").render(dt.date(2021, 3, 12))
    with pytest.raises(ValueError, match="order must be one of"):
        DateStyle("myd", "dd", "mm", "yyyy", "/").render(dt.date(2021, 3, 12))
    with pytest.raises(ValueError, match="outside the data set's range"):
        DateStyle("dmy", "dd", "mm", "yyyy", ".").render(dt.date(1969, 12, 31))
    assert all(s.problem() is None for s in in_distribution_styles() + held_out_styles())


def test_every_style_is_unambiguous():
    # Every allowed style, over a spread of dates: a source string names exactly one date.
    seen = {}
    styles = in_distribution_styles() + held_out_styles()
    day = FIRST_DATE
    while day <= LAST_DATE:
        for style in styles[::7]:
            src = style.render(day)
            assert seen.setdefault(src, day) == day, f"{src!r} is both {seen[src]} and {day}"
        day += dt.timedelta(days=89)  # a spread of days, months and years
    for src, date in seen.items():
        assert independent_reading(src) == date, src


def test_held_out_styles_never_appear_in_training(splits):
    held = set(held_out_styles())
    assert held and not held & set(in_distribution_styles())
    names = {s.name for s in held}
    assert {"yyyy.mm.dd", "dd mm yyyy", "mon. d 'yy"} <= names
    train, _, test = splits
    # A held-out source is rendered by a held-out style, which training never draws.
    combos = held_out_combination_pairs(test, seed=0)
    assert [t for _, t in combos] == [t for _, t in test]
    train_sources = {s for s, _ in train}
    assert not {s for s, _ in combos} & train_sources
    for src, tgt in combos:
        assert independent_reading(src) == parse_iso(tgt)
    assert any(re.fullmatch(r"\d{4}\.\d\d?\.\d\d?", s) for s, _ in combos)


def test_distinct_pair_count_matches_brute_force():
    # date_splits counts the distinct training sources per date by class; check against brute force.
    from helpers.data.dates import _distinct_renderings

    styles = in_distribution_styles()
    for offset in range(0, 29220, 997):
        date = FIRST_DATE + dt.timedelta(days=offset)
        assert _distinct_renderings(offset) == len({s.render(date) for s in styles}), date


def test_date_splits_too_many_pairs_raises_instead_of_hanging():
    # 2 dates are left for training; ask for one pair more than they can give.
    with pytest.raises(ValueError, match=r"only (\d+) distinct \(source, target\) pairs are possible") as err:
        date_splits(10**6, 29218, 0)
    possible = int(re.search(r"only (\d+) distinct", str(err.value)).group(1))
    train, _, _ = date_splits(possible, 29218, 0)  # exactly all of them: enumerated, no search
    assert len(set(train)) == possible
    with pytest.raises(ValueError, match=f"only {possible} distinct"):
        date_splits(possible + 1, 29218, 0)
    assert len(date_splits(17, 29218, 0)[0]) == 17  # the case that used to hang


def test_date_splits_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_val must be a non-negative int, got -1"):
        date_splits(10, -1, 10)
    with pytest.raises(ValueError, match="leaves no dates for training"):
        date_splits(10, 20000, 20000)
    with pytest.raises(ValueError, match="n_train must be a non-negative int, got 2.5"):
        date_splits(2.5, 1, 1)


def test_normalize_date_text():
    assert normalize_date_text("  Friday,\t 12  MARCH 2021 \n") == "friday, 12 march 2021"
    assert normalize_date_text("") == ""
    with pytest.raises(TypeError, match="text must be a str, got NoneType"):
        normalize_date_text(None)


def test_iso_or_none():
    assert iso_or_none("2021-03-12") == "2021-03-12"
    assert iso_or_none("2021-02-29") is None  # not a leap year
    assert iso_or_none("2020-02-29") == "2020-02-29"
    assert iso_or_none("2021-3-12") is None and iso_or_none("2021-03-1") is None
    assert iso_or_none("12.03.2021") is None and iso_or_none(None) is None


@pytest.mark.parametrize("text, match", [
    ("31.02.2021", "February 2021 has 28 days (got day 31)"),
    ("29 feb 2021", "February 2021 has 28 days"),
    ("2021/13/01", "there is no month 13"),
    ("12 march 1969", "outside the years this model knows (1970 to 2049)"),
    ("Tuesday, 12 March 2021", "12 March 2021 was a friday, not a tuesday"),
    ("", "Type a date"),
    ("   ", "Type a date"),
    (None, "Type a date"),
    ("12 März 2021", "Cannot read 'märz'"),
    ("on 12 march 2021", "Cannot read 'on'"),
    ("20210312", "Cannot read '20210312'"),
    ("12 march 2021!", "Cannot read '!'"),
    ("hello", "Cannot read 'hello': the model reads only numbers of one or two digits"),
    ("1.1.1969", "outside the years this model knows"),
    ("1 " * 40, "That is 79 pieces; this model reads at most 48"),
])
def test_check_date_text_names_the_problem(text, match):
    message = check_date_text(text, date_tokenizer(), max_len=48)
    assert message is not None and match in message, message


@pytest.mark.parametrize("text", ["29.02.2020", "Friday, 12 March 2021", "2021-03-12",
                                  "march 12th, 2021", "12 - 03 - 2021", "12march2021"])
def test_check_date_text_lets_readable_text_through(text):
    assert check_date_text(text, date_tokenizer(), max_len=48) is None


def test_check_date_text_cuts_long_input():
    message = check_date_text("31.02.2021" + " " * 5 + "x" * 10_000)
    assert message is None or len(message) < 300
    message = check_date_text("€" * 10_000, date_tokenizer())
    assert len(message) < 300
    message = check_date_text("1" * 10_000, date_tokenizer())
    assert message.startswith("Cannot read '11111111111111111111…'") and len(message) < 400


def test_date_tokenizer_pieces():
    tok = date_tokenizer()
    assert tok.pieces("friday, 12th mar. '21") == ["friday", ",", " ", "12", "th", " ", "mar", ".",
                                                   " ", "'", "21"]
    assert tok.pieces("2021-03-12") == ["2021", "-", "03", "-", "12"]  # an ISO date: 5 tokens
    assert tok.decode(tok.encode("2021-03-12", add_bos=True, add_eos=True)) == "2021-03-12"
    assert len(tok.encode("2021-03-12")) == 5
    assert (tok.pad_id, tok.bos_id, tok.eos_id) == (0, 1, 2) and tok.itos[:3] == ["<pad>", "<bos>", "<eos>"]
    assert len(set(tok.itos)) == len(tok) == len(tok.stoi)
    for year in (1970, 2049):
        assert not tok.unknown(str(year))
    assert tok.unknown("1969 2050 123 0312") == ["1969", "2050", "123", "0312"]
    assert tok.unknown("12 März, 2021 €") == ["März", "€"]  # the tokenizer does not lower-case
    with pytest.raises(ValueError, match=r"cannot read 'on' in 'on 12 march 2021'; this tokenizer "
                                         r"reads numbers of one or two digits"):
        tok.encode("on 12 march 2021")
    with pytest.raises(TypeError, match="encode expects a str, got int"):
        tok.encode(12)
    with pytest.raises(TypeError, match="pieces expects a str"):
        tok.pieces(None)


@pytest.mark.parametrize("text", ["friday, 12 march 2021", "  x €12 mar\t2021 ", "12march2021", ""])
def test_date_tokenizer_pieces_join_to_the_text(text):
    assert "".join(date_tokenizer().pieces(text)) == text  # nothing dropped or rewritten


def test_mixture_gives_each_family_its_share():
    # ISO one time in ten; the other nine tenths shared by five families (order, month as a number
    # or a word), half of each with a weekday. ISO itself is also a year-first numeric style.
    from collections import Counter

    from helpers.data.dates import _draw_style

    rng = __import__("random").Random(0)
    draws = [_draw_style(rng) for _ in range(20_000)]
    fams = Counter((s.order, s.month in ("month", "mon", "mon.")) for s in draws)
    share = {k: n / len(draws) for k, n in fams.items()}
    assert len(share) == 5 and abs(share.pop(("ymd", False)) - 0.28) < 0.015
    assert all(abs(x - 0.18) < 0.015 for x in share.values()), share
    assert abs(sum(bool(s.weekday) for s in draws) / len(draws) - 0.45) < 0.015


def test_date_tokenizer_reads_every_style():
    tok = date_tokenizer()
    for style in in_distribution_styles() + held_out_styles():
        for d in (dt.date(2021, 9, 1), dt.date(1999, 12, 23)):
            assert not tok.unknown(style.render(d))
    for d in range(0, (LAST_DATE - FIRST_DATE).days + 1, 7):
        assert not tok.unknown((FIRST_DATE + dt.timedelta(days=d)).isoformat())
    assert date_tokenizer().itos == tok.itos


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


def test_tokenizer_decode_of_a_2d_tensor():
    tok = CharTokenizer(["2021-03-12"])
    row = torch.tensor([[tok.bos_id, *tok.encode("2021"), tok.eos_id]])  # (1, L), as greedy_decode
    assert tok.decode(row) == "2021"
    with pytest.raises(ValueError, match=r"got a batch of shape \(2, 6\); decode each row"):
        tok.decode(row.repeat(2, 1))
    with pytest.raises(ValueError, match="decode each row"):
        tok.decode(row.repeat(2, 1).tolist())


def test_tokenizer_names_unknown_characters():
    tok = CharTokenizer(["12 march 2021"])
    with pytest.raises(ValueError, match=r"unknown character\(s\) 'ä', 'z' in '12 märz 2021'"):
        tok.encode("12 märz 2021")
    assert tok.unknown("12 MARCH") == ["M", "A", "R", "C", "H"]
    with pytest.raises(TypeError, match="encode expects a str, got int"):
        tok.encode(12)
    with pytest.raises(ValueError, match="id 99 is outside"):
        tok.decode([99])
    with pytest.raises(ValueError) as err:
        tok.encode("ä" * 10_000)
    assert len(str(err.value)) < 300


def test_unseen_formats_are_never_generated():
    from helpers.data import UNSEEN_FORMATS

    styles = in_distribution_styles() + held_out_styles()
    example = dt.date(2021, 3, 12)
    for d in [example, dt.date(1999, 12, 1), dt.date(2040, 5, 23), dt.date(1970, 1, 9)]:
        written = {s.render(d) for s in styles}
        for name, fmt in UNSEEN_FORMATS.items():
            assert normalize_date_text(fmt(d)) not in written, (name, fmt(d))
            assert read_date(fmt(d)) in (None, (d.year, d.month, d.day)), name  # unambiguous
    assert all(fmt(example) == name for name, fmt in UNSEEN_FORMATS.items())  # named by the example
    unreadable = [n for n, f in UNSEEN_FORMATS.items() if date_tokenizer().unknown(f(example))]
    assert unreadable == ["on 12 march 2021", "20210312"]


def test_held_out_groups_and_families(splits):
    from helpers.data import HELD_OUT_GROUPS, family_of, held_out_group, held_out_group_pairs

    _, _, test = splits
    groups = held_out_group_pairs(test[:50], seed=0)
    assert list(groups) == list(HELD_OUT_GROUPS)
    train_sources = {s for s, _ in splits[0]}
    for pairs in groups.values():
        assert [t for _, t in pairs] == [t for _, t in test[:50]]
        assert not {s for s, _ in pairs} & train_sources
    assert groups == held_out_group_pairs(test[:50], seed=0)
    assert {held_out_group(s) for s in held_out_styles()} == set(HELD_OUT_GROUPS)
    with pytest.raises(ValueError, match="not a held-out style"):
        held_out_group(DateStyle("dmy", "dd", "mm", "yyyy", "."))
    assert family_of("12.03.2021", "2021-03-12") == "day-month-year, numbers"
    assert family_of("fri, march 12, 2021", "2021-03-12") == "month-day-year, words, weekday"
    assert family_of("2021-03-12", "2021-03-12") == "year-month-day, numbers"
    assert family_of("hello", "2021-03-12") == ""
    assert all(family_of(s, t) for s, t in test[:50])
