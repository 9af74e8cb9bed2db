"""Checkers for the exercises of notebook 13 (attention in today's LLMs).

Exercises 1-4 ask for predictions (numbers, a set), computed from what the notebook teaches and
checked here against the notebook's own functions (``decode_step_cost``, ``kv_cache_bytes``,
RoPE's frequencies). A first wrong answer gets what was given and a hint; from the second on, the
expected value as well (``WRONG_TRIES`` counts them in this session).
"""

from __future__ import annotations

import math
import numbers

import torch

from ..modern import decode_step_cost, kv_cache_bytes
from ._common import NotAttempted, call, checker

__all__ = ["COMPUTE_BOUND", "WRONG_TRIES", "check_attention_intensity", "check_cache_rope_positions",
           "check_compute_bound_batch", "check_ntk_pairs", "check_window_budget"]

COMPUTE_BOUND = 295  # FLOPs per byte: an H100 SXM's 989 dense 16-bit TFLOP/s over its 3.35 TB/s
LLAMA_8B = dict(num_params=8_000_000_000, num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128)
LLAMA_70B = dict(num_params=70_000_000_000, num_layers=80, num_heads=64, num_kv_heads=8, head_dim=128)
GIB = 2**30
WRONG_TRIES = {"compute_bound_batch": 0, "attention_intensity": 0, "window_budget": 0, "ntk_pairs": 0}


def _fail(exercise: str, problems: list[tuple[str, object, object, str]]) -> None:
    """Raise for the wrong answers: (question, given, expected, hint). The first wrong try of an
    exercise shows the hints only; later ones the expected values too."""
    WRONG_TRIES[exercise] += 1
    first = WRONG_TRIES[exercise] == 1
    lines = [f"{question}: you said {given!r}; " + (f"hint: {hint}" if first else f"expected {want!r}. {hint}")
             for question, given, want, hint in problems]
    ending = "\nTry again; a second wrong answer shows the right values." if first else ""
    raise AssertionError("\n".join(lines) + ending)


def _missing(answers: dict) -> list:
    return [key for key, value in answers.items() if value is Ellipsis]


def _number(question: str, value, whole: bool = False):
    """The answer as a number, or an AssertionError that says what kind of answer was expected."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise AssertionError(f"{question}: expected a number, got {value!r}")
    if whole and value != int(value):
        raise AssertionError(f"{question}: expected a whole number, got {value!r}")
    return int(value) if whole else float(value)


def _dict_answer(answers, keys, what: str) -> dict:
    if not isinstance(answers, dict) or set(answers) != set(keys):
        raise AssertionError(f"expected the dict of the exercise with keys {list(keys)} ({what}), got {answers!r}")
    missing = _missing(answers)
    if len(missing) == len(keys):
        raise NotAttempted
    if missing:
        raise NotAttempted(f"still to predict: {missing}. Fill them in, then run this cell again.")
    return answers


def smallest_compute_bound_batch(context: int, ratio: float = COMPUTE_BOUND, **shape) -> int | None:
    """The smallest batch whose decoding step at ``context`` cached tokens does more than
    ``ratio`` FLOPs per byte (``decode_step_cost``), or None if no batch does."""
    shape = shape or LLAMA_8B
    one = decode_step_cost(**shape, context=context)
    flops, weights, cache = one["flops"], one["weight_bytes"], one["kv_bytes"]  # FLOPs and cache grow with B
    if flops <= ratio * cache:
        return None  # B F / (W + B C) tends to F / C <= ratio
    b = math.floor(ratio * weights / (flops - ratio * cache)) + 1
    while b > 1 and decode_step_cost(**shape, context=context, batch_size=b - 1)["intensity"] > ratio:
        b -= 1
    while decode_step_cost(**shape, context=context, batch_size=b)["intensity"] <= ratio:
        b += 1
    return b


def _batch_hint(context: int, got) -> str:
    one = decode_step_cost(**LLAMA_8B, context=context)
    flops, weights, cache = one["flops"], one["weight_bytes"], one["kv_bytes"]
    general = (f"the intensity of B sequences is B F / (W + B C), with F = {flops:,} FLOPs of one sequence, "
               f"W = {weights:,} bytes of weights read once, C = {cache:,} bytes of one sequence's cache")
    if got is None:
        return f"as B grows, what does B F / (W + B C) tend to? Compare it with {COMPUTE_BOUND}; " + general
    if got <= 0:
        return "a batch holds at least one sequence; " + general
    at = decode_step_cost(**LLAMA_8B, context=context, batch_size=got)["intensity"]
    if flops <= COMPUTE_BOUND * cache:
        return (f"decode_step_cost gives {at:.1f} FLOPs per byte at B = {got:,}. As B grows, what does "
                f"B F / (W + B C) tend to? Compare it with {COMPUTE_BOUND} (None if no batch is enough); " + general)
    per_token = 2 * LLAMA_8B["num_params"]
    slips = (  # (F, C) as each slip counts them, and what it missed
        (flops, 0, "that counts the weights' bytes only: each sequence also reads its own cache, so the bytes "
                   "grow with B too (C per sequence)"),
        (flops, cache / 2, "the cache holds keys AND values: C counts both (the factor 2)"),
        (per_token, cache, "attention's own FLOPs count too, 2 * 2 * h * d_k per key and layer"),
        (flops - (flops - per_token) / (context + 1), cache * context / (context + 1),
         "the new token's key counts too: context + 1 keys, and it is written to the cache"),
    )
    for f, c, hint in slips:
        if f > COMPUTE_BOUND * c and got == math.floor(COMPUTE_BOUND * weights / (f - COMPUTE_BOUND * c)) + 1:
            return f"{hint}; {general}"
    if at > COMPUTE_BOUND:
        return (f"at B = {got:,} decode_step_cost gives {at:.1f} FLOPs per byte, above {COMPUTE_BOUND}, but a "
                f"smaller batch is above it too: the question asks for the smallest")
    return f"at B = {got:,} decode_step_cost gives {at:.1f} FLOPs per byte, not above {COMPUTE_BOUND}; " + general


@checker("Exercise 1 (when batching makes decoding compute-bound)")
def check_compute_bound_batch(answers):
    """``answers``: {256: B, 512: B}, the smallest batch whose decoding step at that many cached
    tokens does more than 295 FLOPs per byte (Llama-3-8B-like shape, 16-bit), or None if none."""
    answers = _dict_answer(answers, (256, 512), "context -> smallest batch, or None")
    problems = []
    for context, got in answers.items():
        question = f"context {context}"
        if got is not None:
            got = _number(question, got, whole=True)
        want = smallest_compute_bound_batch(context)
        if got != want:
            problems.append((question, got, want, _batch_hint(context, got)))
    if problems:
        _fail("compute_bound_batch", problems)


def attention_intensity(num_kv_heads: int, dtype: torch.dtype, batch_size: int, context: int = 4096,
                        **shape) -> float:
    """Attention's FLOPs per byte of KV cache in one decoding step, from ``decode_step_cost``: its
    FLOPs less the weights' 2 per weight and token, over the cache bytes read and written."""
    shape = {**(shape or LLAMA_70B), "num_kv_heads": num_kv_heads}
    c = decode_step_cost(**shape, context=context, batch_size=batch_size, dtype=dtype)
    return (c["flops"] - 2 * shape["num_params"] * batch_size) / c["kv_bytes"]


_INTENSITY_CASES = {(2, 1): (torch.float16, 1), (2, 64): (torch.float16, 64), (4, 1): (torch.float32, 1)}


def _intensity_hint(bytes_per_number: int, batch: int, got: float, want: float, at_one: float) -> str:
    h, h_kv = LLAMA_70B["num_heads"], LLAMA_70B["num_kv_heads"]
    counts = (f"per cached position and layer, attention does 2 * 2 * h * d_k FLOPs (Q K^T and A V, a multiply "
              f"and an add each) and moves 2 * h_kv * d_k numbers (keys and values) of {bytes_per_number} bytes")
    per_number = "that is FLOPs per number: divide by the bytes each number takes"
    keys_only = "the cache holds keys AND values (the factor 2)"
    slips = [(batch * at_one, "the batch multiplies the FLOPs and the cache bytes alike: B cancels"),
             (want * bytes_per_number * 2, f"{per_number}; and {keys_only}"),
             (want * 2, f"{per_number}, or {keys_only}" if bytes_per_number == 2 else keys_only),
             (want * bytes_per_number, per_number),
             (want / 2, f"that is what the 8B shape of section 3 gives, with h = {LLAMA_8B['num_heads']} query heads; "
                        f"this shape has h = {h}. If that is not it: each product (Q K^T and A V) costs a multiply "
                        "and an add, 2 FLOPs per weight"),
             (want * h_kv, "the cache holds h_kv heads of keys and of values; each is read by h / h_kv query heads"),
             (want * h_kv / h, f"the cache holds h_kv = {h_kv} heads, not h = {h}: that would be multi-head attention")]
    if bytes_per_number != 2:  # the 16-bit answer copied: it comes first, since it can equal a slip below
        at_16 = attention_intensity(LLAMA_70B["num_kv_heads"], torch.float16, batch)
        slips.insert(0, (at_16, f"that is the 16-bit value: a 32-bit number takes {bytes_per_number} bytes, not 2, "
                                f"for the same FLOPs. If that is not it: {keys_only}"))
    for value, hint in slips:
        if value != want and math.isclose(got, value, rel_tol=1e-3):
            return f"{hint}; {counts}"
    return counts


@checker("Exercise 2 (attention's FLOPs per byte of cache)")
def check_attention_intensity(answers):
    """``answers``: {(bytes per number, B): FLOPs per byte} for (2, 1), (2, 64) and (4, 1): attention's
    FLOPs per byte of cache in a decoding step of the Llama-3-70B-like shape at 4,096 cached tokens."""
    answers = _dict_answer(answers, tuple(_INTENSITY_CASES), "(bytes per number, B) -> FLOPs per byte")
    problems = []
    for (size, batch), got in answers.items():
        question = f"{size} bytes per number, B = {batch}"
        got = _number(question, got)
        dtype, _ = _INTENSITY_CASES[size, batch]
        want = attention_intensity(LLAMA_70B["num_kv_heads"], dtype, batch)
        if not math.isclose(got, want, rel_tol=1e-3):
            at_one = attention_intensity(LLAMA_70B["num_kv_heads"], dtype, 1)
            problems.append((question, got, want, _intensity_hint(size, batch, got, want, at_one)))
    if problems:
        _fail("attention_intensity", problems)


WINDOW, SINKS, BUDGET_GIB, FULL_TOKENS = 4096, 4, 24, 131_072
MISTRAL_7B = dict(num_layers=32, num_kv_heads=8, head_dim=128, dtype=torch.float16)


def window_budget() -> dict[str, int | float]:
    """Exercise 3's three answers, from ``kv_cache_bytes``."""
    positions = SINKS + WINDOW - 1  # what RollingKVCache keeps between steps
    per_sequence = kv_cache_bytes(seq_len=positions, **MISTRAL_7B)
    return {"positions": positions, "sequences": BUDGET_GIB * GIB // per_sequence,
            "full GiB": kv_cache_bytes(seq_len=FULL_TOKENS, **MISTRAL_7B) / GIB}


def _window_hints(key: str, got, positions=None) -> str:
    """The hint for a wrong answer to ``key``; ``positions`` is the learner's answer to "positions"
    (a count of sequences may follow rightly from a wrong count of positions)."""
    per_token = kv_cache_bytes(seq_len=1, **MISTRAL_7B)
    if key == "positions":
        recent = ("between steps the cache keeps w - 1 recent positions: the new token brings the w-th "
                  "(section 4's rolling cache of window 16 held 15)")
        return {WINDOW: f"the sinks stay in the cache besides the window; and {recent}",
                WINDOW + SINKS: ("s + w is what it holds during a step, when the new token's key and value are in "
                                 f"and the oldest has not yet left; {recent}"),
                WINDOW - 1: "the sinks stay in the cache besides the window"}.get(
            got, "what does a RollingKVCache keep between steps? (section 4's, of window 16, held 15 positions)")
    if key == "sequences":
        per_sequence = (SINKS + WINDOW - 1) * per_token
        if positions not in (None, SINKS + WINDOW - 1) and positions > 0 and got == BUDGET_GIB * GIB // (
                positions * per_token):
            return (f"that is right for the {positions:,} positions you gave, and {positions:,} is not what the "
                    "cache holds between steps: fix the positions, then divide again")
        if got == BUDGET_GIB * 10**9 // per_sequence:
            return "a GiB is 2^30 bytes, not 10^9"
        if got == BUDGET_GIB * GIB // (per_sequence // 2):
            return "each position holds keys AND values (the factor 2)"
        if got == -(-BUDGET_GIB * GIB // per_sequence):
            return ("a cache that does not fit whole does not fit: round down; and each cache holds the sinks "
                    "and the last w - 1 positions")
        return ("divide the budget, 24 * 2^30 bytes, by one sequence's cache: positions x "
                f"{per_token:,} bytes (32 layers x 2 x 8 kv heads x 128 x 2 bytes), rounded down")
    want = kv_cache_bytes(seq_len=FULL_TOKENS, **MISTRAL_7B)
    slips = [(want, "that is bytes: divide by 2^30 for GiB"),
             (want / 1e9, "that is GB (10^9 bytes): a GiB is 2^30 bytes"),
             (kv_cache_bytes(seq_len=128_000, **MISTRAL_7B) / GIB, "131,072 tokens is 2^17, not 128,000"),
             (want / 2 / GIB, "each position holds keys AND values (the factor 2)"),
             (want * 4 / GIB, "the cache holds the 8 kv heads, not the 32 query heads")]
    for value, hint in slips:
        if math.isclose(got, value, rel_tol=1e-3):
            return hint
    return f"131,072 positions of {per_token:,} bytes each, in GiB (2^30 bytes)"


@checker("Exercise 3 (a window with sinks against a memory budget)")
def check_window_budget(answers):
    """``answers``: {"positions": ..., "sequences": ..., "full GiB": ...} for the Mistral-7B-like
    shape with a window of 4,096 and 4 sinks in 16-bit, against a budget of 24 GiB."""
    want = window_budget()
    answers = _dict_answer(answers, tuple(want), "question -> number")
    got = {key: _number(key, value, whole=key != "full GiB") for key, value in answers.items()}
    problems = []
    for key, value in got.items():
        right = math.isclose(value, want[key], rel_tol=1e-3) if key == "full GiB" else value == want[key]
        if not right:
            problems.append((key, value, want[key], _window_hints(key, value, got["positions"])))
    if problems:
        _fail("window_budget", problems)


NTK_D_K, NTK_TRAINED, NTK_LENGTH = 16, 32, 64


def ntk_past_pairs(alpha: float, d_k: int = NTK_D_K, trained: int = NTK_TRAINED, length: int = NTK_LENGTH) -> set[int]:
    """The pairs i that NTK-aware scaling by ``alpha`` leaves meeting larger angles on rows of ``length``
    (offsets up to length - 1) than in training (up to trained - 1), among those that never turned a
    whole circle in training."""
    i = torch.arange(d_k // 2, dtype=torch.float64)
    omega = 10000.0 ** (-2 * i / d_k)  # (d_k/2,)
    slower = alpha ** (2 * i / (d_k - 2))
    partial = (trained - 1) * omega < 2 * math.pi
    past = (length - 1) * omega / slower > (trained - 1) * omega
    return {int(p) for p in (partial & past).nonzero().flatten()}


def smallest_whole_ntk_alpha() -> int:
    return next(a for a in range(1, 1000) if not ntk_past_pairs(float(a)))


def _pairs_hint(got: set[int], want: set[int]) -> str:
    if got & {0, 1}:
        return ("pairs 0 and 1 turned a whole circle within 31 positions (31 omega_i >= 2 pi): they met "
                "every angle in training already")
    if got == want - {max(want)}:
        return ("rows of 64 reach offset 63, not 2 x 31 = 62: the slowest pair, slowed by exactly 2, turns at "
                "offset 63 as far as at offset 31.5 before, past the 31 it met in training")
    return ("pair i turns alpha^(2i / (d_k - 2)) times slower; compare 63 omega_i / slower with 31 omega_i "
            "for each pair that never turned a whole circle in training")


@checker("Exercise 4 (which RoPE pairs NTK-aware scaling leaves past their trained angles)")
def check_ntk_pairs(pairs, alpha):
    """``pairs``: the set of pair indices i that meet angles beyond training at alpha = 2 on rows of 64
    (d_k = 16, trained on rows of 32); ``alpha``: the smallest whole alpha that leaves none."""
    try:
        got = {int(p) for p in pairs}
    except (TypeError, ValueError):
        raise AssertionError(f"pairs: expected a set of pair indices such as {{0, 1}}, got {pairs!r}") from None
    if not got <= set(range(NTK_D_K // 2)):
        raise AssertionError(f"pairs: d_k = {NTK_D_K} has pairs 0 to {NTK_D_K // 2 - 1}, got {sorted(got)}")
    if alpha is Ellipsis:
        raise NotAttempted("still to predict: alpha. Fill it in, then run this cell again.")
    got_alpha = _number("alpha", alpha, whole=True)
    want, want_alpha = ntk_past_pairs(2.0), smallest_whole_ntk_alpha()
    problems = []
    if got != want:
        problems.append(("pairs", sorted(got), sorted(want), _pairs_hint(got, want)))
    if got_alpha != want_alpha:
        past = sorted(ntk_past_pairs(float(got_alpha))) if got_alpha >= 1 else []
        if got_alpha < 1:
            hint = "alpha stretches: it is at least 1 (alpha = 1 is plain RoPE)"
        elif past:
            hint = (f"at alpha = {got_alpha} pairs {past} still go past; the pair that binds is the fastest one "
                    "that never turned a whole circle")
        else:
            hint = "a smaller whole alpha leaves none past too: the question asks for the smallest"
        problems.append(("alpha", got_alpha, want_alpha, hint))
    if problems:
        _fail("ntk_pairs", problems)


def _allowed(t, window, sinks):
    return [j for j in range(t + 1) if t - j < window or j < sinks]


@checker("Exercise 5 (positions within the cache)")
def check_cache_rope_positions(fn):
    """``fn(t, window, sinks)`` -> (the RoPE positions of the keys the query at t sees, in
    increasing order, sinks first, and the query's own): their places 0, 1, ... in the cache."""
    for t, window, sinks in ((9, 4, 2), (3, 4, 2), (0, 3, 0), (20, 1, 1), (100, 8, 4), (5, 10, 4), (1, 1, 4)):
        got = call(fn, t, window, sinks)
        keys = _allowed(t, window, sinks)
        want = (list(range(len(keys))), len(keys) - 1)
        try:
            got_keys, got_query = [int(j) for j in got[0]], int(got[1])
        except (TypeError, IndexError, ValueError):
            raise AssertionError(f"return (key_positions, query_position), got {got!r}") from None
        if (got_keys, got_query) == (keys, t) and keys != want[0]:
            raise AssertionError(
                f"with t={t}, window={window}, sinks={sinks} you returned the absolute positions {keys}: "
                "StreamingLLM rotates each key by its place in the cache instead, 0, 1, ... in order")
        assert (got_keys, got_query) == want, (
            f"with t={t}, window={window}, sinks={sinks} the keys {keys} sit at places {want[0]} of the "
            f"cache and the query at {want[1]}; got {got_keys} and {got_query}")
