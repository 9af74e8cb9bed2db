"""The date data set and the tokenizers of notebook 10 (pieces of a date; characters), the reading
order, and the rules that refuse what is not one complete, possible date."""

import datetime as dt
import random
import re
from collections import Counter

import pytest
import torch

from helpers import CharTokenizer, date_splits
from helpers.data import (
    FIRST_DATE,
    LAST_DATE,
    DateReading,
    DateStyle,
    check_date_text,
    date_tokenizer,
    held_out_combination_pairs,
    held_out_styles,
    in_distribution_styles,
    iso_or_none,
    normalize_date_text,
    order_marker,
    parse_iso,
    read_date,
    reading_of,
    split_order,
)
from helpers.data.dates import MONTH_WORDS, WEEKDAY_WORDS

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]


@pytest.fixture(scope="module")
def splits():
    return date_splits(3000, 300, 500, seed=1)


def independent_reading(source: str) -> dt.date:
    """The tests' own reading of a generated source, by the stated rule: a four-digit number first
    is the year, then month and day; otherwise the year comes last, the month is the one word
    that names a month, and two numbers for day and month are read in the order of the source's
    order token (<dmy>: day first, <mdy>: month first)."""
    month_of = {m: i + 1 for i, m in enumerate(MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(MONTHS)}
    month_of["sept"] = 9
    order, body = re.fullmatch(r"<(dmy|mdy)>(.*)", source).groups()
    body = re.sub(r"^([a-z]+day|mon|tues?|weds?|thu|thurs?|fri|sat|sun),? ", "", body)
    body = re.sub(r"^the (\d+)(st|nd|rd|th) of ", r"\1 ", body)
    if re.fullmatch(r"\d{8}", body):  # ISO 8601's basic form
        return dt.date(int(body[:4]), int(body[4:6]), int(body[6:]))
    parts = [p for p in re.split(r"[ ,/.\-]+", body) if p]
    assert len(parts) == 3, (source, parts)
    words = [p for p in parts if p.isalpha()]
    nums = [re.sub(r"(st|nd|rd|th)$", "", p) for p in parts if not p.isalpha()]
    if words:
        month = month_of[words[0]]
        a, b = nums
        year, day = (a, b) if len(a) == 4 else (b, a)
    elif len(nums[0]) == 4:
        year, month, day = nums[0], int(nums[1]), nums[2]
    else:
        first, second, year = nums
        day, month = (first, int(second)) if order == "dmy" else (second, int(first))
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
            order, text = split_order(src)
            assert read_date(text, order) == (date.year, date.month, date.day), src
            assert check_date_text(text, date_tokenizer(), 48, order) is None, src
            assert normalize_date_text(src) == src


def test_every_source_starts_with_its_order_token(splits):
    """Numbers-only day-month dates carry the order they were written in; the others (a month
    word, a year first) get either token, about equally often: the token carries no signal there."""
    train, _, _ = splits
    assert all(re.match(r"<(dmy|mdy)>", s) for s, _ in train)
    numeric = [s for s, _ in train if re.fullmatch(r"<(dmy|mdy)>[a-z, ]*\d{1,2}\W\d{1,2}\W('?\d+)", s)]
    words = [s for s, _ in train if any(w in MONTH_WORDS for w in re.findall("[a-z]+", s))]
    assert len(numeric) > 100 and len(words) > 1000
    shares = Counter(s[:5] for s in words)
    assert abs(shares["<dmy>"] / len(words) - 0.5) < 0.05
    assert {s[:5] for s in numeric} == {"<dmy>", "<mdy>"}


def test_the_running_example_in_a_few_styles():
    d = dt.date(2021, 3, 12)
    assert DateStyle("dmy", "dd", "mm", "yyyy", ".").render(d) == "12.03.2021"
    assert DateStyle("ymd", "dd", "mm", "yyyy", "-").render(d) == "2021-03-12"
    assert DateStyle("ymd", "dd", "mm", "yyyy", "").render(d) == "20210312"
    assert DateStyle("mdy", "dd", "mm", "yyyy", "/").render(d) == "03/12/2021"
    assert DateStyle("mdy", "dd", "mm", "yyyy", "/").reading_order == "mdy"
    assert DateStyle("mdy", "d", "month", "yyyy", ", ", "weekday, ").render(d) == "friday, march 12, 2021"
    assert DateStyle("mdy", "d", "month", "yyyy", ", ").reading_order is None
    assert DateStyle("mdy", "dth", "mon.", "'yy", " ", "wkd ").render(d) == "fri mar. 12th '21"
    assert DateStyle("dmy", "the dth of", "month", "yyyy", " ").render(d) == "the 12th of march 2021"
    assert DateStyle("dmy", "d", "m", "yy", "/").render(dt.date(2001, 1, 2)) == "2/1/01"
    assert DateStyle("dmy", "dth", "mon", "yyyy", " ").render(dt.date(2011, 1, 22)) == "22nd jan 2011"
    assert DateStyle("dmy", "dth", "mon", "yyyy", " ").render(dt.date(2011, 1, 11)) == "11th jan 2011"
    assert DateStyle("dmy", "dd", "mm", "yyyy", ".").name == "dd.mm.yyyy"


@pytest.mark.parametrize("spelling, text", [(0, "thu 16 sep 2021"), (1, "thur 16 sept 2021"),
                                            (2, "thurs 16 sept 2021")])
def test_abbreviations_are_spelled_three_ways(spelling, text):
    style = DateStyle("dmy", "d", "mon", "yyyy", " ", "wkd ", spelling)
    assert style.render(dt.date(2021, 9, 16)) == text
    assert style.render(dt.date(2021, 3, 12)) == "fri 12 mar 2021"  # no longer form for these
    tues = DateStyle("dmy", "d", "month", "yyyy", " ", "wkd ", 1).render(dt.date(2021, 3, 9))
    weds = DateStyle("dmy", "d", "month", "yyyy", " ", "wkd ", 2).render(dt.date(2021, 3, 10))
    assert (tues, weds) == ("tues 9 march 2021", "weds 10 march 2021")


def test_ambiguous_or_odd_combinations_are_refused():
    assert "four-digit" in DateStyle("ymd", "dd", "mm", "yy", "/").problem()
    assert "ISO 8601's basic form" in DateStyle("dmy", "dd", "mm", "yyyy", "").problem()
    assert "spelling varies only abbreviations" in DateStyle("dmy", "d", "month", "yyyy", " ", "", 1).problem()
    with pytest.raises(ValueError, match="order must be one of"):
        DateStyle("myd", "dd", "mm", "yyyy", "/").render(dt.date(2021, 3, 12))
    with pytest.raises(ValueError, match="outside the data set's range"):
        DateStyle("dmy", "dd", "mm", "yyyy", ".").render(dt.date(1969, 12, 31))
    assert all(s.problem() is None for s in in_distribution_styles() + held_out_styles())


def test_every_style_is_unambiguous_given_its_order_token():
    # Every allowed style, over a spread of dates: a source (order token + text) names one date.
    from helpers.data.dates import _sources_of

    seen = {}
    styles = in_distribution_styles() + held_out_styles()
    day = FIRST_DATE
    while day <= LAST_DATE:
        for source in _sources_of(day, styles[::7]):
            assert seen.setdefault(source, day) == day, f"{source!r} is both {seen[source]} and {day}"
        day += dt.timedelta(days=89)  # a spread of days, months and years
    for src, date in seen.items():
        assert independent_reading(src) == date, src


def test_held_out_styles_never_appear_in_training(splits):
    held = set(held_out_styles())
    assert held and not held & set(in_distribution_styles())
    names = {s.name for s in held}
    assert {"yyyy.mm.dd", "mon. d 'yy", "wkd yyyy-mm-dd", "weekday, the dth of month yyyy"} <= names
    train, _, test = splits
    # A held-out source is rendered by a held-out style, which training never draws.
    combos = held_out_combination_pairs(test, seed=0)
    assert [t for _, t in combos] == [t for _, t in test]
    train_sources = {s for s, _ in train}
    assert not {s for s, _ in combos} & train_sources
    for src, tgt in combos:
        assert independent_reading(src) == parse_iso(tgt)
    assert any(re.fullmatch(r"<...>\d{4}\.\d\d?\.\d\d?", s) for s, _ in combos)


def test_distinct_pair_count_matches_brute_force():
    # date_splits counts the distinct training sources per date by class; check against brute force.
    from helpers.data.dates import _distinct_renderings, _sources_of

    styles = in_distribution_styles()
    for offset in [*range(0, 29220, 997), 31, 68, 245, 248]:  # (the last four: 1 Feb, 10 Mar, ...)
        date = FIRST_DATE + dt.timedelta(days=offset)
        assert _distinct_renderings(offset) == len(_sources_of(date, styles)), date


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
    with pytest.raises(TypeError, match="date_splits: seed must be an int, got str 'a'"):
        date_splits(10, 1, 1, seed="a")


def test_normalize_date_text():
    assert normalize_date_text("  Friday,\t 12  MARCH 2021 \n") == "friday, 12 march 2021"
    assert normalize_date_text("") == ""
    with pytest.raises(TypeError, match="text must be a str, got NoneType"):
        normalize_date_text(None)


def test_iso_or_none_and_parse_iso():
    assert iso_or_none("2021-03-12") == "2021-03-12"
    assert iso_or_none("2021-02-29") is None  # not a leap year
    assert iso_or_none("2020-02-29") == "2020-02-29"
    assert iso_or_none("2021-3-12") is None and iso_or_none("2021-03-1") is None
    assert iso_or_none("12.03.2021") is None
    for bad in (None, 3, b"2021-03-12"):
        with pytest.raises(TypeError, match="iso_or_none: text must be a str"):
            iso_or_none(bad)
    assert parse_iso("2021-03-12") == dt.date(2021, 3, 12)
    with pytest.raises(ValueError, match=r"parse_iso: '2021-02-30' is not a real date \(day is out of range"):
        parse_iso("2021-02-30")
    with pytest.raises(ValueError, match="parse_iso: text is not an ISO date YYYY-MM-DD: '12.03.2021'"):
        parse_iso("12.03.2021")
    with pytest.raises(TypeError, match="parse_iso: text must be a str"):
        parse_iso(None)


@pytest.mark.parametrize("text, missing", [
    ("March 12th", "no year"), ("12 Mar", "no year"), ("Fri 12 Mar", "no year"),
    ("March 2021", "no day"), ("12.03", "no year"), ("2021", "no day and no month"),
    ("Monday", "no day, no month and no year"), ("march", "no day and no year"),
    ("12", "no month and no year"), ("04/2016", "no day"), ("'21 march", "no day"),
])
def test_incomplete_dates_say_what_is_missing(text, missing):
    message = check_date_text(text, date_tokenizer(), max_len=48)
    assert message == f"{normalize_date_text(text)!r} is not a complete date: it has {missing}."
    assert read_date(text) is None


@pytest.mark.parametrize("text, match", [
    ("31.02.2021", "February 2021 has 28 days (got day 31)"),
    ("29 feb 2021", "February 2021 has 28 days"),
    ("2021/13/01", "there is no month 13"),
    ("12 march 1969", "outside the years this model knows (1970 to 2049)"),
    ("12.03.69", "the two-digit year 69 could be 1969 or 2069, both outside"),
    ("Tuesday, 12 March 2021", "12 March 2021 was a friday, not a tuesday"),
    ("", "Type a date"),
    ("   ", "Type a date"),
    ("12 März 2021", "Cannot read 'märz'"),
    ("on 12 march 2021", "Cannot read 'on'"),
    ("12032021", "eight digits in a row are read only as year, month, day"),
    ("090107", "6 digits in a row could be read several ways"),
    ("12 march 2021!", "Cannot read '!'"),
    ("hello", "Cannot read 'hello': a date here is numbers, English month and weekday names"),
    ("1.1.1969", "outside the years this model knows"),
    ("12 13 december", "which of 12 and 13 is the day and which the year?"),
    ("10 - 22 august 2012", "has 3 numbers besides the month"),
    ("12 march april 2021", "names 2 months"),
    ("1 2 3 4", "has 4 numbers: a date has three"),
    ("12" + "-" * 50 + "03-2021", "That is 55 tokens; this model reads at most 48"),
])
def test_check_date_text_names_the_problem(text, match):
    message = check_date_text(text, date_tokenizer(), max_len=48)
    assert message is not None and match in message, message


@pytest.mark.parametrize("text", ["29.02.2020", "Friday, 12 March 2021", "2021-03-12", "20210312",
                                  "march 12th, 2021", "12 - 03 - 2021", "12march2021",
                                  "Sept 7, 1970", "Tues 9 Mar 2021", "Thur 11 March 2021",
                                  "Thurs, 11 Mar 2021", "Weds 10 Mar 2021", "13NOV2017"])
def test_check_date_text_lets_readable_text_through(text):
    assert check_date_text(text, date_tokenizer(), max_len=48) is None


def test_the_reading_order_decides_numbers_only():
    """'09/25/2003' is refused day first (no month 25), with a hint, and read month first; a text
    whose day and month are both 12 or less reads differently in the two orders, and says so
    (``DateReading.swapped``); a month word or a year first reads the same in both."""
    message = check_date_text("09/25/2003", date_tokenizer(), 48, "dmy")
    assert "there is no month 25 (read day first)" in message and "choose the order 'mdy'" in message
    assert check_date_text("09/25/2003", date_tokenizer(), 48, "mdy") is None
    assert read_date("09/25/2003", "mdy") == (2003, 9, 25)
    assert read_date("03/04/2021", "dmy") == (2021, 4, 3) and read_date("03/04/2021", "mdy") == (2021, 3, 4)
    reading = reading_of("03/04/2021", "dmy")
    assert reading == DateReading(2021, 4, 3, "dmy", (2021, 3, 4))
    assert reading_of("13/04/2021").swapped is None and reading_of("04/04/2021").swapped is None
    for text in ("12 march 2021", "march 12, 2021", "2021-03-12", "20210312"):
        assert read_date(text, "dmy") == read_date(text, "mdy") == (2021, 3, 12)
        assert reading_of(text, "mdy").order is None
    with pytest.raises(ValueError, match="order must be 'dmy' \\(day first\\) or 'mdy' \\(month first\\), got 'ymd'"):
        check_date_text("12.03.2021", order="ymd")


@pytest.mark.parametrize("text", ["03/12th/2021", "12th/03/2021", "the 12th of 03 2021", "3/12th/21",
                                  "2021/03/12th"])
def test_an_ordinal_is_the_day_whatever_the_order(text):
    """An ordinal says which number is the day, in numbers only too: before, '03/12th/2021' read
    day first and '12th/03/2021' read month first both gave 3 December, and the model agreed, so
    the widget showed a wrong date as the translation."""
    for order in ("dmy", "mdy"):
        assert check_date_text(text, date_tokenizer(), 48, order) is None, order
        assert read_date(text, order) == (2021, 3, 12), order
        assert reading_of(text, order).swapped is None  # nothing for the order to decide


@pytest.mark.parametrize("text, match", [
    ("'21/03/12", "'21 is a year (the apostrophe says so), but in a date in numbers a two-digit year comes last"),
    ("'21.03.12", "a year that comes first needs four digits (2021)"),
    ("12/'21/03", "'21 is a year"),
    ("2021/12th/03", "the 12th is a day, but a date that starts with the year has the month second"),
    ("12/03/21st", "the 21st is a day, not a year"),
    ("1st/2nd/2021", "writes two numbers as days (1st and 2nd)"),
    ("12th 21st march", "has two days (12th, 21st) and no year"),
    ("99/12/31", "99 is neither a day nor a month, and a two-digit year comes last"),
    ("12 th march 2021", "'th' is read only right after its number, as in '12th'"),
    ("march 1 st, 2021", "'st' is read only right after its number, as in '1st'"),
])
def test_what_contradicts_the_rules_is_refused(text, match):
    """An apostrophe year that is not last (before: "'21/03/12" read as 21 March 2012, and the model
    agreed), two ordinals, an ordinal where the month or the year stands, a two-digit year first."""
    for order in ("dmy", "mdy"):
        message = check_date_text(text, date_tokenizer(), 48, order)
        assert message is not None and match in message, (order, message)
        assert read_date(text, order) is None


def test_a_weekday_that_fits_the_other_order_says_so():
    """'sat 04/03/2021': read day first it is 4 March 2021, a Thursday; month first it is 3 April,
    a Saturday. The message names the order that fits instead of only 'check the date'."""
    message = check_date_text("sat 04/03/2021", date_tokenizer(), 48, "dmy")
    assert message == ("04 March 2021 was a thursday, not a saturday: read month first it is 3 April "
                       "2021, a saturday: choose the order 'mdy'.")
    assert check_date_text("sat 04/03/2021", date_tokenizer(), 48, "mdy") is None
    assert check_date_text("sun 04/03/2021", date_tokenizer(), 48, "dmy").endswith("check the date.")


def test_order_tokens():
    assert order_marker("mdy") == "<mdy>" and split_order("<mdy>03/12/2021") == ("mdy", "03/12/2021")
    assert split_order("03/12/2021") == ("dmy", "03/12/2021")
    assert split_order("03/12/2021", default="mdy") == ("mdy", "03/12/2021")
    with pytest.raises(ValueError, match="order must be 'dmy'"):
        order_marker("ymd")
    tok = date_tokenizer()
    assert tok.pieces("<mdy>03/12/2021") == ["<mdy>", "03", "/", "12", "/", "2021"]
    assert tok.encode("<dmy>")[0] == tok.stoi["<dmy>"] and tok.stoi["<mdy>"] != tok.stoi["<dmy>"]


def test_check_date_text_refuses_what_is_not_text():
    for bad in (None, 3, b"12 mar 2021"):
        with pytest.raises(TypeError, match="check_date_text: text must be a str"):
            check_date_text(bad)


def test_check_date_text_cuts_long_input():
    message = check_date_text("31.02.2021" + " " * 5 + "x" * 10_000)
    assert len(message) < 300
    message = check_date_text("€" * 10_000, date_tokenizer())
    assert len(message) < 300
    message = check_date_text("1" * 10_000, date_tokenizer())
    assert len(message) < 400


def test_abbreviations_that_read_date_knows_are_pieces_of_the_tokenizer():
    tok = date_tokenizer()
    assert not tok.unknown(" ".join([*MONTH_WORDS, *WEEKDAY_WORDS]))
    assert {"sept", "tues", "weds", "thur", "thurs"} <= set(tok.itos)


def test_date_tokenizer_pieces():
    tok = date_tokenizer()
    assert tok.pieces("friday, 12th mar. '21") == ["friday", ",", " ", "12", "th", " ", "mar", ".",
                                                   " ", "'", "21"]
    assert tok.pieces("2021-03-12") == ["2021", "-", "03", "-", "12"]  # an ISO date: 5 tokens
    assert tok.pieces("20210312") == ["2021", "03", "12"]  # ISO 8601's basic form: cut after a year
    assert tok.pieces("12032021") == ["12032021"]  # not a year first: left whole, and unknown
    assert tok.decode(tok.encode("2021-03-12", add_bos=True, add_eos=True)) == "2021-03-12"
    assert len(tok.encode("2021-03-12")) == 5
    assert (tok.pad_id, tok.bos_id, tok.eos_id) == (0, 1, 2) and tok.itos[:3] == ["<pad>", "<bos>", "<eos>"]
    assert len(set(tok.itos)) == len(tok) == len(tok.stoi)
    for year in (1970, 2049):
        assert not tok.unknown(str(year))
    assert tok.unknown("1969 2050 123 0312 12032021") == ["1969", "2050", "123", "0312", "12032021"]
    assert tok.unknown("12 März, 2021 €") == ["März", "€"]  # the tokenizer does not lower-case
    with pytest.raises(ValueError, match=r"cannot read 'on' in 'on 12 march 2021'; this tokenizer "
                                         r"reads numbers of one or two digits"):
        tok.encode("on 12 march 2021")
    with pytest.raises(TypeError, match="encode: text must be a str, got int"):
        tok.encode(12)
    with pytest.raises(TypeError, match="pieces expects a str"):
        tok.pieces(None)


@pytest.mark.parametrize("text", ["friday, 12 march 2021", "  x €12 mar\t2021 ", "12march2021", "",
                                  "<mdy>20210312", "fri 12032021"])
def test_date_tokenizer_pieces_join_to_the_text(text):
    assert "".join(date_tokenizer().pieces(text)) == text  # nothing dropped or rewritten


def test_mixture_gives_each_family_its_share():
    # ISO one time in ten (half of it 20210312); the other nine tenths shared by six families
    # (arrangement, month as a number or a word), half of each with a weekday.
    from helpers.data.dates import _draw_style

    rng = random.Random(0)
    draws = [_draw_style(rng) for _ in range(30_000)]
    fams = Counter((s.order, s.words) for s in draws)
    share = {k: n / len(draws) for k, n in fams.items()}
    assert len(share) == 6 and abs(share.pop(("ymd", False)) - 0.25) < 0.015
    assert all(abs(x - 0.15) < 0.015 for x in share.values()), share
    assert abs(sum(bool(s.weekday) for s in draws) / len(draws) - 0.45) < 0.015
    basic = sum(s.sep == "" for s in draws) / len(draws)
    assert 0.045 < basic < 0.06  # 5 % drawn as ISO, and ISO basic is also one style of its group


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


@pytest.mark.parametrize("ids, error, match", [
    ([2.7], TypeError, "decode: each id must be an int, got float 2.7"),
    ([True], TypeError, "decode: each id must be an int, got bool"),
    ("ab", TypeError, "decode: ids must be a sequence of int token ids"),
    (None, TypeError, "decode: ids must be a sequence of int token ids"),
    (torch.tensor([3.0]), TypeError, "decode: ids must be integer token ids, got a tensor of torch.float32"),
    ([500], ValueError, "id 500 is outside this tokenizer's vocabulary"),
])
def test_tokenizers_refuse_ids_that_are_not_token_ids(ids, error, match):
    for tok in (CharTokenizer(["12 march 2021"]), date_tokenizer()):
        with pytest.raises(error, match=match):
            tok.decode(ids)


def test_char_tokenizer_refuses_what_is_not_text():
    with pytest.raises(TypeError, match="CharTokenizer: texts must be an iterable of str"):
        CharTokenizer(None)
    with pytest.raises(TypeError, match="CharTokenizer: texts must hold only str, got a int"):
        CharTokenizer([1, 2])
    assert CharTokenizer("abc").itos[3:] == ["a", "b", "c"]  # a str is an iterable of texts


def test_tokenizer_names_unknown_characters():
    tok = CharTokenizer(["12 march 2021"])
    with pytest.raises(ValueError, match=r"unknown character\(s\) 'ä', 'z' in '12 märz 2021'"):
        tok.encode("12 märz 2021")
    assert tok.unknown("12 MARCH") == ["M", "A", "R", "C", "H"]
    with pytest.raises(TypeError, match="encode: text must be a str, got int"):
        tok.encode(12)
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
    refused = [n for n, f in UNSEEN_FORMATS.items() if check_date_text(f(example), date_tokenizer())]
    assert refused == ["on 12 march 2021"]


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
    four = held_out_group_pairs(test[:50], seed=0, year="yyyy")
    assert list(four) == ["year-first with '.'", "short weekday + year-first", "weekday + 'the 12th of'"]
    assert all(re.search(r"\d{4}", s) for pairs in four.values() for s, _ in pairs)
    assert all(not re.search(r"\d{4}", s) for s, _ in held_out_group_pairs(test[:50], 0, "'yy")["mon. d 'yy"])
    with pytest.raises(ValueError, match="year must be None or one of"):
        held_out_group_pairs(test[:5], year="y")
    assert {held_out_group(s) for s in held_out_styles()} == set(HELD_OUT_GROUPS)
    with pytest.raises(ValueError, match="not a held-out style"):
        held_out_group(DateStyle("dmy", "dd", "mm", "yyyy", "."))
    assert family_of("<dmy>12.03.2021", "2021-03-12") == "day-month-year, numbers"
    assert family_of("<mdy>03.12.2021", "2021-03-12") == "month-day-year, numbers"
    assert family_of("<dmy>fri, march 12, 2021", "2021-03-12") == "month-day-year, words, weekday"
    assert family_of("<mdy>2021-03-12", "2021-03-12") == "year-month-day, numbers"
    assert family_of("hello", "2021-03-12") == ""
    assert all(family_of(s, t) for s, t in test[:50])


def test_family_of_renders_only_the_styles_that_could_match():
    """family_of skips the styles that cannot write the text (a weekday word only from a weekday
    style, a month word only from a word month, the separator always); the answers are those of
    rendering every style, on generated dates of every kind and on texts that match none."""
    from helpers.data import family_of, held_out_combination_pairs
    from helpers.data.dates import _STYLES, parse_iso, split_order
    from helpers.translator import translator_data

    def every_style(source, target):
        order, text = split_order(source)
        date = parse_iso(target)
        return " / ".join(sorted({s.family() for s in _STYLES if s._render(date) == text
                                  and s.reading_order in (None, order)}))

    train, _, test = translator_data()
    pairs = [*test[:150], *train[:150], *held_out_combination_pairs(test[:150], seed=1),
             ("<dmy>01/02/03", "2003-02-01"), ("<mdy>01/02/03", "2003-01-02"), ("03/01/02", "2003-01-02"),
             ("<dmy>Friday 12 March 2021", "2021-03-12"), ("<dmy>12 sat 2021", "2021-03-12"), ("", "2021-03-12")]
    assert [family_of(s, t) for s, t in pairs] == [every_style(s, t) for s, t in pairs]
