"""Notebook 10's application: a Transformer that translates dates as people write them into ISO
dates. The recipe (``TRANSLATOR_RECIPE``), its data and tokenizer, the model, its training with an
on-disk cache (``train_translator``), and what the notebook and its widget do with a trained model:
translate text, measure exact-match accuracy, read all three kinds of attention, and word a result
for a person (``translation_message``).

Everything is step-based and seeded: the same seed and number of steps give the same model on the
same machine, however fast or slow that machine is.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import torch

from .attention import padding_mask, target_mask
from .cache import cache_folder, cache_lock
from .data.dates import DATA_VERSION, date_splits, date_tokenizer, iso_or_none, normalize_date_text
from .decoding import greedy_decode
from .env import get_device, seed_everything
from .training import _pad, train_seq2seq
from .transformer import Transformer

__all__ = [
    "TRANSLATOR_RECIPE",
    "attention_maps",
    "cross_attention",
    "drop_separators",
    "exact_match_accuracy",
    "make_translator",
    "train_translator",
    "translate",
    "translation_message",
    "translator_data",
]


def drop_separators(tokenizer, p: float, separators: Sequence[str] = (" ", "-", "/", ".")):
    """An ``augment`` for ``train_seq2seq``: each separator token that stands between two number
    tokens (the ``-`` of ``12-03``, the pieces ``12``, ``-``, ``03``) is removed from the source
    with probability ``p``, independently, and the row closes up. What it leaves (the pieces
    ``12``, ``03``, ``-``, ``2021``) is no text at all: two numbers with nothing between them.
    It teaches that the order of the numbers, not the separators, says which is which, without
    ever writing a separator where the data does not use one.

    Needs a tokenizer of pieces (``DateTokenizer``): numbers are tokens made of digits."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    is_sep = torch.tensor([t in separators for t in tokenizer.itos])  # (V,)
    is_num = torch.tensor([t.isdigit() for t in tokenizer.itos])  # (V,)

    def augment(src: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        sep, num = is_sep[src], is_num[src]  # (B, Ls) each
        between = torch.zeros_like(sep)
        between[:, 1:-1] = sep[:, 1:-1] & num[:, :-2] & num[:, 2:]
        keep = ~(between & (torch.rand(src.shape, generator=generator) < p))  # (B, Ls)
        out = torch.full_like(src, tokenizer.pad_id)
        rows = torch.arange(src.shape[0])[:, None].expand_as(src)  # (B, Ls)
        out[rows[keep], (keep.cumsum(1) - 1)[keep]] = src[keep]  # kept tokens, closed up
        return out

    return augment


def _check_batch_size(batch_size) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")


def translate(model, sources: Sequence[str], tokenizer, max_len: int = 12,
              batch_size: int = 500) -> list[str]:
    """Greedy translations of source strings (batched), as text.

    Each source is first cleaned by ``normalize_date_text`` (lower case, single spaces), as in
    training. The outputs are what the model wrote: check them with ``iso_or_none``."""
    if isinstance(sources, str):
        raise TypeError("sources must be a list of strings; for one text use translate(model, [text], tok)")
    _check_batch_size(batch_size)
    sources = [normalize_date_text(s) for s in sources]
    device = next(model.parameters()).device
    out = []
    for i in range(0, len(sources), batch_size):
        chunk = sources[i : i + batch_size]
        src = _pad([tokenizer.encode(s) for s in chunk], tokenizer.pad_id).to(device)  # (B, Ls)
        ys = greedy_decode(model, src, max_len, tokenizer.bos_id, tokenizer.eos_id,
                           src_mask=padding_mask(src, tokenizer.pad_id))  # (B, <= max_len)
        out.extend(tokenizer.decode(row) for row in ys.tolist())
    return out


def exact_match_accuracy(model, pairs: Sequence[tuple[str, str]], tokenizer, max_len: int = 12,
                         batch_size: int = 500) -> tuple[float, list[str]]:
    """Fraction of pairs whose greedy translation equals the target exactly, and the translations."""
    if len(pairs) == 0:
        raise ValueError("exact_match_accuracy needs at least one pair")
    _check_batch_size(batch_size)
    preds = translate(model, [s for s, _ in pairs], tokenizer, max_len, batch_size)
    correct = sum(p == t for p, (_, t) in zip(preds, pairs, strict=True))
    return correct / len(pairs), preds


def attention_maps(model, tokenizer, source: str, max_len: int = 12):
    """Translate one source greedily and return all three kinds of attention that produced it.

    Returns ``(translation, src_labels, out_labels, maps)`` where ``maps`` has keys
    ``"encoder"`` (per encoder layer (num_heads, Ls, Ls): source tokens reading each other),
    ``"decoder"`` (per decoder layer (num_heads, Lt, Lt): output tokens reading earlier ones,
    causal) and ``"cross"`` (per decoder layer (num_heads, Lt, Ls)). Row t of a decoder map is the
    query that produced output token t (``out_labels[t]``, the last one ``<eos>`` when the model
    stopped); the decoder's keys are ``["<bos>", *out_labels[:-1]]``. ``source`` is normalised
    with ``normalize_date_text`` first. Raises ValueError for text the tokenizer cannot encode.
    """
    if not isinstance(source, str) or not normalize_date_text(source):
        raise ValueError(f"source must be a non-empty string, got {source!r}")
    source = normalize_date_text(source)
    device = next(model.parameters()).device
    src = torch.tensor([tokenizer.encode(source)], device=device)  # (1, Ls)
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
    src_labels = tokenizer.pieces(source) if hasattr(tokenizer, "pieces") else list(source)
    return tokenizer.decode(ys[0].tolist()), src_labels, out_labels, maps


def cross_attention(model, tokenizer, source: str, max_len: int = 12):
    """Translate one source string greedily and return what each decoder layer's cross-attention
    looked at while producing it.

    Returns ``(translation, src_labels, out_labels, weights)``: ``weights`` is a list (one per
    decoder layer) of (num_heads, Lt, Ls) tensors, row t being the query that produced output
    token t (``out_labels[t]``, the last one ``<eos>`` when the model stopped). ``source`` is
    normalised with ``normalize_date_text`` first (see ``attention_maps`` for all three kinds).
    Raises ValueError for text the tokenizer cannot encode (or an empty string).
    """
    translation, src_labels, out_labels, maps = attention_maps(model, tokenizer, source, max_len)
    return translation, src_labels, out_labels, maps["cross"]


def translation_message(source: str, translation: str) -> str:
    """How to show a model's output: 'source → 2021-03-12', or, when the output is not a real
    ISO date, a flag instead of an answer."""
    if iso_or_none(translation) is None:
        return (f"{source!r} → no valid date: the model wrote {translation!r}, which is not a real "
                f"YYYY-MM-DD date")
    return f"{source!r} → {translation}"


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
    # augmentation: a separator between two numbers is dropped from the source this often
    "drop_separators": 0.2,
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
    r = {**TRANSLATOR_RECIPE, **changes}
    seed_everything(seed)
    model = Transformer(vocab_size, vocab_size, d_model=r["d_model"], num_heads=r["num_heads"],
                        num_layers=r["num_layers"], d_ff=r["d_ff"], dropout=r["dropout"],
                        max_len=r["max_len"], norm_first=r["norm_first"])
    return model.to(device if device is not None else get_device())


def _training_threads() -> int:
    return TRANSLATOR_RECIPE["cpu_threads"] or torch.get_num_threads()


def _cache_key(seed: int, steps: int, device: torch.device) -> str:
    """Everything that changes the trained weights: seed, steps, recipe, data version, torch
    version, device and the thread count training uses (threads change the last bits of every
    step)."""
    parts = {"seed": seed, "steps": steps, "recipe": TRANSLATOR_RECIPE, "data": DATA_VERSION,
             "torch": torch.__version__, "device": str(device), "threads": _training_threads()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


def train_translator(seed: int = 0, steps: int | None = None, device=None, cache: bool = True):
    """Notebook 10's recipe: the date data, the tokenizer, the model, ``steps`` (default: the
    recipe's) steps of ``train_seq2seq``, with exact-match accuracy on ``n_val_logged`` validation
    dates at every log step. Returns ``(model, tokenizer, history)``, the model in eval mode.

    With ``cache=True`` the trained weights and history are stored in ``cache_folder()`` under a
    key of everything that affects them, and loaded from there the next time: the same tensors,
    bit for bit, as training again on this machine. ``history["cached"]`` says which happened.
    Training uses the recipe's ``cpu_threads`` (one) and then restores the process's thread count.
    """
    r = TRANSLATOR_RECIPE
    steps = r["steps"] if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an int >= 1 (or None for the recipe's {r['steps']}), "
                         f"got {steps!r}")
    device = torch.device(device) if device is not None else get_device()
    tok = date_tokenizer()
    path = cache_folder() / f"translator-{_cache_key(seed, steps, device)}.pt"
    if not cache:
        return _train_translator(seed, steps, device, tok, None)
    with cache_lock(path):  # a parallel run of the same recipe waits here, then loads
        return _train_translator(seed, steps, device, tok, path)


def _train_translator(seed: int, steps: int, device: torch.device, tok, path: Path | None):
    """train_translator's work: load ``path`` if it holds this model, else train (and save there)."""
    r = TRANSLATOR_RECIPE
    if path is not None and path.exists():
        stored = torch.load(path, weights_only=True, map_location=device)
        if stored["itos"] == tok.itos:
            model = make_translator(len(tok), seed, device)
            model.load_state_dict(stored["state_dict"])
            return model.eval(), tok, {**stored["history"], "cached": True}
    train, val, _ = translator_data()
    model = make_translator(len(tok), seed, device)
    val_logged = val[: r["n_val_logged"]]

    def on_log(step, history):
        history.setdefault("val_acc", []).append(exact_match_accuracy(model, val_logged, tok)[0])

    threads = torch.get_num_threads()
    torch.set_num_threads(_training_threads())
    try:
        history = train_seq2seq(model, train, tok, steps=steps, batch_size=r["batch_size"],
                                peak_lr=r["peak_lr"], warmup_steps=min(r["warmup_steps"], steps - 1),
                                smoothing=r["smoothing"], clip_norm=r["clip_norm"], seed=seed,
                                log_every=min(r["log_every"], steps), callback=on_log,
                                length_buckets=r["length_buckets"],
                                augment=drop_separators(tok, r["drop_separators"]))
    finally:
        torch.set_num_threads(threads)
    history["threads"] = _training_threads()
    history["device"] = str(device)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        torch.save({"state_dict": state, "itos": tok.itos, "history": history}, tmp)
        os.replace(tmp, path)  # atomic: a parallel run never reads half a file
    return model.eval(), tok, {**history, "cached": False}
