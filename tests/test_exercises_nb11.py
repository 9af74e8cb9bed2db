"""Each checker of notebook 11 says "not attempted" for the stub, rejects plausible wrong
answers with a helpful message and accepts a right answer."""

import math
import re

import numpy as np
import pytest
import torch

from helpers.exercises import nb11


def stub(*args):
    raise NotImplementedError


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    """Each test starts with no wrong tries counted (exercise 3 shows its answers from the second)."""
    monkeypatch.setitem(nb11.WRONG_TRIES, "kv_cache_bytes", 0)


def two_tries(fn):
    """The messages of two wrong answers in a row to exercise 3: a hint, then the expected counts."""
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as err:
            nb11.check_kv_cache_bytes(fn)
        messages.append(str(err.value))
    return messages


# ---------------------------------------------------------------- exercise 1


def merge_right(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    return m, l1 * torch.exp(m1 - m) + l2 * torch.exp(m2 - m)


def merge_no_rescale(m1, l1, m2, l2):
    return torch.maximum(m1, m2), l1 + l2


def merge_rescale_only_first(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    return m, l1 * torch.exp(m1 - m) + l2


def test_merge_softmax_stats(capsys):
    assert not nb11.check_merge_softmax_stats(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="Rescale each to the new max"):
        nb11.check_merge_softmax_stats(merge_no_rescale)
    with pytest.raises(AssertionError, match="rescaled only one of the two sums"):
        nb11.check_merge_softmax_stats(merge_rescale_only_first)
    with pytest.raises(AssertionError, match="larger of the two maxima"):
        nb11.check_merge_softmax_stats(lambda m1, l1, m2, l2: (torch.minimum(m1, m2), l1))
    with pytest.raises(AssertionError, match="return a pair"):
        nb11.check_merge_softmax_stats(lambda m1, l1, m2, l2: m1)
    assert nb11.check_merge_softmax_stats(merge_right)
    assert "correct" in capsys.readouterr().out


def test_merge_softmax_stats_names_the_factors_going_the_wrong_way():
    def upside_down(m1, l1, m2, l2):
        m = torch.maximum(m1, m2)
        return m, l1 * torch.exp(m - m1) + l2 * torch.exp(m - m2)

    with pytest.raises(AssertionError, match=r"factors go the wrong way.*at most 1"):
        nb11.check_merge_softmax_stats(upside_down)


def test_merge_softmax_stats_rescaling_only_the_second_sum_is_named_too():
    def only_second(m1, l1, m2, l2):
        m = torch.maximum(m1, m2)
        return m, l1 + l2 * torch.exp(m2 - m)

    with pytest.raises(AssertionError, match="rescaled only one of the two sums"):
        nb11.check_merge_softmax_stats(only_second)


def test_merge_softmax_stats_other_wrong_sums_are_shown_at_four_decimals():
    with pytest.raises(AssertionError, match=r"over both blocks: expected \[\d+\.\d{4}, .*\], got \[") as err:
        nb11.check_merge_softmax_stats(lambda m1, l1, m2, l2: (torch.maximum(m1, m2), torch.maximum(l1, l2)))
    assert not any(len(part) > 12 for part in str(err.value).replace(",", " ").replace("]", " ").split()
                   if part[0].isdigit())  # no 16-digit floats


# ---------------------------------------------------------------- exercise 2


def step_right(q_t, k_t, v_t, cache_k, cache_v):
    k = torch.cat([cache_k, k_t], dim=2)
    v = torch.cat([cache_v, v_t], dim=2)
    w = torch.softmax(q_t @ k.transpose(-2, -1) / math.sqrt(q_t.shape[-1]), dim=-1)
    return w @ v, k, v


def step_past_only(q_t, k_t, v_t, cache_k, cache_v):
    if cache_k.shape[2] == 0:
        return step_right(q_t, k_t, v_t, cache_k, cache_v)
    w = torch.softmax(q_t @ cache_k.transpose(-2, -1) / math.sqrt(q_t.shape[-1]), dim=-1)
    return w @ cache_v, torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)


def step_unscaled(q_t, k_t, v_t, cache_k, cache_v):
    k = torch.cat([cache_k, k_t], dim=2)
    v = torch.cat([cache_v, v_t], dim=2)
    return torch.softmax(q_t @ k.transpose(-2, -1), dim=-1) @ v, k, v


def step_no_append(q_t, k_t, v_t, cache_k, cache_v):
    out, _, _ = step_right(q_t, k_t, v_t, cache_k, cache_v)
    return out, k_t, v_t


def test_attention_step(capsys):
    assert not nb11.check_attention_step(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="step 1: the new token attends only to the 1 cached position: "
                                             "append its own key and value"):
        nb11.check_attention_step(step_past_only)
    with pytest.raises(AssertionError, match=r"sqrt\(d_k\)"):
        nb11.check_attention_step(step_unscaled)
    with pytest.raises(AssertionError, match="should hold 2 positions"):
        nb11.check_attention_step(step_no_append)
    assert nb11.check_attention_step(step_right)


def step_attend_then_append(q_t, k_t, v_t, cache_k, cache_v):
    """The most natural slip: attend over the cache as it is, then append."""
    w = torch.softmax(q_t @ cache_k.transpose(-2, -1) / math.sqrt(q_t.shape[-1]), dim=-1)
    return w @ cache_v, torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)


def test_attention_step_attending_before_appending_is_told_at_step_0():
    with pytest.raises(AssertionError, match="step 0: the cache is empty, and your output is zero: the new "
                                             "token must attend to itself"):
        nb11.check_attention_step(step_attend_then_append)


def test_attention_step_wrong_concat_dim_gets_a_message_not_a_raw_error():
    def wrong_dim(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([cache_k, k_t], dim=3), torch.cat([cache_v, v_t], dim=3)
        return q_t, k, v

    with pytest.raises(AssertionError, match=r"step 0 \(the cache holds 0 positions\): your function raised "
                                             r".*appended along dim 2"):
        nb11.check_attention_step(wrong_dim)


def test_attention_step_softmax_over_the_wrong_dimension():
    def wrong_softmax(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)
        return torch.softmax(q_t @ k.transpose(-2, -1) / math.sqrt(q_t.shape[-1]), dim=2) @ v, k, v

    with pytest.raises(AssertionError, match="softmax runs over the wrong dimension"):
        nb11.check_attention_step(wrong_softmax)


def test_attention_step_output_is_d_v_wide():
    def keys_mixed(q_t, k_t, v_t, cache_k, cache_v):
        out, k, v = step_right(q_t, k_t, v_t, cache_k, cache_v)
        w = torch.softmax(q_t @ k.transpose(-2, -1) / math.sqrt(q_t.shape[-1]), dim=-1)
        return w @ k, k, v  # mixes the keys (width d_k) instead of the values (width d_v)

    with pytest.raises(AssertionError, match=r"out should be \(B, h, 1, d_v\) = \(2, 3, 1, 5\), got "
                                             r"\(2, 3, 1, 4\): the output is a mix of values"):
        nb11.check_attention_step(keys_mixed)


def test_attention_step_other_wrong_outputs_get_the_size_of_the_difference():
    def doubled(q_t, k_t, v_t, cache_k, cache_v):
        out, k, v = step_right(q_t, k_t, v_t, cache_k, cache_v)
        return 2 * out, k, v

    with pytest.raises(AssertionError, match=r"step 0: your output differs from causal attention over all 6 "
                                             r"positions at once by up to \d+\.\d{4}"):
        nb11.check_attention_step(doubled)


# ---------------------------------------------------------------- exercise 3


def test_kv_cache_bytes(capsys):
    assert not nb11.check_kv_cache_bytes(stub)
    assert "not attempted yet" in capsys.readouterr().out
    assert nb11.check_kv_cache_bytes(lambda n, b, t, d, nb: 2 * n * b * t * d * nb)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda n, b, t, d, nb: n * b * t * d * nb, "keys and values: count both"),
        # forgetting the layers halves the first case too (it has 2 layers): the checker must not
        # call that "keys AND values"
        (lambda n, b, t, d, nb: 2 * b * t * d * nb, "each decoder layer keeps its own cache"),
        (lambda n, b, t, d, nb: 2 * n * t * d * nb, "each sequence of the batch"),
        (lambda n, b, t, d, nb: 2 * n * b * t * d, "multiply by the bytes"),
        (lambda n, b, t, d, nb: 4 * n * b * t * d * nb, "once per decoder layer"),
    ],
)
def test_kv_cache_bytes_names_the_slip(wrong, hint):
    first, second = two_tries(wrong)
    assert hint in first and ": expected" not in first and "a second wrong answer shows" in first
    assert re.search(r"kv_cache_bytes\(\d+, \d+, \d+, \d+, \d\): expected [\d,]+, got [\d,]+", second)
    assert hint in second
    assert "2 x layers" not in first + second  # the messages do not give the formula away


def test_kv_cache_bytes_other_wrong_answers():
    first, second = two_tries(lambda n, b, t, d, nb: 7)
    assert "kv_cache_bytes(2, 1, 128, 128, 4) returned 7" in first and "262,144" not in first
    assert "expected 262,144, got 7" in second and "Hint" not in first + second
    with pytest.raises(AssertionError, match="expected a number of bytes .* got str"):
        nb11.check_kv_cache_bytes(lambda n, b, t, d, nb: "many")


def test_merge_softmax_stats_python_max_gets_a_message_not_a_raw_error():
    def python_max(m1, l1, m2, l2):
        m = max(m1, m2)  # compares whole tensors: raises
        return m, l1 * torch.exp(m1 - m) + l2 * torch.exp(m2 - m)

    with pytest.raises(AssertionError, match=r"compares whole tensors.*torch\.maximum"):
        nb11.check_merge_softmax_stats(python_max)


def test_attention_step_a_causal_mask_row_is_told_not_to_mask():
    def masked_like_row_0(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)
        scores = q_t @ k.transpose(-2, -1) / math.sqrt(q_t.shape[-1])  # (B, h, 1, L + 1)
        length = k.shape[2]
        scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril()[:1], float("-inf"))
        return torch.softmax(scores, -1) @ v, k, v

    with pytest.raises(AssertionError, match="step 1: the new query sees only the first key. That is a causal "
                                             "mask aligned to the top-left"):
        nb11.check_attention_step(masked_like_row_0)


def test_attention_step_is_causal_with_a_cache_is_named():
    """F.scaled_dot_product_attention(..., is_causal=True) with one query and L + 1 keys aligns the
    mask to the top-left: the learner appended correctly, and the hint names the flag."""
    def fused_is_causal(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)
        return torch.nn.functional.scaled_dot_product_attention(q_t, k, v, is_causal=True), k, v

    with pytest.raises(AssertionError, match=r"step 1: the new query sees only the first key.*is_causal=True"
                                             r".*pass no mask and no is_causal") as err:
        nb11.check_attention_step(fused_is_causal)
    assert "append its own" not in str(err.value)

    def fused_right(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)
        return torch.nn.functional.scaled_dot_product_attention(q_t, k, v), k, v

    assert nb11.check_attention_step(fused_right)


def test_kv_cache_bytes_right_number_as_a_float_is_told_to_return_an_int():
    with pytest.raises(AssertionError, match="whole number: return an int"):
        nb11.check_kv_cache_bytes(lambda n, b, t, d, nb=4: 2.0 * n * b * t * d * nb)


def test_attention_step_a_cache_built_by_prepending_is_told_the_order():
    """Prepending gives the right output (attention without a mask ignores the order), but a cache
    whose index j is not position j breaks a mask and the positions of later steps."""
    def prepend(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([k_t, cache_k], 2), torch.cat([v_t, cache_v], 2)
        return torch.nn.functional.scaled_dot_product_attention(q_t, k, v), k, v

    with pytest.raises(AssertionError, match=r"step 1: the returned cache holds the positions in reverse order, "
                                             r"the newest first: the new key and value go after the cached ones"):
        nb11.check_attention_step(prepend)

    def cache_altered(q_t, k_t, v_t, cache_k, cache_v):
        out, k, v = step_right(q_t, k_t, v_t, cache_k, cache_v)
        return out, k * 1.5, v

    with pytest.raises(AssertionError, match=r"step 1: the returned cache should hold the keys and values of "
                                             r"positions 0 to 1 in order"):
        nb11.check_attention_step(cache_altered)


@pytest.mark.parametrize("fixed", [4, 2])
def test_kv_cache_bytes_ignoring_bytes_per_value_is_named(fixed):
    with pytest.raises(AssertionError, match=rf"Hint: your count takes {fixed} bytes per value in every case, "
                                             r"but the last argument, bytes_per_value, says how many") as err:
        nb11.check_kv_cache_bytes(lambda n, b, t, d, nb: 2 * n * b * t * d * fixed)
    assert "2 x layers" not in str(err.value)


@pytest.mark.parametrize("as_number", [np.int64, np.uint64, torch.tensor, lambda n: torch.tensor([n])],
                         ids=["numpy int64", "numpy uint64", "0-d tensor", "one-element tensor"])
def test_kv_cache_bytes_accepts_integers_of_numpy_and_torch(as_number, capsys):
    assert nb11.check_kv_cache_bytes(lambda n, b, t, d, nb: as_number(2 * n * b * t * d * nb))
    assert "correct!" in capsys.readouterr().out


@pytest.mark.parametrize("as_number", [np.float64, lambda n: torch.tensor(float(n), dtype=torch.float64)],
                         ids=["numpy float", "float tensor"])
def test_kv_cache_bytes_floats_of_numpy_and_torch_are_told_to_return_an_int(as_number):
    with pytest.raises(AssertionError, match="whole number: return an int"):
        nb11.check_kv_cache_bytes(lambda n, b, t, d, nb: as_number(2 * n * b * t * d * nb))


def test_merge_softmax_stats_a_max_with_its_indices_gets_a_message_not_a_raw_error():
    def merge_torch_max(m1, l1, m2, l2):  # .max(0) returns (values, indices)
        m = torch.stack([m1, m2]).max(0)
        return m, l1 + l2

    with pytest.raises(AssertionError, match=r"pair \(values, indices\).*\.values.*torch\.maximum"):
        nb11.check_merge_softmax_stats(merge_torch_max)


def test_merge_softmax_stats_rescaling_to_the_smaller_max_is_named():
    def merge_to_smaller(m1, l1, m2, l2):
        small = torch.minimum(m1, m2)
        return torch.maximum(m1, m2), l1 * torch.exp(m1 - small) + l2 * torch.exp(m2 - small)

    with pytest.raises(AssertionError, match="smaller of the two maxima.*the larger one"):
        nb11.check_merge_softmax_stats(merge_to_smaller)


@pytest.mark.parametrize(("dim", "name"), [(0, "the batch"), (1, "the heads")])
def test_attention_step_softmax_over_the_batch_or_the_heads_is_named_at_step_0(dim, name):
    def wrong_softmax(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)
        return torch.softmax(q_t @ k.transpose(-2, -1) / math.sqrt(q_t.shape[-1]), dim=dim) @ v, k, v

    with pytest.raises(AssertionError, match=rf"step 0: the softmax runs over the wrong dimension \(dim {dim}, "
                                             rf"{name}\)"):
        nb11.check_attention_step(wrong_softmax)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 2**20, "count in MiB"),
        (lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 1e6, "count in megabytes"),
        (lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 2**30, "count in GiB"),
        (lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 1e9, "count in gigabytes"),
        (lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 2**10, "count in KiB"),
        (lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 1e3, "count in kilobytes"),
        (lambda n, b, t, d, nb: 2 * n * b * t * d * nb * 8, "that counts bits"),
        (lambda n, b, t, d, nb: 2 * n * b * (t + 1) * d * nb, "not seq_len + 1"),
    ],
)
def test_kv_cache_bytes_other_units_and_one_token_more_are_named(wrong, hint):
    first, second = two_tries(wrong)
    assert hint in first and ": expected" not in first
    assert "kv_cache_bytes(2, 1, 128, 128, 4): expected 262,144" in second and hint in second


def test_kv_cache_bytes_first_wrong_try_hands_out_no_answers():
    """A first wrong answer gets a hint but none of the three expected counts (a table of them would
    pass the checker); the second shows all three."""
    first, second = two_tries(lambda n, b, t, d, nb: 3 * n * b * t * d * nb)
    for count in ("262,144", "301,989,888", "6,442,450,944"):
        assert count not in first and count in second
    assert "Try again; a second wrong answer shows the expected counts" in first


def test_merge_softmax_stats_one_max_over_all_rows_is_told_one_per_row():
    def global_max(m1, l1, m2, l2):
        m = torch.maximum(m1, m2).max()  # one number: the max over all rows
        return m, l1 * torch.exp(m1 - m) + l2 * torch.exp(m2 - m)

    with pytest.raises(AssertionError, match=r"m is one number, the largest over all 4 rows.*one max per row"):
        nb11.check_merge_softmax_stats(global_max)


def test_merge_softmax_stats_accepts_a_list_as_the_pair(capsys):
    assert nb11.check_merge_softmax_stats(lambda *stats: list(merge_right(*stats)))
    assert "correct!" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="return a pair \\(m, l\\), got list of length 3"):
        nb11.check_merge_softmax_stats(lambda *stats: [*merge_right(*stats), 0])


def test_attention_step_dividing_by_d_k_is_named():
    def by_d(q_t, k_t, v_t, cache_k, cache_v):
        k, v = torch.cat([cache_k, k_t], 2), torch.cat([cache_v, v_t], 2)
        return torch.softmax(q_t @ k.transpose(-2, -1) / q_t.shape[-1], -1) @ v, k, v

    with pytest.raises(AssertionError, match=r"step 1: the scores are divided by d_k = 4; the scale is "
                                             r"1/sqrt\(d_k\) = 1/2"):
        nb11.check_attention_step(by_d)
