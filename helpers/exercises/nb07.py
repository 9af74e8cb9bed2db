"""Checkers for the exercises of notebook 07 (the encoder)."""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import nn

from ..efficient import ops_called
from ._common import NotAttempted, call, checker

__all__ = ["INVARIANCES", "WIDTH_STATEMENTS", "WRONG_TRIES", "check_input_gradient", "check_layer_norm",
           "check_sublayer_connection", "check_width_64", "input_grad_norm", "width_64_norms"]

# Exercises 1, 3 and 4 ask for predictions: a first wrong answer gets a hint, from the second on the
# measurements as well (``WRONG_TRIES`` counts them in this session).
WRONG_TRIES = {"invariances": 0, "input_gradient": 0, "width_64": 0, "seeds_3_4_5": 0}


def _wrong_try(exercise: str) -> bool:
    """Count a wrong answer; True for the first one (a hint only, not yet the answer)."""
    WRONG_TRIES[exercise] += 1
    return WRONG_TRIES[exercise] == 1


# Library normalisations the exercise forbids, by the operator they run.
_LIBRARY_NORMS = ("layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm")


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


def _library_norm_used(fn, *args) -> str | None:
    """The name of a library normalisation operator that ``fn(*args)`` runs, if any."""
    return next((name for name in ops_called(fn, *args) if name.endswith(_LIBRARY_NORMS)), None)


# Exercise 1, part 2: which changes of a token's vector leave LayerNorm's output unchanged
# (gamma = 1, beta = 0, eps small)? True = unchanged.
INVARIANCES = ("add 5 to every feature", "multiply every feature by 3", "multiply one feature by 3")


def _invariance_inputs() -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(8))  # (tokens, d_model)
    one = x.clone()
    one[:, 2] *= 3
    return x, {"add 5 to every feature": x + 5, "multiply every feature by 3": 3 * x,
               "multiply one feature by 3": one}


@checker("Exercise 1 (LayerNorm from scratch)")
def check_layer_norm(fn, unchanged_by=None):
    """``fn(x, gamma, beta, eps)`` normalises the last dimension of x as LayerNorm does, written
    out (a call of ``F.layer_norm``, ``nn.LayerNorm`` or another library normalisation is refused).
    ``unchanged_by``: {change: bool} for each of ``INVARIANCES``, True where the learner predicts
    that the change leaves the output unchanged; checked with the learner's own function.

    Two cases: features of spread about 3 with eps = 1e-5, and features of spread about 0.1 with
    eps = 0.1, where it matters whether eps is added to the variance or to the standard deviation.
    """
    gen = torch.Generator().manual_seed(7)
    cases = [(3.0 * torch.randn(2, 5, 6, generator=gen) + 1.5, 1e-5),  # (B, L, d_model)
             (0.1 * torch.randn(2, 5, 6, generator=gen) - 0.2, 0.1)]
    gamma = torch.rand(6, generator=gen) + 0.5
    beta = torch.randn(6, generator=gen)
    for x, eps in cases:
        got = call(fn, x, gamma, beta, eps)
        assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
        library = _library_norm_used(fn, x, gamma, beta, eps)
        if library is not None:
            raise AssertionError(f"your function calls PyTorch's own normalisation (it ran {library}, "
                                 "which F.layer_norm and nn.LayerNorm run): the exercise asks for the "
                                 "formula itself, written with mean, variance and square root")
        assert got.shape == x.shape, (f"the output keeps the input's shape {tuple(x.shape)}, "
                                      f"got {tuple(got.shape)}")
        want = F.layer_norm(x, (6,), gamma, beta, eps)
        mean = x.mean(-1, keepdim=True)
        centred = x - mean
        unbiased = centred / torch.sqrt(x.var(-1, keepdim=True, unbiased=True) + eps) * gamma + beta
        if torch.allclose(got, unbiased, atol=1e-5):
            raise AssertionError(
                f"eps={eps}: largest difference from LayerNorm {_max_diff(got, want):.4f}, and your "
                "result matches the unbiased variance (divides by d - 1); LayerNorm divides by d"
            )
        std = x.var(-1, keepdim=True, unbiased=False).sqrt()
        outside = centred / (std + eps) * gamma + beta
        if not torch.allclose(outside, want, atol=1e-5) and torch.allclose(got, outside, atol=1e-5):
            raise AssertionError(
                f"eps={eps}: largest difference from LayerNorm {_max_diff(got, want):.4f}; your "
                "result divides by (standard deviation + eps). Check the formula: where is eps added?"
            )
        plain = F.layer_norm(x, (6,), None, None, eps)
        if torch.allclose(got, plain, atol=1e-5):
            raise AssertionError(f"eps={eps}: each token has mean 0 and spread 1, as expected before "
                                 "the affine step, but gamma and beta are not applied")
        over = (x - x.mean(1, keepdim=True)) / torch.sqrt(x.var(1, keepdim=True, unbiased=False) + eps)
        if torch.allclose(got, over * gamma + beta, atol=1e-5):
            raise AssertionError(f"eps={eps}: you normalised over the positions (dim 1); LayerNorm "
                                 "normalises each token over its features, the last dimension")
        both = (x - x.mean((1, 2), keepdim=True)) / torch.sqrt(x.var((1, 2), keepdim=True, unbiased=False) + eps)
        if torch.allclose(got, both * gamma + beta, atol=1e-5):
            raise AssertionError(f"eps={eps}: you normalised over the positions and the features together "
                                 "(dims 1 and 2, one mean per sequence); LayerNorm normalises each token "
                                 "over its own features, the last dimension only")
        uncentred = x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gamma + beta
        if torch.allclose(got, uncentred, atol=1e-5):
            raise AssertionError(f"eps={eps}: largest difference from LayerNorm {_max_diff(got, want):.4f}; "
                                 "your result divides by the root mean square without subtracting the "
                                 "token's mean first (that is RMSNorm, notebook 13): LayerNorm centres "
                                 "each token, then divides by its standard deviation")
        no_eps = centred / std * gamma + beta
        if eps >= 0.01 and torch.allclose(got, no_eps, atol=1e-5):
            raise AssertionError(f"eps={eps}: largest difference from LayerNorm {_max_diff(got, want):.4f}; "
                                 "your result ignores eps (it divides by the standard deviation alone)")
        if not torch.allclose(got, want, rtol=1.3e-6, atol=1e-5):
            raise AssertionError(f"eps={eps}: your output differs from LayerNorm's by up to "
                                 f"{_max_diff(got, want):.4f}: subtract each token's mean, divide by "
                                 "the square root of (its biased variance + eps), then scale by gamma "
                                 "and shift by beta")
    _check_invariances(fn, unchanged_by)


_PREDICTIONS_TO_COME = ("layer_norm is right. Now predict which changes leave its output unchanged "
                        "(True or False for each entry of unchanged_by), then run this cell again.")


def _check_invariances(fn, unchanged_by) -> None:
    if unchanged_by is None or unchanged_by is Ellipsis:
        raise NotAttempted(_PREDICTIONS_TO_COME)
    if not isinstance(unchanged_by, dict):
        raise AssertionError(f"unchanged_by: give a dict {{change: True or False}}, got "
                             f"{type(unchanged_by).__name__}")
    if any(unchanged_by.get(k) is None or unchanged_by.get(k) is Ellipsis for k in INVARIANCES):
        raise NotAttempted(_PREDICTIONS_TO_COME)
    bad = {k: v for k, v in unchanged_by.items() if k not in INVARIANCES or not isinstance(v, bool)}
    if bad:
        raise AssertionError(f"unchanged_by: the keys are {list(INVARIANCES)} and each answer is True "
                             f"or False; got {bad}")
    x, changed = _invariance_inputs()
    ones, zeros = torch.ones(6), torch.zeros(6)
    base = fn(x, ones, zeros, 1e-5)
    moved = {change: _max_diff(fn(x2, ones, zeros, 1e-5), base) for change, x2 in changed.items()}
    wrong = [change for change in INVARIANCES if unchanged_by[change] != (moved[change] < 1e-4)]
    if not wrong:
        return
    said = {change: "unchanged" if unchanged_by[change] else "changed" for change in wrong}
    if _wrong_try("invariances"):
        raise AssertionError(f"layer_norm is right, but {len(wrong)} of {len(INVARIANCES)} predictions "
                             "are not:\n" + "\n".join(f"{change!r}: you said {said[change]}; hint: "
                                                      f"{_INVARIANCE_HINTS[change]}" for change in wrong)
                             + "\nTry again; a second wrong answer shows how far your layer_norm's "
                               "output moved.")
    raise AssertionError(f"layer_norm is right, but {len(wrong)} of {len(INVARIANCES)} predictions "
                         "are not:\n" + "\n".join(
                             f"{change!r}: you said {said[change]}; your layer_norm's output moved by "
                             f"up to {moved[change]:.4f} ({_INVARIANCE_WHY[change]})" for change in wrong))


_INVARIANCE_HINTS = {
    "add 5 to every feature": "what does subtracting the token's mean do to a shift that every feature shares?",
    "multiply every feature by 3": "what happens to the mean and to the standard deviation when every "
                                   "feature is multiplied by the same number?",
    "multiply one feature by 3": "does the token's mean stay where it was when only one feature changes?",
}
_INVARIANCE_WHY = {
    "add 5 to every feature": "subtracting the token's mean removes any shift shared by all its features",
    "multiply every feature by 3": "dividing by the token's standard deviation removes a common scale "
                                   "(up to the tiny eps)",
    "multiply one feature by 3": "one feature alone changes the mean, the spread and the direction of "
                                 "the vector",
}


@checker("Exercise 2 (post-LN and pre-LN residual connection)")
def check_sublayer_connection(fn):
    """``fn(x, sublayer, norm, norm_first)``: post-LN norm(x + sublayer(x)); pre-LN
    x + sublayer(norm(x))."""
    torch.manual_seed(3)
    sublayer = nn.Linear(4, 4)
    norm = nn.LayerNorm(4)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    x = 2.0 * torch.randn(2, 3, 4) + 1.0  # (B, L, d_model)
    with torch.no_grad():
        post = norm(x + sublayer(x))
        pre = x + sublayer(norm(x))
        got_post = call(fn, x, sublayer, norm, False)
        got_pre = call(fn, x, sublayer, norm, True)
    for got, label in ((got_post, "norm_first=False"), (got_pre, "norm_first=True")):
        assert isinstance(got, torch.Tensor), f"{label}: return a tensor, got {type(got).__name__}"
        assert got.shape == x.shape, f"{label}: expected shape {tuple(x.shape)}, got {tuple(got.shape)}"
    far_post, far_pre = _max_diff(got_post, post), _max_diff(got_pre, pre)
    if torch.allclose(got_post, pre) and torch.allclose(got_pre, post):
        raise AssertionError(f"norm_first=False returned the pre-LN result and norm_first=True the "
                             f"post-LN one (largest differences from the expected {far_post:.4f}, "
                             f"{far_pre:.4f}): norm_first=False is the paper's post-LN")
    with torch.no_grad():
        slips_pre = {
            "sublayer(norm(x)) alone: you forgot the residual (add x back)": sublayer(norm(x)),
            "norm(x) + sublayer(norm(x)): the residual adds the normalised x; in pre-LN the "
            "stream x itself goes around the sublayer, untouched": norm(x) + sublayer(norm(x)),
            "norm(x + sublayer(norm(x))): a LayerNorm after the sum too; pre-LN normalises only what "
            "goes into the sublayer": norm(x + sublayer(norm(x))),
            "x + norm(sublayer(x)): that normalises the sublayer's output; pre-LN normalises its "
            "input": x + norm(sublayer(x)),
        }
        slips_post = {
            "norm(sublayer(x)): you forgot the residual (add x before normalising)": norm(sublayer(x)),
            "x + norm(sublayer(x)): post-LN normalises the sum x + sublayer(x), not the sublayer's "
            "output alone": x + norm(sublayer(x)),
            "x + sublayer(x) without the LayerNorm: post-LN normalises the sum": x + sublayer(x),
        }
    for problems, got, label, far in ((slips_pre, got_pre, "norm_first=True (pre-LN)", far_pre),
                                      (slips_post, got_post, "norm_first=False (post-LN)", far_post)):
        for what, value in problems.items():
            if torch.allclose(got, value, atol=1e-6):
                raise AssertionError(f"{label}: largest difference from the expected {far:.4f}; your "
                                     f"output is {what}")
    wrong = [(label, far) for label, far, ok in (
        ("norm_first=False (post-LN)", far_post, torch.allclose(got_post, post, rtol=1.3e-6, atol=1e-5)),
        ("norm_first=True (pre-LN)", far_pre, torch.allclose(got_pre, pre, rtol=1.3e-6, atol=1e-5)))
        if not ok]
    if wrong:
        raise AssertionError("; ".join(f"{label} differs from the expected by up to {far:.4f}"
                                       for label, far in wrong)
                             + ". Post-LN normalises the residual sum; pre-LN normalises only the "
                               "sublayer's input and adds the untouched x")


def input_grad_norm(num_layers: int, norm_first: bool, seeds=tuple(range(10)), d_model: int = 32) -> float:
    """The reference measurement of exercise 3: the norm of the gradient of the loss with respect
    to the encoder's input, at initialisation (the set-up of section 7), averaged over ``seeds``
    (the exercise's seeds 0-9 unless told: three-seed averages and single seeds can flip the
    comparison at 12 layers)."""
    from ..layers import Encoder

    total = 0.0
    for seed in seeds:
        gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        encoder = Encoder(num_layers, d_model, 4, 4 * d_model, 0.0, norm_first)
        head = nn.Linear(d_model, 32)
        for p in encoder.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        x = torch.randn(32, 16, d_model, generator=gen, requires_grad=True)  # (B, L, d_model)
        labels = torch.randint(32, (32, 16), generator=gen)  # (B, L)
        F.cross_entropy(head(encoder(x)).flatten(0, 1), labels.flatten()).backward()
        total += float(x.grad.norm())
    return total / len(seeds)


@functools.cache  # the reference measurement: the same every time, so each try does not redo it
def _reference_grad(num_layers: int, norm_first: bool, seeds: tuple) -> float:
    return input_grad_norm(num_layers, norm_first, seeds=seeds)


@checker("Exercise 3 (the gradient that reaches the input)")
def check_input_gradient(fn, prediction):
    """``fn(num_layers, norm_first)`` -> float, the measurement (mean over seeds 0-9);
    ``prediction``: which arrangement, "post-LN" or "pre-LN", passes the larger gradient to the
    input of a 12-layer stack, averaged over seeds 0-9."""
    for n, norm_first in ((2, False), (3, True)):
        got = call(fn, n, norm_first)
        assert isinstance(got, float | int | torch.Tensor), (
            f"input_grad_norm({n}, {norm_first}): return a number, got {type(got).__name__}")
        want = _reference_grad(n, norm_first, tuple(range(10)))
        if abs(float(got) - want) > 1e-4 * max(1.0, want):
            three = _reference_grad(n, norm_first, (0, 1, 2))
            seeds = ("; that is the mean over seeds 0, 1, 2 only: average seeds 0 to 9"
                     if abs(float(got) - three) <= 1e-4 * max(1.0, three) else "")
            raise AssertionError(
                f"input_grad_norm({n}, norm_first={norm_first}) returned {float(got):.4f}, the "
                f"reference measures {want:.4f}{seeds}: use the set-up of section 7 (seeds 0 to 9, "
                "Xavier-uniform matrices) and take the norm of the gradient of the input x")
    if prediction is None or prediction is Ellipsis:
        raise NotAttempted
    assert prediction in ("post-LN", "pre-LN"), (
        f'prediction must be "post-LN" or "pre-LN", got {prediction!r}')
    post, pre = _reference_grad(12, False, tuple(range(10))), _reference_grad(12, True, tuple(range(10)))
    larger = "post-LN" if post > pre else "pre-LN"
    if prediction != larger:
        if _wrong_try("input_gradient"):
            raise AssertionError(f"you predicted {prediction}; hint: where does each arrangement put a "
                                 "LayerNorm on the identity path, the path that section 3 showed always "
                                 "carries the gradient down? Try again; a second wrong answer shows the "
                                 "measurement.")
        raise AssertionError(f"you predicted {prediction}; measured with 12 layers (mean over seeds "
                             f"0-9), post-LN passes {post:.4f} to the input and pre-LN {pre:.4f}. Where "
                             "does each arrangement put a LayerNorm on the identity path?")


# Exercise 4: which statements about section 7's measurement still hold at d_model = 64?
WIDTH_STATEMENTS = {
    "a": "post-LN's top layer gets a larger gradient than pre-LN's top layer",
    "b": "post-LN's top layer gets a larger gradient than post-LN's bottom layer",
    "c": "pre-LN's top layer gets a smaller gradient than pre-LN's bottom layer",
}
_WIDTH_HINTS = {
    "a": "in both arrangements the top layer's output passes through one last LayerNorm, but that "
         "LayerNorm divides by the length of different vectors: a normalised x plus one sublayer's "
         "output (post-LN), or the sum of every sublayer's output so far (pre-LN). Which is longer, "
         "and does d_model change that? Or run the measurement and compare the two top layers",
    "b": "section 7 warned that the shape of the post-LN curve changes from run to run: run the "
         "measurement and compare the two ends of the post-LN curve",
    "c": "think about what a pre-LN stack's residual stream accumulates on its way to the output, and "
         "whether d_model changes that; or run the measurement and compare the two ends of the pre-LN "
         "curve",
}


def width_64_norms(seeds=(0, 1, 2)) -> dict[str, list[float]]:
    """Section 7's measurement with d_model = 64 (d_ff = 256), 8 layers, averaged over ``seeds``."""
    from ..layers import layer_grad_norms

    return {name: layer_grad_norms(8, norm_first, d_model=64, d_ff=256, seeds=seeds)
            for name, norm_first in (("post-LN", False), ("pre-LN", True))}


def _width_64_statements(seeds) -> dict[str, tuple[bool, str]]:
    """Whether each of ``WIDTH_STATEMENTS`` holds for ``seeds``, with the numbers that decide it."""
    return _width_64_measured(tuple(seeds))


@functools.cache  # a measurement of fixed seeds: the same every time, so each try does not redo it
def _width_64_measured(seeds: tuple) -> dict[str, tuple[bool, str]]:
    norms = width_64_norms(seeds)
    post, pre = norms["post-LN"], norms["pre-LN"]
    return {"a": (post[-1] > pre[-1], f"post-LN top {post[-1]:.4f}, pre-LN top {pre[-1]:.4f}"),
            "b": (post[-1] > post[0], f"post-LN top {post[-1]:.4f}, bottom {post[0]:.4f}"),
            "c": (pre[-1] < pre[0], f"pre-LN top {pre[-1]:.4f}, bottom {pre[0]:.4f}")}


_SEEDS_TO_COME = ("(a)-(c) are right for seeds 0, 1, 2. Now run seeds 3, 4, 5 too and set "
                  "changes_with_seeds_3_4_5 to the set of letters whose answer changes (set() if "
                  "none), then run this cell again.")


@checker("Exercise 4 (does the picture survive a wider model?)")
def check_width_64(answers, changes_with_seeds_3_4_5=None):
    """``answers``: {"a": bool, "b": bool, "c": bool}, the learner's prediction of which of
    ``WIDTH_STATEMENTS`` hold for an 8-layer encoder with d_model = 64 (seeds 0, 1, 2);
    ``changes_with_seeds_3_4_5``: the set of letters whose answer changes with seeds 3, 4, 5."""
    if not isinstance(answers, dict):
        raise AssertionError(f'give a dict {{"a": True or False, "b": ..., "c": ...}}, got '
                             f"{type(answers).__name__}")
    if any(answers.get(k) is None or answers.get(k) is Ellipsis for k in WIDTH_STATEMENTS):
        raise NotAttempted
    bad = {k: v for k, v in answers.items() if k not in WIDTH_STATEMENTS or not isinstance(v, bool)}
    if bad:
        raise AssertionError(f'the keys are "a", "b", "c" and each answer is True or False; got {bad}')
    measured = _width_64_statements((0, 1, 2))
    wrong = [k for k in WIDTH_STATEMENTS if answers[k] != measured[k][0]]
    if wrong:
        if _wrong_try("width_64"):
            raise AssertionError(f"{len(wrong)} of 3 predictions are wrong:\n" + "\n".join(
                f"({k}) {WIDTH_STATEMENTS[k]}: you said {answers[k]}; hint: {_WIDTH_HINTS[k]}"
                for k in wrong) + "\nTry again; a second wrong answer shows the measurement.")
        raise AssertionError(f"{len(wrong)} of 3 predictions are wrong (measured at d_model = 64, "
                             "8 layers, seeds 0-2):\n" + "\n".join(
                                 f"({k}) {WIDTH_STATEMENTS[k]}: you said {answers[k]}, measured "
                                 f"{measured[k][0]} ({measured[k][1]})" for k in wrong))
    _check_seeds_3_4_5(changes_with_seeds_3_4_5, measured)


def _check_seeds_3_4_5(changes, measured) -> None:
    if changes is None or changes is Ellipsis:
        raise NotAttempted(_SEEDS_TO_COME)
    if isinstance(changes, str) or not isinstance(changes, set | frozenset | list | tuple):
        raise AssertionError(f'changes_with_seeds_3_4_5: give a set of letters such as {{"a"}} (or set() '
                             f"for none), got {changes!r}")
    given = set(changes)
    if not given <= set(WIDTH_STATEMENTS):
        raise AssertionError(f'changes_with_seeds_3_4_5: the letters are "a", "b", "c"; got {sorted(given)}')
    later = _width_64_statements((3, 4, 5))
    changed = {k for k in WIDTH_STATEMENTS if later[k][0] != measured[k][0]}
    if given == changed:
        return
    if _wrong_try("seeds_3_4_5"):
        raise AssertionError(f"(a)-(c) are right, but you said {sorted(given)} change with seeds 3, 4, 5; "
                             "hint: run layer_grad_norms(8, norm_first, d_model=64, d_ff=256, "
                             "seeds=(3, 4, 5)) for both arrangements and compare each statement with "
                             "seeds 0, 1, 2. Try again; a second wrong answer shows the measurement.")
    raise AssertionError(f"(a)-(c) are right, but you said {sorted(given)} change with seeds 3, 4, 5; "
                         f"measured, {sorted(changed)} change:\n" + "\n".join(
                             f"({k}) seeds 0-2: {measured[k][0]} ({measured[k][1]}); seeds 3-5: "
                             f"{later[k][0]} ({later[k][1]})" for k in WIDTH_STATEMENTS))
