"""Feed-forward network, encoder and decoder layers and stacks (notebooks 07-08).

``norm_first=False`` is the original paper's post-LN: x = LayerNorm(x + Sublayer(x)).
``norm_first=True`` is pre-LN: x = x + Sublayer(LayerNorm(x)), with a final LayerNorm after the stack.
Masks are boolean, True = may attend.
"""

from __future__ import annotations

import torch
from torch import nn

from . import _checks
from .attention import KVCache, MultiHeadAttention

__all__ = [
    "Decoder",
    "DecoderCache",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "FeedForward",
    "layer_grad_norms",
]


def _check_x(name: str, x: torch.Tensor, d_model: int, module: nn.Module | None = None,
             where: str | None = None) -> None:
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != d_model:
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else _checks.got(x)
        prefix = f"{where}: " if where and not isinstance(x, torch.Tensor) else ""
        raise ValueError(f"{prefix}{name} must have shape (B, L, d_model={d_model}), got {got}")
    if where is not None:
        _checks.floating(where, name, x)
        if module is not None:
            _checks.module_input(where, name, x, module)


def _check_layer_args(d_model, num_heads, d_ff, dropout=0.0, norm_first=False, where="EncoderLayer"):
    d_model = _checks.as_int(where, "d_model", d_model, minimum=1)
    num_heads = _checks.as_int(where, "num_heads", num_heads, minimum=1)
    d_ff = _checks.as_int(where, "d_ff", d_ff)
    if d_ff < 1:
        raise ValueError(f"d_ff must be >= 1, got {d_ff}")
    _checks.as_float(where, "dropout", dropout, 0.0, 1.0)
    _checks.as_bool(where, "norm_first", norm_first)
    if num_heads < 1 or d_model % num_heads != 0:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}: each head needs "
            f"d_model / num_heads dimensions"
        )


def _check_num_layers(num_layers, where):
    num_layers = _checks.as_int(where, "num_layers", num_layers)
    if num_layers < 1:
        raise ValueError(f"num_layers must be >= 1, got {num_layers}")


def _check_decoder_masks(layer, x, memory, tgt_mask, memory_mask, self_cache, where):
    """tgt_mask fits (B, h, Lt, L_past + Lt) and memory_mask fits (B, h, Lt, Ls)."""
    b, lt = x.shape[:2]
    past = len(self_cache) if self_cache is not None else 0
    layer.self_attn._mask(tgt_mask, b, lt, past + lt, where, "tgt_mask")
    layer.cross_attn._mask(memory_mask, b, lt, memory.shape[1], where, "memory_mask")


class FeedForward(nn.Module):
    """Position-wise feed-forward network: linear1 (d_model -> d_ff), an activation, dropout,
    linear2. ``activation`` "relu" (the original Transformer's, the default) or "gelu" (GPT-2's,
    the exact form x * Phi(x)); ``bias=False`` drops both biases."""

    ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu",
                 bias: bool = True):
        super().__init__()
        d_model = _checks.as_int("FeedForward", "d_model", d_model)
        d_ff = _checks.as_int("FeedForward", "d_ff", d_ff)
        if d_model < 1 or d_ff < 1:
            raise ValueError(f"d_model and d_ff must be >= 1, got d_model={d_model}, d_ff={d_ff}")
        _checks.as_float("FeedForward", "dropout", dropout, 0.0, 1.0)
        if activation not in self.ACTIVATIONS:
            raise ValueError(f"FeedForward: activation must be one of {list(self.ACTIVATIONS)}, got "
                             f"{_checks.got(activation)}")
        _checks.as_bool("FeedForward", "bias", bias)
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)
        self.activation = self.ACTIVATIONS[activation]()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., d_model) -> (..., d_model), each position on its own."""
        d_model = self.linear1.in_features
        _checks.tensor("FeedForward", "x", x, f"a tensor (..., d_model={d_model})")
        if x.dim() < 1 or x.shape[-1] != d_model:
            raise ValueError(f"FeedForward: x must have shape (..., d_model={d_model}), "
                             f"got {tuple(x.shape)}")
        _checks.floating("FeedForward", "x", x)
        _checks.module_input("FeedForward", "x", x, self)
        return self.linear2(self.dropout(self.activation(self.linear1(x))))  # (B, L, d_model)


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each with a residual connection and a LayerNorm."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        _check_layer_args(d_model, num_heads, d_ff, dropout, norm_first, "EncoderLayer")
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
        _check_x("x", x, self.norm1.normalized_shape[0], self, "EncoderLayer")
        self.self_attn._mask(mask, x.shape[0], x.shape[1], x.shape[1], "EncoderLayer")
        if self.norm_first:  # pre-LN
            x = x + self._sa(self.norm1(x), mask, need_weights)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, mask, need_weights))  # post-LN
        return self.norm2(x + self._ff(x))  # (B, L, d_model)


class DecoderCache:
    """Per-layer key/value caches for incremental decoding (notebook 11)."""

    def __init__(self, num_layers: int):
        num_layers = _checks.as_int("DecoderCache", "num_layers", num_layers, minimum=1)
        self.self_attn = [KVCache() for _ in range(num_layers)]
        self.cross_attn = [KVCache(static=True) for _ in range(num_layers)]

    def __len__(self) -> int:
        """How many target positions the cache holds."""
        return len(self.self_attn[0])


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder's output, feed-forward."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        _check_layer_args(d_model, num_heads, d_ff, dropout, norm_first, "DecoderLayer")
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
        _check_x("x", x, self.norm1.normalized_shape[0], self, "DecoderLayer")
        _check_x("memory", memory, self.norm1.normalized_shape[0], self, "DecoderLayer")
        if x.shape[0] != memory.shape[0]:
            raise ValueError(f"DecoderLayer: x {tuple(x.shape)} and memory {tuple(memory.shape)} "
                             "must share the batch size B")
        _check_decoder_masks(self, x, memory, tgt_mask, memory_mask, self_cache, "DecoderLayer")

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
        _check_num_layers(num_layers, "Encoder")
        _check_layer_args(d_model, num_heads, d_ff, dropout, norm_first, "Encoder")
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model, eps=1e-5) if norm_first else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True):
        _check_x("x", x, self.layers[0].norm1.normalized_shape[0], self, "Encoder")
        self.layers[0].self_attn._mask(mask, x.shape[0], x.shape[1], x.shape[1], "Encoder")
        for layer in self.layers:
            x = layer(x, mask, need_weights=need_weights)
        return x if self.norm is None else self.norm(x)  # (B, Ls, d_model)


class Decoder(nn.Module):
    """A stack of ``num_layers`` DecoderLayers (plus a final LayerNorm when norm_first=True)."""

    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        _check_num_layers(num_layers, "Decoder")
        _check_layer_args(d_model, num_heads, d_ff, dropout, norm_first, "Decoder")
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
        d_model = self.layers[0].norm1.normalized_shape[0]
        _check_x("x", x, d_model, self, "Decoder")
        _check_x("memory", memory, d_model, self, "Decoder")
        if cache is not None and (not isinstance(cache, DecoderCache)
                                  or len(cache.self_attn) != len(self.layers)):
            raise TypeError(f"Decoder: cache must be a DecoderCache for {len(self.layers)} layers "
                            f"(model.new_cache()), got {_checks.got(cache)}")
        if x.shape[0] != memory.shape[0]:
            raise ValueError(f"Decoder: x {tuple(x.shape)} and memory {tuple(memory.shape)} "
                             "must share the batch size B")
        _check_decoder_masks(self.layers[0], x, memory, tgt_mask, memory_mask,
                             None if cache is None else cache.self_attn[0], "Decoder")
        for i, layer in enumerate(self.layers):
            self_cache = cache.self_attn[i] if cache is not None else None
            cross_cache = cache.cross_attn[i] if cache is not None else None
            x = layer(x, memory, tgt_mask, memory_mask, need_weights, self_cache, cross_cache)
        return x if self.norm is None else self.norm(x)  # (B, Lt, d_model)


def layer_grad_norms(
    num_layers: int,
    norm_first: bool,
    d_model: int = 32,
    num_heads: int = 4,
    d_ff: int = 128,
    batch_size: int = 32,
    seq_len: int = 16,
    vocab_size: int = 32,
    seeds: tuple[int, ...] = (0, 1, 2),
) -> list[float]:
    """Gradient norm of each layer's second feed-forward matrix (``feed_forward.linear2.weight``)
    in a freshly initialised ``Encoder`` (Xavier-uniform matrices, dropout 0), notebook 07.

    The loss is the cross-entropy of a linear read-out on random inputs against random labels,
    i.e. what a model sees at its very first training step. Returns ``num_layers`` floats (layer 1
    = nearest the input), each the mean over ``seeds``.
    """
    import torch.nn.functional as F

    if num_layers < 1:
        raise ValueError(f"num_layers must be >= 1, got {num_layers}")
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    totals = torch.zeros(num_layers)
    for seed in seeds:
        gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        encoder = Encoder(num_layers, d_model, num_heads, d_ff, 0.0, norm_first)
        head = nn.Linear(d_model, vocab_size)
        for p in encoder.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        x = torch.randn(batch_size, seq_len, d_model, generator=gen)  # (B, L, d_model)
        y = torch.randint(vocab_size, (batch_size, seq_len), generator=gen)  # (B, L)
        logits = head(encoder(x))  # (B, L, vocab_size)
        F.cross_entropy(logits.reshape(-1, vocab_size), y.reshape(-1)).backward()
        totals += torch.stack([layer.feed_forward.linear2.weight.grad.norm()
                               for layer in encoder.layers])
    return (totals / len(seeds)).tolist()
