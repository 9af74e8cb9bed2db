"""Each checker of notebook 13 says "not attempted" for the stub, rejects plausible wrong
answers with a message naming what was expected and accepts a right answer. Exercises 1-4 are
predictions: a first wrong answer gets a hint without the expected value, the next ones both."""

import math

import pytest
import torch

from helpers.exercises import nb13
from helpers.modern import decode_step_cost, kv_cache_bytes


def stub(*args):
    raise NotImplementedError


@pytest.fixture(autouse=True)
def fresh_session():
    """Every test starts as a learner's first try."""
    for key in nb13.WRONG_TRIES:
        nb13.WRONG_TRIES[key] = 0


def wrong_twice(check, *answers):
    """The messages of a first and a second wrong try of the same answers."""
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as err:
            check(*answers)
        messages.append(str(err.value))
    return messages


# Exercise 1: the smallest batch above 295 FLOPs per byte, by brute force over decode_step_cost
LLAMA_8B = dict(num_params=8_000_000_000, num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128)
BATCH_256 = next(b for b in range(1, 5000) if decode_step_cost(**LLAMA_8B, context=256, batch_size=b)["intensity"] > 295)


def test_compute_bound_batch_right_and_not_attempted(capsys):
    assert BATCH_256 == 762
    assert not nb13.check_compute_bound_batch({256: ..., 512: ...})
    assert "not attempted yet" in capsys.readouterr().out
    assert not nb13.check_compute_bound_batch({256: BATCH_256, 512: ...})
    assert "still to predict: [512]" in capsys.readouterr().out
    assert nb13.check_compute_bound_batch({256: BATCH_256, 512: None})
    assert nb13.check_compute_bound_batch({256: float(BATCH_256), 512: None})  # 762.0 is a whole number


def test_compute_bound_batch_at_512_none_is_enough():
    """As B grows, B F / (W + B C) tends to F / C, about 242 at 512 cached tokens: below 295."""
    assert decode_step_cost(**LLAMA_8B, context=512, batch_size=10**7)["intensity"] < 295
    first, second = wrong_twice(nb13.check_compute_bound_batch, {256: BATCH_256, 512: 291})
    assert "tend to" in first and "None if no batch" in first and "expected" not in first
    assert "expected None" in second


@pytest.mark.parametrize("wrong, concept", [
    (293, "weights' bytes only"),  # 295 W / F: the caches forgotten
    (423, "keys AND values"),  # the cache counted once
    (779, "attention's own FLOPs"),  # F = 2N
    (757, "context \\+ 1 keys"),  # the new token's key forgotten
    (761, "not above 295"),  # one short
    (800, "the smallest"),
    (None, "tend to"),
])
def test_compute_bound_batch_names_the_slip(wrong, concept):
    first, second = wrong_twice(nb13.check_compute_bound_batch, {256: wrong, 512: None})
    assert "context 256" in first and "hint:" in first and "762" not in first
    assert "expected 762" in second
    assert pytest.raises(AssertionError, nb13.check_compute_bound_batch, {256: wrong, 512: None}).match(concept)


def test_compute_bound_batch_refuses_what_is_not_a_batch():
    with pytest.raises(AssertionError, match="whole number"):
        nb13.check_compute_bound_batch({256: 761.6, 512: None})
    with pytest.raises(AssertionError, match="keys"):
        nb13.check_compute_bound_batch({256: 762})


# Exercise 2: attention's FLOPs per cache byte, 2 h / (h_kv b): 8, 8 and 4 for h = 64, h_kv = 8


def test_attention_intensity_right_and_from_decode_step_cost(capsys):
    c = decode_step_cost(70_000_000_000, 80, 64, 8, 128, context=4096, dtype=torch.float32)
    assert (c["flops"] - 2 * 70_000_000_000) / c["kv_bytes"] == 4
    assert not nb13.check_attention_intensity({(2, 1): ..., (2, 64): ..., (4, 1): ...})
    assert "not attempted yet" in capsys.readouterr().out
    assert nb13.check_attention_intensity({(2, 1): 8, (2, 64): 8.0, (4, 1): 4})


@pytest.mark.parametrize("wrong, concept", [
    ((16, 16, 8), "keys AND values"),  # the cache counted once
    ((16, 16, 16), "FLOPs per number"),  # bytes per number forgotten
    ((8, 512, 4), "B cancels"),  # the FLOPs grow with B, the bytes not
    ((1, 1, 0.5), "not h = 64"),  # the cache of h heads: off by h / h_kv
    ((64, 64, 32), "h_kv heads"),  # the cache without its h_kv
    ((4, 4, 2), "multiply and an add"),  # a multiply-add counted as 1 FLOP
])
def test_attention_intensity_names_the_slip(wrong, concept):
    answers = dict(zip(((2, 1), (2, 64), (4, 1)), wrong, strict=True))
    first, second = wrong_twice(nb13.check_attention_intensity, answers)
    assert "hint:" in first and "expected" not in first and concept in first.replace("\n", " ")
    assert "expected" in second


def test_attention_intensity_names_the_16_bit_value_copied():
    """8 for 32-bit is the 16-bit answer copied: the hint says that first (a 32-bit number takes 4
    bytes), then the factor 2 that would give 8 too; the second try shows the expected 4."""
    first, second = wrong_twice(nb13.check_attention_intensity, {(2, 1): 8, (2, 64): 8, (4, 1): 8})
    first = first.replace("\n", " ")
    assert "16-bit value" in first and "4 bytes" in first and "expected" not in first
    assert first.index("16-bit value") < first.index("keys AND values")
    assert "expected 4" in second


def test_attention_intensity_names_the_8b_shape():
    """4 in 16-bit is section 3's 8B shape (32 query heads); the hint says so before the multiply-add."""
    first, _ = wrong_twice(nb13.check_attention_intensity, {(2, 1): 4, (2, 64): 8, (4, 1): 4})
    assert "8B shape" in first and "h = 64" in first and "multiply and an add" in first


def test_attention_intensity_checks_every_question():
    """Two right answers do not hide a wrong third."""
    with pytest.raises(AssertionError, match=r"4 bytes per number, B = 1: you said 8"):
        nb13.check_attention_intensity({(2, 1): 8, (2, 64): 8, (4, 1): 8})


# Exercise 3: a window of 4,096 with 4 sinks, Mistral-7B-like, 16-bit, against 24 GiB

RIGHT_BUDGET = {"positions": 4099, "sequences": 47, "full GiB": 16}


def test_window_budget_right_and_from_kv_cache_bytes(capsys):
    per_sequence = kv_cache_bytes(32, 8, 128, 4 + 4096 - 1, dtype=torch.float16)
    assert 24 * 2**30 // per_sequence == 47
    assert kv_cache_bytes(32, 8, 128, 131_072, dtype=torch.float16) == 16 * 2**30
    assert not nb13.check_window_budget(dict.fromkeys(RIGHT_BUDGET, ...))
    assert "not attempted yet" in capsys.readouterr().out
    assert nb13.check_window_budget(RIGHT_BUDGET)
    assert nb13.check_window_budget({**RIGHT_BUDGET, "full GiB": 16.0})


@pytest.mark.parametrize("key, wrong, concept", [
    ("positions", 4096, "sinks stay"),
    ("positions", 4100, "w - 1 recent positions"),
    ("positions", 4095, "sinks stay"),
    ("sequences", 44, "2\\^30 bytes, not 10\\^9"),  # 24e9 bytes
    ("sequences", 95, "keys AND values"),
    ("sequences", 48, "round down"),
    ("full GiB", 15.625, "not 128,000"),  # 128,000 tokens
    ("full GiB", 17.179869184, "GB"),  # 10^9 bytes
    ("full GiB", 17_179_869_184, "that is bytes"),
    ("full GiB", 8, "keys AND values"),
    ("full GiB", 64, "8 kv heads, not the 32 query heads"),
])
def test_window_budget_names_the_slip(key, wrong, concept):
    first, second = wrong_twice(nb13.check_window_budget, {**RIGHT_BUDGET, key: wrong})
    assert f"{key}: you said" in first and "hint:" in first and "expected" not in first
    assert f"expected {RIGHT_BUDGET[key]!r}" in second
    assert pytest.raises(AssertionError, nb13.check_window_budget, {**RIGHT_BUDGET, key: wrong}).match(concept)


def test_window_budget_sequences_that_follow_from_wrong_positions():
    """4,096 positions and 48 sequences: 48 is exact for 4,096 positions, so the hint on the sequences
    points back to the positions, not to rounding."""
    first, _ = wrong_twice(nb13.check_window_budget, {**RIGHT_BUDGET, "positions": 4096, "sequences": 48})
    assert "right for the 4,096 positions you gave" in first and "round down" not in first
    assert "sinks stay" in first


def test_window_budget_s_plus_w_is_during_a_step():
    first, _ = wrong_twice(nb13.check_window_budget, {**RIGHT_BUDGET, "positions": 4100})
    assert "during a step" in first and "w - 1 recent positions" in first


# Exercise 4: NTK-aware scaling at alpha = 2 on rows of 64, d_k = 16, trained on rows of 32


def past_pairs_brute_force(alpha, d_k=16):
    """Pairs whose largest angle on rows of 64 exceeds the largest met on rows of 32, among those
    that never turned a whole circle in training (angle per position computed one pair at a time)."""
    past = set()
    for i in range(d_k // 2):
        omega = 10000.0 ** (-2 * i / d_k)
        ntk_omega = (10000.0 * alpha ** (d_k / (d_k - 2))) ** (-2 * i / d_k)  # the raised base
        if 31 * omega < 2 * math.pi and 63 * ntk_omega > 31 * omega:
            past.add(i)
    return past


def test_ntk_pairs_right_and_from_the_raised_base(capsys):
    assert past_pairs_brute_force(2.0) == {2, 3, 4, 5, 6, 7}
    alpha = next(a for a in range(1, 100) if not past_pairs_brute_force(float(a)))
    assert alpha == 12 and past_pairs_brute_force(11.0) == {2}
    assert not nb13.check_ntk_pairs(..., ...)
    assert "not attempted yet" in capsys.readouterr().out
    assert not nb13.check_ntk_pairs({2, 3, 4, 5, 6, 7}, ...)
    assert "still to predict: alpha" in capsys.readouterr().out
    assert nb13.check_ntk_pairs({2, 3, 4, 5, 6, 7}, 12)
    assert nb13.check_ntk_pairs([7, 6, 5, 4, 3, 2], 12.0)


@pytest.mark.parametrize("pairs, alpha, concept", [
    ({2, 3, 4, 5, 6}, 12, "offset 63, not 2 x 31"),  # the slowest pair thought exactly stretched
    (set(range(8)), 12, "whole circle"),  # the pairs that met every angle counted
    ({2, 3, 4, 5, 6, 7}, 11, r"pairs \[2\] still go past"),  # 11.95 rounded down
    ({2, 3, 4, 5, 6, 7}, 3, "the fastest one"),  # enough for the slowest pair only
    ({2, 3, 4, 5, 6, 7}, 16, "the smallest"),
    ({2, 3, 4, 5, 6, 7}, 0, "at least 1"),
])
def test_ntk_pairs_names_the_slip(pairs, alpha, concept):
    first, second = wrong_twice(nb13.check_ntk_pairs, pairs, alpha)
    assert "hint:" in first and "expected" not in first
    assert "expected" in second
    assert pytest.raises(AssertionError, nb13.check_ntk_pairs, pairs, alpha).match(concept)


def test_ntk_pairs_refuses_what_is_not_a_pair():
    with pytest.raises(AssertionError, match="pairs 0 to 7"):
        nb13.check_ntk_pairs({8}, 12)
    with pytest.raises(AssertionError, match="set of pair indices"):
        nb13.check_ntk_pairs(2.5, 12)


# Exercise 5


def cache_positions_right(t, window, sinks):
    keys = [j for j in range(t + 1) if t - j < window or j < sinks]
    return list(range(len(keys))), len(keys) - 1


def cache_positions_absolute(t, window, sinks):
    return [j for j in range(t + 1) if t - j < window or j < sinks], t


def test_cache_rope_positions(capsys):
    assert not nb13.check_cache_rope_positions(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="absolute positions"):
        nb13.check_cache_rope_positions(cache_positions_absolute)
    with pytest.raises(AssertionError, match="places"):
        nb13.check_cache_rope_positions(lambda t, w, s: (list(range(w + s)), w + s - 1))
    assert nb13.check_cache_rope_positions(cache_positions_right)


def test_cache_rope_positions_refuses_sinks_in_the_future():
    """Sinks kept whatever t (so the query at t=1 with 4 sinks saw 2 and 3) passed the checker."""
    def future_sinks(t, window, sinks):
        return sorted(set(range(sinks)) | {j for j in range(t + 1) if t - j < window})

    def future_places(t, window, sinks):
        return list(range(len(future_sinks(t, window, sinks)))), len(future_sinks(t, window, sinks)) - 1

    with pytest.raises(AssertionError, match="places"):
        nb13.check_cache_rope_positions(future_places)
