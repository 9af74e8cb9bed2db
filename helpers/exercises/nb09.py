"""Checkers for the exercises of notebook 09 (the full Transformer)."""

from __future__ import annotations

import torch

from ._common import NotAttempted, call, checker

__all__ = ["SHAPE_STEPS", "check_param_count", "check_shapes", "check_shift_targets", "transformer_param_count"]


def transformer_param_count(src_vocab, tgt_vocab, d_model, num_layers, d_ff, norm_first=False,
                            tie_weights=False) -> int:
    """The reference formula (used by the checker and the unit tests)."""
    d = d_model
    mha = 4 * d * d + 4 * d
    ffn = 2 * d * d_ff + d_ff + d
    norm = 2 * d
    enc_layer = mha + ffn + 2 * norm
    dec_layer = 2 * mha + ffn + 3 * norm
    final_norms = 2 * norm if norm_first else 0
    out = (0 if tie_weights else d * tgt_vocab) + tgt_vocab
    return (src_vocab + tgt_vocab) * d + num_layers * (enc_layer + dec_layer) + final_norms + out


@checker("Exercise 1 (parameter count)")
def check_param_count(fn):
    """``fn(src_vocab, tgt_vocab, d_model, num_layers, d_ff, norm_first, tie_weights)`` -> int."""
    cases = [(11, 13, 16, 2, 32, False, False), (11, 13, 16, 2, 32, True, False),
             (11, 13, 16, 2, 32, False, True), (40, 30, 64, 3, 256, True, True),
             (1000, 1000, 512, 6, 2048, False, False)]
    for case in cases:
        got = call(fn, *case)
        want = transformer_param_count(*case)
        args = dict(zip(("src_vocab", "tgt_vocab", "d_model", "num_layers", "d_ff", "norm_first",
                         "tie_weights"), case, strict=True))
        s, t, d, n, f, nf, tie = case
        if got == want:
            continue
        layer_norms = n * 5 * 2 * d  # 2 per encoder layer + 3 per decoder layer, 2·d_model each
        if got == want - layer_norms:
            raise AssertionError(f"{args}: got {got}, {layer_norms} too few: that is "
                                 f"{layer_norms // (2 * d)} blocks of 2·d_model. Which blocks inside "
                                 "the layers have 2·d_model parameters?")
        if nf and got == want - 4 * d:
            raise AssertionError(f"{args}: got {got}, 4·d_model = {4 * d} too few: with "
                                 "norm_first=True, what does each stack add after its last layer?")
        if tie and got == want + d * t:
            raise AssertionError(f"{args}: got {got}, d_model·tgt_vocab = {d * t} too many: with "
                                 "tie_weights=True, how many matrices of that size does the model hold?")
        if got == want - n * 3 * 4 * d:
            raise AssertionError(f"{args}: got {got}, {n * 12 * d} too few (12·d_model per layer pair): "
                                 "did you count every attention's biases?")
        raise AssertionError(f"{args}: got {got}, expected {want} (difference {got - want}); "
                             "count block by block: embeddings, each layer, final norms, output")


@checker("Exercise 2 (teacher forcing: shift the targets)")
def check_shift_targets(fn):
    """``fn(tgt)``: tgt (B, L) = <bos> y1 .. yn <eos> -> (decoder_input, labels), each (B, L - 1)."""
    tgt = torch.tensor([[1, 5, 6, 7, 2], [1, 8, 9, 2, 0]])  # (B, L): 1 = <bos>, 2 = <eos>, 0 = <pad>
    got = call(fn, tgt)
    assert isinstance(got, tuple) and len(got) == 2, "return a tuple (decoder_input, labels)"
    inp, lab = got
    for name, v in (("decoder_input", inp), ("labels", lab)):
        assert isinstance(v, torch.Tensor), f"{name} must be a tensor, got {type(v).__name__}"
        assert v.shape == (2, 4), f"{name} must be (B, L - 1) = (2, 4), got {tuple(v.shape)}"
    if torch.equal(inp, tgt[:, 1:]) and torch.equal(lab, tgt[:, :-1]):
        raise AssertionError(f"swapped: for the target {tgt[0].tolist()} your decoder_input is "
                             f"{inp[0].tolist()} and your labels {lab[0].tolist()}; which of the two "
                             "starts with <bos> (id 1)?")
    assert torch.equal(inp, tgt[:, :-1]), (
        f"decoder_input: for the target {tgt[0].tolist()} (1 = <bos>, 2 = <eos>) you gave "
        f"{inp[0].tolist()}; the decoder reads what comes before each label")
    assert torch.equal(lab, tgt[:, 1:]), (
        f"labels: for the target {tgt[0].tolist()} (1 = <bos>, 2 = <eos>) you gave {lab[0].tolist()}; "
        "position i must predict the token that follows decoder_input[i]")


# Exercise 3: the stated model and batch, and the tensors whose shapes the learner predicts.
SHAPE_MODEL = dict(src_vocab_size=30, tgt_vocab_size=40, d_model=64, num_heads=8, num_layers=3,
                   d_ff=256)
SHAPE_STEPS = ("decoder input", "memory", "queries per head (cross-attention)",
               "cross-attention weights", "decoder self-attention weights",
               "feed-forward hidden (decoder)", "logits")


def _true_shapes() -> dict[str, tuple[int, ...]]:
    """Run the stated model on a batch of 4 sources of 9 ids and 4 targets of 7 ids (<bos> .. <eos>)
    and record the shapes (with hooks, nothing computed by hand)."""
    from ..attention import padding_mask, target_mask
    from ..transformer import Transformer

    torch.manual_seed(0)
    model = Transformer(**SHAPE_MODEL, dropout=0.0).eval()
    src = torch.randint(3, 30, (4, 9))  # (B, Ls)
    tgt = torch.randint(3, 40, (4, 7))  # (B, 7): <bos> y1 .. y5 <eos>
    dec_in = tgt[:, :-1]
    seen: dict[str, tuple[int, ...]] = {"decoder input": tuple(dec_in.shape)}
    layer = model.decoder.layers[0]

    def record(module, inputs, output):  # returns None: the output stays as it is
        seen["feed-forward hidden (decoder)"] = tuple(output.shape)

    hooks = [layer.feed_forward.linear1.register_forward_hook(record)]
    with torch.no_grad():
        memory = model.encode(src, padding_mask(src, 0))
        logits = model.decode(dec_in, memory, padding_mask(src, 0), target_mask(dec_in, 0))
    for h in hooks:
        h.remove()
    b, heads, lt, _ = layer.cross_attn.attn_weights.shape  # one query row per target position
    seen["queries per head (cross-attention)"] = (b, heads, lt, layer.cross_attn.d_k)
    seen["memory"] = tuple(memory.shape)
    seen["cross-attention weights"] = tuple(layer.cross_attn.attn_weights.shape)
    seen["decoder self-attention weights"] = tuple(layer.self_attn.attn_weights.shape)
    seen["logits"] = tuple(logits.shape)
    return seen


@checker("Exercise 3 (the shape at each step)")
def check_shapes(shapes):
    """``shapes``: {step name: shape tuple} for every name in ``SHAPE_STEPS``."""
    assert isinstance(shapes, dict), f"give a dict {{step: shape}}, got {type(shapes).__name__}"
    if any(v is None or v is Ellipsis for v in shapes.values()):
        raise NotAttempted
    missing = [k for k in SHAPE_STEPS if k not in shapes]
    assert not missing, f"these steps have no shape yet: {missing}"
    want = _true_shapes()
    bad = []
    for k in SHAPE_STEPS:
        try:
            got = tuple(int(n) for n in shapes[k])
        except (TypeError, ValueError):
            raise AssertionError(f"{k!r}: give a tuple of ints such as (4, 9), got {shapes[k]!r}") from None
        if got != want[k]:
            bad.append((k, got))
    if not bad:
        return
    k, got = bad[0]
    hint = {
        "decoder input": "the decoder reads the target without one of its tokens",
        "queries per head (cross-attention)": "(B, h, Lt, d_k): how wide is one head?",
        "cross-attention weights": "one row per query, one column per key: where do the queries "
                                   "and the keys of cross-attention come from?",
        "decoder self-attention weights": "one row per query, one column per key",
        "logits": "which vocabulary does the output projection score?",
    }.get(k, "follow the tensor through the model")
    raise AssertionError(f"{len(bad)} of {len(SHAPE_STEPS)} shapes are wrong; the first: {k!r}, you "
                         f"gave {got} (length {len(got)}, expected length {len(want[k])}). Hint: {hint}")
