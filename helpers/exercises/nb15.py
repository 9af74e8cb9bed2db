"""Checkers for the exercises of notebook 15 (a real language model, opened)."""

from __future__ import annotations

import numpy as np
import torch

from ..positional import apply_rope, interleaved_to_half, rope_half
from ._common import call, checker

__all__ = ["check_q8_0_block", "check_rope_permutation", "check_newline_sink", "newline_sink_layers"]


def _q8_0_block(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random Q8_0 block (34 bytes: a float16 scale, then 32 int8 values) and its 32 numbers."""
    rng = np.random.default_rng(seed)
    scale = np.float16(rng.uniform(0.001, 0.05))
    values = rng.integers(-128, 128, size=32).astype(np.int8)
    raw = np.concatenate([np.frombuffer(scale.tobytes(), np.uint8), values.view(np.uint8)])
    return raw, np.float32(scale) * values.astype(np.float32)


@checker("Exercise 1 (a Q8_0 block by hand)")
def check_q8_0_block(fn):
    """``fn(raw)``: 34 bytes (uint8) of one Q8_0 block -> its 32 numbers (float32 tensor or array)."""
    for seed in range(3):
        raw, want = _q8_0_block(seed)
        got = call(fn, raw.copy())
        got = np.asarray(got.detach() if isinstance(got, torch.Tensor) else got, dtype=np.float64)
        assert got.shape == (32,), f"a Q8_0 block holds 32 numbers; expected shape (32,), got {got.shape}"
        if np.allclose(got, want, rtol=1e-6, atol=1e-9):
            continue
        unsigned = np.float32(want[0] / raw[2:].view(np.int8)[0]) * raw[2:].astype(np.float32) \
            if raw[2:].view(np.int8)[0] else None
        if unsigned is not None and np.allclose(got, unsigned, rtol=1e-5):
            raise AssertionError("the 32 values are signed bytes (int8, -128..127): you read them as "
                                 "unsigned (0..255); use raw[2:].view(np.int8)")
        scale = np.float32(raw[:2].view(np.float16)[0])
        if np.allclose(got, raw[2:].view(np.int8).astype(np.float64)):
            raise AssertionError(f"you returned the int8 values without the scale: multiply each by the "
                                 f"block's float16 scale (raw[:2].view(np.float16), here {scale:.5f})")
        raise AssertionError(f"block {seed}: expected the first numbers {np.round(want[:3], 5).tolist()}, got "
                             f"{np.round(got[:3], 5).tolist()}: a Q8_0 number is scale * value, with the "
                             "scale in bytes 0-1 (float16) and 32 int8 values after it")


@checker("Exercise 2 (the rows Hugging Face needs)")
def check_rope_permutation(fn):
    """``fn(w, num_heads)``: a query or key weight (num_heads * d_k, d_model) with each head's rows
    in adjacent-pair RoPE order -> the same weight with each head's rows in half-split order."""
    g = torch.Generator().manual_seed(15)
    for heads, d_k, d_model in ((3, 4, 5), (2, 8, 6), (1, 6, 3)):
        w = torch.randn(heads * d_k, d_model, generator=g)
        got = call(fn, w.clone(), heads)
        assert isinstance(got, torch.Tensor) and got.shape == w.shape, (
            f"return a tensor of the same shape {tuple(w.shape)}, got "
            f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}")
        x, pos = torch.randn(2, d_model, generator=g), torch.arange(2.0)
        ours = apply_rope((x @ w.T).view(2, heads, d_k).transpose(0, 1), pos)  # (heads, 2, d_k)
        theirs = rope_half((x @ got.T).view(2, heads, d_k).transpose(0, 1), pos)
        perm = interleaved_to_half(d_k)
        if torch.allclose(theirs, ours[..., perm], atol=1e-5):
            continue
        whole = w[interleaved_to_half(heads * d_k)]
        if torch.equal(got, whole) and heads > 1:
            raise AssertionError("you permuted all the rows at once: the pairs belong to each head, so "
                                 "reorder the d_k rows of every head separately (w.view(num_heads, d_k, -1))")
        inverse = w.view(heads, d_k, -1)[:, torch.argsort(perm)].reshape(w.shape)
        if torch.equal(got, inverse):
            raise AssertionError("that is the inverse permutation (half-split -> adjacent pairs); here each "
                                 "head's rows must become even rows first, then odd rows")
        raise AssertionError(f"with {heads} heads of d_k={d_k}, rope_half on your rows does not give "
                             "apply_rope's rotation: each head's rows 0, 2, 4, ... must come first, then "
                             "1, 3, 5, ...")


def newline_sink_layers(model, tokenizer, sentence: str, threshold: float = 0.3, start: int = 4) -> int:
    """In how many layers the queries from position ``start`` on give the first position more than
    ``threshold`` of their attention (mean over heads and queries) when ``sentence`` starts with a
    newline token."""
    from ..llm import attention_maps  # imported here: the checkers load without the model

    ids = torch.tensor([tokenizer.encode("\n" + sentence)])
    share = attention_maps(model, ids)[:, 0, :, start:, 0].mean(dim=(1, 2))  # (num_layers,)
    return int((share > threshold).sum())


@checker("Exercise 3 (a sink without meaning)")
def check_newline_sink(prediction, model, tokenizer, sentence: str):
    """``prediction``: True if a sentence that starts with a newline still sends more than 0.3 of
    the later queries' attention to its first position in more than half of the layers."""
    assert isinstance(prediction, bool), f"answer True or False, got {prediction!r}"
    layers = newline_sink_layers(model, tokenizer, sentence)
    total = len(model.blocks)
    held = layers > total // 2
    assert prediction == held, (
        f"measured: with a newline first, {layers} of {total} layers give the first position more than "
        f"0.3 of the attention, so the sink {'does' if held else 'does not'} survive. "
        + ("The sink is a place to put attention, not a meaning: any first token serves"
           if held else "Here the first token's identity matters"))
    print(f"  {layers} of {total} layers keep the sink with a newline first")
