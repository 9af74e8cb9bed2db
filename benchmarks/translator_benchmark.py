"""The date translator of notebook 10, measured (not a test): training time at 1 and 2 threads,
parameter count, and exact-match accuracy per format family, on held-out combinations of parts,
and on formats a person might type that the data never generates.

    .venv/bin/python benchmarks/translator_benchmark.py             # threads 1 and 2
    .venv/bin/python benchmarks/translator_benchmark.py --threads 1 --steps 100   # a quick look

Training runs with cache=False (the weights are trained, never loaded). On a busy machine the
wall-clock time is inflated by the other processes; the process CPU time is printed too (at one
thread it is what the wall clock would show on an idle core).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.data import (  # noqa: E402
    MONTHS,
    WEEKDAYS,
    _draw_style,
    held_out_styles,
    iso_or_none,
    parse_iso,
)
from helpers.training import (  # noqa: E402
    TRANSLATOR_RECIPE,
    count_parameters,
    train_translator,
    translate,
    translator_data,
)


def _ord(n: int) -> str:
    return f"{n}{'th' if 11 <= n % 100 <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# Unambiguous ways to write a date that the generator never produces (tried by hand).
NOVEL_FORMATS = {
    "12th of march 2021": lambda d: f"{_ord(d.day)} of {MONTHS[d.month - 1]} {d.year}",
    "the 12th of march, 2021": lambda d: f"the {_ord(d.day)} of {MONTHS[d.month - 1]}, {d.year}",
    "march the 12th, 2021": lambda d: f"{MONTHS[d.month - 1]} the {_ord(d.day)}, {d.year}",
    "12 - 03 - 2021": lambda d: f"{d.day:02d} - {d.month:02d} - {d.year}",
    "12. march 2021": lambda d: f"{d.day}. {MONTHS[d.month - 1]} {d.year}",
    "fri. 12 mar 2021": lambda d: f"{WEEKDAYS[d.weekday()][:3]}. {d.day} {MONTHS[d.month - 1][:3]} {d.year}",
    "mar-12-2021": lambda d: f"{MONTHS[d.month - 1][:3]}-{d.day}-{d.year}",
    "on 12 march 2021": lambda d: f"on {d.day} {MONTHS[d.month - 1]} {d.year}",
    "2021, 12 march": lambda d: f"{d.year}, {d.day} {MONTHS[d.month - 1]}",
    "12 March 2021 (title case)": lambda d: f"{d.day} {MONTHS[d.month - 1].title()} {d.year}",
    "  12   MAR  2021  (caps, spaces)": lambda d: f"  {d.day}   {MONTHS[d.month - 1][:3].upper()}  {d.year} ",
    "12march2021": lambda d: f"{d.day}{MONTHS[d.month - 1]}{d.year}",
    "20210312": lambda d: f"{d.year}{d.month:02d}{d.day:02d}",
}


def accuracy(model, tok, pairs):
    preds = translate(model, [s for s, _ in pairs], tok, batch_size=1000)
    right = sum(p == t for p, (_, t) in zip(preds, pairs, strict=True))
    invalid = sum(iso_or_none(p) is None for p in preds)
    return right, invalid, preds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--cached", action="store_true",
                        help="measure the accuracy of the cached model (train it if not cached)")
    args = parser.parse_args()
    steps = args.steps or TRANSLATOR_RECIPE["steps"]
    translator_data()  # build the data once, outside the timings
    model = tok = None
    for n in args.threads:
        torch.set_num_threads(n)
        t0, c0 = time.perf_counter(), time.process_time()
        model, tok, history = train_translator(steps=steps, device="cpu", cache=args.cached)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"threads {n}{' (from the cache)' if history['cached'] else ''}: {steps} steps in {wall:.1f} s wall ({steps / wall:.1f} steps/s), "
              f"{cpu:.1f} s process CPU; train_seq2seq's own clock {history['seconds'][-1]:.1f} s; "
              f"validation accuracy log {[round(a, 3) for a in history['val_acc']]}", flush=True)
    print(f"parameters: {count_parameters(model):,}")

    _, _, test = translator_data()
    right, invalid, _ = accuracy(model, tok, test)
    print(f"test split (1,000 held-out dates, in-distribution styles): {right}/{len(test)} "
          f"({invalid} outputs not a valid date)")

    rng = random.Random(123)
    by_family = defaultdict(list)
    for _, t in test:
        style = _draw_style(rng)
        by_family[style.family()].append((style.render(parse_iso(t)), t))
    print("per format family (the test dates, a style drawn per date):")
    for fam, pairs in sorted(by_family.items()):
        right, invalid, preds = accuracy(model, tok, pairs)
        wrong = [(s, p) for (s, t), p in zip(pairs, preds, strict=True) if p != t][:2]
        print(f"  {fam:40} {right:4}/{len(pairs):<4} = {right / len(pairs):.3f}  e.g. wrong: {wrong}")

    print("held-out combinations (each test date in every held-out style group):")
    groups = defaultdict(list)
    for s in held_out_styles():
        key = ("year-first with '.'" if s.order == "ymd" and s.sep == "." else
               "day-first numeric with spaces" if s.order == "dmy" else
               "mon. d 'yy" if s.order == "mdy" else "short weekday + year-first")
        groups[key].append(s)
    total = [0, 0]
    for key, styles in groups.items():
        pairs = [(rng.choice(styles).render(parse_iso(t)), t) for _, t in test]
        right, invalid, preds = accuracy(model, tok, pairs)
        total[0] += right
        total[1] += len(pairs)
        wrong = [(s, p) for (s, t), p in zip(pairs, preds, strict=True) if p != t][:3]
        print(f"  {key:32} {right:4}/{len(pairs)} = {right / len(pairs):.3f}  invalid {invalid}  "
              f"e.g. wrong: {wrong}")
    print(f"  all held-out combinations: {total[0]}/{total[1]} = {total[0] / total[1]:.3f}")

    print("formats never generated (tried by hand), 300 test dates each:")
    total = [0, 0]
    for name, fmt in NOVEL_FORMATS.items():
        pairs = [(fmt(parse_iso(t)), t) for _, t in test[:300]]
        right, invalid, preds = accuracy(model, tok, pairs)
        total[0] += right
        total[1] += len(pairs)
        wrong = [(s, p) for (s, t), p in zip(pairs, preds, strict=True) if p != t][:2]
        print(f"  {name:34} {right:3}/{len(pairs)} = {right / len(pairs):.3f}  invalid {invalid}  "
              f"e.g. wrong: {wrong}")
    print(f"  all tried formats: {total[0]}/{total[1]} = {total[0] / total[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
