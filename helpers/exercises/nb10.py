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
def check_one_head(fn, reference: Transformer, histories=None):
    """``fn(vocab_size)`` builds the same model as ``reference`` but with one attention head.
    ``histories`` = (one head, four heads): what ``train_seq2seq`` returned for each run of 100
    steps (warm-up 30, the recipe's batch size and peak learning rate, logged every 25 steps or
    more often), with nothing else different. The checker reads the loss at step 100 from them:
    both must end clearly below what a model that ignores the source can reach
    (``SOURCE_FREE_FLOOR``), or the falling loss says nothing about whether the model reads the
    source."""
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
    if histories is None or histories is Ellipsis:
        raise NotAttempted("one_head_model is right. Now train it and the 4-head model for 100 steps "
                           "each and pass what train_seq2seq returned: histories = (one head, four heads).")
    _check_losses(*_step_100_losses(histories))


# Exercise 2's runs: what the question fixes (besides the heads), as in exercise 1.
ONE_HEAD_RUN = {"steps": 100, "warmup_steps": 30, "batch_size": 64, "peak_lr": 2e-3}
LOG_EVERY = 25  # the loss logged at step 100 is the mean of the last log_every steps


def _step_100_losses(histories) -> tuple[float, float]:
    got = (f"{type(histories).__name__} of length {len(histories)}"
           if isinstance(histories, (tuple, list)) else type(histories).__name__)
    assert isinstance(histories, (tuple, list)) and len(histories) == 2, (
        f"expected histories = (one head, four heads), the two dicts that train_seq2seq returned, got a {got}")
    for hist, name in ((histories[0], "first (one head)"), (histories[1], "second (four heads)")):
        assert isinstance(hist, dict) and {"config", "loss", "step"} <= set(hist), (
            f"the {name} entry should be the dict that train_seq2seq returns (with 'config', 'step' "
            f"and 'loss' entries), got {type(hist).__name__} {hist!r:.40}: pass the histories, not "
            "the losses; the checker reads the loss at step 100 from them")
        cfg = hist["config"]
        for entry, want in ONE_HEAD_RUN.items():
            assert cfg.get(entry) == want, (
                f"the {name} run has {entry}={cfg.get(entry)}; the question is about runs with "
                + ", ".join(f"{k}={v}" for k, v in ONE_HEAD_RUN.items()))
        steps = hist["step"]
        interval = steps[-1] - (steps[-2] if len(steps) > 1 else 0) if steps else None
        assert steps and steps[-1] == 100 and interval <= LOG_EVERY, (
            f"the {name} run logged its loss every {interval} steps: the loss logged at step 100 is "
            f"the mean of that many steps. Pass log_every={LOG_EVERY}, so that it is the mean of steps 76-100")
    a, b = histories[0]["config"], histories[1]["config"]
    differ = sorted(k for k in set(a) | set(b) if a.get(k, "not set") != b.get(k, "not set"))
    assert not differ, (
        f"the two runs differ in {', '.join(differ)} ({[a.get(k) for k in differ]} and "
        f"{[b.get(k) for k in differ]}): change only the number of heads, or you measure two effects at once")
    one, four = histories[0]["loss"][-1], histories[1]["loss"][-1]
    assert one != four, (
        f"both runs ended at {one:.4f}: did you train the same model twice? Train one_head_model(...) "
        "and make_translator(...), the same way")
    return one, four


def _check_losses(one: float, four: float) -> None:
    limit = SOURCE_FREE_FLOOR - BELOW_FLOOR
    high = [f"{name} {x:.4f}" for name, x in (("one head", one), ("four heads", four)) if x >= limit]
    if high:
        WRONG_TRIES["losses"] += 1
        floor = ("" if WRONG_TRIES["losses"] == 1 else
                 f" Where {SOURCE_FREE_FLOOR} comes from: at each place of the output, the best a model "
                 "that never looks at the source can do is to predict how often each token occurs there "
                 "in the training targets (label-smoothed); its loss is the entropy of that distribution, "
                 f"averaged over the places. A model that reads the source must end clearly below it: "
                 f"{BELOW_FLOOR} or more after 100 steps, in each of our ten runs.")
        raise AssertionError(
            f"{' and '.join(high)} at step 100: not below {limit:.2f}. A model that ignores the source "
            f"can already reach a loss of about {SOURCE_FREE_FLOOR} (by writing the tokens that are "
            "common at each place of the output), so a loss near or above that says nothing about "
            "learning. Check how each model was built (only num_heads differs from the recipe)." + floor
            + ("" if floor else " (A second wrong try explains the floor.)"))


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
