"""How every model of the tutorial is trained: one loop, three uses.

``train_loop`` is the step every training shares: draw a batch, compute the loss, set the
learning rate of the warm-up-then-cosine schedule (``warmup_lr``), backpropagate, clip the gradient,
take an optimiser step, and log the mean loss every ``log_every`` steps. On top of it:

- ``train_seq2seq`` (notebooks 09–10): an encoder–decoder on (source, target) text pairs, with
  padded batches and their masks (``collate``), label-smoothed cross-entropy and Adam;
- ``train_lm`` (notebooks 12–13): a decoder-only language model on rows of token ids, with
  ``train_lm_cached`` keeping the trained model on disk (``helpers.cache``);
- ``train_induction_model`` (notebook 14): the attention-only model on repeated random tokens,
  measuring its heads as it learns.

Everything is step-based and seeded: the same seed and number of steps give the same model on
the same machine, however fast or slow that machine is. Notebook 10's recipe, built on
``train_seq2seq``, is ``helpers.translator``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks
from ._checks import int_at_least
from ._progress import progress as progress_line
from .attention import padding_mask, target_mask
from .cache import check_name, fingerprint, load_or_train, tensor_digest
from .data.repeated import repeated_tokens
from .induction import AttentionOnlyTransformer, head_scores, per_position_loss

__all__ = [
    "Seq2SeqBatch",
    "collate",
    "count_parameters",
    "encode_pairs",
    "label_smoothed_cross_entropy",
    "train_induction_model",
    "train_lm",
    "train_lm_cached",
    "train_loop",
    "train_seq2seq",
    "warmup_lr",
]


@dataclass
class Seq2SeqBatch:
    """One padded batch. Masks are boolean, True = may attend.

    src (B, Ls), tgt_in (B, Lt) = bos + target, tgt_out (B, Lt) = target + eos (the labels),
    src_mask (B, 1, 1, Ls), tgt_mask (B, 1, Lt, Lt).
    """

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    src_mask: torch.Tensor
    tgt_mask: torch.Tensor

    def to(self, device) -> Seq2SeqBatch:
        return Seq2SeqBatch(*(t.to(device) for t in (self.src, self.tgt_in, self.tgt_out,
                                                      self.src_mask, self.tgt_mask)))


def _pad(seqs: Sequence[Sequence[int]], pad_id: int) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_id] * (width - len(s)) for s in seqs],
                        dtype=torch.long)  # (B, max length)


def collate(pairs: Sequence[tuple[str, str]], tokenizer) -> Seq2SeqBatch:
    """(source, target) string pairs -> a padded ``Seq2SeqBatch`` with its masks."""
    if len(pairs) == 0:
        raise ValueError("collate needs at least one (source, target) pair, got an empty list")
    src = _pad([tokenizer.encode(s) for s, _ in pairs], tokenizer.pad_id)  # (B, Ls)
    tgt = _pad([tokenizer.encode(t, add_bos=True, add_eos=True) for _, t in pairs],
               tokenizer.pad_id)  # (B, Lt + 1)
    return _batch_from_ids(src, tgt, tokenizer.pad_id)


def _batch_from_ids(src: torch.Tensor, tgt: torch.Tensor, pad_id: int) -> Seq2SeqBatch:
    # Trim columns that are padding in every row (pre-encoded data is padded to the longest pair).
    src = src[:, : int((src != pad_id).sum(1).max())]
    tgt = tgt[:, : int((tgt != pad_id).sum(1).max())]
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]  # (B, Lt) each: shifted by one
    return Seq2SeqBatch(src, tgt_in, tgt_out, padding_mask(src, pad_id), target_mask(tgt_in, pad_id))


def encode_pairs(pairs: Sequence[tuple[str, str]], tokenizer) -> tuple[torch.Tensor, torch.Tensor]:
    """Encode a whole data set once: (N, Ls_max) source ids and (N, Lt_max + 1) bos+target+eos ids."""
    batch = collate(pairs, tokenizer)
    return batch.src, torch.cat([batch.tgt_in, batch.tgt_out[:, -1:]], dim=1)


def label_smoothed_cross_entropy(logits: torch.Tensor, target: torch.Tensor, pad_id: int,
                                 smoothing: float = 0.1) -> torch.Tensor:
    """Mean cross-entropy over non-pad positions against a smoothed target distribution.

    logits (B, L, V), target (B, L) of ids in 0..V-1, padding marked by ``pad_id``. The true class
    gets 1 - smoothing, and smoothing is spread evenly over all V classes (as
    ``F.cross_entropy(..., label_smoothing=smoothing)`` does). If every target is padding there is
    nothing to learn from: the loss is 0 (with a gradient of zeros), where PyTorch's own returns NaN.
    """
    if logits.dim() != 3 or target.shape != logits.shape[:2]:
        raise ValueError(f"expected logits (B, L, V) and target (B, L), got logits "
                         f"{tuple(logits.shape)} and target {tuple(target.shape)}")
    if target.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"target must hold integer class ids, got {target.dtype}")
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    n_classes = logits.shape[-1]
    keep = target != pad_id
    if keep.any() and (int(target[keep].min()) < 0 or int(target[keep].max()) >= n_classes):
        lo, hi = int(target[keep].min()), int(target[keep].max())
        raise ValueError(
            f"target holds ids {lo}..{hi}, but logits have {n_classes} classes (ids 0.."
            f"{n_classes - 1}); padding is marked with pad_id={pad_id}, not with -100 "
            f"(PyTorch's ignore_index): replace those labels by pad_id")
    logp = torch.log_softmax(logits.float(), dim=-1)  # (B, L, V)
    safe = target.masked_fill(~keep, 0).long()  # padding rows gather class 0, then are dropped
    nll = -logp.gather(-1, safe[..., None]).squeeze(-1)  # (B, L): -log p(true class)
    uniform = -logp.mean(dim=-1)  # (B, L): cross-entropy against the uniform distribution
    loss = (1.0 - smoothing) * nll + smoothing * uniform
    return (loss * keep).sum() / keep.sum().clamp(min=1)


def warmup_lr(step: int, peak_lr: float, warmup_steps: int, total_steps: int) -> float:
    """Learning rate at ``step`` (0-based): linear warm-up from ~0 to ``peak_lr`` over
    ``warmup_steps``, then cosine decay to 0 at ``total_steps``."""
    where = "warmup_lr"
    step = _checks.as_int(where, "step", step, minimum=0)
    peak_lr = _checks.as_float(where, "peak_lr", peak_lr, low=0.0)
    warmup_steps = _checks.as_int(where, "warmup_steps", warmup_steps)
    total_steps = _checks.as_int(where, "total_steps", total_steps)
    if warmup_steps < 0 or total_steps <= warmup_steps:
        raise ValueError(f"need 0 <= warmup_steps < total_steps, got {warmup_steps} and {total_steps}")
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return peak_lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def count_parameters(model: torch.nn.Module) -> int:
    """Number of trainable parameters (shared tensors counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _check_schedule(where: str, steps: int, peak_lr, warmup_steps, clip_norm, callback,
                    no_clipping: bool = True) -> None:
    """The arguments ``train_loop`` hands to ``warmup_lr`` and the optimiser, checked before any
    work: a learning rate that is a finite number > 0, a warm-up shorter than the run, a clipping
    norm > 0 (or None: no clipping, where ``no_clipping``), a callback that can be called."""
    lr = _checks.as_float(where, "peak_lr", peak_lr)
    if lr <= 0:
        raise ValueError(f"{where}: peak_lr must be a finite number > 0, got {lr:g}")
    warmup = _checks.as_int(where, "warmup_steps", warmup_steps, minimum=0)
    if warmup >= steps:
        raise ValueError(f"{where}: warmup_steps must be < steps (the warm-up ends before training "
                         f"does), got warmup_steps={warmup} and steps={steps}")
    if clip_norm is not None or not no_clipping:
        if isinstance(clip_norm, bool) or not isinstance(clip_norm, int | float) \
                or math.isnan(clip_norm) or clip_norm <= 0:
            wanted = "None (no clipping) or a number > 0" if no_clipping else "a number > 0"
            raise ValueError(f"{where}: clip_norm must be {wanted} (the largest gradient norm kept), "
                             f"got {_checks.got(clip_norm)}")
    if callback is not None and not callable(callback):
        raise TypeError(f"{where}: callback must be None or a function callback(step, history), got "
                        f"{_checks.got(callback)}")


def _check_steps(**values) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")


def train_loop(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Iterator,
               loss_of: Callable[[object], torch.Tensor], steps: int, peak_lr: float,
               warmup_steps: int, clip_norm: float | None = 1.0, log_every: int = 50,
               callback: Callable[[int, dict], None] | None = None,
               history: dict | None = None) -> dict:
    """The training step every model here shares, ``steps`` times.

    Each step takes the next batch from ``batches``, computes ``loss_of(batch)`` (a scalar
    tensor), sets the learning rate ``warmup_lr(step, peak_lr, warmup_steps, steps)``,
    backpropagates, clips the gradient norm to ``clip_norm`` (None: no clipping) and updates.
    Every ``log_every`` steps (and after the last) it appends to ``history``: ``step``, ``loss``
    (the mean over those steps), ``lr``, ``seconds`` (wall clock, for information only) and, if
    ``history`` has a ``grad_norm`` list, the gradient norm before clipping; then it calls
    ``callback(step, history)``. Returns ``history``, the model in eval mode.

    In a notebook, a progress line shows the step and the loss while it runs, and is blank again
    when it ends (``helpers._progress``): the stored output does not depend on how long it took.
    """
    if history is None:
        history = {"step": [], "loss": [], "lr": [], "seconds": []}
    with progress_line(type(model).__name__) as bar:
        return _train_steps(model, optimizer, batches, loss_of, steps, peak_lr, warmup_steps, clip_norm,
                            log_every, callback, history, bar)


def _train_steps(model, optimizer, batches, loss_of, steps, peak_lr, warmup_steps, clip_norm, log_every,
                 callback, history, bar) -> dict:
    running, start = [], time.perf_counter()
    model.train()
    for step in range(steps):
        batch = next(batches)
        lr = warmup_lr(step, peak_lr, warmup_steps, steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        loss = loss_of(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = (torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
                     if clip_norm is not None else None)
        optimizer.step()
        running.append(loss.item())
        bar.update(step + 1, steps, sum(running) / len(running))
        if (step + 1) % log_every == 0 or step + 1 == steps:
            history["step"].append(step + 1)
            history["loss"].append(sum(running) / len(running))
            history["lr"].append(lr)
            if "grad_norm" in history:
                history["grad_norm"].append(float(grad_norm))
            history["seconds"].append(time.perf_counter() - start)
            running = []
            if callback is not None:
                callback(step + 1, history)
                model.train()
    model.eval()
    return history


def train_seq2seq(
    model: torch.nn.Module,
    train_pairs: Sequence[tuple[str, str]],
    tokenizer,
    steps: int,
    batch_size: int = 256,
    peak_lr: float = 2e-3,
    warmup_steps: int = 100,
    smoothing: float = 0.1,
    clip_norm: float = 1.0,
    seed: int = 0,
    log_every: int = 50,
    callback: Callable[[int, dict], None] | None = None,
    length_buckets: int = 1,
    augment: Callable[[torch.Tensor, torch.Generator], torch.Tensor] | None = None,
) -> dict[str, list]:
    """Train for exactly ``steps`` steps of Adam (batches drawn by a seeded shuffle).

    Returns a history dict: ``step``, ``loss`` (mean over the last ``log_every`` steps), ``lr``,
    ``grad_norm`` (before clipping), ``seconds`` (wall clock, for information only) and
    ``config`` (the arguments, and whether the model is pre-LN).
    ``callback(step, history)`` runs after each logged step (e.g. to measure accuracy).
    ``length_buckets=k`` > 1 draws k batches' worth of pairs at a time, sorts them by source length
    and cuts them into batches (in shuffled order): less padding, so each step costs less.
    ``augment(src, generator)``, if given, changes each batch's source ids (B, Ls) before the
    step (e.g. a random augmentation), drawing its randomness from the run's
    seeded generator.
    """
    _check_steps(steps=steps, batch_size=batch_size, log_every=log_every,
                 length_buckets=length_buckets)
    if len(train_pairs) == 0:
        raise ValueError("train_pairs is empty: give at least one (source, target) pair")
    _check_schedule("train_seq2seq", steps, peak_lr, warmup_steps, clip_norm, callback,
                    no_clipping=False)  # it logs the gradient norm, which clipping computes
    device = next(model.parameters()).device
    src_all, tgt_all = encode_pairs(train_pairs, tokenizer)  # (N, Ls_max), (N, Lt_max + 1)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=peak_lr, betas=(0.9, 0.98), eps=1e-9,
                           foreach=True)  # one call per step for all tensors: the same bits, less overhead
    history: dict = {"step": [], "loss": [], "lr": [], "grad_norm": [], "seconds": []}
    history["config"] = {"steps": steps, "batch_size": batch_size, "peak_lr": peak_lr,
                         "warmup_steps": warmup_steps, "smoothing": smoothing,
                         "clip_norm": clip_norm, "seed": seed, "length_buckets": length_buckets,
                         "norm_first": bool(getattr(model.encoder, "norm", None) is not None)}
    src_len = (src_all != tokenizer.pad_id).sum(1)  # (N,)
    batch_size = min(batch_size, len(src_all))
    pool = min(batch_size * length_buckets, len(src_all))

    def indices():  # index tensors of one batch each, forever (a new shuffle every epoch)
        while True:
            order = torch.randperm(len(src_all), generator=gen)
            for i in range(0, len(order) - pool + 1, pool):
                chunk = order[i : i + pool]
                if length_buckets > 1:  # sort by source length (stable), then shuffle the batches
                    chunk = chunk[torch.sort(src_len[chunk], stable=True).indices]
                    parts = list(chunk.split(batch_size))
                    for j in torch.randperm(len(parts), generator=gen).tolist():
                        yield parts[j]
                else:
                    yield chunk

    def batches():  # padded batches with their masks, on the model's device
        for idx in indices():
            src = src_all[idx] if augment is None else augment(src_all[idx], gen)
            yield _batch_from_ids(src, tgt_all[idx], tokenizer.pad_id).to(device)

    def loss_of(b: Seq2SeqBatch) -> torch.Tensor:
        logits = model(b.src, b.tgt_in, b.src_mask, b.tgt_mask, need_weights=False)  # (B, Lt, V)
        return label_smoothed_cross_entropy(logits, b.tgt_out, tokenizer.pad_id, smoothing)

    return train_loop(model, opt, batches(), loss_of, steps, peak_lr, warmup_steps, clip_norm,
                      log_every, callback, history)


def _check_lm_args(model, inputs, targets, steps, batch_size, log_every, seed) -> None:
    where = "train_lm"
    if not isinstance(model, nn.Module) or next(model.parameters(), None) is None:
        raise TypeError(f"{where}: model must be an nn.Module with parameters (e.g. a GPT), got "
                        f"{_checks.got(model)}")
    for name, t in (("inputs", inputs), ("targets", targets)):
        _checks.tensor(where, name, t, "a tensor of token ids (N, L)")
        if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
            raise TypeError(f"{where}: {name} must hold integer token ids (torch.long), got dtype {t.dtype}")
    if inputs.shape != targets.shape or inputs.dim() != 2:
        raise ValueError(f"inputs and targets must both be (N, L), got {tuple(inputs.shape)} and "
                         f"{tuple(targets.shape)}")
    if inputs.shape[0] == 0 or inputs.shape[1] == 0:
        raise ValueError(f"{where}: inputs must hold at least one row of at least one token (N, L), "
                         f"got shape {tuple(inputs.shape)}")
    vocab = getattr(model, "vocab_size", None)
    if isinstance(vocab, int):
        scored = targets[targets != -100]
        if scored.numel() and (int(scored.min()) < 0 or int(scored.max()) >= vocab):
            raise ValueError(f"{where}: targets hold ids {int(scored.min())}..{int(scored.max())}, but the "
                             f"model's vocabulary has {vocab} tokens (ids 0..{vocab - 1}; -100 = not scored)")
    steps = _checks.as_int(where, "steps", steps, minimum=1)
    _checks.as_int(where, "batch_size", batch_size, minimum=1)
    _checks.as_int(where, "log_every", log_every, minimum=1)
    _checks.as_int(where, "seed", seed)


def train_lm(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor, steps: int,
             batch_size: int = 64, peak_lr: float = 3e-3, warmup_steps: int = 50, clip_norm: float = 1.0,
             seed: int = 0, log_every: int = 50,
             callback: Callable[[int, dict], None] | None = None) -> dict[str, list]:
    """Next-token training: ``inputs`` (N, L) ids, ``targets`` (N, L) the ids to predict at each
    position (-100 = not scored). ``steps`` of AdamW with warm-up and cosine decay (``warmup_lr``),
    batches drawn by a seeded shuffle. Returns ``step``, ``loss`` (mean over the last
    ``log_every`` steps), ``lr`` and ``seconds`` (wall clock, for information only).
    """
    _check_lm_args(model, inputs, targets, steps, batch_size, log_every, seed)
    _check_schedule("train_lm", steps, peak_lr, warmup_steps, clip_norm, callback)
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, betas=(0.9, 0.98), weight_decay=0.0)

    def batches():  # (inputs, targets) of one batch each, forever (a new shuffle every epoch)
        order, pos = torch.randperm(len(inputs), generator=gen), 0
        while True:
            if pos + batch_size > len(order):  # a new epoch: reshuffle
                order, pos = torch.randperm(len(inputs), generator=gen), 0
            idx = order[pos: pos + batch_size]
            pos += batch_size
            yield inputs[idx].to(device), targets[idx].to(device)  # (B, L) each

    def loss_of(batch) -> torch.Tensor:
        x, y = batch
        logits = model(x)  # (B, L, |V|)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100)

    return train_loop(model, opt, batches(), loss_of, steps, peak_lr, warmup_steps, clip_norm,
                      log_every, callback)


def train_lm_cached(make_model: Callable[[], nn.Module], inputs: torch.Tensor, targets: torch.Tensor,
                    steps: int, name: str = "lm", cache: bool = True,
                    on_log: Callable[[nn.Module, dict], None] | None = None, threads: int | None = 1,
                    **train_kwargs):
    """``train_lm`` with the on-disk cache of trained models (``helpers.cache``).

    ``make_model()`` builds the freshly initialised model (seed it inside). The key covers all
    that changes the trained weights: the model's ``config``, its initial weights, the data,
    ``steps`` and the other ``train_lm`` arguments, the torch version, the device and the number of
    threads; a changed recipe trains again. ``on_log(model, history)`` runs at every log step (e.g.
    to record a measurement in ``history``). Returns ``(model, history)``, the model in eval mode;
    ``history["cached"]`` says whether it was loaded. Parallel runs asking for the same model train
    it once (``helpers.cache.load_or_train``).

    ``threads`` CPU threads train the model (None: torch's current setting), then the setting is
    restored. The default, 1, is the fastest for models this small (on a busy machine, 2 threads
    were measured 30x slower per step), and it gives the same weights whatever OMP_NUM_THREADS is.
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"train_lm_cached: threads must be None or an int >= 1, got {threads!r}")
    check_name("train_lm_cached", name)
    if not callable(make_model) or isinstance(make_model, nn.Module):
        raise TypeError(f"train_lm_cached: make_model must be a function that builds a fresh model "
                        f"(e.g. lambda: GPT(...)), got {_checks.got(make_model)}")
    model = make_model()
    key = {"config": getattr(model, "config", repr(model)), "steps": steps,
           "train": fingerprint(dict(sorted(train_kwargs.items()))),
           "data": tensor_digest(inputs, targets)}
    callback = None if on_log is None else (lambda step, history: on_log(model, history))
    return load_or_train(f"gpt-{name}", model,
                         lambda: train_lm(model, inputs, targets, steps, callback=callback,
                                          **train_kwargs), key, cache=cache, threads=threads)


def train_induction_model(num_layers: int = 2, steps: int = 600, seed: int = 0,
                          vocab_size: int = 64, n_range: tuple[int, int] = (8, 16),
                          d_model: int = 64, num_heads: int = 2, batch_size: int = 32,
                          peak_lr: float = 3e-3, eval_every: int = 20, eval_n: int = 12,
                          device=None, cache: bool = False):
    """Train an AttentionOnlyTransformer on repeated random tokens; returns (model, history).

    The period n is drawn from ``n_range`` for each batch. Every ``eval_every`` steps the history
    records, on one fixed evaluation batch of period ``eval_n``: the loss on the first half and
    on the repeated half, and every head's previous-token and induction scores.
    With ``cache=True`` the trained model is kept on disk and loaded the next time the same
    arguments are asked for (notebook 14, its solutions and tests/conclusions share it);
    ``history["cached"]`` says which happened, and ``history["seconds"]`` is then the time the
    original training took. It trains on one CPU thread (then restores torch's setting): as fast
    for a model this small, and the weights do not depend on OMP_NUM_THREADS.
    """
    int_at_least("train_induction_model", "steps", steps, 1)
    int_at_least("train_induction_model", "eval_every", eval_every, 1)
    lo, hi = n_range
    int_at_least("train_induction_model", "n_range[0]", lo, 2)
    if hi < lo or 2 * max(hi, eval_n) > 64:
        raise ValueError(f"train_induction_model: n_range must be (lo, hi) with 2 <= lo <= hi <= 32, got {n_range}")
    device = torch.device(device or "cpu")
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(vocab_size, d_model, num_heads, num_layers).to(device)
    key = {"num_layers": num_layers, "steps": steps, "seed": seed, "vocab_size": vocab_size,
           "n_range": list(n_range), "batch_size": batch_size, "peak_lr": peak_lr,
           "eval_every": eval_every, "eval_n": eval_n}

    def fit() -> dict:
        return _fit_induction(model, steps, seed, vocab_size, (lo, hi), batch_size, peak_lr,
                              eval_every, eval_n, device)

    model, history = load_or_train("induction", model, fit, key, cache=cache, threads=1)
    if not cache:
        history.pop("cached")
    return model, history


def _fit_induction(model, steps, seed, vocab_size, n_range, batch_size, peak_lr, eval_every,
                   eval_n, device) -> dict:
    """train_induction_model's work: trains ``model`` in place with ``train_loop``, measuring it
    on one fixed evaluation batch before the first step and every ``eval_every`` steps."""
    lo, hi = n_range
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    eval_ids = repeated_tokens(256, eval_n, vocab_size, torch.Generator().manual_seed(seed + 1)).to(device)
    history = {"step": [], "first_half": [], "repeated_half": [], "per_position": [],
               "previous": [], "induction": []}

    def evaluate(step: int, _log=None) -> None:
        model.eval()
        loss = per_position_loss(model, eval_ids)  # (2n-1,)
        scores = head_scores(model, eval_ids, eval_n)
        history["step"].append(step)
        history["first_half"].append(loss[:eval_n - 1].mean().item())
        history["repeated_half"].append(loss[eval_n:].mean().item())
        history["per_position"].append(loss.cpu())
        history["previous"].append(scores["previous"].cpu())
        history["induction"].append(scores["induction"].cpu())

    def batches():  # a new period n for every batch
        while True:
            n = int(torch.randint(lo, hi + 1, (1,), generator=gen))
            yield repeated_tokens(batch_size, n, vocab_size, gen).to(device)  # (B, 2n)

    def loss_of(ids: torch.Tensor) -> torch.Tensor:
        logits = model(ids[:, :-1])  # (B, 2n-1, V)
        return F.cross_entropy(logits.transpose(1, 2), ids[:, 1:])

    start = time.perf_counter()
    evaluate(0)
    train_loop(model, opt, batches(), loss_of, steps, peak_lr, warmup_steps=steps // 20 + 1,
               clip_norm=None, log_every=eval_every, callback=evaluate)
    history["seconds"] = time.perf_counter() - start
    history["chance"] = math.log(vocab_size)
    return history
