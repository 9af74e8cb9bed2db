"""The encoder-decoder Transformer (notebook 09)."""

from __future__ import annotations

import math

import torch
from torch import nn

from . import _checks
from .layers import Decoder, DecoderCache, Encoder, _check_layer_args, _check_num_layers, _check_x
from .positional import PositionalEncoding

__all__ = ["Transformer"]


class Transformer(nn.Module):
    """Token embeddings (scaled by sqrt(d_model)) + sinusoidal positions, an encoder stack, a
    decoder stack and a linear projection to target-vocabulary logits.

    Masks are boolean, True = may attend: ``src_mask`` broadcastable to (B, 1, 1, Ls) (see
    ``padding_mask``), ``tgt_mask`` to (B, 1, Lt, Lt) (see ``target_mask``).
    ``tie_weights=True`` shares the target embedding with the output projection.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 128,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int = 512,
        dropout: float = 0.1,
        max_len: int = 256,
        norm_first: bool = False,
        tie_weights: bool = False,
    ):
        super().__init__()
        where = "Transformer"
        src_vocab_size = _checks.as_int(where, "src_vocab_size", src_vocab_size, minimum=1)
        tgt_vocab_size = _checks.as_int(where, "tgt_vocab_size", tgt_vocab_size, minimum=1)
        _check_num_layers(num_layers, where)
        _check_layer_args(d_model, num_heads, d_ff, dropout, norm_first, where)
        _checks.as_int(where, "max_len", max_len, minimum=1)
        _checks.as_bool(where, "tie_weights", tie_weights)
        self.d_model = d_model
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        self.pos = PositionalEncoding(d_model, max_len, dropout)
        self.encoder = Encoder(num_layers, d_model, num_heads, d_ff, dropout, norm_first)
        self.decoder = Decoder(num_layers, d_model, num_heads, d_ff, dropout, norm_first)
        self.out_proj = nn.Linear(d_model, tgt_vocab_size)
        if tie_weights:
            self.out_proj.weight = self.tgt_embed.weight
        self._reset_parameters()

    def _reset_parameters(self):
        # Xavier-uniform for every matrix, as the paper's reference implementations do.
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def _check_tokens(self, name: str, ids: torch.Tensor, vocab_size: int) -> None:
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2:
            got = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"{name} must be token ids of shape (B, L), got {got}")
        if ids.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"{name} must hold integer token ids (torch.long), got {ids.dtype}")
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
            raise ValueError(
                f"{name} holds ids in {int(ids.min())}..{int(ids.max())}, but the vocabulary has "
                f"{vocab_size} tokens (ids 0..{vocab_size - 1})"
            )

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None,
               need_weights: bool = True) -> torch.Tensor:
        """src (B, Ls) token ids -> memory (B, Ls, d_model)."""
        self._check_tokens("src", src, self.src_embed.num_embeddings)
        ls = src.shape[1]
        self.encoder.layers[0].self_attn._mask(src_mask, src.shape[0], ls, ls, "Transformer.encode",
                                               "src_mask")
        x = self.pos(self.src_embed(src) * math.sqrt(self.d_model))  # (B, Ls, d_model)
        return self.encoder(x, src_mask, need_weights=need_weights)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        cache: DecoderCache | None = None,
    ) -> torch.Tensor:
        """tgt (B, Lt) token ids and memory (B, Ls, d_model) -> logits (B, Lt, tgt_vocab_size).

        With a ``cache``, ``tgt`` holds only the new tokens; their positions continue after the
        ones already in the cache, and no causal mask is needed (the past is all there is).
        """
        self._check_tokens("tgt", tgt, self.tgt_embed.num_embeddings)
        _check_x("memory", memory, self.d_model, self, "Transformer.decode")
        if cache is not None and not isinstance(cache, DecoderCache):
            raise TypeError(f"Transformer.decode: cache must be a DecoderCache (model.new_cache()) "
                            f"or None, got {_checks.got(cache)}")
        start = 0 if cache is None else len(cache)
        if tgt.shape[0] != memory.shape[0]:
            raise ValueError(f"Transformer.decode: tgt {tuple(tgt.shape)} and memory "
                             f"{tuple(memory.shape)} must share the batch size B")
        layer = self.decoder.layers[0]
        b, lt = tgt.shape
        layer.self_attn._mask(tgt_mask, b, lt, start + lt, "Transformer.decode", "tgt_mask")
        layer.cross_attn._mask(src_mask, b, lt, memory.shape[1], "Transformer.decode", "src_mask")
        y = self.pos(self.tgt_embed(tgt) * math.sqrt(self.d_model), start=start)  # (B, Lt, d_model)
        h = self.decoder(y, memory, tgt_mask, src_mask, need_weights=need_weights, cache=cache)
        return self.out_proj(h)  # (B, Lt, tgt_vocab_size)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, need_weights: bool = True):
        """Teacher forcing: src (B, Ls), tgt (B, Lt) -> logits (B, Lt, tgt_vocab_size)."""
        memory = self.encode(src, src_mask, need_weights=need_weights)
        return self.decode(tgt, memory, src_mask, tgt_mask, need_weights=need_weights)

    def new_cache(self) -> DecoderCache:
        """An empty key/value cache for incremental decoding (see ``greedy_decode(use_cache=True)``)."""
        return DecoderCache(len(self.decoder.layers))
