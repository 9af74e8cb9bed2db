"""Checkers for the exercises of notebook 10 (what breaks the date translator)."""

from __future__ import annotations

import torch

from ..attention import MultiHeadAttention, causal_mask
from ..transformer import Transformer
from ._common import call, checker

__all__ = ["check_no_warmup", "check_one_head", "check_without_positions"]


def _small_model(norm_first=True) -> Transformer:
    torch.manual_seed(0)
    return Transformer(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0,
                       max_len=32, norm_first=norm_first).eval()


@checker("Exercise 1 (no positional encoding)")
def check_without_positions(fn):
    """``fn(model)`` changes the model in place so that no position information is added, and
    returns it. Then permuting the source tokens only permutes the encoder's output."""
    model = _small_model()
    embed_before = model.src_embed.weight.detach().clone()
    got = call(fn, model)
    assert isinstance(got, Transformer), (
        f"return the model you changed (a Transformer), got {type(got).__name__}")
    assert torch.equal(got.src_embed.weight, embed_before), (
        "the token embeddings changed: keep them (the model still has to know which token "
        "is which) and switch off only the positional encoding")
    src = torch.tensor([[3, 4, 5, 6, 7, 8]])  # (1, Ls)
    perm = torch.tensor([5, 2, 0, 4, 1, 3])
    with torch.no_grad():
        memory = got.encode(src)  # (1, Ls, d_model)
        memory_perm = got.encode(src[:, perm])
    assert memory.abs().sum() > 0, "the encoder's output is all zeros: only positions should go"
    gap = (memory_perm - memory[:, perm]).abs().max().item()
    assert gap <= 1e-5, (
        f"the encoder still knows where each token is: expected permuting the source to only "
        f"permute its output (difference at most 1e-5), got a difference of {gap:.4f}. Some "
        f"position information still reaches the embeddings: look at what the model adds to "
        f"them before the first layer")
    tgt = torch.tensor([[1, 3, 4]])  # (1, Lt)
    try:
        with torch.no_grad():
            got(src, tgt, None, causal_mask(3))  # the whole model: the decoder uses model.pos too
    except Exception as err:  # noqa: BLE001 -- any failure here is the learner's change
        raise AssertionError(
            f"the encoder ignores positions now, but the whole model no longer runs "
            f"({type(err).__name__}: {err}). The decoder calls model.pos(x, start=...) as well: "
            f"keep model.pos and make it add nothing (e.g. zero its table model.pos.pe), or "
            f"replace it by a module that also accepts start") from None


@checker("Exercise 2 (one head)")
def check_one_head(fn, reference: Transformer):
    """``fn(vocab_size)`` builds the same model as ``reference`` but with one attention head."""
    vocab = reference.src_embed.num_embeddings
    got = call(fn, vocab)
    assert isinstance(got, Transformer), f"return a Transformer, got {type(got).__name__}"
    mhas = [m for m in got.modules() if isinstance(m, MultiHeadAttention)]
    heads = sorted({m.num_heads for m in mhas})
    assert heads == [1], (
        f"expected 1 head in every attention layer, found num_heads {heads} in {len(mhas)} layers")
    assert got.d_model == reference.d_model, (
        f"keep d_model = {reference.d_model} (got {got.d_model}): only the number of heads changes")
    assert len(got.encoder.layers) == len(reference.encoder.layers), (
        f"keep {len(reference.encoder.layers)} layers, got {len(got.encoder.layers)}")
    d_ff = reference.encoder.layers[0].feed_forward.linear1.out_features
    assert got.encoder.layers[0].feed_forward.linear1.out_features == d_ff, f"keep d_ff = {d_ff}"
    assert (got.encoder.norm is None) == (reference.encoder.norm is None), (
        "keep the same LayerNorm placement (norm_first) as the reference model")
    n_got = sum(p.numel() for p in got.parameters())
    n_ref = sum(p.numel() for p in reference.parameters())
    assert n_got == n_ref, (
        f"{n_got} parameters, but the reference has {n_ref}: with the same d_model the number of "
        "heads should not change the parameter count. Check the vocabulary size and d_ff")


@checker("Exercise 3 (post-LN vs pre-LN without warm-up)")
def check_no_warmup(histories, answer):
    """``histories`` = (post_ln_history, pre_ln_history) from ``train_seq2seq`` with no warm-up and
    a high learning rate (or a function returning them); ``answer`` names the variant that learns
    faster (the lower final loss): "pre-LN" or "post-LN"."""
    if callable(histories):
        histories = call(histories)
    if histories is None or histories is Ellipsis:
        call(_not_attempted)
    got = (f"{type(histories).__name__} of length {len(histories)}"
           if isinstance(histories, (tuple, list)) else type(histories).__name__)
    assert isinstance(histories, (tuple, list)) and len(histories) == 2, (
        f"expected a pair (post-LN history, pre-LN history), got a {got}")
    for hist, want_pre, name in ((histories[0], False, "first (post-LN)"),
                                 (histories[1], True, "second (pre-LN)")):
        assert isinstance(hist, dict) and "config" in hist, (
            f"the {name} entry should be the dict that train_seq2seq returns (with a 'config' "
            f"entry), got {type(hist).__name__}"
            + (f" with keys {sorted(hist)[:6]}" if isinstance(hist, dict) else ""))
        cfg = hist["config"]
        assert cfg["norm_first"] == want_pre, (
            f"the {name} model has norm_first={cfg['norm_first']}: build it with "
            f"norm_first={want_pre}")
        assert cfg["warmup_steps"] == 0, (
            f"the {name} run used warmup_steps={cfg['warmup_steps']}; the point is to train "
            "with none (warmup_steps=0)")
        assert cfg["peak_lr"] >= 5e-3, (
            f"the {name} run used peak_lr={cfg['peak_lr']}; use a high one such as 1e-2")
    if answer is None or answer is Ellipsis:
        call(_not_attempted)
    assert answer in ("pre-LN", "post-LN"), f'expected the answer "pre-LN" or "post-LN", got {answer!r}'
    post, pre = histories[0]["loss"][-1], histories[1]["loss"][-1]
    assert abs(post - pre) > 0.1, (
        f"the final losses ({post:.4f} post-LN, {pre:.4f} pre-LN) are too close to tell; "
        "train longer or with a higher peak_lr")
    learner = "pre-LN" if pre < post else "post-LN"
    assert answer == learner, (
        f"you answered {answer!r}, but look at your own runs again: the final loss was {post:.4f} "
        f"for post-LN and {pre:.4f} for pre-LN; the one with the lower loss learned faster")


def _not_attempted():
    raise NotImplementedError
