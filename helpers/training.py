"""Training a sequence-to-sequence Transformer (notebook 10): batches with masks, label-smoothed
cross-entropy, Adam with a warm-up schedule, gradient clipping, and exact-match evaluation.

Everything is step-based and seeded: the same seed and number of steps give the same model on
the same machine, however fast or slow that machine is.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from .attention import padding_mask, target_mask
from .decoding import greedy_decode

__all__ = [
    "Seq2SeqBatch",
    "collate",
    "count_parameters",
    "cross_attention",
    "encode_pairs",
    "exact_match_accuracy",
    "label_smoothed_cross_entropy",
    "translate",
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

    logits (B, L, V), target (B, L). The true class gets 1 - smoothing, and smoothing is spread
    evenly over all V classes (as ``F.cross_entropy(..., label_smoothing=smoothing)`` does).
    """
    if logits.dim() != 3 or target.shape != logits.shape[:2]:
        raise ValueError(f"expected logits (B, L, V) and target (B, L), got logits "
                         f"{tuple(logits.shape)} and target {tuple(target.shape)}")
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    logp = torch.log_softmax(logits.float(), dim=-1)  # (B, L, V)
    nll = -logp.gather(-1, target[..., None]).squeeze(-1)  # (B, L): -log p(true class)
    uniform = -logp.mean(dim=-1)  # (B, L): cross-entropy against the uniform distribution
    loss = (1.0 - smoothing) * nll + smoothing * uniform
    keep = target != pad_id
    return loss[keep].mean()


def warmup_lr(step: int, peak_lr: float, warmup_steps: int, total_steps: int) -> float:
    """Learning rate at ``step`` (0-based): linear warm-up from ~0 to ``peak_lr`` over
    ``warmup_steps``, then cosine decay to 0 at ``total_steps``."""
    if warmup_steps < 0 or total_steps <= warmup_steps:
        raise ValueError(f"need 0 <= warmup_steps < total_steps, got {warmup_steps} and {total_steps}")
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return peak_lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def count_parameters(model: torch.nn.Module) -> int:
    """Number of trainable parameters (shared tensors counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


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
) -> dict[str, list]:
    """Train for exactly ``steps`` steps of Adam (batches drawn by a seeded shuffle).

    Returns a history dict: ``step``, ``loss`` (mean over the last ``log_every`` steps), ``lr``,
    ``grad_norm`` (before clipping), ``seconds`` (wall clock, for information only) and
    ``config`` (the arguments, and whether the model is pre-LN).
    ``callback(step, history)`` runs after each logged step (e.g. to measure accuracy).
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    device = next(model.parameters()).device
    src_all, tgt_all = encode_pairs(train_pairs, tokenizer)  # (N, Ls_max), (N, Lt_max + 1)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=peak_lr, betas=(0.9, 0.98), eps=1e-9)
    history: dict = {"step": [], "loss": [], "lr": [], "grad_norm": [], "seconds": []}
    history["config"] = {"steps": steps, "batch_size": batch_size, "peak_lr": peak_lr,
                         "warmup_steps": warmup_steps, "smoothing": smoothing,
                         "clip_norm": clip_norm, "seed": seed,
                         "norm_first": bool(getattr(model.encoder, "norm", None) is not None)}
    order = torch.randperm(len(src_all), generator=gen)
    pos, running, start = 0, [], time.perf_counter()
    model.train()
    for step in range(steps):
        if pos + batch_size > len(order):  # a new epoch: reshuffle
            order, pos = torch.randperm(len(src_all), generator=gen), 0
        idx = order[pos : pos + batch_size]
        pos += batch_size
        b = _batch_from_ids(src_all[idx], tgt_all[idx], tokenizer.pad_id).to(device)
        lr = warmup_lr(step, peak_lr, warmup_steps, steps)
        for group in opt.param_groups:
            group["lr"] = lr
        logits = model(b.src, b.tgt_in, b.src_mask, b.tgt_mask, need_weights=False)  # (B, Lt, V)
        loss = label_smoothed_cross_entropy(logits, b.tgt_out, tokenizer.pad_id, smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
        running.append(loss.item())
        if (step + 1) % log_every == 0 or step + 1 == steps:
            history["step"].append(step + 1)
            history["loss"].append(sum(running) / len(running))
            history["lr"].append(lr)
            history["grad_norm"].append(float(grad_norm))
            history["seconds"].append(time.perf_counter() - start)
            running = []
            if callback is not None:
                callback(step + 1, history)
                model.train()
    model.eval()
    return history


def translate(model, sources: Sequence[str], tokenizer, max_len: int = 12,
              batch_size: int = 500) -> list[str]:
    """Greedy translations of source strings (batched), as text."""
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
    preds = translate(model, [s for s, _ in pairs], tokenizer, max_len, batch_size)
    correct = sum(p == t for p, (_, t) in zip(preds, pairs, strict=True))
    return correct / len(pairs), preds


def cross_attention(model, tokenizer, source: str, max_len: int = 12):
    """Translate one source string greedily and return what each decoder layer's cross-attention
    looked at while producing it.

    Returns ``(translation, src_labels, out_labels, weights)``: ``weights`` is a list (one per
    decoder layer) of (num_heads, Lt, Ls) tensors, row t being the query that produced output
    token t (``out_labels[t]``, the last one ``<eos>`` when the model stopped).
    Raises ValueError for text the tokenizer cannot encode (or an empty string).
    """
    if not isinstance(source, str) or not source:
        raise ValueError(f"source must be a non-empty string, got {source!r}")
    device = next(model.parameters()).device
    src = torch.tensor([tokenizer.encode(source)], device=device)  # (1, Ls)
    ys = greedy_decode(model, src, max_len, tokenizer.bos_id, tokenizer.eos_id)  # (1, <= max_len)
    tgt_in = ys[:, :-1]  # (1, Lt): bos + all output tokens but the last
    with torch.no_grad():
        was_training = model.training
        model.eval()
        model(src, tgt_in, None, target_mask(tgt_in), need_weights=True)
        model.train(was_training)
    weights = [layer.cross_attn.attn_weights[0].cpu() for layer in model.decoder.layers]
    out_labels = [tokenizer.itos[i] for i in ys[0, 1:].tolist()]
    return tokenizer.decode(ys[0].tolist()), list(source), out_labels, weights
