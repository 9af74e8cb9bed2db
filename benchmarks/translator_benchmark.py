"""The date translator of notebook 10, measured (not a test): training time at 1 and 2 threads,
parameter count, exact-match accuracy per format family, on held-out combinations of parts (and
the same dates with four-digit years), with the order token flipped, on common written forms
(Sept, Tues, Thur, Thurs, Weds, 20210312, month-first numbers), on formats the data never
generates, what it refuses, and, given a file of real-world date strings, how it reads them.

    .venv/bin/python benchmarks/translator_benchmark.py             # train at threads 1 and 2
    .venv/bin/python benchmarks/translator_benchmark.py --threads 1 --steps 100   # a quick look
    .venv/bin/python benchmarks/translator_benchmark.py --cached --seeds 0 1 2    # cached models
    .venv/bin/python benchmarks/translator_benchmark.py --cached --outside dates.tsv

Training runs with cache=False (the weights are trained, never loaded) unless --cached. On a busy
machine the wall-clock time is inflated by the other processes; the process CPU time and the load
average are printed too (at one thread, CPU time is what the wall clock would show on an idle core).

``--outside FILE``: a tab-separated file with a header and the columns ``text``, ``order``
("dmy" or "mdy") and ``expected`` (an ISO date, or "refuse"), e.g. dates collected from the test
suites of date-parsing libraries (keep such a set outside the project: it measures, never trains).
Each text is read with its order. Counted: right (the expected date; or refused when "refuse" is
expected), wrong (a date other than the expected one, or a date where a refusal was expected), and
missed (refused although a date was expected). Reported twice: for the model's own output, and for
what the widget shows (an output that differs from the rules' reading is not shown as an answer).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.data import (  # noqa: E402
    UNSEEN_FORMATS,
    DateStyle,
    check_date_text,
    family_of,
    held_out_group_pairs,
    iso_or_none,
    parse_iso,
)
from helpers.training import count_parameters  # noqa: E402
from helpers.translator import (  # noqa: E402
    TRANSLATOR_RECIPE,
    reading_note,
    rules_reading,
    train_translator,
    translate,
    translator_data,
)

# Common written forms (Sept, Tues, Thur, Thurs, Weds, digits without separators, month-first
# numbers), each on the first 300 test dates (only dates they can write).
COMMON_FORMS = {
    "Sept (mon)": (DateStyle("dmy", "d", "mon", "yyyy", " ", "", 1), lambda d: d.month == 9),
    "Sept. d, yyyy": (DateStyle("mdy", "d", "mon.", "yyyy", ", ", "", 2), lambda d: d.month == 9),
    "Tues": (DateStyle("dmy", "d", "month", "yyyy", " ", "wkd ", 1), lambda d: d.weekday() == 1),
    "Weds": (DateStyle("dmy", "d", "month", "yyyy", " ", "wkd ", 1), lambda d: d.weekday() == 2),
    "Thur": (DateStyle("dmy", "d", "month", "yyyy", " ", "wkd ", 1), lambda d: d.weekday() == 3),
    "Thurs": (DateStyle("mdy", "d", "mon", "yyyy", ", ", "wkd, ", 2), lambda d: d.weekday() == 3),
    "yyyymmdd": (DateStyle("ymd", "dd", "mm", "yyyy", ""), lambda d: True),
    "mm/dd/yyyy (mdy)": (DateStyle("mdy", "dd", "mm", "yyyy", "/"), lambda d: True),
    "m-d-yy (mdy)": (DateStyle("mdy", "d", "m", "yy", "-"), lambda d: True),
}
INCOMPLETE = {  # each must be refused, with what is missing
    "12 mar": lambda d: f"{d.day} {d:%b}".lower(),
    "march 12th": lambda d: f"{d:%B} {d.day}th".lower(),
    "march 2021": lambda d: f"{d:%B} {d.year}".lower(),
    "12.03": lambda d: f"{d.day:02d}.{d.month:02d}",
    "2021": lambda d: str(d.year),
    "12032021": lambda d: f"{d.day:02d}{d.month:02d}{d.year}",
}


def accuracy(model, tok, pairs, order="dmy"):
    preds = translate(model, [s for s, _ in pairs], tok, batch_size=1000, order=order)
    right = sum(p == t for p, (_, t) in zip(preds, pairs, strict=True))
    invalid = sum(iso_or_none(p) is None for p in preds)
    return right, invalid, preds


def _wrong(pairs, preds, n):
    return [(s, p) for (s, t), p in zip(pairs, preds, strict=True) if p != t][:n]


def train_and_time(steps, threads, cached):
    model = tok = None
    for n in threads:
        torch.set_num_threads(n)
        load = os.getloadavg()
        t0, c0 = time.perf_counter(), time.process_time()
        model, tok, history = train_translator(steps=steps, device="cpu", cache=cached)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"process threads {n}{' (from the cache)' if history['cached'] else ''}: {steps} steps in "
              f"{wall:.1f} s wall, {cpu:.1f} s process CPU (load average before "
              f"{load[0]:.1f}, after {os.getloadavg()[0]:.1f}); validation log "
              f"{[round(a, 3) for a in history['val_acc']]}", flush=True)
    return model, tok


def measure(model, tok, label):
    _, _, test = translator_data()
    print(f"\n=== {label}: {count_parameters(model):,} parameters, vocabulary {len(tok)}")
    right, invalid, preds = accuracy(model, tok, test)
    print(f"test split (1,000 held-out dates): {right}/{len(test)} ({invalid} not a date); wrong: "
          f"{_wrong(test, preds, 10)}")
    by_family = defaultdict(list)
    for (src, tgt), pred in zip(test, preds, strict=True):
        by_family[family_of(src, tgt)].append(pred == tgt)
    for fam, hits in sorted(by_family.items()):
        print(f"  {fam:40} {sum(hits):4}/{len(hits):<4} = {sum(hits) / len(hits):.3f}")

    swappable = [s for s, _ in test if s[5].isdigit() and reading_note(s[5:], s[1:4])]
    flipped = [("<mdy>" if s[1:4] == "dmy" else "<dmy>") + s[5:] for s in swappable]
    got = translate(model, flipped, tok)
    print(f"order token flipped on {len(flipped)} numbers-only test dates: "
          f"{sum(g == rules_reading(f[5:], f[1:4]) for f, g in zip(flipped, got, strict=True))} give the other date")

    print("held-out combinations (the 1,000 test dates per group):")
    total = [0, 0]
    for year in (None, "yyyy"):
        for key, pairs in held_out_group_pairs(test, seed=0, year=year).items():
            right, invalid, preds = accuracy(model, tok, pairs)
            if year is None:
                total[0] += right
                total[1] += len(pairs)
            print(f"  {key:28} {'(four-digit years) ' if year else '':19}{right:4}/{len(pairs)} = "
                  f"{right / len(pairs):.3f}  invalid {invalid}  e.g. wrong: {_wrong(pairs, preds, 3)}")
    print(f"  all held-out combinations: {total[0]}/{total[1]} = {total[0] / total[1]:.4f}")

    print("common written forms (test dates the form can write, of the first 300):")
    for name, (style, fits) in COMMON_FORMS.items():
        pairs = [(style.render(parse_iso(t)), t) for _, t in test[:300] if fits(parse_iso(t))]
        order = style.reading_order or "dmy"
        refused = [s for s, _ in pairs if check_date_text(s, tok, order=order)]
        right, invalid, preds = accuracy(model, tok, pairs, order=order)
        print(f"  {name:18} e.g. {pairs[0][0]!r:26} {right:3}/{len(pairs)} = {right / len(pairs):.3f}  "
              f"refused {len(refused)}  wrong: {_wrong(pairs, preds, 2)}")
    for name, fmt in INCOMPLETE.items():
        texts = [fmt(parse_iso(t)) for _, t in test[:300]]
        messages = [check_date_text(s, tok) for s in texts]
        print(f"  refused {name!r:14} {sum(m is not None for m in messages)}/{len(texts)}: {messages[0]}")

    print("formats never generated (the first 300 test dates each):")
    total = [0, 0]
    for name, fmt in UNSEEN_FORMATS.items():
        pairs = [(fmt(parse_iso(t)), t) for _, t in test[:300]]
        if check_date_text(pairs[0][0], tok):
            print(f"  {name:24} refused: {check_date_text(pairs[0][0], tok)[:60]}")
            continue
        right, invalid, preds = accuracy(model, tok, pairs)
        total[0] += right
        total[1] += len(pairs)
        print(f"  {name:24} {right:3}/{len(pairs)} = {right / len(pairs):.3f}  invalid {invalid}  "
              f"e.g. wrong: {_wrong(pairs, preds, 2)}")
    print(f"  all: {total[0]}/{total[1]} = {total[0] / total[1]:.4f}")


def outside(model, tok, path):
    rows = list(csv.DictReader(open(path, encoding="utf-8"), delimiter="\t"))
    counts = {"model": defaultdict(int), "shown": defaultdict(int)}
    wrong = []
    for row in rows:
        text, order, expected = row["text"], row["order"], row["expected"]
        message = check_date_text(text, tok, TRANSLATOR_RECIPE["max_len"], order)
        if message is not None:
            kind = "right (refused)" if expected == "refuse" else "missed (refused)"
            for c in counts.values():
                c[kind] += 1
            continue
        got = translate(model, [text], tok, order=order)[0]
        reading = rules_reading(text, order)
        for name, answer in (("model", got), ("shown", got if got == reading else None)):
            if answer is None:
                counts[name]["missed (flagged)" if expected != "refuse" else "right (refused)"] += 1
            elif answer == expected:
                counts[name]["right (read)"] += 1
            else:
                counts[name]["wrong"] += 1
                if name == "model":
                    wrong.append((text, order, expected, answer))
    n_dates = sum(r["expected"] != "refuse" for r in rows)
    print(f"\n=== outside set {path}: {len(rows)} cases ({n_dates} dates, {len(rows) - n_dates} to refuse)")
    for name, c in counts.items():
        right = c["right (read)"] + c["right (refused)"]
        print(f"  {name:6} right {right}/{len(rows)} ({right / len(rows):.1%}): {dict(c)}")
    print(f"  the model's wrong answers: {wrong}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--cached", action="store_true",
                        help="measure the cached models (train them if not cached)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="with --cached: measure these training seeds")
    parser.add_argument("--outside", type=Path, default=None, help="a TSV of real-world dates")
    args = parser.parse_args()
    steps = args.steps or TRANSLATOR_RECIPE["steps"]
    t0, c0 = time.perf_counter(), time.process_time()
    translator_data()  # build the data once, outside the timings
    print(f"data: {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU", flush=True)
    if args.cached:
        models = {seed: train_translator(seed=seed, steps=steps, device="cpu")[:2] for seed in args.seeds}
    else:
        models = {0: train_and_time(steps, args.threads, cached=False)}
    for seed, (model, tok) in models.items():
        measure(model, tok, f"seed {seed}, {steps} steps")
        if args.outside is not None:
            outside(model, tok, args.outside)
    print(f"\n{dt.datetime.now():%Y-%m-%d %H:%M}, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
