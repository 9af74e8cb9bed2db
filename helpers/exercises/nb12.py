"""Checkers for the exercises of notebook 12 (decoder-only GPT and sampling)."""

from __future__ import annotations

import math

import torch

from ..data import toy_language as tl
from ..gpt import GPT, flops_per_token
from ._common import call, checker

__all__ = ["WRONG_TRIES", "check_flops_per_token", "check_gpt_parameter_count", "check_min_p_filter", "check_sentence_log_prob"]


# Wrong answers to exercises 1-4 so far in this session: the first gets a hint only, later ones the
# expected answer as well.
WRONG_TRIES = {"min_p": 0, "params": 0, "log_prob": 0, "flops": 0}


def _first_wrong_try(exercise: str) -> bool:
    WRONG_TRIES[exercise] += 1
    return WRONG_TRIES[exercise] == 1


def _min_p_mistakes(logits, p_min) -> dict[str, torch.Tensor]:
    """The kept set (True = kept) that each named mistake gives, with its hint."""
    probs = torch.softmax(logits, dim=-1)
    return {
        "you compare each probability with p_min itself; min-p scales the threshold by the probability "
        "of the most likely token: keep p_i >= p_min * max_j p_j": probs >= p_min,
        "you scale p_min by the largest probability of the whole batch (probs.max() with no dim); each "
        "row has its own most likely token: probs.max(dim=-1, keepdim=True)":
            probs >= p_min * probs.max(),
        "you compare the logits; min-p compares probabilities: softmax the logits first, then keep "
        "p_i >= p_min * max_j p_j": logits >= p_min * logits.max(dim=-1, keepdim=True).values,
        "you kept the tokens to drop: the tokens below p_min * max_j p_j get -inf, the others keep "
        "their logits": probs < p_min * probs.max(dim=-1, keepdim=True).values,
    }


def _min_p_call(fn, logits, p_min):
    try:
        got = call(fn, logits.clone(), p_min)
    except RuntimeError as err:
        if "must match the size" not in str(err):
            raise
        raise AssertionError(
            f"logits of shape {tuple(logits.shape)} raised a shape error ({err}): the largest "
            "probability of each row, probs.max(dim=-1), has lost the last dimension; keep it "
            "(keepdim=True) so that it broadcasts against the row's probabilities") from None
    assert isinstance(got, torch.Tensor) and got.shape == logits.shape, (
        f"return logits of the same shape {tuple(logits.shape)}, got "
        f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}"
    )
    return got


@checker("Exercise 1 (min-p filter)")
def check_min_p_filter(fn):
    """``fn(logits, p_min)`` keeps tokens whose probability is at least p_min times the top one. A
    mistake is named only when a second, flatter batch shows the same pattern (on one batch two
    mistakes can keep the same tokens); the expected kept set from the second wrong try on."""
    g = torch.Generator().manual_seed(12)
    logits = torch.randn(3, 7, generator=g) * 2  # (B, |V|)
    logits[0, 0] += 4.0  # a confident row: most tokens fall below the threshold
    flat = torch.tensor([[0.40, 0.25, 0.15, 0.10, 0.05, 0.03, 0.02], [0.30, 0.30, 0.20, 0.10, 0.06, 0.03, 0.01],
                         [0.22, 0.20, 0.18, 0.15, 0.12, 0.08, 0.05]]).log()  # (B, |V|): no confident row
    for p_min in (0.05, 0.2, 0.5):
        got = _min_p_call(fn, logits, p_min)
        probs = torch.softmax(logits, dim=-1)
        keep = probs >= p_min * probs.max(dim=-1, keepdim=True).values
        kept = ~torch.isneginf(got)
        returned_probs = torch.allclose(got[keep], probs[keep]) and not torch.allclose(probs[keep], logits[keep])
        log_probs = torch.log_softmax(logits, dim=-1)  # (B, |V|): the logits less a constant per row
        returned_log_probs = torch.equal(kept, keep) and torch.allclose(got[keep], log_probs[keep], atol=1e-5)
        if torch.equal(kept, keep) and not returned_probs and not returned_log_probs:
            torch.testing.assert_close(got[keep], logits[keep], msg="kept logits must stay unchanged")
            continue
        if returned_log_probs:
            hint = ("you returned log-probabilities; return the logits unchanged (the two differ by a "
                    "constant per row)")
        elif returned_probs:
            hint = ("you returned probabilities; return logits: the kept tokens keep their logits, the "
                    "dropped ones get -inf (the sampler applies the softmax afterwards)")
        elif not torch.isneginf(got).any() and torch.equal(got[keep], logits[keep]) and (got[~keep] == 0).all():
            hint = ("the dropped tokens must get -inf (float('-inf')), not 0: a logit of 0 still has a "
                    "probability after the softmax")
        else:
            flat_kept = ~torch.isneginf(_min_p_call(fn, flat, p_min))
            hint = next((h for (h, m), m2 in zip(_min_p_mistakes(logits, p_min).items(),
                                                 _min_p_mistakes(flat, p_min).values(), strict=True)
                         if torch.equal(kept, m) and torch.equal(flat_kept, m2)),
                        "keep p_i >= p_min * max_j p_j, the maximum taken over each row")
        shown = ("" if _first_wrong_try("min_p") else
                 f" With p_min={p_min} the kept tokens should be {keep.int().tolist()} (1 = kept), got "
                 f"{kept.int().tolist()}.")
        raise AssertionError(f"{hint}.{shown}" + (" (A second wrong try shows the expected tokens.)"
                                                  if not shown else ""))


def _gpt_mistakes(v, d, n, f, m, tie) -> list[tuple[int, str]]:
    """(learner's count - the right one, hint) for each named mistake of exercise 2."""
    mistakes = [
        (-(2 * n * d * 2 + 2 * d), " Did you forget the LayerNorms (a weight and a bias each)?"),
        (-2 * d, " That is one LayerNorm (a weight and a bias of d_model each) short: after the last block, "
                 "before the output layer, the model has a final LayerNorm."),
        (-2 * n * d, " That is one LayerNorm per block short: a block normalises before attention and again "
                     "before the feed-forward network, two LayerNorms per block."),
        (-2 * n * d - 2 * d, " That is one LayerNorm per block short: a block normalises before attention and "
                             "again before the feed-forward network, two LayerNorms per block (and the final "
                             "one after the last block)."),
        (-m * d, " Did you forget the learned position table (max_len, d_model)?"),
        (-n * (f + d), " Did you count the feed-forward network's biases (d_ff + d_model per block)?"),
        (-4 * n * d, " Did you count the attention projections' biases (four of d_model per block)?"),
        (v, " The output layer has no bias here: count its (|V|, d_model) matrix only."),
    ]
    if tie:
        mistakes.append((v * d, " With tied weights the output layer reuses the embedding matrix: count it once."))
    else:
        mistakes.append((-v * d, " Without tying, the output layer has its own (|V|, d_model) matrix."))
    return mistakes


def _gpt_params(v, d, n, f, m, tie) -> int:
    return sum(p.numel() for p in GPT(v, d, 4, n, f, m, tie_weights=tie).parameters())


@checker("Exercise 2 (parameters of a GPT)")
def check_gpt_parameter_count(fn):
    """``fn(vocab_size, d_model, num_layers, d_ff, max_len, tie_weights)`` -> int. A mistake is named
    only when the difference matches it on a second case with other sizes too; the expected count
    from the second wrong try on."""
    for v, d, n, f, m, tie in ((27, 64, 2, 256, 64, True), (27, 64, 2, 256, 64, False),
                               (100, 32, 3, 48, 16, True), (50, 48, 1, 96, 20, False)):
        got = call(fn, v, d, n, f, m, tie)
        want = _gpt_params(v, d, n, f, m, tie)
        assert isinstance(got, int), f"return an int, got {type(got).__name__}"
        if got == want:
            continue
        other = (v + 13, d + 16, n + 1, f + 32, m + 8, tie)  # the same switch, other sizes
        other_diff = call(fn, *other) - _gpt_params(*other)
        hint = next((h for (diff, h), (diff2, _) in zip(_gpt_mistakes(v, d, n, f, m, tie), _gpt_mistakes(*other),
                                                          strict=True)
                     if got - want == diff and other_diff == diff2),
                    " Count block by block: embeddings, positions, each block (two LayerNorms, attention, "
                    "feed-forward network), the final LayerNorm, the output layer.")
        case = f"vocab_size={v}, d_model={d}, num_layers={n}, d_ff={f}, max_len={m}, tie_weights={tie}"
        if _first_wrong_try("params"):
            raise AssertionError(f"{case}: you counted {got:,} parameters.{hint} "
                                 "(A second wrong try shows the expected count.)")
        raise AssertionError(f"{case}: expected {want:,} parameters, got {got:,}.{hint}")


@checker("Exercise 3 (a sentence's log-probability under the model)")
def check_sentence_log_prob(fn):
    """``fn(model, text)`` -> sum of log p(token | '.' and the tokens before it) over its tokens."""
    with torch.random.fork_rng(devices=[]):  # leaves the learner's random state alone
        torch.manual_seed(3)
        model = GPT(len(tl.VOCAB), d_model=16, num_heads=2, num_layers=1, d_ff=32, max_len=32).eval()
    for text in ("the big cat chased a mouse.", "some dogs sleep."):
        ids = torch.tensor([[1] + tl.encode(text)])  # (1, L + 1): '.' starts it
        with torch.no_grad():
            logp_all = torch.log_softmax(model(ids)[0].double(), dim=-1)  # (L + 1, |V|)
        logp = logp_all[:-1]  # (L, |V|): position t predicts token t + 1
        per_token = logp.gather(-1, ids[0, 1:, None])[:, 0]  # (L,)
        want = per_token.sum().item()
        got = float(call(fn, model, text))
        if math.isclose(got, want, abs_tol=1e-4):
            continue
        hint = f"{text!r}: you returned {got:.4f}."
        if math.isclose(got, -want, abs_tol=1e-4):
            hint = (f"{text!r}: you returned {got:.4f}, the negative log-probability (a loss); a "
                    "log-probability is <= 0: sum log p, do not negate it")
        elif math.isclose(got, per_token.mean().item(), abs_tol=1e-4):
            hint = (f"{text!r}: you returned the mean over tokens; the sentence's log-probability is the "
                    "sum of its tokens' log-probabilities")
        elif math.isclose(got, want / math.log(2), abs_tol=1e-4):
            hint = (f"{text!r}: you returned {got:.4f}, a log in base 2 (bits); a log-probability here is in "
                    "nats, the natural log (torch.log_softmax, math.log)")
        elif math.isclose(got, want / math.log(10), abs_tol=1e-4):
            hint = (f"{text!r}: you returned {got:.4f}, a log in base 10; a log-probability here is in "
                    "nats, the natural log (torch.log_softmax, math.log)")
        elif math.isclose(got, math.exp(want), rel_tol=1e-3, abs_tol=1e-12):
            hint = (f"{text!r}: you returned the sentence's probability; the exercise asks for its log "
                    "(a sum of log-probabilities, not a product of probabilities)")
        elif math.isclose(got, want - per_token[-1].item(), abs_tol=1e-4):
            hint = f"{text!r}: the final '.' is a token too: include its log-probability"
        elif math.isclose(got, logp_all[1:].gather(-1, ids[0, 1:, None]).sum().item(), abs_tol=1e-4) or \
                math.isclose(got, logp_all.gather(-1, ids[0, :, None]).sum().item(), abs_tol=1e-4):
            hint = (f"{text!r}: you score each token with the logits at its own position; the logits at "
                    "position t predict the token at t + 1 (logits[:-1] against ids[1:])")
        else:
            with torch.no_grad():
                logits = model(ids)[0].double()  # (L + 1, |V|)
                no_start = torch.log_softmax(model(ids[:, 1:])[0].double(), dim=-1)  # (L, |V|): without the '.'
            if math.isclose(got, no_start[:-1].gather(-1, ids[0, 2:, None]).sum().item(), abs_tol=1e-4):
                hint = (f"{text!r}: feed the start token '.' first: the first word is predicted from it, and "
                        "its log-probability counts too")
            elif math.isclose(got, no_start.gather(-1, ids[0, 1:, None]).sum().item(), abs_tol=1e-4):
                hint = (f"{text!r}: you score each token at its own position, without the start token: feed "
                        "'.' first, then score logits[:-1] against ids[1:]")
            elif math.isclose(got, logp_all[1:-1].gather(-1, ids[0, 2:, None]).sum().item(), abs_tol=1e-4):
                hint = (f"{text!r}: the first word is predicted at position 0, from '.': include its "
                        "log-probability")
            elif math.isclose(got, logits[:-1].gather(-1, ids[0, 1:, None]).sum().item(), abs_tol=1e-4):
                hint = (f"{text!r}: you summed raw logits; apply log_softmax to the logits first, so that "
                        "each score is a log-probability")
        if _first_wrong_try("log_prob"):
            raise AssertionError(f"{hint} (A second wrong try shows the expected value.)")
        raise AssertionError(f"{hint} Expected a log-probability of {want:.4f}, got {got:.4f}.")


@checker("Exercise 4 (FLOPs per token)")
def check_flops_per_token(fn):
    """``fn(vocab_size, d_model, num_layers, d_ff, context)`` -> the forward FLOPs of one token."""
    for v, d, n, f, c in ((27, 64, 2, 256, 32), (27, 64, 2, 256, 1), (100, 32, 3, 48, 500), (50, 48, 1, 96, 7)):
        got = call(fn, v, d, n, f, c)
        want = flops_per_token(GPT(v, d, 4, n, f, max(c, 2)), c)
        assert isinstance(got, int), f"return an int, got {type(got).__name__}"
        if got == want:
            continue
        weights = n * (4 * d * d + 2 * d * f) + v * d
        attention = n * 2 * 2 * c * d
        hint = (" Count 2 FLOPs per weight that multiplies the token (per layer the four d_model x d_model "
                "projections and the two feed-forward matrices, then the output layer), plus "
                "2 * 2 * context * d_model per layer for attention.")
        if got == 3 * want:
            hint = " That is a training step's count (forward + backward); the exercise asks for the forward pass."
        elif got == want - 2 * v * d:
            hint = " The output layer multiplies the token too: 2 * |V| * d_model."
        elif got == want - attention:
            hint = " Attention's two products (Q K^T and A V) cost 2 * 2 * context * d_model per layer."
        elif got == want - attention // 2:
            hint = (" Attention has two products per layer, Q K^T (the scores) and A V (the weighted "
                    "values), each 2 * context * d_model.")
        elif got == weights + attention // 2 or got == weights:
            hint = " Count 2 FLOPs per weight (a multiply and an add)."
        elif got == want - 2 * n * d * f:
            hint = " The feed-forward network has two matrices of d_model x d_ff."
        case = f"vocab_size={v}, d_model={d}, num_layers={n}, d_ff={f}, context={c}"
        if _first_wrong_try("flops"):  # a hint only, so that the learner looks for the missing term first
            raise AssertionError(f"{case}: you counted {got:,} FLOPs, which is not the forward pass of one "
                                 f"token.{hint} (A second wrong try shows the expected count.)")
        raise AssertionError(
            f"{case}: expected {want:,} FLOPs (2 x {weights:,} weights + {attention:,} for attention), "
            f"got {got:,}.{hint}")
