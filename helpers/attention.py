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

from . import _checks

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


def check_mask(mask: torch.Tensor, scores_shape: torch.Size | tuple[int, ...],
               where: str = "scaled_dot_product_attention", device: torch.device | None = None,
               name: str = "mask") -> None:
    """Raise a clear error unless ``mask`` is a boolean tensor that broadcasts *to* ``scores_shape``.

    Broadcasting may repeat the mask, never enlarge the scores: a mask of shape (4, 1, Lq, Lk)
    cannot go with scores (2, h, Lq, Lk). A mask with fewer dimensions than the scores is
    aligned from the right, so a 3-D mask (B, Lq, Lk) with 4-D scores (B, h, Lq, Lk) would land on
    the heads axis: that is refused unless its leading axes all have size 1 (use ``mask[:, None]``).
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{where}: {name} must be a boolean torch.Tensor (True = may attend), "
                        f"got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must have dtype torch.bool (True = may attend), got {mask.dtype}. "
            f"If you have an additive float mask (0 / -inf), use {name} == 0 instead."
        )
    if device is not None and mask.device != device:
        raise ValueError(f"{where}: {name} is on device {mask.device} but the scores are on {device}; "
                         f"expected {name}.to({str(device)!r})")
    scores_shape = tuple(scores_shape)
    wanted = f"({', '.join(str(s) for s in scores_shape)})"
    try:
        fits = torch.broadcast_shapes(mask.shape, scores_shape) == torch.Size(scores_shape)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"{where}: {name} of shape {_shape(mask)} cannot be broadcast to the attention scores of shape "
            f"{wanted}, i.e. (..., Lq, Lk)"
        )
    if 2 < mask.dim() < len(scores_shape) and any(s != 1 for s in mask.shape[:-2]):
        raise ValueError(
            f"{where}: {name} of shape {_shape(mask)} has fewer dimensions than the attention scores "
            f"{wanted}, so its axis of size {mask.shape[0]} would be matched to the scores' axis of "
            f"size {scores_shape[len(scores_shape) - mask.dim()]} (e.g. the heads, not the batch); "
            f"expected one axis per score axis, e.g. {name}[:, None] for a per-example mask (B, 1, Lq, Lk)"
        )


def _check_qkv(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
               where: str = "scaled_dot_product_attention") -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        _checks.tensor(where, name, t, "a floating-point torch.Tensor (..., L, d)")
        if t.dim() < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., L, d), got shape {_shape(t)}")
        _checks.floating(where, name, t)
    _checks.same_dtype_device(where, query=query, key=key, value=value)
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query and key must have the same last dimension d_k: got query {_shape(query)} and "
            f"key {_shape(key)}; expected query (..., Lq, d_k) and key (..., Lk, d_k)"
        )
    if query.shape[-1] == 0:
        raise ValueError(f"{where}: query and key need d_k >= 1 (the scores are divided by "
                         f"sqrt(d_k)), got query {_shape(query)} and key {_shape(key)}")
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
    The mask must broadcast *to* the scores' shape; a mask with 3 or more dimensions needs one
    axis per score axis (a per-example mask (B, Lq, Lk) with 4-D scores: ``mask[:, None]``).
    A query row with nothing to attend to gets all-zero weights and a zero output (never NaN).
    ``dropout_p`` > 0 drops weights (and scales the kept ones by 1 / (1 - p)), as in training.
    """
    where = "scaled_dot_product_attention"
    _check_qkv(query, key, value, where)
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)):
        raise TypeError(f"{where}: dropout_p must be a number in [0, 1), got {_checks.got(dropout_p)}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., Lq, Lk)
    if mask is not None:
        check_mask(mask, scores.shape, where, query.device)
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
    n = _checks.as_int("causal_mask", "n", n)
    if n < 1:
        raise ValueError(f"causal_mask needs n >= 1, got {n}")
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, 1, 1, L) boolean mask, True where ``tokens`` (B, L) is not padding.

    It broadcasts over heads and queries: every query may attend to every real token.
    """
    _checks.tensor("padding_mask", "tokens", tokens, "a tensor of token ids (B, L)")
    if tokens.dim() != 2:
        raise ValueError(f"tokens must have shape (B, L), got {_shape(tokens)}")
    if isinstance(pad_id, torch.Tensor) and pad_id.numel() == 1:
        pad_id = pad_id.item()
    if isinstance(pad_id, bool) or not isinstance(pad_id, (int, float)):
        raise TypeError(f"padding_mask: pad_id must be an int (the padding token's id), "
                        f"got {_checks.got(pad_id)}")
    return (tokens != pad_id)[:, None, None, :]


def target_mask(tgt: torch.Tensor, pad_id: int | None = None) -> torch.Tensor:
    """Decoder self-attention mask for target tokens (B, Lt): causal AND not padding.

    Returns (B, 1, Lt, Lt) when ``pad_id`` is given, else the (Lt, Lt) causal mask.
    """
    _checks.tensor("target_mask", "tgt", tgt, "a tensor of token ids (B, Lt)")
    if tgt.dim() != 2:
        raise ValueError(f"tgt must have shape (B, Lt), got {_shape(tgt)}")
    if tgt.shape[1] < 1:
        raise ValueError(f"target_mask: tgt must hold at least one position (B, Lt >= 1), "
                         f"got shape {_shape(tgt)}")
    mask = causal_mask(tgt.shape[1], device=tgt.device)  # (Lt, Lt)
    if pad_id is None:
        return mask
    if isinstance(pad_id, bool) or not isinstance(pad_id, (int, float, torch.Tensor)):
        raise TypeError(f"target_mask: pad_id must be an int or None, got {_checks.got(pad_id)}")
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

    ``mask`` (boolean, True = may attend) is (Lq, Lk) for every example and head, (B, Lq, Lk)
    per example (the same for every head), or (B, h, Lq, Lk); size-1 axes broadcast.
    ``is_causal=True`` (with ``mask=None`` and Lq = Lk, no cache) applies the causal mask without
    building it: on the fused path ``F.scaled_dot_product_attention(..., is_causal=True)`` masks
    block by block, with no (L, L) tensor (notebook 11); with the weights it equals
    ``mask=causal_mask(L)``.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        where = "MultiHeadAttention"
        d_model = _checks.as_int(where, "d_model", d_model, minimum=1)
        num_heads = _checks.as_int(where, "num_heads", num_heads, minimum=1)
        dropout = _checks.as_float(where, "dropout", dropout, 0.0, 1.0)
        _checks.as_bool(where, "bias", bias)
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
            b, lk = cache.k.shape[0], cache.k.shape[2]
            if key.shape[:2] != (b, lk):
                raise ValueError(
                    f"MultiHeadAttention: the static cache holds keys for B={b}, Lk={lk} "
                    f"(cached {_shape(cache.k)}), but key has shape {_shape(key)}; expected "
                    f"({b}, {lk}, {self.d_model}): use a new cache for a new batch or source"
                )
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

    def _check_inputs(self, query, key, value, cache):
        where = "MultiHeadAttention"
        for name, t in (("query", query), ("key", key), ("value", value)):
            _checks.tensor(where, name, t, f"a tensor (B, L, d_model={self.d_model})")
            if t.dim() != 3 or t.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name} must have shape (B, L, d_model={self.d_model}), got {_shape(t)}"
                )
            _checks.floating(where, name, t)
            _checks.module_input(where, name, t, self)
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"key {_shape(key)} and value {_shape(value)} must share (B, Lk)")
        if query.shape[0] != key.shape[0]:
            raise ValueError(f"query {_shape(query)} and key {_shape(key)} must share the batch size B")
        if cache is not None and not isinstance(cache, KVCache):
            raise TypeError(f"{where}: cache must be a KVCache or None, got {_checks.got(cache)}")

    def _check_causal(self, is_causal, mask, query, key, cache):
        where = "MultiHeadAttention"
        _checks.as_bool(where, "is_causal", is_causal)
        if not is_causal:
            return
        if mask is not None:
            raise ValueError(f"{where}: pass either mask or is_causal=True, not both (is_causal=True "
                             "is the causal mask)")
        if cache is not None or query.shape[1] != key.shape[1]:
            raise ValueError(f"{where}: is_causal=True needs query and key of the same length and no "
                             f"cache, got query {_shape(query)}, key {_shape(key)}"
                             f"{'' if cache is None else ' and a cache'}; pass an explicit mask instead")

    def _mask(self, mask, b, lq, lk, where="MultiHeadAttention", name="mask"):
        """The mask as (B or 1, h or 1, Lq or 1, Lk or 1): a 3-D mask is per example.
        (Also used by the layers and the Transformer to check their masks up front.)"""
        if mask is None:
            return None
        if isinstance(mask, torch.Tensor) and mask.dim() > 4:
            raise ValueError(f"{where}: {name} must be (Lq, Lk), (B, Lq, Lk) or (B, h, Lq, Lk), "
                             f"got shape {_shape(mask)}")
        if isinstance(mask, torch.Tensor) and mask.dim() == 3:
            mask = mask[:, None]  # (B, 1, Lq, Lk): the same for every head
        check_mask(mask, (b, self.num_heads, lq, lk), where, self.w_q.weight.device, name)
        return mask

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        need_weights: bool = True,
        cache: KVCache | None = None,
        is_causal: bool = False,
    ) -> torch.Tensor:
        self._check_inputs(query, key, value, cache)
        self._check_causal(is_causal, mask, query, key, cache)
        fresh = cache is None or not (cache.static and cache.k is not None)
        if query is key and key is value and fresh:  # self-attention: one matmul for q, k, v
            q, k, v = self._packed(query, self.w_q, self.w_k, self.w_v, contiguous=need_weights)
            if cache is not None:
                k, v = cache.update(k, v)  # (B, h, L_past + L, d_k)
        else:
            q = self.split_heads(self.w_q(query))  # (B, h, Lq, d_k)
            k, v = self._project_kv(key, value, cache)  # (B, h, Lk, d_k) each
        mask = self._mask(mask, q.shape[0], q.shape[2], k.shape[2])
        p = self.dropout if self.training else 0.0
        if need_weights:
            if is_causal:  # the weights are (L, L) anyway: build the mask
                mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=q.device).tril()
            out, weights = self._attend_with_weights(q, k, v, mask, p)  # (B, h, Lq, d_k)
            self.attn_weights = weights.detach()  # (B, h, Lq, Lk)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p,
                                                 is_causal=is_causal)
            if mask is not None:  # same contract as above: a fully masked row gives zeros
                out = out.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
            self.attn_weights = None
        return self.w_o(self.merge_heads(out))  # (B, Lq, d_model)


def copy_attention_weights(mine: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy our ``w_q``, ``w_k``, ``w_v``, ``w_o`` into an ``nn.MultiheadAttention`` (notebook 05).

    PyTorch keeps the three input projections stacked in one ``in_proj_weight`` (3·d_model, d_model).
    If ``mine`` has no biases (``bias=False``), those of ``theirs`` are set to zero, so both compute
    the same function; ``theirs`` without biases can only take a ``mine`` without biases.
    """
    where = "copy_attention_weights"
    if not isinstance(mine, MultiHeadAttention):
        raise TypeError(f"{where}: mine must be a helpers MultiHeadAttention, got {_checks.got(mine)}")
    if not isinstance(theirs, nn.MultiheadAttention):
        raise TypeError(f"{where}: theirs must be a torch.nn.MultiheadAttention, got "
                        f"{_checks.got(theirs)}")
    if (mine.d_model, mine.num_heads) != (theirs.embed_dim, theirs.num_heads):
        raise ValueError(f"cannot copy MultiHeadAttention(d_model={mine.d_model}, num_heads="
                         f"{mine.num_heads}) into nn.MultiheadAttention(embed_dim={theirs.embed_dim}, "
                         f"num_heads={theirs.num_heads})")
    if theirs.in_proj_weight is None:
        raise ValueError(f"{where}: theirs has separate kdim/vdim projections (kdim={theirs.kdim}, "
                         f"vdim={theirs.vdim}); expected nn.MultiheadAttention({theirs.embed_dim}, "
                         f"{theirs.num_heads}) with kdim = vdim = embed_dim")
    if theirs.bias_k is not None or theirs.add_zero_attn:
        raise ValueError(f"{where}: theirs was built with add_bias_kv=True or add_zero_attn=True, "
                         "which add keys that MultiHeadAttention does not have; expected both False")
    mine_bias = mine.w_q.bias is not None
    if mine_bias and theirs.in_proj_bias is None:
        raise ValueError(f"{where}: mine has biases but theirs was built with bias=False; expected "
                         f"nn.MultiheadAttention({theirs.embed_dim}, {theirs.num_heads}, bias=True)")
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([mine.w_q.weight, mine.w_k.weight, mine.w_v.weight]))
        theirs.out_proj.weight.copy_(mine.w_o.weight)
        if mine_bias:
            theirs.in_proj_bias.copy_(torch.cat([mine.w_q.bias, mine.w_k.bias, mine.w_v.bias]))
            theirs.out_proj.bias.copy_(mine.w_o.bias)
        else:
            for bias in (theirs.in_proj_bias, theirs.out_proj.bias):
                if bias is not None:
                    bias.zero_()
