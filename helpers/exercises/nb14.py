"""Checkers for the exercises of notebook 14 (induction heads)."""

from __future__ import annotations

import torch

from ..data.repeated import repeated_tokens
from ..induction import (
    AttentionOnlyTransformer,
    copying_share,
    eigenvalue_positivity,
    full_ov_circuit,
    per_position_loss,
)
from ._common import call, checker

__all__ = ["check_ablation_guess", "check_duplicate_token_score", "check_full_ov_circuit",
           "check_one_layer_prediction"]


def _patterns(n: int) -> torch.Tensor:
    """Causal (3, 2n, 2n) test patterns: random rows, plus one sharp duplicate-token pattern (each
    query of the repeated half on t - n, each other query on itself)."""
    g = torch.Generator().manual_seed(14)
    size = 2 * n
    scores = torch.randn(3, size, size, generator=g)
    scores = scores.masked_fill(~torch.ones(size, size, dtype=torch.bool).tril(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    sharp = torch.zeros(size, size)
    for t in range(size):
        sharp[t, t - n if t >= n else t] = 1.0
    w[0] = sharp
    return w


def _tensor_only(got, shape: tuple, what: str) -> torch.Tensor:
    """The scores as a float tensor. A list or a float is refused: exercise 2 (and the solutions)
    combine this score with section 4's tensor scores (torch.maximum), which needs a tensor."""
    if not isinstance(got, torch.Tensor):
        shown = [round(v, 3) for v in got] if isinstance(got, list | tuple) and all(
            isinstance(v, int | float) for v in got) else got
        raise AssertionError(
            f"{what} should return a torch tensor of shape {shape}, one score per pattern (exercise 2 "
            f"combines it with section 4's tensor scores); got a {type(got).__name__}: {shown!r}. "
            "Leave out .tolist() and .item()")
    return got.to(torch.float32)


def _as_scores(got, want: torch.Tensor, what: str) -> torch.Tensor:
    got = _tensor_only(got, tuple(want.shape), what)
    assert got.shape == want.shape, (
        f"{what} should return one score per pattern: shape {tuple(want.shape)}, got {tuple(got.shape)}"
    )
    return got


@checker("Exercise 1 (duplicate-token score)")
def check_duplicate_token_score(fn):
    """``fn(weights (..., 2n, 2n), n) -> (...)``: mean attention from each t >= n to t - n."""
    n = 5
    w = _patterns(n)
    want = w.diagonal(offset=-n, dim1=-2, dim2=-1).mean(-1)  # queries t = n .. 2n-1
    got = _as_scores(call(fn, w, n), want, "your function")
    induction = w.diagonal(offset=-(n - 1), dim1=-2, dim2=-1)[..., 1:].mean(-1)
    if torch.allclose(got, induction, atol=1e-4):
        raise AssertionError(
            "you measured attention to t - n + 1, the token *after* the previous occurrence: that "
            "is the induction score. A duplicate-token head looks at the previous occurrence "
            f"itself, t - n. On a perfect duplicate-token pattern you got {got[0]:.3f}, expected "
            f"{want[0]:.3f}")
    shown = f"expected {[round(v, 3) for v in want.tolist()]}, got {[round(v, 3) for v in got.tolist()]}"
    dropped = w.diagonal(offset=-n, dim1=-2, dim2=-1)[..., 1:].mean(-1)  # queries n + 1 .. 2n - 1
    if torch.allclose(got, dropped, atol=1e-4):
        raise AssertionError(
            f"scores differ: {shown}. You left out query t = n, the first of the repeated half: it "
            "has a previous occurrence too, at position 0 (the induction score drops query n - 1, "
            "which belongs to neither half; the duplicate-token score keeps every t = n .. 2n - 1)")
    assert torch.allclose(got, want, atol=1e-4), (
        f"scores differ: {shown}. Every query t = n .. 2n - 1 of the repeated half has a previous "
        "occurrence at t - n; which queries do you average over, and do you divide by their number?"
    )
    for shape in ((2, 3), ()):  # (layers, h, 2n, 2n) as in section 4, and one (2n, 2n) pattern
        more = w[1].expand(*shape, 2 * n, 2 * n).clone()
        hint = (f"right on (3, 2n, 2n) weights, but not on weights of shape {tuple(more.shape)}: "
                "index from the end (dims -2 and -1) so that any number of leading dims works")
        try:
            other = call(fn, more, n)
        except (IndexError, RuntimeError, ValueError) as err:
            raise AssertionError(f"{hint} (it raised {type(err).__name__}: {err})") from None
        other = _tensor_only(other, shape, "your function")
        assert other.shape == shape and torch.allclose(other, want[1].expand(shape), atol=1e-4), hint


def _as_head(guess, what: str) -> tuple[int, int]:
    """A (layer, head) answer written as a tuple or a list of two ints, as a tuple."""
    if (not isinstance(guess, tuple | list) or len(guess) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in guess)):
        raise AssertionError(f"answer {what} with a (layer, head) pair of ints such as (0, 1), "
                             f"got {guess!r}")
    return tuple(guess)


@checker("Exercise 2 (which layer-0 head matters)")
def check_ablation_guess(guess, model, n: int = 12):
    """``guess = (0, head)`` (a tuple or a list): the head of layer 0 of ``model`` whose zeroing
    raises the repeated-half loss the most, measured on 256 fresh repeated sequences of period n."""
    guess = _as_head(guess, "the question")
    heads = [(0, h) for h in range(model.num_heads)]
    assert guess in heads, f"the question is about layer 0, whose heads are {heads}; got {guess}"
    ids = repeated_tokens(256, n, model.vocab_size, torch.Generator().manual_seed(99))
    ids = ids.to(next(model.parameters()).device)
    base = per_position_loss(model, ids)[n:].mean().item()
    loss = {hd: per_position_loss(model, ids, ablate=[hd])[n:].mean().item() for hd in heads}
    best = max(loss, key=loss.get)
    measured = ", ".join(f"zero {hd}: {v:.2f}" for hd, v in loss.items())
    if guess != best and loss[guess] - base > 0.5:  # both heads cost a lot: two circuits at once
        print(f"Measured: intact {base:.2f} nats, {measured}. Both layer-0 heads matter in this model: "
              f"zeroing {guess} raises the loss by {loss[guess] - base:.2f} nats, zeroing {best} by "
              f"{loss[best] - base:.2f}, a little more. Where both heads feed layer 1 (the keys and the "
              "queries, say, as in the note at the end of section 7), the two scores cannot rank them.")
        return
    assert guess == best, (
        f"zeroing head {guess} takes the repeated-half loss only from {base:.2f} to "
        f"{loss[guess]:.2f} nats; head {best} raises it more ({measured}). Which head writes what "
        "the induction heads of layer 1 read? A previous-token head (section 4's score) feeds their "
        "keys; a duplicate-token head (exercise 1's score) can feed their queries instead (the note "
        "at the end of section 7). Compare both scores of each layer-0 head"
    )
    print(f"Measured: intact {base:.2f} nats, {measured}.")


def _copies(model, layer: int, head: int) -> tuple[float, float, bool]:
    """Copying share, eigenvalue positivity, and whether both say "copies" (above one half)."""
    circuit = full_ov_circuit(model, layer, head)
    share, positivity = copying_share(circuit), eigenvalue_positivity(circuit)
    return share, positivity, share > 0.5 and positivity > 0.5


@checker("Exercise 3a (does the 1-layer model copy?)")
def check_one_layer_prediction(guess, model):
    """``guess`` (True or False): does every head of the 1-layer ``model`` copy, i.e. is its full
    OV circuit E W_{v,h} W_{o,h} U^T a copier (own logit largest for most tokens, eigenvalue
    positivity above 0.5)? The checker measures both numbers for each head."""
    if not isinstance(guess, bool):
        raise AssertionError(f"answer True (every head copies) or False, got {guess!r}")
    measured = {h: _copies(model, 0, h) for h in range(model.num_heads)}
    truth = all(c for _, _, c in measured.values())
    report = "; ".join(f"head (0, {h}): own logit largest for {share:.0%} of tokens, eigenvalue "
                       f"positivity {pos:.2f}" for h, (share, pos, _) in measured.items())
    assert guess == truth, (
        f"measured: {report}. So the answer is {truth}. What must a head write, once it attends "
        "to an earlier token, to make the model favour the tokens it has already seen?"
    )
    print(f"Measured: {report}.")


@checker("Exercise 3b (full OV circuit)")
def check_full_ov_circuit(fn, model):
    """``fn(model, layer, head) -> (|V|, |V|)``: E W_{v,h} W_{o,h} U^T, rows = attended tokens.
    Checked on ``model`` and on a second model of other sizes (|V| = 24, d_model = 48, 3 heads),
    so that an answer must use its ``model`` argument and the right transposes."""
    with torch.random.fork_rng(devices=[]):  # the learner's random state is left as it was
        torch.manual_seed(14)
        other = AttentionOnlyTransformer(vocab_size=24, d_model=48, num_heads=3, num_layers=2)
    for m in (model, other):
        _check_full_ov_on(fn, m)


def _check_full_ov_on(fn, model):
    embed, unembed = model.embed.weight.detach(), model.unembed.weight.detach()
    for layer in range(len(model.layers)):
        for head in range(model.num_heads):
            want = full_ov_circuit(model, layer, head)
            got = call(fn, model, layer, head)
            got = torch.as_tensor(got).detach().to(want.device, torch.float32)
            assert got.shape == want.shape, (
                f"layer {layer}, head {head} of a model with |V| = {model.vocab_size} and d_model = "
                f"{model.layers[0].d_model}: expected a (|V|, |V|) = {tuple(want.shape)} matrix, "
                f"got {tuple(got.shape)}")
            if torch.allclose(got, want, rtol=1e-3, atol=1e-3):
                continue
            if torch.allclose(got, want.T, rtol=1e-3, atol=1e-3):
                raise AssertionError(
                    f"layer {layer}, head {head}: your matrix is the transpose of the expected one. "
                    "Row a should hold the logits added when the head attends to token a")
            attn = model.layers[layer]
            s = slice(head * attn.d_k, (head + 1) * attn.d_k)
            untransposed = embed @ attn.w_v.weight.detach()[:, s] @ attn.w_o.weight.detach()[s] @ unembed.T
            if torch.allclose(got, untransposed, rtol=1e-3, atol=1e-3):
                raise AssertionError(
                    f"layer {layer}, head {head}: nn.Linear stores W^T (out_features, in_features), "
                    f"so w_v.weight[:, {s.start}:{s.stop}] is not head {head}'s W_{{v,h}}. Take its "
                    f"d_k = {attn.d_k} rows of w_v.weight and columns of w_o.weight, and transpose "
                    "each: W_{v,h} = w_v.weight[rows].T, W_{o,h} = w_o.weight[:, columns].T")
            whole = embed @ attn.w_v.weight.detach().T @ attn.w_o.weight.detach().T @ unembed.T
            if torch.allclose(got, whole, rtol=1e-3, atol=1e-3):
                raise AssertionError(
                    f"layer {layer}, head {head}: you used all of W_v and W_o, i.e. every head of "
                    f"the layer. Take only head {head}'s W_{{v,h}} and W_{{o,h}}: d_k = {attn.d_k} "
                    "rows of w_v.weight and d_k columns of w_o.weight (nn.Linear stores W^T)")
            raise AssertionError(
                f"layer {layer}, head {head}: values differ from E W_{{v,h}} W_{{o,h}} U^T (largest "
                f"difference {(got - want).abs().max():.3g}). Leave the biases out, and chain E "
                f"(|V|, d_model), W_{{v,h}} (d_model, d_k), W_{{o,h}} (d_k, d_model) and U^T "
                f"(d_model, |V|), with d_k = {model.layers[layer].d_k} here")
