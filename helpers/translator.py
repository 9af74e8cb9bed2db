"""Notebook 10's application: a Transformer that translates dates as people write them into ISO
dates. The recipe (``TRANSLATOR_RECIPE``), its data and tokenizer, the model, its training with an
on-disk cache (``train_translator``), and what the notebook and its widget do with a trained model:
translate text, measure exact-match accuracy, read all three kinds of attention, and word a result
for a person (``translation_message``, ``reading_note``).

The translator never shows a wrong date. Text is read by the model only if the rules of
``helpers.data.check_date_text`` find one complete, possible date in it under the reading order
given (``"dmy"``, day first, or ``"mdy"``, month first; with no order, a date in numbers that
could be read two ways is refused naming both); anything else is refused with a message that says
what to change (``translate`` raises ValueError, the widget shows the message). The model reads
the text after the order token (``<dmy>`` / ``<mdy>``) that states that order, and what it writes
is shown as the answer only when it is the date the rules read (``rules_reading``); otherwise the
answer is a refusal that says so (``checked_answer``). ``translate(..., raw=True)`` gives what the
model wrote, right or wrong.

Everything is step-based and seeded: the same seed and number of steps give the same model on the
same machine, however fast or slow that machine is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import torch

from .attention import causal_mask, padding_mask, target_mask
from .cache import load_or_train
from .data.dates import (
    DATA_VERSION,
    MONTH_WORDS,
    MONTHS,
    DateReading,
    check_date_text,
    date_splits,
    date_tokenizer,
    iso_or_none,
    normalize_date_text,
    order_marker,
    reading_of,
    split_order,
)
from .data.tokenizers import _cut
from .decoding import greedy_decode
from .env import get_device, seed_everything
from .training import _pad, train_seq2seq
from .transformer import Transformer

__all__ = [
    "TRANSLATOR_RECIPE",
    "attention_maps",
    "NO_ANSWER",
    "checked_answer",
    "cross_attention",
    "exact_match_accuracy",
    "make_translator",
    "model_input",
    "output_probability",
    "part_positions",
    "reading_note",
    "rules_reading",
    "train_translator",
    "translate",
    "translate_hiding",
    "translation_message",
    "translator_data",
]


def _check_batch_size(where: str, batch_size) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"{where}: batch_size must be an int >= 1, got {batch_size!r}")


def _check_tokenizer(where: str, model, tokenizer) -> None:
    """The tokenizer must be one (a CharTokenizer or DateTokenizer) of the size the model was
    built for: another vocabulary would map the ids to other pieces without any error."""
    if not all(hasattr(tokenizer, a) for a in ("encode", "decode", "itos", "pad_id")):
        raise TypeError(f"{where}: tokenizer must be a tokenizer (e.g. helpers.data.date_tokenizer()), "
                        f"got {type(tokenizer).__name__}")
    sizes = {name: getattr(getattr(model, name, None), "num_embeddings", None)
             for name in ("src_embed", "tgt_embed")}
    for name, size in sizes.items():
        if size is not None and size != len(tokenizer):
            raise ValueError(
                f"{where}: the tokenizer has {len(tokenizer)} tokens but the model's {name} was built "
                f"for {size}: use the tokenizer the model was trained with (its ids would otherwise "
                f"mean other pieces)")


def model_input(text: str, order: str | None = "dmy") -> str:
    """What the model reads: the order token, then the normalised text ('<dmy>12 mar 2021').
    A text that already starts with an order token keeps its own; with ``order=None`` the token
    is that of the order the rules read the text with ('<mdy>' for '12/25/2021')."""
    found, body = split_order(normalize_date_text(text), default=order)
    if found is None:
        reading = reading_of(body, None)
        found = getattr(reading, "order", None) or "dmy"
    return order_marker(found) + body


def _checked_inputs(where: str, model, sources, tokenizer, order: str | None):
    """The model inputs for ``sources`` and the date the rules read in each (ISO), after refusing
    (ValueError) any that ``check_date_text`` refuses, naming each with its index and the reason."""
    if isinstance(sources, str) or not isinstance(sources, Sequence):
        raise TypeError(f"{where}: sources must be a list of strings; for one text use "
                        f"{where}(model, [text], tok), got {type(sources).__name__}")
    _check_tokenizer(where, model, tokenizer)
    if order is not None:
        order_marker(order)  # "order must be 'dmy' (day first) or 'mdy' (month first)"
    max_len = getattr(getattr(model, "pos", None), "max_len", None)
    inputs, expected, problems = [], [], []
    for i, source in enumerate(sources):
        if not isinstance(source, str):
            raise TypeError(f"{where}: sources[{i}] must be a str, got {type(source).__name__}")
        found, text = split_order(normalize_date_text(source), default=order)
        message = check_date_text(text, tokenizer, max_len, found)
        reading = reading_of(text, found) if message is None else None
        marker = order_marker(found or getattr(reading, "order", None) or "dmy")
        if message is None:
            unknown = tokenizer.unknown(marker)
            if unknown:
                message = f"the tokenizer has no id for the order token {marker!r}"
        if message is not None:
            problems.append(f"sources[{i}] {_cut(text)}: {message}")
        inputs.append(marker + text)
        expected.append(rules_reading(text, found))
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise ValueError(f"{where} refuses {len(problems)} of {len(sources)} sources, it does not "
                         f"guess: " + "; ".join(problems[:3]) + more)
    return inputs, expected


NO_ANSWER = "no answer: "


def checked_answer(output: str, expected: str) -> str:
    """What may be shown for a model's ``output`` when the rules read ``expected`` (ISO): the
    output itself when the two agree, else a refusal that starts with ``NO_ANSWER`` and says why.
    A wrong date is never the answer."""
    if output == expected:
        return output
    if iso_or_none(output) is None:
        return f"{NO_ANSWER}the model wrote {_cut(output, 16)}, not a real date"
    return f"{NO_ANSWER}the model wrote {output}, but the text reads as {expected}"


def translate(model, sources: Sequence[str], tokenizer, max_len: int = 12,
              batch_size: int = 500, *, order: str | None = None, raw: bool = False) -> list[str]:
    """Translations of date texts (greedy, batched): for each source, the ISO date when the model
    wrote the date the rules read in it (``rules_reading``), else a refusal that starts with
    ``NO_ANSWER`` ('no answer: ...') and says why (the model wrote no real date, or another date).
    A wrong date is never returned. ``raw=True`` returns what the model wrote instead, right or
    wrong: what it does, for measuring and teaching, not for showing as an answer.

    Each source is read with the reading ``order`` ("dmy": day, month, year; "mdy": month, day,
    year), unless it starts with its own order token (``'<mdy>03/12/2021'``, as the data's sources
    do). With no order (``None``, the default) a date in numbers is read only when one reading
    alone is a real date: '03/12/2021' (3 December or 12 March) and '21-12-31' (a two-digit year
    first?) are refused naming every reading, '25/12/2021' is read. A source that
    ``check_date_text`` refuses (no day, month or year, an impossible date, a word the translator
    does not read, a time of day, ...) is not given to the model: ``translate`` raises ValueError
    naming it and what to change. So does a tokenizer whose size is not the model's."""
    _check_batch_size("translate", batch_size)
    if not isinstance(raw, bool):
        raise TypeError(f"translate: raw must be True or False, got {type(raw).__name__} {raw!r}")
    inputs, expected = _checked_inputs("translate", model, sources, tokenizer, order)
    device = next(model.parameters()).device
    out = []
    for i in range(0, len(inputs), batch_size):
        chunk = inputs[i : i + batch_size]
        src = _pad([tokenizer.encode(s) for s in chunk], tokenizer.pad_id).to(device)  # (B, Ls)
        ys = greedy_decode(model, src, max_len, tokenizer.bos_id, tokenizer.eos_id,
                           src_mask=padding_mask(src, tokenizer.pad_id))  # (B, <= max_len)
        out.extend(tokenizer.decode(row) for row in ys.tolist())
    return out if raw else [checked_answer(o, e) for o, e in zip(out, expected, strict=True)]


def exact_match_accuracy(model, pairs: Sequence[tuple[str, str]], tokenizer, max_len: int = 12,
                         batch_size: int = 500, *, order: str | None = None,
                         raw: bool = False) -> tuple[float, list[str]]:
    """Fraction of pairs whose greedy translation equals the target exactly, and the translations
    (``translate``'s: a refusal where the model disagrees with the rules; with ``raw=True`` what
    the model wrote). Where the rules read the target, as in the data's pairs, both give the same
    fraction."""
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or len(pairs) == 0:
        raise ValueError(f"exact_match_accuracy: pairs must be a non-empty list of (source, target) "
                         f"pairs, got {pairs!r:.60}")
    bad = next((p for p in pairs if not (isinstance(p, (tuple, list)) and len(p) == 2)), None)
    if bad is not None:
        raise ValueError(f"exact_match_accuracy: each pair must be (source, target), got {bad!r:.60}")
    _check_batch_size("exact_match_accuracy", batch_size)
    preds = translate(model, [s for s, _ in pairs], tokenizer, max_len, batch_size, order=order,
                      raw=raw)
    correct = sum(p == t for p, (_, t) in zip(preds, pairs, strict=True))
    return correct / len(pairs), preds


def attention_maps(model, tokenizer, source: str, max_len: int = 12, *, order: str | None = None):
    """Translate one source greedily and return all three kinds of attention that produced it.

    Returns ``(translation, src_labels, out_labels, maps)`` where ``translation`` is
    ``translate``'s answer (the date, or a refusal when the model disagrees with the rules: the
    model's own tokens are ``out_labels``) and ``maps`` has keys
    ``"encoder"`` (per encoder layer (num_heads, Ls, Ls): source tokens reading each other),
    ``"decoder"`` (per decoder layer (num_heads, Lt, Lt): output tokens reading earlier ones,
    causal) and ``"cross"`` (per decoder layer (num_heads, Lt, Ls)). ``src_labels`` are the pieces
    the model read, the order token first. Row t of a decoder map is the query that produced
    output token t (``out_labels[t]``, the last one ``<eos>`` when the model stopped); the
    decoder's keys are ``["<bos>", *out_labels[:-1]]``. Text that ``translate`` refuses raises
    ValueError here too."""
    if not isinstance(source, str):
        raise TypeError(f"attention_maps: source must be a str, got {type(source).__name__}")
    (text,), (expected,) = _checked_inputs("attention_maps", model, [source], tokenizer, order)
    device = next(model.parameters()).device
    src = torch.tensor([tokenizer.encode(text)], device=device)  # (1, Ls)
    ys = greedy_decode(model, src, max_len, tokenizer.bos_id, tokenizer.eos_id)  # (1, <= max_len)
    tgt_in = ys[:, :-1]  # (1, Lt): bos + all output tokens but the last
    with torch.no_grad():
        was_training = model.training
        model.eval()
        model(src, tgt_in, None, target_mask(tgt_in), need_weights=True)
        model.train(was_training)
    maps = {
        "encoder": [layer.self_attn.attn_weights[0].cpu() for layer in model.encoder.layers],
        "decoder": [layer.self_attn.attn_weights[0].cpu() for layer in model.decoder.layers],
        "cross": [layer.cross_attn.attn_weights[0].cpu() for layer in model.decoder.layers],
    }
    out_labels = [tokenizer.itos[i] for i in ys[0, 1:].tolist()]
    src_labels = tokenizer.pieces(text) if hasattr(tokenizer, "pieces") else list(text)
    return checked_answer(tokenizer.decode(ys[0].tolist()), expected), src_labels, out_labels, maps


def part_positions(pieces: Sequence[str], iso: str) -> dict[str, int] | None:
    """Where the year, month and day of ``iso`` ('2021-03-12') are written in a source's
    ``pieces`` (the tokenizer's, order token first): {"year": i, "month": j, "day": k}, or None
    when a part is written by no piece or by more than one (as in '03/03/2021'). A piece holds a
    part when it writes its number ('2021', '21', "'21"; '03' or '3'; '12') or, for the month,
    its name ('march', 'mar')."""
    year, month, day = iso.split("-")

    def holds(piece: str, label: str, is_month: bool) -> bool:
        if is_month and piece in MONTH_WORDS:
            return MONTH_WORDS[piece] == int(label)
        digits = piece.lstrip("'")
        if not digits.isdigit() or len(digits) > 4:
            return False
        return digits == label or int(digits) == int(label) % (100 if len(digits) <= 2 else 10**4)

    found = {}
    for name, label in (("year", year), ("month", month), ("day", day)):
        where = [i for i, p in enumerate(pieces) if holds(p, label, name == "month")]
        if len(where) != 1:
            return None
        found[name] = where[0]
    return found if len(set(found.values())) == 3 else None


def translate_hiding(model, sources: Sequence[str], tokenizer, hide: Sequence[Sequence[int]],
                     max_len: int = 12) -> list[str]:
    """What the model writes (greedy, like ``translate(..., raw=True)``) when its
    cross-attention may not read some source pieces: ``hide[b]`` lists the piece indices (order
    token = 0) of ``sources[b]`` that no decoder layer and no head may attend to. The encoder is
    untouched, so what those pieces told the other pieces still reaches the decoder through them:
    the intervention removes only the direct path. ``sources`` start with their order token."""
    _check_tokenizer("translate_hiding", model, tokenizer)
    if len(hide) != len(sources):
        raise ValueError(f"translate_hiding: one list of pieces to hide per source, got {len(hide)} "
                         f"for {len(sources)} sources")
    device = next(model.parameters()).device
    src = _pad([tokenizer.encode(s) for s in sources], tokenizer.pad_id).to(device)  # (B, Ls)
    keep = padding_mask(src, tokenizer.pad_id)  # (B, 1, 1, Ls)
    cross = keep.clone()
    for b, positions in enumerate(hide):
        cross[b, 0, 0, list(positions)] = False
    was_training = model.training
    model.eval()
    with torch.no_grad():
        memory = model.encode(src, keep, need_weights=False)  # (B, Ls, d_model)
        ys = torch.full((len(sources), 1), tokenizer.bos_id, dtype=torch.long, device=device)  # (B, 1)
        done = torch.zeros(len(sources), dtype=torch.bool, device=device)
        for _ in range(max_len - 1):
            logits = model.decode(ys, memory, cross, causal_mask(ys.shape[1], device=device),
                                  need_weights=False)  # (B, Lt, V)
            next_id = logits[:, -1].argmax(-1).masked_fill(done, tokenizer.eos_id)  # (B,)
            ys = torch.cat([ys, next_id[:, None]], dim=1)  # (B, Lt + 1)
            done |= next_id == tokenizer.eos_id
            if done.all():
                break
    model.train(was_training)
    return [tokenizer.decode(row) for row in ys.tolist()]


def output_probability(model, sources: Sequence[str], outputs: Sequence[str], tokenizer) -> torch.Tensor:
    """The probability the model gives each whole output: for ``outputs[b]`` (an ISO date, or
    whatever the model wrote), the product over its tokens and the closing ``<eos>`` of the
    probability of that token given the source and the tokens before it (teacher forcing).
    ``sources`` start with their order token. Returns a (B,) float tensor."""
    _check_tokenizer("output_probability", model, tokenizer)
    device = next(model.parameters()).device
    src = _pad([tokenizer.encode(s) for s in sources], tokenizer.pad_id).to(device)  # (B, Ls)
    tgt = _pad([tokenizer.encode(o, add_bos=True, add_eos=True) for o in outputs],
               tokenizer.pad_id).to(device)  # (B, Lt + 1)
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]  # (B, Lt) each
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = model(src, tgt_in, padding_mask(src, tokenizer.pad_id),
                       target_mask(tgt_in, tokenizer.pad_id), need_weights=False)  # (B, Lt, V)
    model.train(was_training)
    logp = torch.log_softmax(logits.float(), -1).gather(-1, tgt_out[..., None])[..., 0]  # (B, Lt)
    return logp.masked_fill(tgt_out == tokenizer.pad_id, 0.0).sum(-1).exp()  # (B,)


def cross_attention(model, tokenizer, source: str, max_len: int = 12, *, order: str | None = None):
    """Translate one source string greedily and return what each decoder layer's cross-attention
    looked at while producing it.

    Returns ``(translation, src_labels, out_labels, weights)``: ``weights`` is a list (one per
    decoder layer) of (num_heads, Lt, Ls) tensors, row t being the query that produced output
    token t (``out_labels[t]``, the last one ``<eos>`` when the model stopped). See
    ``attention_maps`` (all three kinds, and what is refused)."""
    translation, src_labels, out_labels, maps = attention_maps(model, tokenizer, source, max_len,
                                                               order=order)
    return translation, src_labels, out_labels, maps["cross"]


def _spoken(parts: tuple[int, int, int]) -> str:
    y, m, d = parts
    return f"{d} {MONTHS[m - 1].capitalize()} {y}"


def translation_message(source: str, translation: str, expected: str | None = None) -> str:
    """How to show a model's output: 'source → 2021-03-12'; or, instead of an answer, a flag when
    the output is not a real ISO date, or when it differs from ``expected`` (the date the rules
    read in the source, ISO), so that a wrong date is never presented as the translation."""
    for name, value in (("source", source), ("translation", translation)):
        if not isinstance(value, str):
            raise TypeError(f"translation_message: {name} must be a str, got {type(value).__name__}")
    if expected is not None and iso_or_none(expected) is None:
        raise ValueError(f"translation_message: expected must be None or a real ISO date, got "
                         f"{expected!r}")
    if translation.startswith(NO_ANSWER):  # translate's refusal
        return f"{source!r} → {translation}"
    if iso_or_none(translation) is None:
        return (f"{source!r} → no valid date: the model wrote {translation!r}, which is not a real "
                f"YYYY-MM-DD date")
    if expected is not None and translation != expected:
        return (f"{source!r} → no answer: the model wrote {translation}, but the text reads as "
                f"{expected}: the model is wrong here")
    return f"{source!r} → {translation}"


def reading_note(text: str, order: str = "dmy") -> str | None:
    """Which reading the order chose, when it decided the date: for a date in numbers whose day
    and month are both 12 or less (and differ), e.g. for '03/04/2021': "read day first (dmy):
    3 April 2021; month first would give 4 March 2021"; for a two-digit year that could also be
    read first ('21-12-31'), what that would give. None when the text says it itself."""
    reading = reading_of(text, order)
    if not isinstance(reading, DateReading) or (reading.swapped is None and reading.year_first is None):
        return None
    first, other = ("day", "month") if order == "dmy" else ("month", "day")
    others = []
    if reading.swapped is not None:
        others.append(f"{other} first would give {_spoken(reading.swapped)}")
    if reading.year_first is not None and reading.year_first != reading.parts:
        others.append(f"a two-digit year first would give {_spoken(reading.year_first)}")
    if not others:
        return None
    return f"read {first} first ({order}): {_spoken(reading.parts)}; " + "; ".join(others)


def rules_reading(text: str, order: str | None = None) -> str | None:
    """The ISO date the rules read in ``text`` under ``order`` (None if they read none; with
    ``order=None``, also when a date in numbers could be read more than one way): what
    ``translate`` returns when the model agrees."""
    reading = reading_of(text, order)
    if not isinstance(reading, DateReading):
        return None
    try:
        return dt.date(*reading.parts).isoformat()
    except ValueError:
        return None


# --- Notebook 10's recipe, once -----------------------------------------------------------------
TRANSLATOR_RECIPE = {
    # data (the splits are fixed by data_seed; the training seed changes only weights and order)
    "n_train": 60_000, "n_val": 500, "n_test": 1_000, "data_seed": 0,
    # model
    "d_model": 64, "num_heads": 4, "num_layers": 2, "d_ff": 128, "dropout": 0.0, "max_len": 48,
    "norm_first": True,
    # training
    "steps": 1_200, "batch_size": 64, "peak_lr": 2e-3, "warmup_steps": 100, "smoothing": 0.1,
    "clip_norm": 1.0, "length_buckets": 1, "log_every": 100, "n_val_logged": 200,
    # the weights after this many steps are kept with the run (a log step): an under-trained model
    # of the same run, for comparisons that need one (``translator_snapshot``), at no extra training
    "snapshot_step": 200,
    # CPU threads for training (None: the process's). One: for a model this small a second thread
    # only adds synchronisation (no faster on an idle 2-core machine, several times slower on a
    # busy one), and the trained weights are then the same whatever the thread count of the process.
    "cpu_threads": 1,
}


_DATA_CACHE: dict = {}


def translator_data():
    """(train, val, test) pairs of the recipe (computed once per process)."""
    r = TRANSLATOR_RECIPE
    key = (r["n_train"], r["n_val"], r["n_test"], r["data_seed"], DATA_VERSION)
    if key not in _DATA_CACHE:
        _DATA_CACHE.clear()
        _DATA_CACHE[key] = date_splits(r["n_train"], r["n_val"], r["n_test"], seed=r["data_seed"])
    return _DATA_CACHE[key]


def make_translator(vocab_size: int, seed: int = 0, device=None, **changes) -> Transformer:
    """The recipe's Transformer, freshly initialised from ``seed``; ``changes`` override recipe
    entries (e.g. ``num_heads=1``, ``norm_first=False``)."""
    unknown = sorted(set(changes) - set(TRANSLATOR_RECIPE))
    if unknown:
        raise TypeError(f"make_translator: unknown recipe entries {unknown}; the recipe has "
                        f"{sorted(TRANSLATOR_RECIPE)}")
    seed_everything(seed)
    return _build_translator(vocab_size, {**TRANSLATOR_RECIPE, **changes}, device)


def _build_translator(vocab_size: int, r: dict, device) -> Transformer:
    model = Transformer(vocab_size, vocab_size, d_model=r["d_model"], num_heads=r["num_heads"],
                        num_layers=r["num_layers"], d_ff=r["d_ff"], dropout=r["dropout"],
                        max_len=r["max_len"], norm_first=r["norm_first"])
    return model.to(device if device is not None else get_device())


def _training_threads() -> int:
    return TRANSLATOR_RECIPE["cpu_threads"] or torch.get_num_threads()


def train_translator(seed: int = 0, steps: int | None = None, device=None, cache: bool = True):
    """Notebook 10's recipe: the date data, the tokenizer, the model, ``steps`` (default: the
    recipe's) steps of ``train_seq2seq``, with exact-match accuracy on ``n_val_logged`` validation
    dates at every log step. Returns ``(model, tokenizer, history)``, the model in eval mode.

    With ``cache=True`` the trained weights and history are stored in ``cache_folder()`` under a
    key of everything that affects them (seed, steps, recipe, data version, vocabulary, torch
    version, device, threads) and loaded from there the next time: the same tensors, bit for bit,
    as training again on this machine. ``history["cached"]`` says which happened. Training uses
    the recipe's ``cpu_threads`` (one) and then restores the process's thread count.
    """
    r = TRANSLATOR_RECIPE
    steps = r["steps"] if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an int >= 1 (or None for the recipe's {r['steps']}), "
                         f"got {steps!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"train_translator: seed must be an int, got {type(seed).__name__} {seed!r}")
    device = torch.device(device) if device is not None else get_device()
    tok = date_tokenizer()
    model = make_translator(len(tok), seed, device)

    def fit() -> dict:
        train, val, _ = translator_data()
        val_logged = val[: r["n_val_logged"]]

        def on_log(step, history):
            history.setdefault("val_acc", []).append(exact_match_accuracy(model, val_logged, tok)[0])
            if step == r["snapshot_step"] < steps:
                history["snapshot"] = {"step": step, "state_dict": {
                    k: v.detach().cpu().clone() for k, v in model.state_dict().items()}}

        history = train_seq2seq(model, train, tok, steps=steps, batch_size=r["batch_size"],
                                peak_lr=r["peak_lr"], warmup_steps=min(r["warmup_steps"], steps - 1),
                                smoothing=r["smoothing"], clip_norm=r["clip_norm"], seed=seed,
                                log_every=min(r["log_every"], steps), callback=on_log,
                                length_buckets=r["length_buckets"])
        history["threads"] = _training_threads()
        history["device"] = str(device)
        return history

    key = {"seed": seed, "steps": steps, "recipe": r, "data": DATA_VERSION, "vocab": tok.itos}
    model, history = load_or_train("translator", model, fit, key, cache=cache,
                                   threads=_training_threads())
    return model, tok, history


def translator_snapshot(history: dict, device=None):
    """The model of a ``train_translator`` run as it was after ``TRANSLATOR_RECIPE["snapshot_step"]``
    of its steps, in eval mode: an under-trained model of the same run, kept with it (no training).
    ``history`` is the run's history; a run that stopped before that step has no snapshot."""
    if not isinstance(history, dict) or "config" not in history:
        raise TypeError(f"translator_snapshot: history must be the history train_translator returned, "
                        f"got {type(history).__name__}")
    snap = history.get("snapshot")
    if snap is None:
        raise ValueError(f"translator_snapshot: this run has no snapshot: it trained "
                         f"{history['config'].get('steps')} steps, and the weights are kept after "
                         f"{TRANSLATOR_RECIPE['snapshot_step']} steps of a run longer than that")
    device = torch.device(device) if device is not None else get_device()
    with torch.random.fork_rng(devices=[]):  # the initial weights are replaced: the caller's random
        model = _build_translator(len(date_tokenizer()), TRANSLATOR_RECIPE, device)  # state is kept
    model.load_state_dict(snap["state_dict"])
    return model.eval()
