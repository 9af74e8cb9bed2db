"""Induction heads (notebook 14): a small attention-only transformer, and the measurements that find
and test its heads (previous-token and induction scores, the loss at each position, head ablation).

It is trained on repeated random tokens (``helpers.data.repeated``; ``helpers.training.
train_induction_model``): every sequence is ``n`` random tokens followed by the same ``n`` tokens
again. The period ``n`` changes from batch to batch, so no head can solve the task by looking a
fixed number of positions back: the model has to find the previous occurrence of the current token
by its content and read the token that followed it. That is what an induction head does.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import int_at_least
from .attention import MultiHeadAttention, causal_mask

__all__ = [
    "AttentionOnlyTransformer",
    "head_scores",
    "induction_score",
    "per_position_loss",
    "previous_token_score",
]


class AttentionOnlyTransformer(nn.Module):
    """Token + learned position embeddings, ``num_layers`` attention layers, an unembedding.

    No MLPs and no LayerNorm: each layer only adds its heads' outputs to the residual stream
    ``x`` (B, L, d_model), so every head's contribution stays visible. ``forward(ids,
    ablate=((layer, head), ...))`` zeroes the listed heads' outputs (before W_o).
    After a forward pass, ``patterns()`` gives each layer's attention weights (B, h, L, L).
    """

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 2,
                 num_layers: int = 2, max_len: int = 64):
        super().__init__()
        func = "AttentionOnlyTransformer"
        for name, value, low in (("vocab_size", vocab_size, 2), ("d_model", d_model, 1),
                                 ("num_heads", num_heads, 1), ("num_layers", num_layers, 1),
                                 ("max_len", max_len, 2)):
            int_at_least(func, name, value, low)
        self.vocab_size, self.max_len = vocab_size, max_len
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList(MultiHeadAttention(d_model, num_heads) for _ in range(num_layers))
        self.unembed = nn.Linear(d_model, vocab_size)

    @property
    def num_heads(self) -> int:
        return self.layers[0].num_heads

    def _check_ablate(self, ablate) -> set[tuple[int, int]]:
        heads = set()
        for item in ablate:
            if (not isinstance(item, tuple | list) or len(item) != 2
                    or not all(isinstance(i, int) and not isinstance(i, bool) for i in item)):
                raise TypeError(f"AttentionOnlyTransformer: ablate must hold (layer, head) pairs of "
                                f"ints, got {item!r}")
            layer, head = item
            if not (0 <= layer < len(self.layers) and 0 <= head < self.num_heads):
                raise ValueError(f"AttentionOnlyTransformer: ablate names head {tuple(item)}, but "
                                 f"layers are 0..{len(self.layers) - 1} and heads "
                                 f"0..{self.num_heads - 1}")
            heads.add((layer, head))
        return heads

    def forward(self, ids: torch.Tensor, ablate=()) -> torch.Tensor:
        """ids (B, L) -> logits (B, L, vocab_size)."""
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype != torch.long:
            got = f"shape {tuple(ids.shape)} {ids.dtype}" if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"AttentionOnlyTransformer: ids must be a (B, L) torch.long tensor, got {got}")
        length = ids.shape[1]
        if not 1 <= length <= self.max_len:
            raise ValueError(f"AttentionOnlyTransformer: ids has length {length}, expected 1..{self.max_len}")
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"AttentionOnlyTransformer: ids must lie in 0..{self.vocab_size - 1}, "
                             f"got values {int(ids.min())}..{int(ids.max())}")
        off = self._check_ablate(ablate)
        x = self.embed(ids) + self.pos(torch.arange(length, device=ids.device))  # (B, L, d_model)
        mask = causal_mask(length, device=ids.device)  # (L, L)
        for i, attn in enumerate(self.layers):
            zero = [h for (layer, h) in off if layer == i]
            hook = attn.w_o.register_forward_pre_hook(_zero_heads(zero, attn.d_k)) if zero else None
            try:
                x = x + attn(x, x, x, mask=mask)  # the residual stream: (B, L, d_model)
            finally:
                if hook is not None:
                    hook.remove()
        return self.unembed(x)  # (B, L, vocab_size)

    def patterns(self) -> list[torch.Tensor]:
        """Attention weights of the last forward pass, one (B, h, L, L) tensor per layer."""
        if any(a.attn_weights is None for a in self.layers):
            raise RuntimeError("AttentionOnlyTransformer.patterns: run the model on some ids first")
        return [a.attn_weights for a in self.layers]


def _zero_heads(heads: list[int], d_k: int):
    """A forward pre-hook for W_o that zeroes the given heads' slices of its input (B, L, h*d_k)."""
    def hook(_module, args):
        (merged,) = args
        merged = merged.clone()
        for h in heads:
            merged[..., h * d_k:(h + 1) * d_k] = 0.0
        return (merged,)
    return hook


def per_position_loss(model: nn.Module, ids: torch.Tensor, ablate=()) -> torch.Tensor:
    """Cross-entropy of predicting ids[:, t+1] from ids[:, :t+1], averaged over the batch: (L-1,)."""
    with torch.no_grad():
        logits = model(ids[:, :-1], ablate=ablate)  # (B, L-1, V)
        loss = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")  # (B, L-1)
    return loss.mean(0)


def _check_patterns(weights: torch.Tensor, func: str) -> torch.Tensor:
    if not isinstance(weights, torch.Tensor) or weights.dim() < 2 or weights.shape[-1] != weights.shape[-2]:
        got = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        raise ValueError(f"{func}: weights must be (..., L, L) attention weights, got {got}")
    return weights


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean attention from each position t >= 1 to t - 1: weights (..., L, L) -> (...)."""
    w = _check_patterns(weights, "previous_token_score")
    return w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)


def induction_score(weights: torch.Tensor, n: int) -> torch.Tensor:
    """Mean attention from each position t >= n of a repeated sequence (period n) to t - n + 1,
    the token after the previous occurrence of the current one: weights (..., 2n, 2n) -> (...)."""
    w = _check_patterns(weights, "induction_score")
    int_at_least("induction_score", "n", n, 2)
    if w.shape[-1] != 2 * n:
        raise ValueError(f"induction_score: weights cover {w.shape[-1]} positions, expected 2n = {2 * n}")
    return w.diagonal(offset=-(n - 1), dim1=-2, dim2=-1)[..., 1:].mean(-1)


def head_scores(model: AttentionOnlyTransformer, ids: torch.Tensor, n: int) -> dict[str, torch.Tensor]:
    """Previous-token and induction scores of every head on repeated sequences ids (B, 2n):
    two (num_layers, h) tensors, averaged over the batch."""
    with torch.no_grad():
        model(ids)
    pats = torch.stack([p.mean(0) for p in model.patterns()])  # (layers, h, 2n, 2n)
    return {"previous": previous_token_score(pats), "induction": induction_score(pats, n)}


