"""Checkers for the exercises of notebook 10 (what breaks the date translator)."""

from __future__ import annotations

import torch

from ..attention import MultiHeadAttention, causal_mask
from ..transformer import Transformer
from ._common import NotAttempted, call, checker

__all__ = ["WRONG_TRIES", "check_one_head", "check_warmup", "check_without_positions"]

# Wrong answers so far in this session (exercise 1's accuracies, exercise 2's losses): the first gets
# a hint only, later ones the values our runs reached as well.
WRONG_TRIES = {"accuracies": 0, "losses": 0}

# Exercise 2: the lowest loss a model that ignores the source can reach on the recipe's training
# dates (the entropy of the label-smoothed targets at each output place, averaged over the places;
# the solutions compute it: 2.3802), and how far below it both step-100 losses must end. Ten seeds
# of the solution's run end 0.22 to 0.42 below it (tests/conclusions/test_nb10_translator.py).
SOURCE_FREE_FLOOR = 2.38
BELOW_FLOOR = 0.2


def _small_model(norm_first=True) -> Transformer:
    torch.manual_seed(0)
    return Transformer(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0,
                       max_len=32, norm_first=norm_first).eval()


@checker("Exercise 1 (no positional encoding)")
def check_without_positions(fn, accuracies=None):
    """``fn(model)`` changes the model in place so that no position information is added, and
    returns it. Then permuting the source tokens only permutes the encoder's output.
    ``accuracies`` = (with positions, without): the exact-match accuracy on the validation dates
    of the two models after the same short training (600 steps)."""
    model = _small_model()
    embed_before = model.src_embed.weight.detach().clone()
    length = model.pos.pe.shape[-2]  # a source as long as the table, so that no position is left out
    got = call(fn, model)
    assert isinstance(got, Transformer), (
        f"return the model you changed (a Transformer), got {type(got).__name__}")
    assert torch.equal(got.src_embed.weight, embed_before), (
        "the token embeddings changed: keep them (the model still has to know which token "
        "is which) and switch off only the positional encoding")
    src = (torch.arange(length) % 17 + 3)[None]  # (1, Ls)
    perm = torch.randperm(length, generator=torch.Generator().manual_seed(0))
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
    if accuracies is None or accuracies is Ellipsis:
        raise NotAttempted("without_positions is right. Now train both models (600 steps each) and "
                           "pass their validation accuracies: accuracies = (with positions, without).")
    _check_accuracies(accuracies)


def _check_accuracies(accuracies) -> None:
    pair = isinstance(accuracies, (tuple, list)) and len(accuracies) == 2
    assert pair and all(isinstance(a, (int, float)) and not isinstance(a, bool) and 0 <= a <= 1
                        for a in accuracies), (
        f"expected accuracies = (with positions, without), two fractions from 0 to 1, got "
        f"{accuracies!r:.80}. exact_match_accuracy returns (accuracy, translations): take its [0]")
    with_pos, without = accuracies
    assert with_pos != without, (
        f"both accuracies are {with_pos:.4f}: did you measure the same model twice? Train one model "
        "with positions and one without_positions(...), and measure each")
    assert with_pos > without, (
        f"the model without positions came out ahead ({without:.4f} against {with_pos:.4f} with "
        "them). Check the order, (with positions, without), and that both runs trained for the same "
        "600 steps from the same seed and were measured on the same validation dates")
    assert with_pos - without >= 0.05, (
        f"the model without positions is only {with_pos - without:.4f} behind ({without:.4f} against "
        f"{with_pos:.4f}); after 600 steps each it is at least 0.05 behind. Check that both runs "
        "trained for the same 600 steps (a shorter run leaves both models far from done) from the "
        "same seed, and that without_positions was applied before training")
    if without < 0.5:
        WRONG_TRIES["accuracies"] += 1
        expected = ("" if WRONG_TRIES["accuracies"] == 1 else
                    " After 600 steps each, our runs reached about 0.93-0.98 with positions and 0.82-0.86 "
                    "without: a model that never had positions still learns most dates.")
        raise AssertionError(
            f"the model without positions scored only {without:.4f}. Near 0 means positions were "
            "removed after training: that model learned to use them and then lost them. Apply "
            "without_positions to a fresh model, then train it for the same 600 steps." + expected
            + ("" if expected else " (A second wrong try shows the accuracies to expect.)"))


@checker("Exercise 2 (one head)")
def check_one_head(fn, reference: Transformer, losses=None):
    """``fn(vocab_size)`` builds the same model as ``reference`` but with one attention head.
    ``losses`` = (one head, four heads): the training loss of each at step 100 (warm-up 30). Both
    must end clearly below what a model that ignores the source can reach (``SOURCE_FREE_FLOOR``),
    or the falling loss says nothing about whether the model reads the source."""
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
    if losses is None or losses is Ellipsis:
        raise NotAttempted("one_head_model is right. Now train it and the 4-head model for 100 steps "
                           "each and pass their last losses: losses = (one head, four heads).")
    _check_losses(losses)


def _check_losses(losses) -> None:
    pair = isinstance(losses, (tuple, list)) and len(losses) == 2
    assert pair and all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in losses), (
        f"expected losses = (one head, four heads), two positive numbers, got {losses!r:.80}: "
        "take the last entry of each history's 'loss' list, e.g. history['loss'][-1]")
    one, four = losses
    assert one != four, (
        f"both losses are {one:.4f}: did you train the same model twice? Train one_head_model(...) "
        "and make_translator(...), and take each one's last loss")
    limit = SOURCE_FREE_FLOOR - BELOW_FLOOR
    high = [f"{name} {x:.4f}" for name, x in (("one head", one), ("four heads", four)) if x >= limit]
    if high:
        WRONG_TRIES["losses"] += 1
        expected = ("" if WRONG_TRIES["losses"] == 1 else
                    f" Our runs (ten seeds, 100 steps, warm-up 30) ended at 1.96-2.16 with one head and "
                    f"1.98-2.12 with four, 0.22 to 0.42 below the floor {SOURCE_FREE_FLOOR}: one head "
                    f"still learns, and within 0.1 of four.")
        raise AssertionError(
            f"{' and '.join(high)}: not below {limit:.2f}. A model that ignores the source can already "
            f"reach a loss of about {SOURCE_FREE_FLOOR} (by writing the tokens that are common at each "
            "place of the output), so a loss near or above that says nothing about learning. Pass the "
            "loss at step 100 (the last one), not an earlier one, after 100 steps with warmup_steps=30 "
            "and the recipe's batch_size=64 and peak_lr=2e-3." + expected
            + ("" if expected else " (A second wrong try shows the losses to expect.)"))


@checker("Exercise 3 (post-LN with and without warm-up)")
def check_warmup(histories, answer):
    """``histories`` = (no_warmup_history, warmup_history) from ``train_seq2seq``: the same post-LN
    model (``norm_first=False``), the same high peak learning rate and the same number of steps,
    once with ``warmup_steps=0`` and once with a warm-up (or a function returning them); ``answer``
    names the run with the lower final loss: "with warm-up" or "without warm-up". Only the warm-up
    differs between the two runs, so the comparison measures its effect alone."""
    if callable(histories):
        histories = call(histories)
    if histories is None or histories is Ellipsis:
        call(_not_attempted)
    got = (f"{type(histories).__name__} of length {len(histories)}"
           if isinstance(histories, (tuple, list)) else type(histories).__name__)
    assert isinstance(histories, (tuple, list)) and len(histories) == 2, (
        f"expected a pair (history without warm-up, history with warm-up), got a {got}")
    for hist, name in ((histories[0], "first (no warm-up)"), (histories[1], "second (warm-up)")):
        assert isinstance(hist, dict) and "config" in hist, (
            f"the {name} entry should be the dict that train_seq2seq returns (with a 'config' "
            f"entry), got {type(hist).__name__}"
            + (f" with keys {sorted(hist)[:6]}" if isinstance(hist, dict) else ""))
        cfg = hist["config"]
        assert cfg["norm_first"] is False, (
            f"the {name} run has norm_first={cfg['norm_first']}: both runs are post-LN "
            "(norm_first=False), so that the warm-up is the only difference")
        assert cfg["peak_lr"] >= 5e-3, (
            f"the {name} run used peak_lr={cfg['peak_lr']}; use a high one such as 1e-2")
    none_cfg, warm_cfg = histories[0]["config"], histories[1]["config"]
    assert none_cfg["warmup_steps"] == 0, (
        f"the first run used warmup_steps={none_cfg['warmup_steps']}; it is the run without "
        "warm-up (warmup_steps=0)")
    assert warm_cfg["warmup_steps"] > 0, (
        "the second run used warmup_steps=0 too: give it a warm-up (e.g. warmup_steps=30)")
    for entry in sorted((set(none_cfg) | set(warm_cfg)) - {"warmup_steps"}):
        a, b = none_cfg.get(entry, "not set"), warm_cfg.get(entry, "not set")
        assert a == b, (
            f"the two runs differ in {entry} ({a} and {b}) as well as in the warm-up: change only "
            "the warm-up, or you measure two effects at once")
    if answer is None or answer is Ellipsis:
        call(_not_attempted)
    assert answer in ("with warm-up", "without warm-up"), (
        f'expected the answer "with warm-up" or "without warm-up", got {answer!r}')
    none_loss, warm_loss = histories[0]["loss"][-1], histories[1]["loss"][-1]
    assert abs(none_loss - warm_loss) > 0.1, (
        f"the final losses ({none_loss:.4f} without warm-up, {warm_loss:.4f} with) are too close "
        "to tell; use a higher peak_lr")
    learner = "with warm-up" if warm_loss < none_loss else "without warm-up"
    assert answer == learner, (
        f"you answered {answer!r}, but look at your own runs again: the final loss was "
        f"{none_loss:.4f} without warm-up and {warm_loss:.4f} with it; the lower one learned faster")


def _not_attempted():
    raise NotImplementedError
