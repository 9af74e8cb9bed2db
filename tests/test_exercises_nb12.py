"""Each checker of notebook 12 says "not attempted" for the stub, rejects plausible wrong
answers with a helpful message and accepts a right answer."""

import math

import pytest
import torch

from helpers.data import toy_language as tl
from helpers.exercises import nb12


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    """Each test starts as a fresh session: no wrong tries counted yet."""
    for key in nb12.WRONG_TRIES:
        monkeypatch.setitem(nb12.WRONG_TRIES, key, 0)


def stub(*args):
    raise NotImplementedError


def min_p_right(logits, p_min):
    probs = torch.softmax(logits, -1)
    keep = probs >= p_min * probs.max(-1, keepdim=True).values
    return logits.masked_fill(~keep, float("-inf"))


def min_p_absolute(logits, p_min):
    return logits.masked_fill(torch.softmax(logits, -1) < p_min, float("-inf"))


def min_p_on_logits(logits, p_min):  # compares logits instead of probabilities
    return logits.masked_fill(logits < p_min * logits.max(-1, keepdim=True).values, float("-inf"))


def test_min_p(capsys):
    assert not nb12.check_min_p_filter(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="scales the threshold"):
        nb12.check_min_p_filter(min_p_absolute)
    with pytest.raises(AssertionError, match="min-p compares probabilities"):
        nb12.check_min_p_filter(min_p_on_logits)
    assert nb12.check_min_p_filter(min_p_right)


def min_p_without_keepdim(logits, p_min):  # the row maxima lose their dimension: a shape error
    probs = torch.softmax(logits, -1)
    return logits.masked_fill(probs < p_min * probs.max(-1).values, float("-inf"))


def test_min_p_without_keepdim_names_the_lost_dimension():
    with pytest.raises(AssertionError, match=r"raised a shape error .*has lost the last dimension.*keepdim=True"):
        nb12.check_min_p_filter(min_p_without_keepdim)


def params_right(v, d, n, f, m, tie):
    block = 4 * (d * d + d) + (d * f + f) + (f * d + d) + 2 * 2 * d
    return v * d + m * d + n * block + 2 * d + (0 if tie else v * d)


def params_untied_always(v, d, n, f, m, tie):
    return params_right(v, d, n, f, m, False)


def params_no_norms(v, d, n, f, m, tie):
    return params_right(v, d, n, f, m, tie) - n * 4 * d - 2 * d


def params_no_positions(v, d, n, f, m, tie):
    return params_right(v, d, n, f, m, tie) - m * d


def params_no_final_norm(v, d, n, f, m, tie):
    return params_right(v, d, n, f, m, tie) - 2 * d


def params_one_norm_per_block(v, d, n, f, m, tie):
    return params_right(v, d, n, f, m, tie) - n * 2 * d


def params_one_norm_per_block_no_final(v, d, n, f, m, tie):
    return params_right(v, d, n, f, m, tie) - n * 2 * d - 2 * d


def test_parameter_count(capsys):
    assert not nb12.check_gpt_parameter_count(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="count it once"):
        nb12.check_gpt_parameter_count(params_untied_always)
    with pytest.raises(AssertionError, match="LayerNorms"):
        nb12.check_gpt_parameter_count(params_no_norms)
    with pytest.raises(AssertionError, match="position table"):
        nb12.check_gpt_parameter_count(params_no_positions)
    with pytest.raises(AssertionError, match="final LayerNorm"):
        nb12.check_gpt_parameter_count(params_no_final_norm)
    with pytest.raises(AssertionError, match=r"one LayerNorm per block short.*two LayerNorms per block\.( \(|$)"):
        nb12.check_gpt_parameter_count(params_one_norm_per_block)
    with pytest.raises(AssertionError, match=r"one LayerNorm per block short.*and the final one"):
        nb12.check_gpt_parameter_count(params_one_norm_per_block_no_final)
    assert nb12.check_gpt_parameter_count(params_right)


def _logp(model, text, drop_last=False, shift=False):
    ids = torch.tensor([[1] + tl.encode(text)])
    with torch.no_grad():
        logits = model(ids)[0]
    logp = torch.log_softmax(logits[1:] if shift else logits[:-1], -1)
    targets = ids[0, 2:] if shift else ids[0, 1:]
    per = logp[: len(targets)].gather(-1, targets[:, None])[:, 0]
    return float(per[:-1].sum() if drop_last else per.sum())


def _logp_mean(model, text):
    ids = torch.tensor([[1] + tl.encode(text)])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids)[0, :-1], -1)
    return float(logp.gather(-1, ids[0, 1:, None]).mean())


def _logp_without_start(model, text):  # feeds the sentence without the start token '.'
    ids = torch.tensor([tl.encode(text)])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids)[0, :-1], -1)
    return float(logp.gather(-1, ids[0, 1:, None]).sum())


def test_sentence_log_prob(capsys):
    assert not nb12.check_sentence_log_prob(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="final '.' is a token"):
        nb12.check_sentence_log_prob(lambda m, t: _logp(m, t, drop_last=True))
    with pytest.raises(AssertionError, match="the first word is predicted at position 0, from '.': include its"):
        nb12.check_sentence_log_prob(lambda m, t: _logp(m, t, shift=True))  # correctly shifted, first word left out
    with pytest.raises(AssertionError, match="a loss"):
        nb12.check_sentence_log_prob(lambda m, t: -_logp(m, t))
    with pytest.raises(AssertionError, match="the mean over tokens"):
        nb12.check_sentence_log_prob(_logp_mean)
    with pytest.raises(AssertionError, match="start token"):
        nb12.check_sentence_log_prob(_logp_without_start)
    with pytest.raises(AssertionError, match="Expected a log-probability"):
        nb12.check_sentence_log_prob(lambda m, t: _logp(m, t) - 1.0)
    assert nb12.check_sentence_log_prob(_logp)


def flops_right(v, d, n, f, c):
    return 2 * (n * (4 * d * d + 2 * d * f) + v * d) + n * 2 * 2 * c * d


def flops_without_head(v, d, n, f, c):
    return flops_right(v, d, n, f, c) - 2 * v * d


def flops_without_attention(v, d, n, f, c):
    return 2 * (n * (4 * d * d + 2 * d * f) + v * d)


def test_flops_per_token(capsys):
    assert not nb12.check_flops_per_token(stub)
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="output layer multiplies the token too"):
        nb12.check_flops_per_token(flops_without_head)
    with pytest.raises(AssertionError, match="two products"):
        nb12.check_flops_per_token(flops_without_attention)
    with pytest.raises(AssertionError, match="forward pass"):
        nb12.check_flops_per_token(lambda *a: 3 * flops_right(*a))
    with pytest.raises(AssertionError, match=r"two products per layer, Q K\^T \(the scores\) and A V"):
        nb12.check_flops_per_token(lambda v, d, n, f, c: flops_right(v, d, n, f, c) - n * 2 * c * d)
    assert nb12.check_flops_per_token(flops_right)


def test_flops_per_token_gives_a_hint_before_the_numbers(monkeypatch):
    with pytest.raises(AssertionError) as first:
        nb12.check_flops_per_token(flops_without_head)
    assert "output layer multiplies the token too" in str(first.value)
    assert "FLOPs (2 x" not in str(first.value) and "weights +" not in str(first.value)
    assert "second wrong try shows the expected count" in str(first.value)
    with pytest.raises(AssertionError, match=r"expected [\d,]+ FLOPs \(2 x [\d,]+ weights \+ [\d,]+ for "
                                             r"attention\), got [\d,]+\. The output layer"):
        nb12.check_flops_per_token(flops_without_head)


def test_flops_per_token_first_wrong_try_without_a_named_slip_gets_the_recipe(monkeypatch):
    with pytest.raises(AssertionError, match=r"you counted 1,000 FLOPs.*Count 2 FLOPs per weight that multiplies"):
        nb12.check_flops_per_token(lambda *a: 1000)


# --- hints only for what a second case confirms; the expected answer from the second wrong try ---
def min_p_global_max(logits, p_min):  # probs.max() without dim: the maximum of the whole batch
    probs = torch.softmax(logits, -1)
    return logits.masked_fill(probs < p_min * probs.max(), float("-inf"))


def min_p_fill_zero(logits, p_min):
    probs = torch.softmax(logits, -1)
    return logits.masked_fill(probs < p_min * probs.max(-1, keepdim=True).values, 0.0)


def test_min_p_names_the_batch_maximum_and_the_missing_minus_infinity():
    with pytest.raises(AssertionError, match=r"largest probability of the whole batch") as err:
        nb12.check_min_p_filter(min_p_global_max)
    assert "p_min itself" not in str(err.value) and "should be" not in str(err.value)
    with pytest.raises(AssertionError, match=r"must get -inf"):
        nb12.check_min_p_filter(min_p_fill_zero)
    with pytest.raises(AssertionError, match=r"should be \[\["):  # the second wrong try: the expected set
        nb12.check_min_p_filter(min_p_global_max)


def params_no_ffn_biases(v, d, n, f, m, tie):  # 640 short at (27, 64, 2, 256): as many as the LayerNorms
    return params_right(v, d, n, f, m, tie) - n * (f + d)


def params_no_attention_biases(v, d, n, f, m, tie):
    return params_right(v, d, n, f, m, tie) - 4 * n * d


def test_parameter_count_names_the_biases_not_the_layer_norms():
    with pytest.raises(AssertionError, match=r"feed-forward network's biases") as err:
        nb12.check_gpt_parameter_count(params_no_ffn_biases)
    assert "LayerNorms" not in str(err.value) and "expected 1" not in str(err.value)
    with pytest.raises(AssertionError, match=r"attention projections' biases"):
        nb12.check_gpt_parameter_count(params_no_attention_biases)
    with pytest.raises(AssertionError, match=r"expected 1\d\d,\d\d\d parameters"):  # second wrong try
        nb12.check_gpt_parameter_count(lambda *a: 1)


def _logp_unshifted(model, text, all_positions=False):
    ids = torch.tensor([[1] + tl.encode(text)])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids)[0], -1)
    if all_positions:  # every position scored with its own logits, the start token too
        return float(logp.gather(-1, ids[0, :, None]).sum())
    return float(logp[1:].gather(-1, ids[0, 1:, None]).sum())  # token t with the logits at t


def test_sentence_log_prob_names_the_missing_shift():
    for wrong in (_logp_unshifted, lambda m, t: _logp_unshifted(m, t, all_positions=True)):
        with pytest.raises(AssertionError, match=r"logits at its own position.*A second wrong try"):
            nb12.check_sentence_log_prob(wrong)
        nb12.WRONG_TRIES["log_prob"] = 0
    with pytest.raises(AssertionError):
        nb12.check_sentence_log_prob(lambda m, t: _logp(m, t) - 1.0)
    with pytest.raises(AssertionError, match=r"Expected a log-probability of -\d+\.\d{4}"):
        nb12.check_sentence_log_prob(lambda m, t: _logp(m, t) - 1.0)


def test_the_log_prob_checker_leaves_the_random_state_alone():
    torch.manual_seed(5)
    before = torch.rand(3)
    torch.manual_seed(5)
    nb12.check_sentence_log_prob(_logp)
    assert torch.equal(torch.rand(3), before)


def min_p_inverted(logits, p_min):  # keeps the tokens below the threshold
    probs = torch.softmax(logits, -1)
    return logits.masked_fill(probs >= p_min * probs.max(-1, keepdim=True).values, float("-inf"))


def min_p_probabilities(logits, p_min):  # the filtered probabilities instead of the logits
    probs = torch.softmax(logits, -1)
    return probs.masked_fill(probs < p_min * probs.max(-1, keepdim=True).values, float("-inf"))


def min_p_probabilities_zeroed(logits, p_min):
    probs = torch.softmax(logits, -1)
    return probs * (probs >= p_min * probs.max(-1, keepdim=True).values)


def min_p_log_probabilities(logits, p_min):  # the masked log-softmax: the same distribution, not the logits
    probs = torch.softmax(logits, -1)
    keep = probs >= p_min * probs.max(-1, keepdim=True).values
    return torch.log_softmax(logits, -1).masked_fill(~keep, float("-inf"))


@pytest.mark.parametrize(("wrong", "match"), [(min_p_inverted, "you kept the tokens to drop"),
                                              (min_p_probabilities, "you returned probabilities; return logits"),
                                              (min_p_probabilities_zeroed, "you returned probabilities; return logits"),
                                              (min_p_log_probabilities,
                                               r"you returned log-probabilities; return the logits unchanged \(the two "
                                               "differ by a constant per row\\)")])
def test_min_p_names_the_inverted_mask_and_returned_probabilities(wrong, match):
    with pytest.raises(AssertionError, match=match) as first:
        nb12.check_min_p_filter(wrong)
    assert "should be" not in str(first.value)
    with pytest.raises(AssertionError, match=r"kept tokens should be"):
        nb12.check_min_p_filter(wrong)


@pytest.mark.parametrize(("wrong", "match"), [
    (lambda m, t: _logp(m, t) / math.log(2), "base 2.*natural log"),
    (lambda m, t: math.exp(_logp(m, t)), "you returned the sentence's probability; the exercise asks for its log"),
])
def test_sentence_log_prob_names_bits_and_the_probability(wrong, match):
    with pytest.raises(AssertionError, match=match + r".*A second wrong try"):
        nb12.check_sentence_log_prob(wrong)
    with pytest.raises(AssertionError, match=r"Expected a log-probability of -\d+\.\d{4}"):
        nb12.check_sentence_log_prob(wrong)


def _logp_log10(model, text):  # the log in base 10
    return _logp(model, text) / math.log(10)


def _logp_raw_logits(model, text):  # the logits summed without the log-softmax
    ids = torch.tensor([[1] + tl.encode(text)])
    with torch.no_grad():
        logits = model(ids)[0]
    return float(logits[:-1].gather(-1, ids[0, 1:, None]).sum())


def _logp_own_position_without_start(model, text):  # no '.', each token scored at its own position
    ids = torch.tensor([tl.encode(text)])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids)[0], -1)
    return float(logp.gather(-1, ids[0, :, None]).sum())


@pytest.mark.parametrize(("wrong", "match"), [
    (_logp_log10, "a log in base 10"),
    (_logp_raw_logits, "you summed raw logits; apply log_softmax to the logits first"),
    (_logp_own_position_without_start, r"feed '\.' first, then score logits\[:-1\] against ids\[1:\]"),
    (lambda m, t: _logp(m, t, shift=True), "the first word is predicted at position 0, from '.': include its"),
])
def test_sentence_log_prob_names_base_10_raw_logits_and_the_missing_start(wrong, match):
    with pytest.raises(AssertionError, match=match + r".*A second wrong try") as first:
        nb12.check_sentence_log_prob(wrong)
    assert "Expected" not in str(first.value)
    with pytest.raises(AssertionError, match=match + r".*Expected a log-probability of -\d+\.\d{4}"):
        nb12.check_sentence_log_prob(wrong)


def test_resetting_wrong_tries_resets_every_exercise():
    """One dictionary counts every exercise's wrong tries, the FLOPs exercise's too."""
    assert set(nb12.WRONG_TRIES) == {"min_p", "params", "log_prob", "flops"}
    assert not hasattr(nb12, "_FLOPS_WRONG_TRIES")
