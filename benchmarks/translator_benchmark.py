"""The date translator of notebook 10, measured (not a test): training time at 1 and 2 threads,
parameter count, and exact-match accuracy per format family, on held-out combinations of parts,
and on formats a person might type that the data never generates.

    .venv/bin/python benchmarks/translator_benchmark.py             # threads 1 and 2
    .venv/bin/python benchmarks/translator_benchmark.py --threads 1 --steps 100   # a quick look
    .venv/bin/python benchmarks/translator_benchmark.py --cached    # accuracy of the cached model

Training runs with cache=False (the weights are trained, never loaded) unless --cached. On a busy
machine the wall-clock time is inflated by the other processes; the process CPU time is printed
too (at one thread it is what the wall clock would show on an idle core).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.data import (  # noqa: E402
    ISO_STYLE,
    MONTHS,
    UNSEEN_FORMATS,
    family_of,
    held_out_group_pairs,
    held_out_styles,
    in_distribution_styles,
    iso_or_none,
    normalize_date_text,
    parse_iso,
)
from helpers.training import count_parameters  # noqa: E402
from helpers.translator import (  # noqa: E402
    TRANSLATOR_RECIPE,
    train_translator,
    translate,
    translator_data,
)


def _mon(d: dt.date) -> str:
    return MONTHS[d.month - 1]


NOVEL_FORMATS = UNSEEN_FORMATS  # never generated; the last two cannot be read by the tokenizer
# Typed with capitals and stray spaces: normalize_date_text turns these into generated styles,
# so they test the normalisation, not the model.
TYPED_FORMATS = {
    "12 March 2021 (title case)": lambda d: f"{d.day} {_mon(d).title()} {d.year}",
    "  12   MAR  2021  (caps, spaces)": lambda d: f"  {d.day}   {_mon(d)[:3].upper()}  {d.year} ",
}


def accuracy(model, tok, pairs):
    preds = translate(model, [s for s, _ in pairs], tok, batch_size=1000)
    right = sum(p == t for p, (_, t) in zip(preds, pairs, strict=True))
    invalid = sum(iso_or_none(p) is None for p in preds)
    return right, invalid, preds


def _wrong(pairs, preds, n):
    return [(s, p) for (s, t), p in zip(pairs, preds, strict=True) if p != t][:n]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--cached", action="store_true",
                        help="measure the accuracy of the cached model (train it if not cached)")
    args = parser.parse_args()
    steps = args.steps or TRANSLATOR_RECIPE["steps"]
    t0, c0 = time.perf_counter(), time.process_time()
    translator_data()  # build the data once, outside the timings
    print(f"data: {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU", flush=True)
    model = tok = None
    for n in args.threads:
        torch.set_num_threads(n)
        t0, c0 = time.perf_counter(), time.process_time()
        model, tok, history = train_translator(steps=steps, device="cpu", cache=args.cached)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"threads {n}{' (from the cache)' if history['cached'] else ''}: {steps} steps in "
              f"{wall:.1f} s wall ({steps / wall:.1f} steps/s), {cpu:.1f} s process CPU; "
              f"train_seq2seq's own clock {history['seconds'][-1]:.1f} s; validation accuracy log "
              f"{[round(a, 3) for a in history['val_acc']]}", flush=True)
    print(f"parameters: {count_parameters(model):,}")

    _, _, test = translator_data()
    right, invalid, preds = accuracy(model, tok, test)
    print(f"test split (1,000 held-out dates, in-distribution styles): {right}/{len(test)} "
          f"({invalid} outputs not a valid date); wrong: {_wrong(test, preds, 10)}")
    by_family = defaultdict(list)
    for (src, tgt), pred in zip(test, preds, strict=True):
        by_family[family_of(src, tgt)].append(pred == tgt)
    print("the test split per format family:")
    for fam, hits in sorted(by_family.items()):
        print(f"  {fam:48} {sum(hits):4}/{len(hits):<4} = {sum(hits) / len(hits):.3f}")

    print("held-out combinations (the 1,000 test dates in each group, a style of the group drawn per date):")
    total = [0, 0]
    for key, pairs in held_out_group_pairs(test, seed=0).items():
        right, invalid, preds = accuracy(model, tok, pairs)
        total[0] += right
        total[1] += len(pairs)
        print(f"  {key:32} {right:4}/{len(pairs)} = {right / len(pairs):.3f}  invalid {invalid}  "
              f"e.g. wrong: {_wrong(pairs, preds, 4)}")
    print(f"  all held-out combinations: {total[0]}/{total[1]} = {total[0] / total[1]:.3f}")

    all_styles = [*in_distribution_styles(), *held_out_styles(), ISO_STYLE]
    print("formats never generated (tried by hand), the first 300 test dates each:")
    total = [0, 0]
    for name, fmt in {**NOVEL_FORMATS, **TYPED_FORMATS}.items():
        pairs = [(fmt(parse_iso(t)), t) for _, t in test[:300]]
        generated = sum(normalize_date_text(s) in {st.render(parse_iso(t)) for st in all_styles}
                        for s, t in pairs)
        unreadable = [s for s, _ in pairs if tok.unknown(normalize_date_text(s))]
        if name in NOVEL_FORMATS:
            assert generated == 0, f"{name} is generated by the data ({generated} of 300)"
        if unreadable:
            print(f"  {name:34} rejected: the tokenizer cannot read {tok.unknown(normalize_date_text(unreadable[0]))} "
                  f"({len(unreadable)}/{len(pairs)}); the widget says so")
            continue
        right, invalid, preds = accuracy(model, tok, pairs)
        if name in NOVEL_FORMATS:
            total[0] += right
            total[1] += len(pairs)
        note = f"  (normalised to a generated style in {generated}/300)" if generated else ""
        print(f"  {name:34} {right:3}/{len(pairs)} = {right / len(pairs):.3f}  invalid {invalid}  "
              f"e.g. wrong: {_wrong(pairs, preds, 2)}{note}")
    print(f"  all readable never-generated formats: {total[0]}/{total[1]} = {total[0] / total[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
