"""Online softmax and tiled (FlashAttention-style) attention in plain PyTorch (notebook 11)."""

from __future__ import annotations

import math

import torch

from .attention import _check_qkv, check_mask

__all__ = ["online_softmax", "tiled_attention"]


def online_softmax(x: torch.Tensor, dim: int = -1, block_size: int = 128) -> torch.Tensor:
    """Softmax computed in one pass over blocks of ``dim``, keeping a running max and sum.

    Equal to ``torch.softmax(x, dim)``. Each new block may raise the running max m; the sum
    collected so far is then rescaled by exp(m_old - m_new).
    """
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    x = x.movedim(dim, -1)  # (..., n)
    running_max = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    running_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]  # (..., b)
        new_max = torch.maximum(running_max, block.amax(dim=-1))
        safe_max = new_max.masked_fill(new_max == float("-inf"), 0.0)  # an all -inf prefix
        running_sum = running_sum * torch.exp(running_max - safe_max) + torch.exp(
            block - safe_max[..., None]
        ).sum(dim=-1)
        running_max = new_max
    safe_max = running_max.masked_fill(running_max == float("-inf"), 0.0)
    out = torch.exp(x - safe_max[..., None]) / running_sum[..., None]  # second, elementwise pass
    return out.movedim(-1, dim)


def tiled_attention(query, key, value, mask=None, block_size: int = 64):
    """Scaled dot-product attention over blocks of keys/values with online-softmax rescaling.

    Same shapes and mask polarity (True = may attend) as ``scaled_dot_product_attention``, but it
    returns only the output (..., Lq, d_v): the full (Lq, Lk) weight matrix is never built, only
    (Lq, block_size) pieces of it. Rows with nothing to attend to give zeros.
    """
    _check_qkv(query, key, value)
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    lq, lk = query.shape[-2], key.shape[-2]
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    if mask is not None:
        check_mask(mask, (*batch, lq, lk))
    scale = 1.0 / math.sqrt(query.shape[-1])
    out = torch.zeros(*batch, lq, value.shape[-1], dtype=query.dtype, device=query.device)
    row_max = torch.full((*batch, lq, 1), float("-inf"), dtype=query.dtype, device=query.device)
    row_sum = torch.zeros((*batch, lq, 1), dtype=query.dtype, device=query.device)
    for start in range(0, lk, block_size):
        k = key[..., start : start + block_size, :]  # (..., b, d_k)
        v = value[..., start : start + block_size, :]  # (..., b, d_v)
        s = (query @ k.transpose(-2, -1)) * scale  # (..., Lq, b)
        if mask is not None:
            m = mask if mask.shape[-1] == 1 else mask[..., start : start + block_size]
            s = s.masked_fill(~m, float("-inf"))
        new_max = torch.maximum(row_max, s.amax(dim=-1, keepdim=True))  # (..., Lq, 1)
        safe_max = new_max.masked_fill(new_max == float("-inf"), 0.0)
        correction = torch.exp(row_max - safe_max)  # rescales what was summed so far
        p = torch.exp(s - safe_max)  # (..., Lq, b)
        row_sum = row_sum * correction + p.sum(dim=-1, keepdim=True)
        out = out * correction + p @ v  # (..., Lq, d_v)
        row_max = new_max
    return out / row_sum.clamp_min(torch.finfo(row_sum.dtype).tiny)  # zero rows stay zero
