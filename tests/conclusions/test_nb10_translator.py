"""Notebook 10 (and its solutions): every experimental conclusion, re-checked where it could break.

The notebook trains the recipe once (seed 0) and states what it sees; these tests train the same
recipe with other seeds as well (``train_translator`` caches every model on disk, so seed 0 is the
notebook's own model and nothing trains twice), and re-run the notebook's experiments on them. The
older checks run at seeds 0, 1 and 2. The conclusions of the last round (the order token in a
year-first format never generated, the sequence probability as a guard, the year's attention with
its control, decoder layer 0 against the uniform baseline, the cross-attention intervention, and
exercise 3's warm-up) have thresholds written from seeds 0-4 and run unchanged on the held-out seeds
5-9 (``seed_sets``); exercise 1's 600-step runs, the costliest, run at seeds 0, 1, 2 and held-out
5, 6, 7. Each test's docstring says the conclusion, the seeds, the variations, the control and
what was measured before the prose was written.
"""

import functools
import math
import re
from collections import Counter

import pytest
import torch
from seed_sets import ALL_SEEDS, HELD_OUT_SEEDS, WRITTEN_SEEDS, seed_id

from helpers import beam_search, target_mask, train_seq2seq
from helpers.data import (
    UNSEEN_FORMATS,
    check_date_text,
    family_of,
    held_out_group_pairs,
    parse_iso,
    reading_of,
    split_order,
)
from helpers.exercises import nb10
from helpers.translator import (
    NO_ANSWER,
    TRANSLATOR_RECIPE,
    attention_maps,
    exact_match_accuracy,
    make_translator,
    output_probability,
    part_positions,
    rules_reading,
    train_translator,
    translate,
    translate_hiding,
    translator_data,
    translator_snapshot,
)

SEEDS = (0, 1, 2)
EXAMPLE = "friday, 12 march 2021"


@pytest.fixture(scope="module")
def trained():
    """{seed: (model, tokenizer, history)} for the recipe (1,200 steps) at seeds 0, 1 and 2."""
    return {seed: train_translator(seed=seed, device="cpu") for seed in SEEDS}


@pytest.fixture(scope="module")
def data():
    return translator_data()


def _floor(vocab: int, alpha: float = 0.1) -> float:
    right, other = 1 - alpha + alpha / vocab, alpha / vocab
    return -(right * math.log(right) + (vocab - 1) * other * math.log(other))


def test_accuracy_and_training_log_hold_for_every_seed(trained, data):
    """Sections 2-3: validation accuracy >= 95 % from step 500 on and >= 99 % at the end, the final loss
    within 0.05 of the label-smoothing floor, >= 99 % exact match on the 1,000 test dates and
    >= 97 % in each of the twelve families. Seeds 0, 1, 2."""
    _, _, test = data
    for seed, (model, tok, history) in trained.items():
        assert min(history["val_acc"][history["step"].index(500):]) >= 0.95, seed
        assert history["val_acc"][-1] >= 0.99, seed
        assert history["loss"][-1] < _floor(len(tok)) + 0.05, seed
        acc, preds = exact_match_accuracy(model, test, tok)
        assert acc >= 0.99, (seed, acc)
        families = {}
        for (s, t), p in zip(test, preds, strict=True):
            families.setdefault(family_of(s, t), []).append(p == t)
        assert len(families) == 12 and all(sum(h) >= 0.97 * len(h) for h in families.values()), seed


def test_the_order_token_alone_decides_numbers_only_dates(trained, data):
    """Section 3: every test date written in numbers only whose day and month could be swapped
    (no weekday) is read right as written, and with the other order token the model writes the
    other date: every one in the notebook's run (seed 0), at least 95 % at seeds 1 and 2 (under the
    suite's pinned kernels seed 2 wrote one flipped date wrong, 2023-11-06 for 2023-06-11: "every
    one" is the stored run's). Seeds 0, 1, 2; the control is the flip itself (same text, other token)."""
    _, _, test = data
    cases = [s for s, _ in test if s[5].isdigit() and reading_of(s[5:], s[1:4]).swapped]
    assert len(cases) >= 40
    flipped = [("<mdy>" if s[1:4] == "dmy" else "<dmy>") + s[5:] for s in cases]
    for seed, (model, tok, _) in trained.items():
        assert translate(model, cases, tok, raw=True) == [rules_reading(s[5:], s[1:4]) for s in cases], seed
        got = translate(model, flipped, tok, raw=True)
        right = sum(g == rules_reading(f[5:], f[1:4]) for f, g in zip(flipped, got, strict=True))
        assert right == len(flipped) if seed == 0 else right >= 0.95 * len(flipped), (seed, right, len(flipped))


def _held_out(model, tok, test, year=None):
    groups = held_out_group_pairs(test, seed=0, year=year)
    out = {}
    for name, pairs in groups.items():
        acc, preds = exact_match_accuracy(model, pairs, tok, raw=True)  # what the model wrote
        out[name] = (acc, [(s, t, p) for (s, t), p in zip(pairs, preds, strict=True) if p != t])
    return out


def test_held_out_combinations(trained, data):
    """Section 3: >= 95 % over the four held-out combinations, every group >= 80 % (85 % failed for the seed-0
    model trained on another machine: 0.840), the two
    year-first groups >= 99 %, at most 1 % of the outputs not a date, and most mistakes in one
    group (a weekday before 'the 12th of'). Seeds 0, 1, 2."""
    _, _, test = data
    for seed, (model, tok, _) in trained.items():
        results = _held_out(model, tok, test)
        accs = {name: acc for name, (acc, _) in results.items()}
        assert sum(accs.values()) / len(accs) >= 0.95 and min(accs.values()) >= 0.8, (seed, accs)
        assert min(accs["year-first with '.'"], accs["short weekday + year-first"]) >= 0.99, (seed, accs)
        wrong = [w for _, ws in results.values() for w in ws]
        assert sum(parse_iso_or_none(p) is None for _, _, p in wrong) <= 0.01 * 4 * len(test), seed
        assert len(results["weekday + 'the 12th of'"][1]) >= len(wrong) / 2, (seed, accs)


def parse_iso_or_none(text):
    try:
        return parse_iso(text)
    except (TypeError, ValueError):
        return None


@functools.cache
def _two_digit_years(seed):
    """What the held-out mistakes look like at ``seed`` (see the two tests below)."""
    model, tok = _translator(seed)
    test = translator_data()[2]
    group = "weekday + 'the 12th of'"
    results = _held_out(model, tok, test)
    wrong = [w for _, ws in results.values() for w in ws]
    year_wrong = [(s, p[:4]) for s, t, p in results[group][1] if p[:4] != t[:4]]
    four = _held_out(model, tok, test, year="yyyy")
    errors = {year: 1 - (four if year == "yyyy" else _held_out(model, tok, test, year=year))[group][0]
              for year in ("yyyy", "yy", "'yy")}
    return dict(
        wrong=len(wrong), two_digit=sum(not re.search(r"\d{4}", s[5:]) for s, _, _ in wrong),
        group_wrong=len(results[group][1]), year_wrong=len(year_wrong),
        from_text=sum(int(y[2:]) in {int(x) for x in re.findall(r"\d+", s[5:])} for s, y in year_wrong),
        common=Counter(y for _, y in year_wrong).most_common(3),
        four_digit_min=min(acc for acc, _ in four.values()), errors=errors)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_held_out_mistakes_come_from_two_digit_years(seed):
    """Section 3, the explanation of the mistakes: the two-digit year is what gets lost. At least 90 %
    of the mistakes have a two-digit year. The control that would refute it: the group with the most
    mistakes (a weekday before 'the 12th of'), rewritten on the same dates with four-digit years,
    has at least five times fewer mistakes than with either two-digit year ('yy, yy), and ten times
    in the notebook's run (seed 0). Seeds 0-2 first; seeds 3-9 added in the second read (ten times:
    seed 2 9.5, held-out seed 7 9.3, so ten is the stored run's; five holds at every seed).
    What the model writes instead (the first explanation, 'it takes the day for the year', was
    refuted by the second read: seed 0 wrote a number of the text for 6 of its 160 wrong years):
    fewer than a quarter of the group's wrong years are a number of the text, and the three
    commonest wrong years make up at least two fifths of them. Written from seeds 0-4 (numbers of
    the text 6/160, 1/34, 5/53, 33/169, 7/38; three commonest 0.84, 0.74, 0.47, 0.51, 0.71) and
    checked unchanged on held-out seeds 5-9 (their values had been printed in the reader's report:
    2/61, 3/114, 0/31, 7/169, 14/128; 0.66, 0.76, 0.77, 0.43, 0.88)."""
    r = _two_digit_years(seed)
    assert r["wrong"], f"seed {seed} made no mistake: the explanation would have nothing to explain"
    assert r["two_digit"] >= 0.9 * r["wrong"], (seed, r)
    errors = r["errors"]
    assert min(errors["yy"], errors["'yy"]) >= (10 if seed == 0 else 5) * errors["yyyy"], (seed, errors)
    assert r["from_text"] < 0.25 * r["year_wrong"], (seed, r)
    assert sum(k for _, k in r["common"]) >= 0.4 * r["year_wrong"], (seed, r)
    if seed == 0:  # the notebook's run: "at least 90 % in the year", "one year more than half"
        assert r["year_wrong"] >= 0.9 * r["group_wrong"] and r["common"][0][1] > r["year_wrong"] / 2, r


def test_four_digit_years_are_at_least_99_percent_right_in_nine_runs_of_ten():
    """Section 3's control and the Summary: every held-out group, rewritten with four-digit years, is at
    least 99 % right at seeds 0, 1, 2 (written) and in the notebook's run; over seeds 0-9, in nine of
    the ten, and at least 98 % in all. First written from seeds 0-2 for every run; the second read
    added seeds 3-9, where held-out seed 8 gave 0.983 in the group with the most mistakes: re-scoped
    to nine of ten."""
    lowest = {seed: _two_digit_years(seed)["four_digit_min"] for seed in ALL_SEEDS}
    assert lowest[0] >= 0.99 and sum(x >= 0.99 for x in lowest.values()) >= 9, lowest
    assert min(lowest.values()) >= 0.98, lowest


def test_formats_never_generated(trained, data):
    """Section 3: on the formats of UNSEEN_FORMATS that the rules accept, >= 95 % on average and
    every one >= 90 % (300 test dates each); only 'on 12 march 2021' is refused. Seeds 0, 1, 2."""
    _, _, test = data
    refused = [n for n, f in UNSEEN_FORMATS.items() if check_date_text(f(parse_iso(test[0][1])))]
    assert refused == ["on 12 march 2021"]
    for seed, (model, tok, _) in trained.items():
        accs = {name: exact_match_accuracy(model, [(fmt(parse_iso(t)), t) for _, t in test[:300]], tok,
                                           order="dmy")[0]
                for name, fmt in UNSEEN_FORMATS.items() if name not in refused}
        assert sum(accs.values()) / len(accs) >= 0.95 and min(accs.values()) >= 0.9, (seed, accs)


def _token_probs(model, tok, source, output):
    src = torch.tensor([tok.encode(source)])
    tgt = torch.tensor([tok.encode(output, add_bos=True, add_eos=True)])
    with torch.no_grad():
        logits = model.eval()(src, tgt[:, :-1], None, target_mask(tgt[:, :-1]))  # (1, Lt, V)
    return torch.softmax(logits[0].float(), -1).gather(-1, tgt[0, 1:, None])[:, 0]


def _beam(model, tok, source):
    src = torch.tensor([tok.encode(source)])
    return tok.decode(beam_search(model, src, 3, 12, tok.bos_id, tok.eos_id)[0])


def test_greedy_and_beam_search(trained, data):
    """Section 4: the trained model is sure of itself (every token of the example above 0.5) and
    greedy and beam search (beam 3) agree on >= 90 of the first 100 test dates, beam right on
    >= 90. Seeds 0, 1, 2. The under-trained model: ``test_beam_search_on_the_snapshot``."""
    _, _, test = data
    subset = test[:100]
    for seed, (model, tok, _) in trained.items():
        assert _token_probs(model, tok, "<dmy>" + EXAMPLE, "2021-03-12").min() > 0.5, seed
        greedy = translate(model, [s for s, _ in subset], tok, raw=True)
        beams = [_beam(model, tok, s) for s, _ in subset]
        assert sum(b == g for b, g in zip(beams, greedy, strict=True)) >= 90, seed
        assert sum(b == t for b, (_, t) in zip(beams, subset, strict=True)) >= 90, seed


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_beam_search_on_the_snapshot(seed, data):
    """Section 4: the run's own weights after 200 of its 1,200 steps (``translator_snapshot``) are
    less sure than the final ones: on the 100 of the first 300 test dates whose greedy answer has
    the lowest sequence probability, greedy and beam search (beam 3) differ on some, and where they
    differ the beam's output is at least as likely in most cases (not in general: see
    tests/test_decoding.py). Written from seeds 0-4: there they differed on 6, 7, 9, 5 and 5 of
    those 100 (on all 300 dates 6, 7, 11, 5 and 5: nearly every difference is among the least
    sure), and the beam's output was at least as likely on every one; checked unchanged on
    held-out seeds 5-9. Variation: 1,200 and 200 steps (the final model in
    ``test_greedy_and_beam_search``)."""
    _, _, test = data
    pool = test[:300]
    model, tok, history = train_translator(seed=seed, device="cpu")
    early = translator_snapshot(history, device="cpu")
    assert history["snapshot"]["step"] == 200 and history["val_acc"][1] < history["val_acc"][-1]
    greedy = translate(early, [s for s, _ in pool], tok, raw=True)
    p = output_probability(early, [s for s, _ in pool], greedy, tok)  # (300,)
    unsure = [(pool[i][0], greedy[i]) for i in p.argsort()[:100].tolist()]
    diffs = [(s, g, b) for s, g in unsure if (b := _beam(early, tok, s)) != g]
    assert diffs, f"seed {seed}: the 200-step snapshot agrees with beam search everywhere"

    def logp(s, out):
        return torch.log(_token_probs(early, tok, s, out)).sum().item()

    likelier = sum(logp(s, b) >= logp(s, g) - 1e-4 for s, g, b in diffs)
    assert likelier >= len(diffs) / 2, (seed, likelier, len(diffs))


def _holds(piece, label):
    """Does source piece ``piece`` hold the output number ``label`` (2021, 03, 12; a month word)?"""
    from helpers.data.dates import MONTH_WORDS

    if piece in MONTH_WORDS:
        return MONTH_WORDS[piece] == int(label)
    digits = piece.lstrip("'")
    return digits.isdigit() and (digits == label or int(digits) == int(label) % (100 if len(digits) == 2 else 10**4))


def _year_piece(src, year):
    """Index of the source piece that writes ``year`` (a four-digit one, else the last two-digit
    piece equal to it: a two-digit year comes last)."""
    four = [i for i, p in enumerate(src) if p == year]
    two = [i for i, p in enumerate(src) if p.lstrip("'") == year[2:]]
    return (four or two)[-1]


def test_what_each_kind_of_attention_looks_at(trained, data):
    """Section 5, on the running example and on 200 test dates, seeds 0, 1, 2:
    cross-attention (mean of heads) puts each output number's largest share on the source piece
    that holds it: in layer 0 for the example, and in layer 0 or layer 1 for >= 90 % of the dates
    (which layer varies: seed 0's layer 1 sends the year's query to the order token). In encoder
    layer 1 the year gets more than twice its uniform share for the example in the notebook's own run
    (seed 0: 4.54 under the pinned kernels; seed 1 gives 1.67, so the notebook says it of its run only) and more than its
    uniform share on >= 90 % of the dates (measured before the prose was written: >= 94 % of the
    numbers-only and >= 97 % of the word dates in every seed; its control, at seeds 0-9, is
    test_the_year_anchor_and_its_control). Decoder layer 0 gives <bos> and the token just written
    more than uniform attention would (the example; every date at seeds 0-9 in
    test_decoder_layer_0_against_the_uniform_baseline).

    What varies between runs, as the notebook says: the order token gets more than its uniform
    share on most numbers-only dates in one seed and less on most in another (measured: 17 % of
    them above uniform for seed 0, 94 % and 91 % for seeds 1 and 2), and the rows of '-' in
    cross layer 0 put more than half their attention on one piece in most dates in one seed and
    in few in another (measured: 59 % for seed 0, 14 % for seeds 1 and 2)."""
    from helpers.data.dates import MONTH_WORDS

    _, _, test = data
    order_above, dash_focused = {}, {}
    for seed, (model, tok, _) in trained.items():
        results, numbers_only = [], []
        for source in ["<dmy>" + EXAMPLE] + [s for s, _ in test[:200]]:
            translation, src, out, maps = attention_maps(model, tok, source)
            layers = [maps["cross"][layer].mean(0) for layer in (0, 1)]  # (Lt, Ls) each
            right = [all(_holds(src[int(c[r].argmax())], out[r]) for r in (0, 2, 4)) for c in layers]
            received = maps["encoder"][1].mean(0).mean(0)  # (Ls,): attention each piece gets
            uniform_share = 1 / len(src)
            year = (received[_year_piece(src, translation[:4])] / uniform_share).item()
            order = (received[0] / uniform_share).item()
            dec = maps["decoder"][0].mean(0)  # (Lt, Lt)
            rows = range(1, dec.shape[0])
            latest = sum(dec[t, 0].item() + dec[t, t].item() for t in rows) / len(rows)
            uniform = sum(2 / (t + 1) for t in rows) / len(rows)
            dash = max(layers[0][t].max().item() for t in (1, 3))
            results.append((right[0], right[0] or right[1], year, latest, uniform, dash))
            if not any(p in MONTH_WORDS for p in src):
                numbers_only.append(order > 1)
        example = results[0]
        assert example[0] and example[3] > example[4], (seed, example)
        if seed == 0:  # the notebook's own run (cell 'more than twice its uniform share'); seed 1: 1.67
            assert example[2] > 2, (seed, example)
        dates = results[1:]
        n = len(dates)
        assert sum(r[1] for r in dates) >= 0.9 * n, seed
        assert sum(r[2] > 1 for r in dates) >= 0.9 * n, seed
        assert all(r[3] > r[4] for r in dates), seed
        order_above[seed] = sum(numbers_only) / len(numbers_only)
        dash_focused[seed] = sum(r[5] > 0.5 for r in dates) / n
    assert min(order_above.values()) < 0.5 < max(order_above.values()), order_above
    assert min(dash_focused.values()) < 0.5 < max(dash_focused.values()), dash_focused
    # the notebook's own run (seed 0): the order token below its share, the rows of '-' focused
    assert order_above[0] < 0.5 and dash_focused[0] > 0.5, (order_above, dash_focused)


def test_no_wrong_output_on_held_out_combinations_is_shown_as_an_answer(trained, data):
    """Section 3 ('a wrong date is never shown as an answer'): the rules read every held-out
    combination right (all four groups, and the groups rewritten with each kind of year), so every
    wrong output of the model there is flagged by translation_message, never shown as the
    translation. Seeds 0, 1, 2."""
    from helpers.translator import translation_message

    _, _, test = data
    for year in (None, "yyyy", "yy", "'yy"):
        for pairs in held_out_group_pairs(test, seed=0, year=year).values():
            assert [rules_reading(s[5:], s[1:4]) for s, _ in pairs] == [t for _, t in pairs], year
    for seed, (model, tok, _) in trained.items():
        wrong = [w for _, ws in _held_out(model, tok, test).values() for w in ws]
        assert wrong, seed  # something to flag
        for s, _, p in wrong:
            message = translation_message(s[5:], p, rules_reading(s[5:], s[1:4]))
            assert " → no " in message, (seed, message)
        shown = translate(model, [s for s, _, _ in wrong], tok)  # what translate itself returns
        assert all(a.startswith(NO_ANSWER) for a in shown), seed


def _short_model(seed, steps=100, **changes):
    """The solutions' short run (the recipe's batches, one thread, a 30-step warm-up unless changed)
    with a training seed, kept on disk (the key names every change: positions are a buffer outside
    the state_dict). Returns (model, history)."""
    from helpers.cache import load_or_train
    from helpers.data import date_tokenizer

    train, _, _ = translator_data()
    tok = date_tokenizer()
    key = {"seed": seed, "steps": steps, "changes": dict(changes), "recipe": TRANSLATOR_RECIPE}
    lr = changes.pop("peak_lr", TRANSLATOR_RECIPE["peak_lr"])
    warmup = changes.pop("warmup_steps", 30)
    positions = changes.pop("positions", True)
    model = make_translator(len(tok), seed=seed, device="cpu", **changes)
    if not positions:
        with torch.no_grad():
            model.pos.pe.zero_()

    def fit():
        return train_seq2seq(model, train, tok, steps=steps, batch_size=TRANSLATOR_RECIPE["batch_size"],
                             peak_lr=lr, warmup_steps=warmup, seed=seed, log_every=25)

    return load_or_train("nb10-short-run", model, fit, key, threads=1)


def _short_run(seed, steps=100, **changes):
    return _short_model(seed, steps, **changes)[1]


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_a_warm_up_helps_post_ln(seed):
    """Exercise 3 (one effect: the warm-up) and its solution: post-LN, 100 steps, peak rate 1e-2;
    with a 30-step warm-up its final loss is more than 0.3 lower than without, and without one its
    loss still falls from the first log to the last. The solution's second, separate comparison
    (the LayerNorm's place, no warm-up for both): post-LN ends more than 0.3 above pre-LN, and
    after 200 steps (the variation the solution runs) post-LN is still above pre-LN after 100.
    Written from seeds 0, 1, 2 in the previous round (seed 0: 2.4117 without warm-up, 2.0368 with,
    pre-LN 1.7521, post-LN after 200 steps 2.3916); seeds 3, 4 and 5-9 not looked at before."""
    post = _short_run(seed, warmup_steps=0, peak_lr=1e-2, norm_first=False)["loss"]
    warm = _short_run(seed, warmup_steps=30, peak_lr=1e-2, norm_first=False)["loss"]
    # more than 0.3 lower at seeds 0-7 and 9; at held-out seed 8 (pinned kernels) only 0.21 lower
    # (2.217 against 2.429): re-scoped to "lower at every seed, by more than 0.3 at seed 0"
    assert warm[-1] < post[-1] - (0.3 if seed == 0 else 0.0), (seed, warm, post)
    assert post[-1] < post[0], (seed, post)
    pre = _short_run(seed, warmup_steps=0, peak_lr=1e-2, norm_first=True)["loss"]
    assert post[-1] > pre[-1] + 0.3, (seed, post, pre)
    post_long = _short_run(seed, steps=200, warmup_steps=0, peak_lr=1e-2, norm_first=False)["loss"]
    assert post_long[-1] > pre[-1], (seed, post_long, pre)


EX1_SEEDS = (0, 1, 2, 5, 6, 7)  # three written, three held out: 600-step runs are the costly ones


@pytest.mark.parametrize("seed", EX1_SEEDS, ids=seed_id)
def test_without_positions_the_accuracy_ends_lower(seed):
    """Exercise 1's solution: after 600 steps (the solutions' short run) a model without positional
    encoding is at least 0.05 less accurate (exact match on the 500 validation dates) than the same
    model with it. Seeds 0, 1, 2 and held-out 5, 6, 7. Measured before writing (seeds 0, 1, 2): with
    positions 0.936, 0.976, 0.962; without 0.830, 0.862, 0.828."""
    _, val, _ = translator_data()
    accs = []
    for positions in (True, False):
        model, _ = _short_model(seed, steps=600, **({} if positions else {"positions": False}))
        accs.append(exact_match_accuracy(model, val, _translator_tok(), raw=True)[0])
    assert accs[1] <= accs[0] - 0.05, (seed, accs)


def _translator_tok():
    from helpers.data import date_tokenizer

    return date_tokenizer()


def source_free_floor(alpha=0.1):
    """The lowest loss a model that ignores the source can reach on the training targets: at each
    place of the output (the 5 date tokens and <eos>) the entropy of the label-smoothed distribution
    of the tokens found there, averaged over the places (2.3802)."""
    from helpers.data import date_tokenizer

    tok = date_tokenizer()
    targets = torch.tensor([tok.encode(t, add_eos=True) for _, t in translator_data()[0]])  # (N, 6)
    floors = []
    for place in targets.T:
        p = (1 - alpha) * torch.bincount(place, minlength=len(tok)).double() / len(place) + alpha / len(tok)
        floors.append(-(p * p.log()).sum().item())
    return sum(floors) / len(floors)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_one_head_learns_too(seed):
    """Exercise 2's solution: after 100 steps (warm-up 30) one head and four heads both end below the
    loss a source-free model can reach (so the loss fell for more than the output's own statistics),
    and one head within 0.1 of four. A falling loss alone (the first version of the check) holds for
    a model that ignores the source. Written from seeds 0-4 as "at least 0.25 below the floor" (one
    head 2.024, 1.955, 2.019, 1.964, 2.064; four 2.022, 1.976, 2.032, 2.000, 2.050; floor 2.380).
    Held-out 5-9: one head 2.080, 1.973, 2.040, 2.157, 2.041; four 2.090, 2.000, 2.113, 2.118, 2.082;
    at seed 8 one head is only 0.224 below the floor, so the solution says "at least 0.25 below at
    nine of the ten seeds" and asserts the 0.25 for its own run (seed 0); one within 0.1 of four held
    at all ten (largest gap 0.074, seed 7)."""
    floor = source_free_floor()
    assert abs(floor - 2.38) < 0.005, floor
    one, four = _short_run(seed, num_heads=1)["loss"][-1], _short_run(seed)["loss"][-1]
    assert max(one, four) < floor - (0.2 if seed == 8 else 0.25), (seed, one, four, floor)
    if seed == 8:  # the solution's "0.22 at the tenth"
        assert round(floor - one, 2) == 0.22, (one, floor)
    assert abs(one - four) < 0.1, (seed, one, four)
    assert abs(nb10.SOURCE_FREE_FLOOR - floor) < 0.005, floor  # the checker's floor ...
    assert max(one, four) < nb10.SOURCE_FREE_FLOOR - nb10.BELOW_FLOOR, (seed, one, four)  # ... accepts the run


def test_split_order_of_sources_is_what_the_notebook_assumes(data):
    """The notebook slices sources as '<dmy>' + text; every source starts with a 5-character token."""
    for part in data:
        assert all(split_order(s)[1] == s[5:] and s[0] == "<" for s, _ in part)


def test_the_model_alone_invents_what_is_missing(trained):
    """Section 3 ('why refuse'): handed an incomplete text directly (no check), the trained model
    writes a real ISO date for at least six of the notebook's seven incomplete texts (section 1's;
    all seven failed for the seed-0 model trained on another machine, which wrote '2021-02-2021'
    for '2021'). Seeds 0, 1, 2."""
    from helpers import greedy_decode
    from helpers.data import iso_or_none

    for seed, (model, tok, _) in trained.items():
        outs = []
        for text in ["march 12th", "12 mar", "fri 12 mar", "march 2021", "12.03", "2021", "monday"]:
            src = torch.tensor([tok.encode("<dmy>" + text)])
            outs.append(tok.decode(greedy_decode(model, src, 12, tok.bos_id, tok.eos_id)[0]))
        assert sum(iso_or_none(out) is not None for out in outs) >= 6, (seed, outs)


# --- Issue 32's round: held-out seeds, controls and interventions -------------------------------
# Thresholds below were written from seeds 0-4 (WRITTEN_SEEDS) and checked unchanged on 5-9.

WEEKDAY3 = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
ISO_PART = {"year": slice(0, 4), "month": slice(5, 7), "day": slice(8, 10)}


@functools.cache
def _translator(seed):
    """The recipe's model at ``seed`` (1,200 steps; cached on disk, so seed 0 is the notebook's)."""
    model, tok, _ = train_translator(seed=seed, device="cpu")
    return model, tok


def _low_dates(test):
    """The notebook's dates: the first 300 test dates whose day is 12 or less and not the month, so
    that swapping day and month gives another real date."""
    return [t for _, t in test[:300] if int(t[8:]) <= 12 and t[8:] != t[5:7]]


def _weekday_after(iso):
    return f"{iso} {WEEKDAY3[parse_iso(iso).weekday()]}"


def _weekday_before(iso):
    return f"{WEEKDAY3[parse_iso(iso).weekday()]} {iso}"


@functools.cache
def _year_first_runs(seed):
    """What the model writes for the low dates as '2033-12-03 sat' (never generated) and
    '2033-12-03' (a training format), under each order token."""
    model, tok = _translator(seed)
    low = _low_dates(translator_data()[2])
    out = {}
    for order in ("dmy", "mdy"):
        out[order, "after"] = translate(model, [f"<{order}>{_weekday_after(t)}" for t in low], tok, raw=True)
        out[order, "plain"] = translate(model, [f"<{order}>{t}" for t in low], tok, raw=True)
        out[order, "before"] = translate(model, [f"<{order}>{_weekday_before(t)}" for t in low], tok, raw=True)
    return low, out


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_order_token_is_not_ignored_in_a_year_first_format_never_generated(seed):
    """Section 3 ('where the order token should change nothing'): the first 300 test dates whose day
    is <= 12 and not the month, written '2033-12-03 sat' (a weekday after a year-first date: never
    generated). Under <mdy> every one is right; under <dmy> some come back with day and month
    swapped; the control, the same dates written '2033-12-03' (a training format), is right under
    either token. translate refuses every wrong one. First written (native kernels, seeds 0-4) as
    'at least a quarter swapped'; held-out seed 6 swapped 17 of 104 (native), and under the pinned
    kernels seed 9 swaps 9: re-scoped to 'some'. Measured under the pin (seeds 0-9, 104 dates),
    swapped under <dmy>: 40, 51, 75, 78, 59, 35, 34, 65, 78, 9; <mdy> and the control 104 every time.
    With this machine's native kernels (no pin; the prose's "up to 96 under another processor's"):
    seed 1 swaps 84, seed 7 87, seed 8 96.
    A weekday before the date ('sat 2033-12-03', the second read's control): no date swapped under
    <dmy> at any of seeds 0-9 (104 right every time)."""
    low, out = _year_first_runs(seed)
    n = len(low)
    right = {k: sum(p == t for p, t in zip(v, low, strict=True)) for k, v in out.items()}
    swapped = sum(p == f"{t[:4]}-{t[8:]}-{t[5:7]}" for p, t in zip(out["dmy", "after"], low, strict=True))
    assert right["mdy", "after"] == n, right
    assert swapped > 0, (swapped, n)
    assert min(right["dmy", "plain"], right["mdy", "plain"]) == n, right
    assert not any(p == f"{t[:4]}-{t[8:]}-{t[5:7]}" for p, t in zip(out["dmy", "before"], low, strict=True)), seed
    model, tok = _translator(seed)
    shown = translate(model, [f"<dmy>{_weekday_after(t)}" for t in low], tok)
    assert all(a == t or a.startswith(NO_ANSWER) for a, t in zip(shown, low, strict=True)), seed


@functools.cache
def _probability_guard(seed):
    """The notebook's numbers at ``seed``: the wrong '<dmy>2033-12-03 sat' answers against the right
    answers on the 1,000 test dates and, the control, against the right readings of the same texts."""
    model, tok = _translator(seed)
    _, _, test = translator_data()
    low, out = _year_first_runs(seed)
    preds = translate(model, [s for s, _ in test], tok, raw=True)
    right = [(s, p) for (s, t), p in zip(test, preds, strict=True) if p == t]
    p_right = output_probability(model, [s for s, _ in right], [p for _, p in right], tok)
    p_after = output_probability(model, [f"<dmy>{_weekday_after(t)}" for t in low], out["dmy", "after"], tok)
    is_right = torch.tensor([p == t for p, t in zip(out["dmy", "after"], low, strict=True)])
    p_wrong, p_same = p_after[~is_right], p_after[is_right]
    keep_99 = torch.quantile(p_right, 0.01)
    return dict(
        through=int((p_wrong >= keep_99).sum()), n=len(p_wrong),
        refused=(p_right <= p_wrong.max()).float().mean().item(),
        above=(p_right[:, None] > p_wrong[None, :]).float().mean().item(),
        above_same=(p_same[:, None] > p_wrong[None, :]).float().mean().item(),
        refused_same=(p_same <= p_wrong.max()).float().mean().item(),
        refused_99_same=(p_same < keep_99).float().mean().item(),
        median=p_right.median().item(), largest=p_right.max().item())


def test_the_sequence_probability_as_a_guard_changes_with_the_run():
    """Section 3 (calibration), on the wrong '<dmy>2033-12-03 sat' answers. Against the right answers on
    the 1,000 test dates, the notebook's run (seed 0): a threshold refusing 1 % of the right answers
    lets at least one in ten wrong answers through, and one that catches every wrong answer refuses
    at least two fifths of the right ones (0.437); across seeds 0-9 the 1 % threshold lets through a tenth or
    less in some runs and more than half in others. Measured under the pin, seeds 0-9, through:
    8/40, 22/54, 44/75, 32/78, 38/59, 2/35, 2/35, 41/66, 35/78, 3/9; refused: 0.437, 0.969, 0.995,
    0.882, 0.973, 0.032, 0.948, 0.998, 0.826, 0.523.

    The control (the second read: that comparison mostly detects the unfamiliar format): the right
    readings of the same texts. At every seed a right answer beats a wrong one less often there than
    on the test dates; a threshold catching every wrong reading refuses at least two fifths of the
    right readings of the same texts, and the 1 % threshold at least a tenth of them; in half of the
    runs (five) a wrong reading is likelier than a right one in most pairs. Written from seeds 0-4
    (refused on the same texts 0.984, 1, 1, 1, 1; by the 1 % threshold 0.625, 0.720, 0.655, 0.885,
    0.289) and checked unchanged on 5-9 (whose values the reader's report had printed: 0.826, 0.986,
    1, 1, 0.474; 0.797, 0.551, 0.526, 0.885, 0.126). Share of (right, wrong) pairs a right reading
    wins, same texts, seeds 0-9: 0.663 0.458 0.376 0.325 0.515 0.645 0.729 0.364 0.311 0.890.
    The prose's "the probability pointed the right way in some runs and the wrong way in others" (the
    former "did not separate them in any run" missed that seed 9 ranks right readings first in 0.89
    of the pairs): three fifths or more in some runs, a third or fewer in others, written from seeds
    0-4 (0.663 and 0.325) and asserted on the held-out seeds 5-9 alone as well (0.890 and 0.311); the
    ten-run extremes the prose quotes, 0.89 and 0.31, to two decimals.

    Label smoothing (section 3's "right answers cluster near 0.53"): the median right answer is
    within 0.01 of (1 - α + α/|V|)^6 = 0.5328 and the largest above it, at every seed (medians
    0.528-0.529, largest 0.556-0.570)."""
    guard = {seed: _probability_guard(seed) for seed in ALL_SEEDS}
    g0 = guard[0]
    assert g0["through"] >= 0.1 * g0["n"] and g0["refused"] >= 0.4, g0
    shares = [g["through"] / g["n"] for g in guard.values()]
    assert min(shares) <= 0.1 and max(shares) > 0.5, guard
    target = (0.9 + 0.1 / 249) ** 6
    for seed, g in guard.items():
        assert g["above_same"] < g["above"], (seed, g)
        assert g["refused_same"] >= 0.4 and g["refused_99_same"] >= 0.1, (seed, g)
        assert abs(g["median"] - target) < 0.01 and g["largest"] > target, (seed, g)
    assert sum(g["above_same"] < 0.5 for g in guard.values()) == 5, guard
    for seeds in (WRITTEN_SEEDS, HELD_OUT_SEEDS):
        shares = [guard[seed]["above_same"] for seed in seeds]
        assert max(shares) >= 0.6 and min(shares) <= 1 / 3, (seeds, shares)
    shares = [g["above_same"] for g in guard.values()]
    assert (round(max(shares), 2), round(min(shares), 2)) == (0.89, 0.31), shares


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_loss_still_falls_after_step_500(seed):
    """Section 2: the remaining steps still lower the loss (seeds 0-9: from 0.909-0.920 at step 500
    to 0.879-0.881 at step 1,200)."""
    _, _, history = train_translator(seed=seed, device="cpu")
    assert history["loss"][-1] < history["loss"][history["step"].index(500)], (seed, history["loss"])


@functools.cache
def _many_maps(seed):
    model, tok = _translator(seed)
    return [(t, *attention_maps(model, tok, s)) for s, t in translator_data()[2][:200]]


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_year_anchor_and_its_control(seed):
    """Section 5, encoder layer 1: over the first 200 test dates the year gets more than its uniform
    share on average in dates in numbers only, and (the control) with a month word and a four-digit
    year, where the word and the year settle the whole reading, at least as much as in numbers only
    with a four-digit year (a year that only told how to read the numbers would get less there).
    The former control compared every month-word date with every numbers-only one; the third read
    noted that 29 of the 65 month-word dates have a two-digit year, so the month word alone settles
    the month but not which number is the day. Split by the year's digits (pinned), month word yyyy /
    numbers only yyyy, written from seeds 0-4: 2.92 / 2.83, 1.95 / 1.90, 1.95 / 1.80, 2.00 / 1.89,
    2.33 / 2.15; held-out 5-9, unchanged: 1.11 / 1.04, 2.93 / 2.76, 2.62 / 2.47, 2.70 / 2.53,
    4.27 / 3.61. Earlier (all month-word against all numbers-only dates), seeds 0-4, native kernels:
    2.41 / 2.59, 1.75 / 1.83, 2.19 / 2.80, 1.92 / 2.04, 1.84 / 1.99 (numbers only / month word)."""
    ratio = {}
    for t, _, src, _, maps in _many_maps(seed):
        if pos := part_positions(src, t):
            kind = ("month word" if src[pos["month"]].isalpha() else "numbers only", len(src[pos["year"]]))
            ratio.setdefault(kind, []).append(maps["encoder"][1].mean(0).mean(0)[pos["year"]].item() * len(src))
    mean = {k: sum(v) / len(v) for k, v in ratio.items()}
    numbers_only = ratio["numbers only", 2] + ratio["numbers only", 4]
    assert sum(numbers_only) / len(numbers_only) > 1, mean
    assert mean["month word", 4] >= mean["numbers only", 4], mean
    _YEAR_MEANS[seed] = sum(numbers_only) / len(numbers_only)


_YEAR_MEANS = {}


def _year_mean(seed):
    if seed not in _YEAR_MEANS:
        test_the_year_anchor_and_its_control(seed)
    return _YEAR_MEANS[seed]


def _hide_in_encoder_layer1(model, positions):
    """The notebook's hook: in encoder layer 1 no piece but ``positions[b]`` itself reads it."""
    def hook(layer, args):
        x, mask = args
        m = mask.expand(x.shape[0], 1, x.shape[1], x.shape[1]).clone()  # (B, 1, Ls, Ls)
        for b, p in enumerate(positions):
            m[b, 0, :, p] = False
            m[b, 0, p, p] = True
        return x, m
    return model.encoder.layers[1].register_forward_pre_hook(hook)


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_hiding_the_year_in_encoder_layer_1(seed):
    """Section 5, the intervention after the year's share: on the first 1,000 test dates whose year,
    month and day are each one piece, no piece but the year reads the year in encoder layer 1
    (greedy), in three groups: year first in numbers (215), year first with a month word (132), year
    last (595). It breaks >= 2 % of the year-first dates in numbers, a smaller share of the year-first
    dates with a month word, at least five times the share of the year-last dates, and <= 2.5 % of the
    year-last dates; at least three in four of the broken year-first dates in numbers write the
    month's number as the day; hiding the day instead breaks <= 1 % of all. Wrong of 215 / 132 / 595
    (month as day among them), pinned, written from seeds 0-4: 5 (4) / 0 / 0, 116 (115) / 9 (7) / 1,
    35 (34) / 1 (1) / 0, 89 (88) / 4 (4) / 1, 51 (50) / 8 (7) / 7; held-out 5-9: 38 (36) / 4 (0) / 0,
    24 (24) / 0 / 0, 25 (25) / 1 (1) / 0, 61 (61) / 4 (3) / 1, 25 (24) / 0 / 2. The first prose put the
    year-first dates with a month word with the year-last ones ("the rest", <= 2.5 %: 15 of 727 at
    seed 4); split here. From seeds 0-4, most broken year-first dates with a month word wrote the
    month's number as the day (where any broke); held-out seed 5 did not (its 4 take the day from
    the year's last two digits), so the prose says "in six of the seven runs where any broke" and
    this test records seed 5 as the exception. Hiding the month instead is not a clean control (up
    to 9 of 942 at seed 9), so the notebook uses the day."""
    model, tok = _translator(seed)
    groups = {}
    for s, t in translator_data()[2][:1000]:
        src = tok.pieces(s)
        if pos := part_positions(src, t):
            group = "last" if pos["year"] > pos["day"] else "word" if src[pos["month"]].isalpha() else "first"
            groups.setdefault(group, []).append((s, t, pos))
    wrong = {}
    for part in ("year", "day"):
        for group, cases in groups.items():
            hook = _hide_in_encoder_layer1(model, [pos[part] for *_, pos in cases])
            outs = translate_hiding(model, [s for s, *_ in cases], tok, [[] for _ in cases])
            hook.remove()
            wrong[part, group] = [o for o, (_, t, _) in zip(outs, cases, strict=True) if o != t]
    share = {g: len(wrong["year", g]) / len(groups[g]) for g in groups}
    counts = {k: len(v) for k, v in wrong.items()}
    mad = {g: sum(o[8:] == o[5:7] for o in wrong["year", g]) for g in groups}
    assert share["first"] >= 0.02 and share["first"] >= 5 * share["last"] and share["last"] <= 0.025, (seed, counts)
    assert share["word"] < share["first"], (seed, counts)
    assert mad["first"] >= 0.75 * len(wrong["year", "first"]), seed
    if wrong["year", "word"]:  # most with the month's number as the day, except at seed 5
        assert (mad["word"] > len(wrong["year", "word"]) / 2) == (seed != 5), (seed, wrong["year", "word"])
    assert sum(len(wrong["day", g]) for g in groups) <= 0.01 * sum(map(len, groups.values())), counts
    if seed == 0:  # the notebook's run: "5 year-first dates in numbers and no other date"
        assert counts["year", "first"] == 5 and counts["year", "word"] == counts["year", "last"] == 0, counts


def test_the_year_is_well_over_its_share_in_nine_runs_of_ten():
    """Section 5 ('one and a half times its share or more on average in nine of the ten runs we tried,
    and about its share in one (seed 5)'): the year's mean share in encoder layer 1, over the
    numbers-only dates among the first 200 test dates, divided by the uniform share. The first prose
    ('well over its share', every run) and its test (> 1, weaker than the prose) were written from
    seeds 0-4; held-out seed 5 gave 1.01 (native kernels), 1.03 (pinned). Measured under the pin,
    seeds 0-9: 2.69, 1.84, 1.85, 1.86, 2.10, 1.03, 2.70, 2.47, 2.47, 3.59; native seeds 0-4: 2.41,
    1.75, 2.19, 1.92, 1.84, seed 8: 2.03. The threshold that followed, 1.8, was set after all ten
    seeds had been seen (0.04 above seeds 1-3, and native seed 1 is below it). Now written from seeds
    0-4 under both kernel sets (lowest 1.75 native, 1.84 pinned): 1.5. On held-out 5-9 it holds at
    6-9 and fails at 5, which is why the prose says nine of ten and names seed 5 (here between 0.8
    and 1.25: 'about its share')."""
    means = {seed: _year_mean(seed) for seed in ALL_SEEDS}
    assert all(means[seed] >= 1.5 for seed in ALL_SEEDS if seed != 5), means
    assert 0.8 < means[5] < 1.25, means


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_each_output_number_reads_its_piece(seed):
    """Section 5 ('the output numbers read the pieces that hold them nine times in ten or more, in each
    of the ten runs we tried'), as the notebook counts it: on the first 200 test dates whose parts are
    each one piece, each output number's largest share of cross-attention (mean of heads) is on its
    own piece in layer 0 or in layer 1, on at least 90 % of the dates. Written from seeds 0-2 of
    test_what_each_kind_of_attention_looks_at; measured under the pin (185 dates), seeds 0-9: 184,
    185, 180, 185, 182, 185, 184, 182, 185, 176."""
    reads = []
    for t, _, src, _, maps in _many_maps(seed):
        if pos := part_positions(src, t):
            reads.append(any(all(maps["cross"][layer].mean(0)[row].argmax().item() == pos[part]
                                 for row, part in ((0, "year"), (2, "month"), (4, "day"))) for layer in (0, 1)))
    assert sum(reads) >= 0.9 * len(reads), (seed, sum(reads), len(reads))


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_decoder_layer_0_against_the_uniform_baseline(seed):
    """Section 5, decoder layer 0: <bos> and the token just written get more than uniform attention
    over the output so far would give them, on every one of the first 200 test dates ('more than
    half' is no claim: uniform attention already gives them 0.58 on an ISO date). Measured before
    writing (seeds 0-4): the smallest margin over uniform on any date 0.058, 0.049, 0.048, 0.104,
    0.086."""
    ratios = []
    for *_, maps in _many_maps(seed):
        w = maps["decoder"][0].mean(0)
        rows = range(1, w.shape[0])
        share = sum(w[t, 0].item() + w[t, t].item() for t in rows) / len(rows)
        ratios.append(share / (sum(2 / (t + 1) for t in rows) / len(rows)))
    assert min(ratios) > 1, (seed, min(ratios))


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_hiding_a_piece_from_cross_attention(seed):
    """Section 5's intervention: on the first 300 test dates whose parts are each written by one
    piece, hiding the year's (month's, day's) piece from every cross-attention head leaves the year
    (month, day) right on at most half of the dates and each other part right at least 50 points
    more often than the hidden one. Measured before writing (seeds 0-4, native AVX-512 kernels),
    the hidden part right: year 0.147, 0.029, 0.014, 0.007, 0.032; month 0.122, 0.040, 0.104,
    0.054, 0.144; day 0.040, 0.018, 0.018, 0.014, 0.022; the other parts at least 0.863. Under the
    suite's pinned kernels seed 0 gave year 0.126 with month and day 0.752 (an absolute "other parts
    at least 80 %", first written, failed there: re-scoped to the gap)."""
    model, tok = _translator(seed)
    cases = [(s, t, pos) for s, t in translator_data()[2][:300] if (pos := part_positions(tok.pieces(s), t))]
    kept = {}
    for hidden in ISO_PART:
        outs = translate_hiding(model, [s for s, _, _ in cases], tok, [[pos[hidden]] for _, _, pos in cases])
        kept[hidden] = {part: sum(o[sl] == t[sl] for o, (_, t, _) in zip(outs, cases, strict=True)) / len(cases)
                        for part, sl in ISO_PART.items()}
    for part in ISO_PART:
        assert kept[part][part] <= 0.5, (seed, kept)
        assert min(kept[part][o] for o in ISO_PART if o != part) - kept[part][part] >= 0.5, (seed, kept)


def _numbers_only_dates_that_could_swap():
    """Every date of 1970-2049 written dd/mm/yyyy whose day and month are both 12 or less and differ:
    (text, the ISO date it is under <dmy>), 10,560 of them."""
    return [(f"{d:02d}/{m:02d}/{y}", f"{y}-{m:02d}-{d:02d}") for y in range(1970, 2050)
            for d in range(1, 13) for m in range(1, 13) if d != m]


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
def test_the_order_token_decides_numbers_only_dates_but_for_a_few(seed):
    """Section 5 (what the translator answers; the Summary's "follows it on all but a few dates"):
    the 10,560 dates dd/mm/yyyy of 1970-2049 whose day and month could swap, under <dmy>, come back
    wrong at most 20 times per run, and translate refuses every wrong one; the 132 such dates
    of 2021 under <mdy> are all right. At seed 0 (the notebook's run) 03/04/2021 is among the wrong
    ones, with 10 of the 132 of 2021 (each with day 03), 19 in all. Threshold written from seeds 0-4
    (wrong under <dmy>: 19, 1, 0, 0, 1, under the pin); held-out 5-9: 1, 0, 0, 4, 8 (held unchanged)."""
    model, tok = _translator(seed)
    pairs = _numbers_only_dates_that_could_swap()
    got = translate(model, [x for x, _ in pairs], tok, order="dmy", raw=True)
    wrong = [x for (x, t), g in zip(pairs, got, strict=True) if g != t]
    assert len(wrong) <= 20, (seed, len(wrong), wrong[:20])
    shown = translate(model, wrong, tok, order="dmy")
    assert all(a.startswith(NO_ANSWER) for a in shown), (seed, shown)
    year_2021 = [(x, f"{t[:4]}-{t[8:]}-{t[5:7]}") for x, t in pairs if x.endswith("/2021")]
    mdy = translate(model, [x for x, _ in year_2021], tok, order="mdy", raw=True)
    assert mdy == [t for _, t in year_2021], seed
    if seed == 0:  # the notebook's own run
        wrong_2021 = [x for x in wrong if x.endswith("/2021")]
        assert len(wrong) == 19 and "03/04/2021" in wrong, wrong
        assert len(wrong_2021) == 10 and all(x.startswith("03/") for x in wrong_2021), wrong_2021
