"""Greedy decoding and beam search for the helpers ``Transformer`` (notebooks 09-11)."""

from __future__ import annotations

import torch

from . import _checks
from .attention import causal_mask

__all__ = ["beam_search", "greedy_decode"]


class _eval_mode:
    """Run a block with the model in eval mode and no gradients, then restore its mode."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.was_training = self.model.training
        self.model.eval()
        self.no_grad = torch.no_grad()
        self.no_grad.__enter__()

    def __exit__(self, *exc):
        self.no_grad.__exit__(*exc)
        self.model.train(self.was_training)


def _check_src(src, max_len, where="greedy_decode"):
    _checks.tensor(where, "src", src, "token ids of shape (B, Ls)")
    if src.dim() != 2:
        raise ValueError(f"src must be token ids of shape (B, Ls), got {tuple(src.shape)}")
    max_len = _checks.as_int(where, "max_len", max_len)
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")


def _check_ids(where, model, bos_id, eos_id):
    """bos_id is a target token id (inside the vocabulary of a model with ``tgt_embed``); eos_id
    is an int (one outside the vocabulary, e.g. -1, never comes: decoding runs to max_len)."""
    vocab = getattr(getattr(model, "tgt_embed", None), "num_embeddings", None)
    bos_id = _checks.as_int(where, "bos_id", bos_id, minimum=0)
    if vocab is not None and bos_id >= vocab:
        raise ValueError(f"{where}: bos_id must be a target token id in 0..{vocab - 1}, got {bos_id}")
    _checks.as_int(where, "eos_id", eos_id)


def greedy_decode(model, src, max_len, bos_id, eos_id, src_mask=None, use_cache=False):
    """Pick the most likely next token, one step at a time.

    src (B, Ls) -> LongTensor (B, <= max_len) that starts with ``bos_id``; decoding stops once
    every row has produced ``eos_id`` (positions after a row's eos are filled with eos).
    ``use_cache=True`` feeds one new token per step and reuses each layer's keys and values
    (notebook 11); the ids are identical either way.
    """
    _check_src(src, max_len, "greedy_decode")
    _check_ids("greedy_decode", model, bos_id=bos_id, eos_id=eos_id)
    _checks.as_bool("greedy_decode", "use_cache", use_cache)
    with _eval_mode(model):
        memory = model.encode(src, src_mask)  # (B, Ls, d_model)
        ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        cache = model.new_cache() if use_cache else None
        for _ in range(max_len - 1):
            if use_cache:
                logits = model.decode(ys[:, -1:], memory, src_mask, cache=cache)  # (B, 1, V)
            else:
                tgt_mask = causal_mask(ys.shape[1], device=src.device)  # (Lt, Lt)
                logits = model.decode(ys, memory, src_mask, tgt_mask)  # (B, Lt, V)
            next_id = logits[:, -1].argmax(dim=-1)  # (B,)
            next_id = next_id.masked_fill(done, eos_id)
            ys = torch.cat([ys, next_id[:, None]], dim=1)  # (B, Lt + 1)
            done |= next_id == eos_id
            if done.all():
                break
    return ys


def beam_search(model, src, beam_size, max_len, bos_id, eos_id, src_mask=None,
                length_penalty=0.0):
    """Keep the ``beam_size`` most likely partial outputs at every step.

    Supports a batch of one sentence: src (1, Ls) -> LongTensor (1, <= max_len) starting with
    ``bos_id``. Hypotheses are ranked by total log-probability divided by length**length_penalty
    (0.0, the default, ranks by plain log-probability, so ``beam_size=1`` equals greedy decoding).
    A beam larger than the vocabulary is fine: each hypothesis then proposes every token.
    """
    _check_src(src, max_len, "beam_search")
    _check_ids("beam_search", model, bos_id=bos_id, eos_id=eos_id)
    beam_size = _checks.as_int("beam_search", "beam_size", beam_size)
    length_penalty = _checks.as_float("beam_search", "length_penalty", length_penalty)
    if src.shape[0] != 1:
        raise ValueError(f"beam_search decodes one sentence at a time: src must be (1, Ls), got "
                         f"{tuple(src.shape)}")
    if beam_size < 1:
        raise ValueError(f"beam_size must be >= 1, got {beam_size}")

    def score(logp, length):
        return logp / (length ** length_penalty)

    with _eval_mode(model):
        memory = model.encode(src, src_mask)  # (1, Ls, d_model)
        beams = [([bos_id], 0.0)]  # (tokens, total log-probability)
        finished = []
        for _ in range(max_len - 1):
            ys = torch.tensor([t for t, _ in beams], device=src.device)  # (k, Lt)
            mem = memory.expand(len(beams), -1, -1)  # (k, Ls, d_model)
            mask = None if src_mask is None else src_mask.expand(len(beams), *src_mask.shape[1:])
            logits = model.decode(ys, mem, mask, causal_mask(ys.shape[1], device=src.device))
            logp = torch.log_softmax(logits[:, -1].float(), dim=-1)  # (k, V)
            candidates = []
            for (tokens, total), row in zip(beams, logp, strict=True):
                top = torch.topk(row, min(beam_size, row.numel()))  # at most |V| per hypothesis
                for lp, idx in zip(top.values.tolist(), top.indices.tolist(), strict=True):
                    candidates.append((tokens + [idx], total + lp))
            candidates.sort(key=lambda c: score(c[1], len(c[0])), reverse=True)
            beams = []
            for tokens, total in candidates:
                if tokens[-1] == eos_id:
                    finished.append((tokens, total))
                else:
                    beams.append((tokens, total))
                if len(beams) == beam_size:
                    break
            best_finished = max((score(t, len(s)) for s, t in finished), default=float("-inf"))
            best_open = max((score(t, len(s)) for s, t in beams), default=float("-inf"))
            if not beams or best_finished >= best_open:
                break
        pool = finished + beams
        tokens, _ = max(pool, key=lambda c: score(c[1], len(c[0])))
    return torch.tensor([tokens], dtype=torch.long, device=src.device)
