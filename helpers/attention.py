"""Scaled dot-product attention, masks and multi-head attention (notebooks 02-05).

Every mask in this package is boolean with **True = may attend**, the polarity of
``torch.nn.functional.scaled_dot_product_attention``. (``nn.MultiheadAttention`` uses the
opposite polarity for its boolean masks: True = ignore. Notebook 04 shows how to convert.)
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "KVCache",
    "copy_attention_weights",
    "MultiHeadAttention",
    "causal_mask",
    "check_mask",
    "padding_mask",
    "scaled_dot_product_attention",
    "target_mask",
]


def _shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))  # "(3,)", "(2, 5, 8)"


def check_mask(mask: torch.Tensor, scores_shape: torch.Size | tuple[int, ...]) -> None:
    """Raise a clear error unless ``mask`` is a boolean tensor broadcastable to ``scores_shape``."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a boolean torch.Tensor (True = may attend), got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}. "
            "If you have an additive float mask (0 / -inf), use mask == 0 instead."
        )
    try:
        torch.broadcast_shapes(mask.shape, tuple(scores_shape))
    except RuntimeError:
        raise ValueError(
            f"mask of shape {_shape(mask)} cannot be broadcast to the attention scores of shape "
            f"({', '.join(str(s) for s in scores_shape)}), i.e. (..., Lq, Lk)"
        ) from None


def _check_qkv(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., L, d), got shape {_shape(t)}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query and key must have the same last dimension d_k: got query {_shape(query)} and "
            f"key {_shape(key)}; expected query (..., Lq, d_k) and key (..., Lk, d_k)"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"key and value must have the same length Lk: got key {_shape(key)} and value "
            f"{_shape(value)}; expected key (..., Lk, d_k) and value (..., Lk, d_v)"
        )
    try:
        torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the batch dimensions of query {_shape(query)}, key {_shape(key)} and value "
            f"{_shape(value)} do not broadcast"
        ) from None


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q K^T / sqrt(d_k)) V, returning ``(output, weights)``.

    query (..., Lq, d_k), key (..., Lk, d_k), value (..., Lk, d_v) -> output (..., Lq, d_v),
    weights (..., Lq, Lk). ``mask`` is boolean, broadcastable to (..., Lq, Lk), True = may attend.
    A query row with nothing to attend to gets all-zero weights and a zero output (never NaN).
    ``dropout_p`` > 0 drops weights (and scales the kept ones by 1 / (1 - p)), as in training.
    """
    _check_qkv(query, key, value)
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., Lq, Lk)
    if mask is not None:
        check_mask(mask, scores.shape)
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (..., Lq, Lk)
    if mask is not None:
        # A row whose every entry is masked is softmax(-inf, ..., -inf) = NaN: make it zero.
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ value, weights  # (..., Lq, d_v), (..., Lq, Lk)


def causal_mask(n: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(n, n) boolean mask, True on and below the diagonal: position i may attend to 0..i."""
    if n < 1:
        raise ValueError(f"causal_mask needs n >= 1, got {n}")
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, 1, 1, L) boolean mask, True where ``tokens`` (B, L) is not padding.

    It broadcasts over heads and queries: every query may attend to every real token.
    """
    if tokens.dim() != 2:
        raise ValueError(f"tokens must have shape (B, L), got {_shape(tokens)}")
    return (tokens != pad_id)[:, None, None, :]


def target_mask(tgt: torch.Tensor, pad_id: int | None = None) -> torch.Tensor:
    """Decoder self-attention mask for target tokens (B, Lt): causal AND not padding.

    Returns (B, 1, Lt, Lt) when ``pad_id`` is given, else the (Lt, Lt) causal mask.
    """
    if tgt.dim() != 2:
        raise ValueError(f"tgt must have shape (B, Lt), got {_shape(tgt)}")
    mask = causal_mask(tgt.shape[1], device=tgt.device)  # (Lt, Lt)
    if pad_id is None:
        return mask
    return mask & padding_mask(tgt, pad_id)  # (B, 1, Lt, Lt)


class KVCache:
    """The keys and values one attention layer has computed so far (notebook 11).

    ``update(k, v)`` takes this step's keys and values (B, h, L_new, d_k) and returns all of them
    so far (B, h, L_past + L_new, d_k). ``static=True`` is for cross-attention: the keys and
    values come from the encoder's output, are stored at the first step and then reused as they are.
    """

    def __init__(self, static: bool = False):
        self.static = static
        self.k: torch.Tensor | None = None  # (B, h, L, d_k)
        self.v: torch.Tensor | None = None  # (B, h, L, d_v)

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.shape[-2]

    def __repr__(self) -> str:
        kind = "static, " if self.static else ""
        return f"KVCache({kind}length={len(self)})"

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append k (B, h, L_new, d_k) and v (B, h, L_new, d_v); return everything cached."""
        if k.dim() != 4 or v.dim() != 4 or k.shape[:3] != v.shape[:3]:
            raise ValueError(
                f"KVCache.update expects k (B, h, L_new, d_k) and v (B, h, L_new, d_v) with the "
                f"same (B, h, L_new), got k {_shape(k)} and v {_shape(v)}"
            )
        if self.k is None:
            self.k, self.v = k, v
        elif not self.static:
            if k.shape[:2] != self.k.shape[:2] or k.shape[-1] != self.k.shape[-1]:
                raise ValueError(
                    f"new keys {_shape(k)} do not match the cached keys {_shape(self.k)}: "
                    "B, h and d_k must stay the same (start a new cache for a new batch)"
                )
            self.k = torch.cat([self.k, k], dim=2)  # (B, h, L_past + L_new, d_k)
            self.v = torch.cat([self.v, v], dim=2)
        return self.k, self.v


class MultiHeadAttention(nn.Module):
    """Multi-head attention on batch-first tensors (notebook 05).

    ``forward(query, key, value, mask=None)``: query (B, Lq, d_model), key and value
    (B, Lk, d_model) -> (B, Lq, d_model). The last attention weights are kept in
    ``self.attn_weights`` (B, num_heads, Lq, Lk) unless ``need_weights=False``, which takes the
    fused ``F.scaled_dot_product_attention`` path (notebook 11).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if num_heads < 1 or d_model % num_heads != 0:
            raise ValueError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}: each head needs "
                f"d_model / num_heads dimensions"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.attn_weights: torch.Tensor | None = None

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, L, d_model) -> (B, h, L, d_k)."""
        b, length, _ = x.shape
        return x.view(b, length, self.num_heads, self.d_k).transpose(1, 2)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, h, L, d_k) -> (B, L, d_model)."""
        b, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(b, length, self.d_model)

    def _packed(self, x: torch.Tensor, *linears: nn.Linear, contiguous: bool = True):
        """Apply several d_model -> d_model projections to the same x with ONE matmul.

        x (B, L, d_model) -> one (B, h, L, d_k) tensor per linear. Stacking the weights gives a
        (n * d_model, d_model) matrix; one big matmul is faster than n small ones, and the heads
        come out contiguous, ready for the attention matmuls (``contiguous=False`` leaves them as
        strided views, which the fused kernel reads directly).
        """
        weight = torch.cat([lin.weight for lin in linears])  # (n * d_model, d_model)
        bias = None if linears[0].bias is None else torch.cat([lin.bias for lin in linears])
        b, length, _ = x.shape
        y = F.linear(x, weight, bias).view(b, length, len(linears), self.num_heads, self.d_k)
        y = y.permute(2, 0, 3, 1, 4)  # (n, B, h, L, d_k)
        return (y.contiguous() if contiguous else y).unbind(0)  # n x (B, h, L, d_k)

    def _project_kv(self, key, value, cache):
        """Keys and values (B, h, Lk, d_k), through the cache when there is one."""
        if cache is not None and cache.static and cache.k is not None:
            return cache.k, cache.v  # cross-attention: the encoder's keys/values never change
        if key is value:  # e.g. cross-attention to the encoder's output: one matmul for both
            k, v = self._packed(key, self.w_k, self.w_v)
        else:
            k, v = self.split_heads(self.w_k(key)), self.split_heads(self.w_v(value))
        return (k, v) if cache is None else cache.update(k, v)

    def _attend_with_weights(self, q, k, v, mask, dropout_p):
        """scaled_dot_product_attention's result (equal up to rounding), with fewer big passes:
        scale q (B, h, Lq, d_k) rather than the scores (B, h, Lq, Lk), mask them in place and fix
        fully masked rows only when there are any."""
        if mask is not None:
            check_mask(mask, (*q.shape[:-1], k.shape[-2]))
        scores = (q * (1.0 / math.sqrt(self.d_k))) @ k.transpose(-2, -1)  # (B, h, Lq, Lk)
        if mask is not None:
            scores.masked_fill_(~mask, float("-inf"))
        if scores.requires_grad:  # autograd needs the scores kept apart from the weights
            weights = torch.softmax(scores, dim=-1)  # (B, h, Lq, Lk)
        else:  # inference: softmax in place, no second (B, h, Lq, Lk) buffer
            weights = torch.softmax(scores, dim=-1, out=scores)
        if mask is not None:
            empty = ~mask.any(dim=-1, keepdim=True)  # rows with nothing to attend to
            if empty.any():
                weights = weights.masked_fill(empty, 0.0)  # zeros, not NaN
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        return weights @ v, weights  # (B, h, Lq, d_k), (B, h, Lq, Lk)

    def _check_inputs(self, query, key, value):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dim() != 3 or t.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name} must have shape (B, L, d_model={self.d_model}), got {_shape(t)}"
                )
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"key {_shape(key)} and value {_shape(value)} must share (B, Lk)")
        if query.shape[0] != key.shape[0]:
            raise ValueError(f"query {_shape(query)} and key {_shape(key)} must share the batch size B")

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        need_weights: bool = True,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        self._check_inputs(query, key, value)
        fresh = cache is None or not (cache.static and cache.k is not None)
        if query is key and key is value and fresh:  # self-attention: one matmul for q, k, v
            q, k, v = self._packed(query, self.w_q, self.w_k, self.w_v, contiguous=need_weights)
            if cache is not None:
                k, v = cache.update(k, v)  # (B, h, L_past + L, d_k)
        else:
            q = self.split_heads(self.w_q(query))  # (B, h, Lq, d_k)
            k, v = self._project_kv(key, value, cache)  # (B, h, Lk, d_k) each
        p = self.dropout if self.training else 0.0
        if need_weights:
            out, weights = self._attend_with_weights(q, k, v, mask, p)  # (B, h, Lq, d_k)
            self.attn_weights = weights.detach()  # (B, h, Lq, Lk)
        else:
            if mask is not None:
                check_mask(mask, (*q.shape[:-1], k.shape[-2]))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            if mask is not None:  # same contract as above: a fully masked row gives zeros
                out = out.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
            self.attn_weights = None
        return self.w_o(self.merge_heads(out))  # (B, Lq, d_model)


def copy_attention_weights(mine: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy our ``w_q``, ``w_k``, ``w_v``, ``w_o`` into an ``nn.MultiheadAttention`` (notebook 05).

    PyTorch keeps the three input projections stacked in one ``in_proj_weight`` (3·d_model, d_model).
    """
    if (mine.d_model, mine.num_heads) != (theirs.embed_dim, theirs.num_heads):
        raise ValueError(f"cannot copy MultiHeadAttention(d_model={mine.d_model}, num_heads="
                         f"{mine.num_heads}) into nn.MultiheadAttention(embed_dim={theirs.embed_dim}, "
                         f"num_heads={theirs.num_heads})")
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([mine.w_q.weight, mine.w_k.weight, mine.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([mine.w_q.bias, mine.w_k.bias, mine.w_v.bias]))
        theirs.out_proj.load_state_dict(mine.w_o.state_dict())
