"""The trained models of notebooks 12 and 13, one recipe each, shared by the notebooks, their
solutions and the robustness tests in ``tests/conclusions`` (so that a model trains once, then
loads from the on-disk cache, ``helpers.cache``).

- Notebook 12, section 2: notebook 10's dates written as one sequence, an encoder–decoder and a
  decoder-only model trained with the same recipe, exact-match accuracy measured every
  ``eval_every`` steps (``date_task``, ``train_date_models``).
- Notebook 12, sections 3–7: the word-level GPT of the toy language (``toy_lm_data``,
  ``train_toy_lm``).
- Notebook 13: the same GPT with one of today's options changed (``MODERN_OPTIONS``,
  ``train_modern``), the largest attention logit recorded during training.

Every function takes a ``seed``: the notebooks use 0, the tests 0, 1 and 2.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from functools import cache as _memo
from pathlib import Path

import torch

from .cache import fingerprint, load_or_train, shipped_in_use, tensor_digest
from .data import CharTokenizer, date_splits
from .data import toy_language as tl
from .env import get_device, seed_everything
from .gpt import GPT, complete_greedy
from .modern import max_attention_logit
from .positional import SinusoidalPositions
from .training import train_lm, train_lm_cached, train_seq2seq
from .transformer import Transformer
from .translator import exact_match_accuracy

__all__ = [
    "BALANCED_SINUSOIDAL",
    "DATE_RECIPE",
    "LLAMA_STYLE",
    "LM_RECIPE",
    "MODERN_OPTIONS",
    "SHIPPED_DATE_MODELS",
    "MODERN_RECIPE",
    "date_accuracy",
    "date_task",
    "make_date_models",
    "modern_data",
    "toy_lm_data",
    "train_date_model",
    "train_date_models",
    "train_modern",
    "train_toy_lm",
]

# ---------------------------------------------------------------- notebook 12, section 2: dates
DATE_RECIPE = {"steps": 2000, "batch_size": 64, "peak_lr": 2e-3, "warmup_steps": 100, "eval_every": 100,
               "eval_dates": 300}


@_memo
def date_task() -> dict:
    """Notebook 10's split (20,000 training pairs), the test dates the models are scored on, a
    character tokenizer that knows '=', and the decoder-only rows: ``<bos>`` source ``=`` target
    ``<eos>``, padded; labels -100 on the source, the '=' and the padding (not scored)."""
    train_pairs, _, test_pairs = date_splits(20_000, 500, 1_000, seed=0)
    tok = CharTokenizer([s + "=" + t for s, t in train_pairs])
    rows = [[tok.bos_id] + tok.encode(s + "=") + tok.encode(t) + [tok.eos_id] for s, t in train_pairs]
    width = max(map(len, rows))
    seqs = torch.tensor([r + [tok.pad_id] * (width - len(r)) for r in rows])  # (N, width)
    x, y = seqs[:, :-1], seqs[:, 1:].clone()  # inputs and next-token labels, (N, width - 1) each
    for i, (s, _) in enumerate(train_pairs):
        y[i, : len(s) + 1] = -100  # the source and '=' are given, not predicted
    y[y == tok.pad_id] = -100
    return {"train_pairs": train_pairs, "test_pairs": test_pairs, "tok": tok, "x": x, "y": y}


def make_date_models(seed: int = 0, device=None) -> tuple[Transformer, GPT]:
    """The two models of notebook 12 (notebook 10's recipe: 64 wide, 4 heads, d_ff 128, pre-LN):
    an encoder–decoder with 2 + 2 layers and a decoder-only model with 4 blocks."""
    tok, width = date_task()["tok"], date_task()["x"].shape[1]
    device = get_device() if device is None else device
    seed_everything(seed)
    encdec = Transformer(len(tok), len(tok), d_model=64, num_heads=4, num_layers=2, d_ff=128, dropout=0.0,
                         max_len=64, norm_first=True).to(device)
    seed_everything(seed)
    gpt = GPT(len(tok), d_model=64, num_heads=4, num_layers=4, d_ff=128, max_len=width).to(device)
    return encdec, gpt


def date_accuracy(model, pairs, tok) -> float:
    """Exact-match accuracy of greedy answers: an encoder–decoder translates the source; a
    decoder-only model continues ``<bos>`` source ``=`` (never writing ``<pad>`` or ``<bos>``)."""
    if isinstance(model, Transformer):
        return exact_match_accuracy(model, pairs, tok)[0]
    prompts = [[tok.bos_id] + tok.encode(s + "=") for s, _ in pairs]
    answers = complete_greedy(model, prompts, 11, suppress=[tok.pad_id, tok.bos_id])
    return sum(tok.decode(a) == t for a, (_, t) in zip(answers, pairs, strict=True)) / len(pairs)


# Notebook 12's two date models at seed 0, trained once with exactly ``train_date_model(kind,
# seed=0, retrain=True)`` on one CPU thread under the suite's pinned kernels (``tools/numerics.py``;
# ``python3 tools/ship_date_models.py``: retrained so, they come out the same bits) and shipped with
# the repository, so that the notebook's first run takes seconds instead of minutes. Each file holds
# the weights, the history and the recipe; its sha256 is checked before it is loaded.
# tests/conclusions/test_nb12_gpt.py retrains both and checks the notebook's claims on the result.
SHIPPED_FOLDER = Path(__file__).resolve().parent / "data" / "pretrained"
SHIPPED_DATE_MODELS = {
    "encdec": ("dates-encdec-s0.pt", "09227f6e8edc214f5cd8c30cad483f57ed9101354d4a53b692f3846a59aefaab"),
    "gpt": ("dates-gpt-s0.pt", "89c789c6e179ded5e63e353a8211dfe24c2a6d66214f78c817c710b2e7fa8adb"),
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_shipped_date_model(kind: str, model):
    """The shipped weights of notebook 12's ``kind`` date model at seed 0 loaded into ``model``
    (built by ``make_date_models(0)``). Returns (model, history), or None (with a warning saying
    why) if the file is missing, its sha256 differs from ``SHIPPED_DATE_MODELS`` or its recipe is
    not ``DATE_RECIPE``: then the caller trains."""
    file_name, sha = SHIPPED_DATE_MODELS[kind]
    path = SHIPPED_FOLDER / file_name
    if not path.exists():
        why = "it is missing"
    elif _sha256(path) != sha:
        why = "its sha256 is not the one recorded in helpers.experiments.SHIPPED_DATE_MODELS"
    else:
        stored = torch.load(path, weights_only=True, map_location=next(model.parameters()).device)
        if stored.get("recipe") != DATE_RECIPE or stored.get("model") != kind or stored.get("seed") != 0:
            why = "it was trained with another recipe than DATE_RECIPE"
        else:
            model.load_state_dict(stored["state_dict"])
            return model.eval(), {**stored["history"], "cached": True, "shipped": True}
    warnings.warn(f"the shipped date model {path} cannot be used ({why}): training it instead",
                  UserWarning, stacklevel=3)
    return None


def train_date_model(kind: str, seed: int = 0, steps: int | None = None, device=None, cache: bool = True,
                     retrain: bool = False, smoothing: float | None = None):
    """Train one of notebook 12's two date models (``kind`` "encdec" or "gpt") with
    ``DATE_RECIPE`` (``steps`` overrides its number of steps, on the same warm-up and cosine
    schedule), measuring exact-match accuracy on the first ``eval_dates`` test dates every
    ``eval_every`` steps. Returns (model, history); the history has "step", "loss", "acc_step" and
    "acc", and "cached" (loaded, not trained here).

    Seed 0 with the recipe's steps is shipped with the repository (``SHIPPED_DATE_MODELS``): it is
    loaded from there unless ``retrain=True`` or the retrain switch is off
    (``helpers.cache.use_shipped(False)``, ``ATTENTION_TUTORIAL_RETRAIN=1``), which trains it (or loads
    your own earlier training from the on-disk cache, ``helpers.cache``, if ``cache``).

    ``smoothing`` (encoder-decoder only) replaces notebook 10's label smoothing of 0.1 with another
    value, e.g. 0.0 for the control that trains both models on plain cross-entropy; None keeps it."""
    if kind not in ("encdec", "gpt"):
        raise ValueError(f"train_date_model: kind must be 'encdec' or 'gpt', got {kind!r}")
    if not isinstance(retrain, bool):
        raise TypeError(f"train_date_model: retrain must be True or False, got {retrain!r}")
    if smoothing is not None and (kind != "encdec" or isinstance(smoothing, bool)
                                  or not isinstance(smoothing, int | float) or not 0 <= smoothing < 1):
        raise ValueError(f"train_date_model: smoothing must be None or a number in [0, 1) for the "
                         f"encoder-decoder (the decoder-only model has none), got {smoothing!r} for {kind!r}")
    r = dict(DATE_RECIPE)
    if steps is not None:
        r["steps"] = steps
    task = date_task()
    tok, pairs = task["tok"], task["test_pairs"][: r["eval_dates"]]
    encdec, gpt = make_date_models(seed, device)
    model = encdec if kind == "encdec" else gpt
    if not retrain and shipped_in_use() and seed == 0 and r == DATE_RECIPE and smoothing is None:
        shipped = load_shipped_date_model(kind, model)
        if shipped is not None:
            return shipped

    def record(step, history):
        if step % r["eval_every"] == 0:
            history.setdefault("acc_step", []).append(step)
            history.setdefault("acc", []).append(date_accuracy(model, pairs, tok))

    common = dict(batch_size=r["batch_size"], peak_lr=r["peak_lr"], warmup_steps=r["warmup_steps"], seed=seed,
                  log_every=r["eval_every"], callback=record)
    if kind == "encdec":
        def train():
            return train_seq2seq(model, task["train_pairs"], tok, steps=r["steps"], **common,
                                 **({} if smoothing is None else {"smoothing": float(smoothing)}))
    else:
        def train():
            return train_lm(model, task["x"], task["y"], r["steps"], **common)
    key = {"recipe": r, "model": kind, "seed": seed, "version": 1, "data": tensor_digest(task["x"], task["y"]),
           "eval": hashlib.sha256(json.dumps(pairs).encode()).hexdigest()[:16], "tok": fingerprint(tok)}
    if smoothing is not None:  # the default's key is unchanged, so earlier trainings still load
        key["smoothing"] = float(smoothing)
    return load_or_train(f"dates-{kind}", model, train, key, cache=cache, threads=1)


def train_date_models(seed: int = 0, steps: int | None = None, device=None, cache: bool = True,
                      retrain: bool = False) -> dict:
    """Both models of notebook 12 (``train_date_model``): {"encdec": (model, history), "gpt": (model, history)}."""
    return {kind: train_date_model(kind, seed, steps, device, cache, retrain) for kind in ("encdec", "gpt")}


# ---------------------------------------------------------------- notebook 12, sections 3-7: the toy language
LM_RECIPE = {"steps": 300, "batch_size": 32, "peak_lr": 3e-3, "warmup_steps": 30, "log_every": 25}


@_memo
def toy_lm_data() -> dict:
    """20,000 training sentences and 2,000 validation sentences of the toy language, packed into
    rows of 32 tokens (``pack_sentences``)."""
    train_x, train_y = tl.pack_sentences(map(tl.encode, tl.sentences(20_000, seed=0)), length=32)
    val_texts = tl.sentences(2_000, seed=1)
    val_x, val_y = tl.pack_sentences(map(tl.encode, val_texts), length=32)
    return {"train_x": train_x, "train_y": train_y, "val_texts": val_texts, "val_x": val_x, "val_y": val_y}


def train_toy_lm(seed: int = 0, steps: int | None = None, device=None, cache: bool = True):
    """Notebook 12's word-level GPT (64 wide, 4 heads, 2 blocks, d_ff 256, tied weights) trained
    with ``LM_RECIPE``. Returns (model, history)."""
    data = toy_lm_data()
    device = get_device() if device is None else device
    seed_everything(seed)
    model = GPT(len(tl.VOCAB), d_model=64, num_heads=4, num_layers=2, d_ff=256, max_len=64).to(device)
    r = {**LM_RECIPE, **({} if steps is None else {"steps": steps})}
    return train_lm_cached(lambda: model, data["train_x"], data["train_y"], r["steps"], name=f"toy-lm-s{seed}",
                           cache=cache, batch_size=r["batch_size"], peak_lr=r["peak_lr"],
                           warmup_steps=r["warmup_steps"], seed=seed, log_every=r["log_every"])


# ---------------------------------------------------------------- notebook 13: one option changed at a time
MODERN_RECIPE = {"d_model": 64, "num_heads": 4, "num_layers": 2, "d_ff": 128, "max_len": 128}
MODERN_OPTIONS = {
    "MHA": {},
    "GQA": {"num_kv_heads": 2},
    "MQA": {"num_kv_heads": 1},
    "sinusoidal": {"positions": "sinusoidal"},
    "RoPE": {"positions": "rope"},
    "RoPE + QK-norm": {"positions": "rope", "qk_norm": True},
}
# Notebook 13's controls: sinusoidal positions with the token and position signals of the same
# size (GPT-2's init gives embeddings of about 0.02 per feature; the table is scaled to match), and
# a Llama-style block with Llama 1's 2/3 rule for SwiGLU's width (d_ff = 85 keeps the FFN's
# weights at 3 x 64 x 85, about the 2 x 64 x 128 of the others).
BALANCED_SINUSOIDAL = (1.0, 0.02 * 2 ** 0.5)  # (token_scale, table_scale)
LLAMA_STYLE = {"positions": "rope", "norm": "rms", "activation": "swiglu", "bias": False, "num_kv_heads": 2,
               "tie_weights": False, "d_ff": 85}


@_memo
def modern_data() -> dict:
    """Notebook 12's training rows (32 tokens) and its validation sentences packed into rows of
    32, 64 and 128 tokens (1x, 2x and 4x the trained length); ``probe`` (64 rows of 32) is where
    the largest attention logit is measured during training."""
    lm = toy_lm_data()
    val = {n: tl.pack_sentences(map(tl.encode, lm["val_texts"]), length=n) for n in (32, 64, 128)}
    return {"train_x": lm["train_x"], "train_y": lm["train_y"], "val": val, "val_texts": lm["val_texts"],
            "probe": val[32][0][:64]}


def train_modern(name: str, seed: int = 0, device=None, cache: bool = True, **options):
    """One of notebook 13's models: ``MODERN_RECIPE`` with ``MODERN_OPTIONS[name]`` ("Llama-style":
    ``LLAMA_STYLE``; "sinusoidal, balanced": sinusoidal positions scaled by
    ``BALANCED_SINUSOIDAL``; another name: the ``options`` given), 200 steps of batches of 32 rows. The largest
    attention logit on ``probe`` is recorded every 25 steps in ``history["max_logit"]``.
    Returns (model, history)."""
    if name in MODERN_OPTIONS:
        options = {**MODERN_OPTIONS[name], **options}
    data = modern_data()
    device = get_device() if device is None else device
    probe = data["probe"].to(device)

    if name == "Llama-style":
        options = {**LLAMA_STYLE, **options}
    balanced = name == "sinusoidal, balanced"
    if balanced:
        options = {"positions": "sinusoidal", **options}

    def make():
        seed_everything(seed)
        model = GPT(len(tl.VOCAB), **{**MODERN_RECIPE, **options})
        if balanced:  # both signals about 0.02 per feature (the cache key records it)
            model.positions = SinusoidalPositions(MODERN_RECIPE["max_len"], MODERN_RECIPE["d_model"],
                                                  *BALANCED_SINUSOIDAL)
            model.config["sinusoidal_scales"] = BALANCED_SINUSOIDAL
        return model.to(device)

    def on_log(model, history):
        history.setdefault("max_logit", []).append(max_attention_logit(model, probe))

    tag = "".join(c if c.isalnum() else "-" for c in name)
    return train_lm_cached(make, data["train_x"], data["train_y"], 200, name=f"modern-{tag}-s{seed}",
                           cache=cache, on_log=on_log, batch_size=32, peak_lr=3e-3, warmup_steps=20, seed=seed,
                           log_every=25)
