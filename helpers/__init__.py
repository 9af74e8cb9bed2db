"""Helpers for "Attention, step by step".

Each notebook ends by exporting the block it built; later notebooks import it from here:

    from helpers import scaled_dot_product_attention, MultiHeadAttention, Transformer

Where things live (CONTRIBUTING.md has the map and the rules): the blocks, one module per idea
and notebook (``attention``, ``positional``, ``layers``, ``transformer``, ``decoding``,
``efficient``, ``sampling``, ``gpt``, ``modern``, ``induction``); the data sets (``data``); on top
of them ``training`` (one loop), ``translator`` (notebook 10's application) and ``cache`` (trained
models on disk); and on top of everything ``plots``, ``widgets`` and ``exercises``. ``claims``
holds the readable checks of the lessons.
"""

from . import _inline  # noqa: F401  (figures show inline in kernels even under MPLBACKEND=Agg)
from .attention import (
    KVCache,
    MultiHeadAttention,
    causal_mask,
    copy_attention_weights,
    padding_mask,
    scaled_dot_product_attention,
    target_mask,
)
from .cache import train_once
from .claims import claim, claim_close
from .data import ByteLevelBPE, CharTokenizer, date_splits
from .decoding import beam_search, greedy_decode
from .diagrams import show_diagram
from .efficient import online_softmax, tiled_attention
from .env import environment_report, get_device, in_colab, seed_everything
from .gpt import GPT
from .layers import Decoder, DecoderCache, DecoderLayer, Encoder, EncoderLayer, FeedForward
from .modern import GroupedQueryAttention, RMSNorm, kv_cache_bytes, sliding_window_mask
from .positional import PositionalEncoding, apply_rope, sinusoidal_positional_encoding
from .training import count_parameters, label_smoothed_cross_entropy, train_seq2seq, warmup_lr
from .transformer import Transformer
from .translator import exact_match_accuracy

__all__ = [
    "GroupedQueryAttention",
    "RMSNorm",
    "kv_cache_bytes",
    "sliding_window_mask",
    "ByteLevelBPE",
    "CharTokenizer",
    "Decoder",
    "DecoderCache",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "FeedForward",
    "GPT",
    "KVCache",
    "MultiHeadAttention",
    "PositionalEncoding",
    "Transformer",
    "apply_rope",
    "beam_search",
    "causal_mask",
    "claim",
    "claim_close",
    "copy_attention_weights",
    "count_parameters",
    "date_splits",
    "environment_report",
    "exact_match_accuracy",
    "get_device",
    "greedy_decode",
    "in_colab",
    "label_smoothed_cross_entropy",
    "online_softmax",
    "padding_mask",
    "scaled_dot_product_attention",
    "seed_everything",
    "show_diagram",
    "sinusoidal_positional_encoding",
    "target_mask",
    "tiled_attention",
    "train_once",
    "train_seq2seq",
    "warmup_lr",
]
