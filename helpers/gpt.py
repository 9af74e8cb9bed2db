"""A decoder-only Transformer language model, GPT-style (notebook 12).

Structure (each part a module attribute, so that a later notebook can swap one):

    ids (B, L) -> tok_embed -> positions (adds position information; the ``positions`` hook)
               -> dropout -> blocks[0] ... blocks[num_layers - 1] (GPTBlock, pre-LN)
               -> norm (final LayerNorm) -> lm_head (tied to tok_embed by default) -> logits (B, L, |V|)

A ``GPTBlock`` is notebook 08's decoder layer without cross-attention, i.e. notebook 07's pre-LN
encoder layer run with a causal mask: x = x + SelfAttn(LN(x)); x = x + FFN(LN(x)). It subclasses
``EncoderLayer`` (same parameters) and adds a key/value cache for generation (notebook 11).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .attention import KVCache, causal_mask
from .layers import EncoderLayer
from .sampling import sample_next
from .training import warmup_lr

__all__ = ["GPT", "GPTBlock", "LearnedPositions", "complete_greedy", "train_lm"]


class LearnedPositions(nn.Module):
    """Adds a learned vector per position (GPT-2's choice): x (B, L, d_model) -> x + P[start:start+L]."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = max_len
        self.embed = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        length = x.shape[1]
        if start + length > self.max_len:
            raise ValueError(f"positions {start}..{start + length - 1} do not fit max_len={self.max_len}")
        pos = torch.arange(start, start + length, device=x.device)  # (L,)
        return x + self.embed(pos)  # (B, L, d_model)


class GPTBlock(EncoderLayer):
    """Pre-LN decoder block without cross-attention: causal self-attention, then feed-forward,
    each inside a residual connection. Same parameters as ``EncoderLayer(norm_first=True)``."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = False,
                cache: KVCache | None = None) -> torch.Tensor:
        h = self.norm1(x)  # (B, L, d_model)
        x = x + self.dropout1(self.self_attn(h, h, h, mask, need_weights=need_weights, cache=cache))
        return x + self._ff(self.norm2(x))  # (B, L, d_model)


class GPT(nn.Module):
    """A decoder-only language model: ``forward(ids (B, L)) -> logits (B, L, vocab_size)``.

    ``tie_weights=True`` uses the token embedding matrix as the output layer's weight (one
    (|V|, d_model) matrix instead of two). ``generate`` continues prompts token by token.
    """

    def __init__(self, vocab_size: int, d_model: int = 128, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int = 512, max_len: int = 128, dropout: float = 0.0, tie_weights: bool = True):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("num_layers", num_layers),
                            ("max_len", max_len)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self.vocab_size, self.d_model, self.max_len = vocab_size, d_model, max_len
        self.tok_embed = nn.Embedding(vocab_size, d_model)
        self.positions = LearnedPositions(max_len, d_model)  # the position hook: (x, start) -> x
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(GPTBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_embed.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # GPT-2's initialisation: small normal weights, zero biases.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def _check_ids(self, ids) -> None:
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[1] < 1:
            got = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"ids must be token ids of shape (B, L) with L >= 1, got {got}")
        if ids.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"ids must hold integer token ids (torch.long), got {ids.dtype}")
        if int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size:
            raise ValueError(f"ids hold values in {int(ids.min())}..{int(ids.max())}, but the vocabulary "
                             f"has {self.vocab_size} tokens (ids 0..{self.vocab_size - 1})")

    def new_cache(self) -> list[KVCache]:
        """One empty key/value cache per block, for ``forward(..., cache=...)``."""
        return [KVCache() for _ in self.blocks]

    def forward(self, ids: torch.Tensor, cache: list[KVCache] | None = None,
                need_weights: bool = False) -> torch.Tensor:
        """ids (B, L) -> logits (B, L, vocab_size). With a ``cache``, ``ids`` are the new tokens:
        their positions continue after the cached ones, and they attend to the cache too."""
        self._check_ids(ids)
        start = 0 if cache is None else len(cache[0])
        length = ids.shape[1]
        if start + length > self.max_len:
            raise ValueError(f"a sequence of {start + length} tokens is longer than max_len={self.max_len}")
        x = self.dropout(self.positions(self.tok_embed(ids), start))  # (B, L, d_model)
        mask = None
        if length > 1:  # one new token may see everything cached: no mask needed
            mask = causal_mask(start + length, device=ids.device)[start:]  # (L, start + L)
        for i, block in enumerate(self.blocks):
            x = block(x, mask, need_weights=need_weights, cache=None if cache is None else cache[i])
        return self.lm_head(self.norm(x))  # (B, L, vocab_size)

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, use_cache: bool = True,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Continue the prompts ``ids`` (B, L0) by ``max_new_tokens`` sampled tokens ->
        (B, L0 + max_new_tokens). ``temperature=0`` is greedy. With ``use_cache`` each step feeds
        only the newest token and reuses the cached keys and values (same ids, less work)."""
        self._check_ids(ids)
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
        if ids.shape[1] + max_new_tokens > self.max_len:
            raise ValueError(f"a prompt of {ids.shape[1]} tokens plus {max_new_tokens} new ones is longer "
                             f"than max_len={self.max_len}")
        was_training = self.training
        self.eval()
        cache = self.new_cache() if use_cache else None
        step_input = ids
        for _ in range(max_new_tokens):
            logits = self(step_input if use_cache else ids, cache=cache)[:, -1]  # (B, |V|)
            nxt = sample_next(logits, temperature, top_k, top_p, generator)  # (B,)
            ids = torch.cat([ids, nxt[:, None]], dim=1)  # (B, L + 1)
            step_input = nxt[:, None]  # (B, 1)
        self.train(was_training)
        return ids


def train_lm(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor, steps: int,
             batch_size: int = 64, peak_lr: float = 3e-3, warmup_steps: int = 50, clip_norm: float = 1.0,
             seed: int = 0, log_every: int = 50,
             callback: Callable[[int, dict], None] | None = None) -> dict[str, list]:
    """Next-token training: ``inputs`` (N, L) ids, ``targets`` (N, L) the ids to predict at each
    position (-100 = not scored). ``steps`` of AdamW with warm-up and cosine decay (``warmup_lr``),
    batches drawn by a seeded shuffle. Returns ``step``, ``loss`` (mean over the last
    ``log_every`` steps), ``lr`` and ``seconds`` (wall clock, for information only).
    """
    if inputs.shape != targets.shape or inputs.dim() != 2:
        raise ValueError(f"inputs and targets must both be (N, L), got {tuple(inputs.shape)} and "
                         f"{tuple(targets.shape)}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, betas=(0.9, 0.98), weight_decay=0.0)
    history: dict[str, list] = {"step": [], "loss": [], "lr": [], "seconds": []}
    order, pos, running, start = torch.randperm(len(inputs), generator=gen), 0, [], time.perf_counter()
    model.train()
    for step in range(steps):
        if pos + batch_size > len(order):  # a new epoch: reshuffle
            order, pos = torch.randperm(len(inputs), generator=gen), 0
        idx = order[pos: pos + batch_size]
        pos += batch_size
        x, y = inputs[idx].to(device), targets[idx].to(device)  # (B, L) each
        lr = warmup_lr(step, peak_lr, warmup_steps, steps)
        for group in opt.param_groups:
            group["lr"] = lr
        logits = model(x)  # (B, L, |V|)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
        running.append(loss.item())
        if (step + 1) % log_every == 0 or step + 1 == steps:
            history["step"].append(step + 1)
            history["loss"].append(sum(running) / len(running))
            history["lr"].append(lr)
            history["seconds"].append(time.perf_counter() - start)
            running = []
            if callback is not None:
                callback(step + 1, history)
                model.train()
    model.eval()
    return history


@torch.no_grad()
def complete_greedy(model: GPT, prompts: Sequence[Sequence[int]], max_new_tokens: int) -> list[list[int]]:
    """Greedy continuations of prompts of any lengths: prompts of equal length are batched
    together (no padding needed). Returns the new ids of each prompt, in the prompts' order."""
    device = next(model.parameters()).device
    by_len: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_len.setdefault(len(p), []).append(i)
    out: list[list[int]] = [[] for _ in prompts]
    for length, rows in by_len.items():
        ids = torch.tensor([list(prompts[i]) for i in rows], device=device)  # (B, length)
        new = model.generate(ids, max_new_tokens, temperature=0)[:, length:]  # (B, max_new_tokens)
        for i, r in zip(rows, new.tolist(), strict=True):
            out[i] = r
    return out
