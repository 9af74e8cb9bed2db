"""Feed-forward network, encoder and decoder layers and stacks (notebooks 07-08).

``norm_first=False`` is the original paper's post-LN: x = LayerNorm(x + Sublayer(x)).
``norm_first=True`` is pre-LN: x = x + Sublayer(LayerNorm(x)), with a final LayerNorm after the stack.
Masks are boolean, True = may attend.
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import KVCache, MultiHeadAttention

__all__ = ["Decoder", "DecoderCache", "DecoderLayer", "Encoder", "EncoderLayer", "FeedForward"]


class FeedForward(nn.Module):
    """Position-wise feed-forward network: linear1 (d_model -> d_ff), ReLU, dropout, linear2."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))  # (B, L, d_model)


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each with a residual connection and a LayerNorm."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def _sa(self, x, mask, need_weights):
        return self.dropout1(self.self_attn(x, x, x, mask, need_weights=need_weights))

    def _ff(self, x):
        return self.dropout2(self.feed_forward(x))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True):
        if self.norm_first:  # pre-LN
            x = x + self._sa(self.norm1(x), mask, need_weights)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, mask, need_weights))  # post-LN
        return self.norm2(x + self._ff(x))  # (B, L, d_model)


class DecoderCache:
    """Per-layer key/value caches for incremental decoding (notebook 11)."""

    def __init__(self, num_layers: int):
        self.self_attn = [KVCache() for _ in range(num_layers)]
        self.cross_attn = [KVCache(static=True) for _ in range(num_layers)]

    def __len__(self) -> int:
        """How many target positions the cache holds."""
        return len(self.self_attn[0])


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder's output, feed-forward."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm3 = nn.LayerNorm(d_model, eps=1e-5)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        self_cache: KVCache | None = None,
        cross_cache: KVCache | None = None,
    ) -> torch.Tensor:
        def sa(h):
            out = self.self_attn(h, h, h, tgt_mask, need_weights=need_weights, cache=self_cache)
            return self.dropout1(out)

        def ca(h):
            out = self.cross_attn(h, memory, memory, memory_mask, need_weights=need_weights,
                                  cache=cross_cache)
            return self.dropout2(out)

        def ff(h):
            return self.dropout3(self.feed_forward(h))

        if self.norm_first:  # pre-LN
            x = x + sa(self.norm1(x))
            x = x + ca(self.norm2(x))
            return x + ff(self.norm3(x))
        x = self.norm1(x + sa(x))  # post-LN
        x = self.norm2(x + ca(x))
        return self.norm3(x + ff(x))  # (B, Lt, d_model)


class Encoder(nn.Module):
    """A stack of ``num_layers`` EncoderLayers (plus a final LayerNorm when norm_first=True)."""

    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model, eps=1e-5) if norm_first else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True):
        for layer in self.layers:
            x = layer(x, mask, need_weights=need_weights)
        return x if self.norm is None else self.norm(x)  # (B, Ls, d_model)


class Decoder(nn.Module):
    """A stack of ``num_layers`` DecoderLayers (plus a final LayerNorm when norm_first=True)."""

    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model, eps=1e-5) if norm_first else None

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        cache: DecoderCache | None = None,
    ) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            self_cache = cache.self_attn[i] if cache is not None else None
            cross_cache = cache.cross_attn[i] if cache is not None else None
            x = layer(x, memory, tgt_mask, memory_mask, need_weights, self_cache, cross_cache)
        return x if self.norm is None else self.norm(x)  # (B, Lt, d_model)
