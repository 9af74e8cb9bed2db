"""Sinusoidal positional encoding (notebook 06)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["PositionalEncoding", "sinusoidal_positional_encoding"]


def sinusoidal_positional_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """(max_len, d_model) table with PE[pos, 2i] = sin(pos / 10000^(2i/d_model)) and
    PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model)). An odd d_model works (the last column is a sine).
    """
    if max_len < 1 or d_model < 1:
        raise ValueError(f"max_len and d_model must be >= 1, got max_len={max_len}, d_model={d_model}")
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)  # (ceil(d_model / 2),)
    angle = position / torch.pow(10000.0, two_i / d_model)  # (max_len, ceil(d_model / 2))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encoding to (B, L, d_model) embeddings, then applies dropout.

    ``forward(x, start=0)`` uses positions start .. start + L - 1 (``start`` is for decoding one
    token at a time with a KV cache).
    """

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        self.d_model = d_model
        self.max_len = max_len
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"expected x of shape (B, L, d_model={self.d_model}), got {tuple(x.shape)}")
        length = x.shape[1]
        if start + length > self.max_len:
            raise ValueError(
                f"sequence of length {length} (starting at position {start}) is longer than "
                f"max_len={self.max_len} of this PositionalEncoding; build it with a larger max_len"
            )
        return self.dropout(x + self.pe[start : start + length])  # (B, L, d_model)
