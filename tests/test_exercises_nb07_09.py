"""Each checker of notebooks 07-09: says "not attempted" for the stub, rejects plausible wrong
answers with a helpful message, accepts a right one."""

import re

import pytest
import torch
import torch.nn.functional as F

from helpers.exercises import nb07, nb08, nb09

ALL = [nb07.check_layer_norm, nb07.check_sublayer_connection, nb08.check_most_attended,
       nb08.check_cross_attention_zeros, nb09.check_param_count]
PREDICTIONS = [nb07.check_width_64, nb08.check_moves, nb08.check_rotation_alignment]
UNCHANGED = {"add 5 to every feature": True, "multiply every feature by 3": True,
             "multiply one feature by 3": False}


@pytest.fixture(autouse=True)
def fresh_session():
    """Each test starts as a fresh session: no wrong tries counted yet (notebooks 07, 08 and 09)."""
    for counts in (nb07.WRONG_TRIES, nb08.WRONG_TRIES, nb09.WRONG_TRIES):
        for key in counts:
            counts[key] = 0


def stub(*args):
    raise NotImplementedError


def accepts(check, fn, capsys):
    assert check(fn)
    assert "correct!" in capsys.readouterr().out


def rejects(check, fn, match):
    with pytest.raises(AssertionError, match=match):
        check(fn)


@pytest.mark.parametrize("check", ALL)
def test_stub_is_not_attempted(check, capsys):
    assert not check(stub)
    assert not check(None)
    assert "not attempted yet" in capsys.readouterr().out


@pytest.mark.parametrize("check", PREDICTIONS)
def test_prediction_left_as_handed_out_is_not_attempted(check, capsys):
    assert not check(...)
    assert not check(None)
    assert "not attempted yet" in capsys.readouterr().out


def test_two_part_predictions_left_as_handed_out_are_not_attempted(capsys):
    assert not nb09.check_decoder_passes(..., ...)
    assert not nb09.check_embedding_rows(..., ...)
    assert not nb07.check_width_64({"a": ..., "b": ..., "c": ...})
    assert not nb08.check_moves({"a": ..., "b": ..., "c": ...})
    assert "not attempted yet" in capsys.readouterr().out


# --- nb07 ---
def ln(x, gamma, beta, eps, unbiased=False, dim=-1, affine=True):
    mean = x.mean(dim, keepdim=True)
    y = (x - mean) / torch.sqrt(x.var(dim, keepdim=True, unbiased=unbiased) + eps)
    return y * gamma + beta if affine else y


def check_ln(fn, unchanged=UNCHANGED):
    return nb07.check_layer_norm(fn, unchanged)


def test_layer_norm(capsys):
    accepts(check_ln, ln, capsys)
    rejects(check_ln, lambda x, g, b, e: ln(x, g, b, e, unbiased=True), "unbiased variance")
    rejects(check_ln, lambda x, g, b, e: ln(x, g, b, e, affine=False), "gamma")
    rejects(check_ln, lambda x, g, b, e: ln(x, g, b, e, dim=1), "positions")
    rejects(check_ln, lambda x, g, b, e: ln(x, g, b, e, dim=(1, 2)), "positions and the features together")
    rejects(check_ln, lambda x, g, b, e: x - x.mean(-1, keepdim=True),
            r"differs from LayerNorm's by up to \d+\.\d{4}: subtract each token's mean")
    rejects(check_ln, lambda x, g, b, e: ln(x, g, b, e)[0], "shape")


@pytest.mark.parametrize("library", [
    lambda x, g, b, e: F.layer_norm(x, x.shape[-1:], g, b, e),
    lambda x, g, b, e: torch.nn.LayerNorm(x.shape[-1], eps=e)(x) * g + b,
    lambda x, g, b, e: torch.layer_norm(x, x.shape[-1:], g, b, e),
    lambda x, g, b, e: F.group_norm(x.reshape(-1, 1, x.shape[-1]), 1, eps=e).reshape(x.shape) * g + b,
])
def test_layer_norm_refuses_the_library_function_the_exercise_forbids(library):
    rejects(check_ln, library, r"calls PyTorch's own normalisation \(it ran aten\.native_\w+_norm")


def test_layer_norm_rejects_eps_outside_the_square_root(capsys):
    def outside(x, gamma, beta, eps):
        mean = x.mean(-1, keepdim=True)
        return (x - mean) / (x.var(-1, keepdim=True, unbiased=False).sqrt() + eps) * gamma + beta

    rejects(check_ln, outside, r"eps=0\.1: largest difference .*standard deviation \+ eps")


def test_layer_norm_names_a_missing_mean_subtraction():
    def rms(x, gamma, beta, eps):  # RMSNorm: no centring
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gamma + beta

    rejects(check_ln, rms, r"without subtracting the token's mean first \(that is RMSNorm")


def test_layer_norm_rejects_a_missing_eps(capsys):
    rejects(check_ln, lambda x, g, b, e: ln(x, g, b, 0.0), r"eps=0\.1: .* ignores eps")


def test_layer_norm_predictions_are_checked_with_the_learners_function(capsys):
    for change, unchanged in UNCHANGED.items():
        wrong = {**UNCHANGED, change: not unchanged}
        with pytest.raises(AssertionError, match="layer_norm is right, but 1 of 3 predictions") as err:
            nb07.check_layer_norm(ln, wrong)
        assert repr(change) in str(err.value)
    assert not nb07.check_layer_norm(ln)  # the function alone: the predictions are still to come
    assert not nb07.check_layer_norm(ln, dict.fromkeys(UNCHANGED, ...))
    out = capsys.readouterr().out
    assert "not attempted" not in out  # the function is done: it says so, and what is left
    assert out.count("Exercise 1 (LayerNorm from scratch): layer_norm is right. Now predict") == 2
    rejects(lambda fn: nb07.check_layer_norm(fn, {**UNCHANGED, "shift": True}), ln, "the keys are")


def test_input_gradient(capsys):
    accepts(lambda fn: nb07.check_input_gradient(fn, "pre-LN"), nb07.input_grad_norm, capsys)
    rejects(lambda fn: nb07.check_input_gradient(fn, "pre-LN"),
            lambda n, nf: nb07.input_grad_norm(n, not nf), r"returned 0\.\d{4}, the reference")
    rejects(lambda fn: nb07.check_input_gradient(fn, "pre-LN"),
            lambda n, nf: nb07.input_grad_norm(n, nf, seeds=(0, 1, 2)), "mean over seeds 0, 1, 2 only")
    rejects(lambda fn: nb07.check_input_gradient(fn, "both"), nb07.input_grad_norm, "must be")
    assert not nb07.check_input_gradient(nb07.input_grad_norm, ...)
    assert "not attempted" in capsys.readouterr().out


def test_sublayer_connection(capsys):
    def right(x, f, norm, norm_first):
        return x + f(norm(x)) if norm_first else norm(x + f(x))

    accepts(nb07.check_sublayer_connection, right, capsys)
    rejects(nb07.check_sublayer_connection, lambda x, f, n, nf: right(x, f, n, not nf),
            r"norm_first=False returned the pre-LN result .*differences from the expected \d\.\d{4}")
    rejects(nb07.check_sublayer_connection,
            lambda x, f, n, nf: f(n(x)) if nf else n(x + f(x)), "forgot the residual")
    rejects(nb07.check_sublayer_connection,
            lambda x, f, n, nf: x + f(n(x)) if nf else n(f(x)), "forgot the residual")


@pytest.mark.parametrize(("wrong", "match"), [
    (lambda x, f, n, nf: n(x) + f(n(x)) if nf else n(x + f(x)),
     r"norm_first=True \(pre-LN\): largest difference from the expected \d\.\d{4}; your output is "
     r"norm\(x\) \+ sublayer\(norm\(x\)\): the residual adds the normalised x"),
    (lambda x, f, n, nf: n(x + f(n(x))) if nf else n(x + f(x)), "a LayerNorm after the sum too"),
    (lambda x, f, n, nf: x + n(f(x)) if nf else n(x + f(x)), "pre-LN normalises its input"),
    (lambda x, f, n, nf: x + f(n(x)) if nf else x + n(f(x)), "normalises the sum x \\+ sublayer"),
    (lambda x, f, n, nf: x + f(n(x)) if nf else x + f(x), "without the LayerNorm"),
])
def test_sublayer_connection_names_each_slip(wrong, match):
    rejects(nb07.check_sublayer_connection, wrong, match)


def test_sublayer_connection_other_mistakes_get_a_sentence_not_an_assert_close_dump():
    with pytest.raises(AssertionError) as err:
        nb07.check_sublayer_connection(lambda x, f, n, nf: 2 * (x + f(n(x))) if nf else n(x + f(x)))
    message = str(err.value)
    assert message.startswith("norm_first=True (pre-LN) differs from the expected by up to ")
    assert "Mismatched elements" not in message and "Greatest absolute difference" not in message


def test_input_gradient_hints_first_then_shows_the_measurement():
    first, second = first_and_second_try(lambda p: nb07.check_input_gradient(nb07.input_grad_norm, p), "post-LN")
    assert "hint" in first and "second wrong answer" in first and "0." not in first
    assert re.search(r"mean over seeds 0-9\), post-LN passes 0\.\d{4} to the input and pre-LN 0\.\d{4}", second)


def test_input_gradient_prediction_is_decided_by_ten_seeds():
    """Seeds 0-9 at 12 layers, d_model 32: pre-LN passes more (three-seed averages can flip)."""
    assert nb07.input_grad_norm(12, True) > nb07.input_grad_norm(12, False)


def test_layer_norm_predictions_hint_first_then_show_how_far_the_output_moved():
    wrong = {**UNCHANGED, "add 5 to every feature": False}
    first, second = first_and_second_try(lambda u: nb07.check_layer_norm(ln, u), wrong)
    assert "hint: what does subtracting the token's mean do" in first and "second wrong answer" in first
    assert "moved by" not in first
    assert re.search(r"'add 5 to every feature': you said changed; your layer_norm's output moved by up "
                     r"to 0\.\d{4} \(subtracting the token's mean", second)


RIGHT_WIDTH = {"a": True, "b": False, "c": True}


def test_width_64(capsys):
    accepts(lambda a: nb07.check_width_64(a, {"b"}), RIGHT_WIDTH, capsys)
    accepts(lambda a: nb07.check_width_64(a, ["b"]), RIGHT_WIDTH, capsys)
    check = nb07.check_width_64
    rejects(check, {"a": True, "b": True, "c": True}, r"(?s)1 of 3 predictions are wrong.*\(b\) post-LN's top")
    rejects(check, {"a": False, "b": False, "c": False}, "2 of 3 predictions")
    rejects(check, {"a": "yes", "b": False, "c": True}, "True or False")
    rejects(lambda a: check(a, "b"), RIGHT_WIDTH, "give a set of letters")
    rejects(lambda a: check(a, {"d"}), RIGHT_WIDTH, "the letters are")


def test_width_64_second_part_is_still_to_come_once_a_b_c_are_right(capsys):
    assert not nb07.check_width_64(RIGHT_WIDTH)
    assert not nb07.check_width_64(RIGHT_WIDTH, ...)
    out = capsys.readouterr().out
    assert "not attempted" not in out and out.count("(a)-(c) are right for seeds 0, 1, 2. Now run seeds 3, 4, 5") == 2


def test_width_64_hints_first_then_shows_the_measurement():
    first, second = first_and_second_try(nb07.check_width_64, {"a": True, "b": True, "c": True})
    assert "hint: section 7 warned" in first and "second wrong answer" in first and "0." not in first
    assert "every width" not in first
    assert re.search(r"\(b\) post-LN's top .* you said True, measured False \(post-LN top 0\.\d{4}, "
                     r"bottom 0\.\d{4}\)", second)


def test_width_64_first_hints_for_a_and_c_name_the_idea_not_the_result():
    first, _ = first_and_second_try(nb07.check_width_64, {"a": False, "b": False, "c": False})
    assert "(a) " in first and "(c) " in first and "hint: in both arrangements the top layer's output passes through one last LayerNorm" in first
    assert "what a pre-LN stack's residual stream accumulates" in first
    assert "every width" not in first and "same in every" not in first and "0." not in first


@pytest.mark.parametrize("changes", [set(), {"a", "b"}, {"c"}])
def test_width_64_seeds_3_4_5_hint_first_then_the_measurement(changes):
    first, second = first_and_second_try(lambda c: nb07.check_width_64(RIGHT_WIDTH, c), changes)
    assert "hint: run layer_grad_norms" in first and "second wrong answer" in first and "0." not in first
    assert "measured, ['b'] change" in second
    assert re.search(r"\(b\) seeds 0-2: False \(post-LN top 0\.\d{4}, bottom 0\.\d{4}\); seeds 3-5: True", second)


# --- nb08 ---
RIGHT_MOVES = {"a": [0, 1, 2, 3], "b": [], "c": [1, 2, 3]}


def test_moves(capsys):
    accepts(nb08.check_moves, RIGHT_MOVES, capsys)
    accepts(nb08.check_moves, {"a": (3, 2, 1, 0), "b": set(), "c": [3, 1, 2]}, capsys)


@pytest.mark.parametrize(("key", "wrong", "match"), [
    ("a", [2], r"\(a\) .* you said \[2\]; hint: which mask, if any, limits the source positions"),
    ("a", [2, 3], "what has the encoder done to the source tokens"),
    ("b", [0, 1, 2, 3], r"\(b\) .* you said \[0, 1, 2, 3\]; hint: which attentions, .* may read source "
                        "position 4"),
    ("c", [0, 1, 2, 3], r"\(c\) .* hint: which mask decides which target positions"),
    ("c", [1], "which of them can see position 1"),
])
def test_moves_first_wrong_try_names_the_idea_without_the_answer(key, wrong, match):
    with pytest.raises(AssertionError, match=match) as error:
        nb08.check_moves({**RIGHT_MOVES, key: wrong})
    text = str(error.value)
    assert "moved are" not in text
    for answer in ("every target position reads every source position", "nothing else reads it",
                   "from 1 on see the change", "position 0 does not"):
        assert answer not in text  # the first try names the idea, not the result
    assert "a second wrong answer shows" in str(error.value)


@pytest.mark.parametrize(("key", "wrong", "match"), [
    ("a", [2, 3], r"\(a\) .* you said \[2, 3\], the outputs that moved are \[0, 1, 2, 3\]; cross-attention "
                  "has no causal mask"),
    ("b", [0, 1, 2, 3], r"\(b\) .* the outputs that moved are \[\]; the padding mask hides"),
    ("c", [0, 1, 2, 3], r"\(c\) .* the outputs that moved are \[1, 2, 3\]; the causal mask"),
])
def test_moves_second_wrong_try_gives_the_measured_answer(key, wrong, match):
    rejects(nb08.check_moves, {**RIGHT_MOVES, "a": [1]}, "hint")  # the first wrong try
    rejects(nb08.check_moves, {**RIGHT_MOVES, key: wrong}, match)


def test_moves_rejects_malformed_answers():
    rejects(nb08.check_moves, {**RIGHT_MOVES, "a": "all"}, r"\(a\): give a list of target positions")
    rejects(nb08.check_moves, {**RIGHT_MOVES, "c": [4]}, r"\(c\): the target positions are 0\.\.3")


def test_rotation_alignment_tests_on_strings_it_never_trained_on():
    """Exercise 4's checker measures the alignment on 200 distinct strings that training never drew."""
    train, test = nb08.rotation_strings()
    assert len(train) == 300 * 64 and len(test) == len(set(test)) == 200
    assert not set(test) & set(train)
    assert all(len(set(s)) == 6 for s in test)


def test_rotation_alignment(capsys):
    accepts(nb08.check_rotation_alignment, [2, 3, 4, 5, 0, 1], capsys)
    rejects(nb08.check_rotation_alignment, [2, 3, 4], "6 source positions")
    rejects(nb08.check_rotation_alignment, "2345", "6 source positions")


@pytest.mark.parametrize(("wrong", "match"), [
    ([5, 4, 3, 2, 1, 0], "reversal's anti-diagonal"),
    ([0, 1, 2, 3, 4, 5], "that is copying"),
    ([4, 5, 0, 1, 2, 3], "rotated the other way"),
    ([2, 3, 4, 5, 1, 0], "write the target under the source"),
])
def test_rotation_alignment_first_wrong_try_is_a_hint_then_the_answer(wrong, match):
    with pytest.raises(AssertionError, match=match) as error:
        nb08.check_rotation_alignment(wrong)
    assert "2, 3, 4, 5, 0, 1" not in str(error.value) and "a second wrong answer shows" in str(error.value)
    assert "?." not in str(error.value)
    rejects(nb08.check_rotation_alignment, wrong,
            rf"you predicted \[{', '.join(map(str, wrong))}\]; the trained model's cross-attention peaks at "
            rf"\[2, 3, 4, 5, 0, 1\] .*{match}")


def test_most_attended(capsys):
    def right(w, src):
        return [src[j] for j in w.mean(0).argmax(-1).tolist()]

    accepts(nb08.check_most_attended, right, capsys)
    accepts(nb08.check_most_attended, lambda w, src: [src[j] for j in w.sum(0).argmax(-1).tolist()],
            capsys)
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w.mean(0).argmax(0).tolist()], "target axis|which dimension")
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w[0].argmax(-1).tolist()], "head 0 alone")
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w[1].argmax(-1).tolist()], "head 1 alone")
    rejects(nb08.check_most_attended,
            lambda w, src: [src[j] for j in w.amax(0).argmax(-1).tolist()], "largest weight of any head")
    rejects(nb08.check_most_attended, lambda w, src: src[:4], "wrong token at target position")
    rejects(nb08.check_most_attended, lambda w, src: w.mean(0).argmax(-1).tolist(),
            "return the tokens at those positions")


def test_cross_attention_zeros(capsys):
    def right(src, tgt, pad_id):
        return (src == pad_id)[:, None, :].expand(-1, tgt.shape[1], -1)

    accepts(nb08.check_cross_attention_zeros, right, capsys)
    rejects(nb08.check_cross_attention_zeros,
            lambda s, t, p: right(s, t, p) | torch.ones(4, 5, dtype=torch.bool).triu(1), "causal")
    rejects(nb08.check_cross_attention_zeros,
            lambda s, t, p: right(s, t, p) | (t == p)[:, :, None], "target's or the source's")
    rejects(nb08.check_cross_attention_zeros, lambda s, t, p: ~right(s, t, p), "swapped")
    rejects(nb08.check_cross_attention_zeros, lambda s, t, p: right(s, t, p) & (t != p)[:, :, None],
            "a padded target row still gets a softmax over the real source tokens")
    rejects(nb08.check_cross_attention_zeros, lambda s, t, p: right(s, t, p).transpose(1, 2),
            r"\(B, Lt, Ls\) = \(2, 4, 5\).*got \(2, 5, 4\)")
    rejects(nb08.check_cross_attention_zeros, lambda s, t, p: right(s, t, p).float(), "boolean")
    rejects(nb08.check_cross_attention_zeros,
            lambda s, t, p: torch.zeros(2, 4, 5, dtype=torch.bool), "8 of 40 flags are wrong")


# --- nb09 ---
def first_try(check):
    """``check`` as a fresh session's first wrong try meets it (a hint, no expected count)."""
    def run(fn):
        nb09.WRONG_TRIES["param_count"] = 0
        return check(fn)
    return run


def test_param_count(capsys):
    accepts(nb09.check_param_count, nb09.transformer_param_count, capsys)

    def no_norms(s, t, d, n, f, nf, tie):  # 5 LayerNorms per layer pair forgotten
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - n * 5 * 2 * d

    def no_attention_biases(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - n * 3 * 4 * d

    def no_final(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, False, tie)

    def one_final(s, t, d, n, f, nf, tie):  # one final LayerNorm instead of one per stack
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - (2 * d if nf else 0)

    def tied_twice(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, False)

    def no_output_bias(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - t

    def two_norms_per_decoder_layer(s, t, d, n, f, nf, tie):
        return nb09.transformer_param_count(s, t, d, n, f, nf, tie) - n * 2 * d

    rejects(first_try(nb09.check_param_count), no_norms, r"got \d+, 320 too few: that is 10 blocks of 2·d_model")
    rejects(first_try(nb09.check_param_count), no_final, r"got \d+, 4·d_model = 64 too few")
    rejects(first_try(nb09.check_param_count), one_final, r"got \d+, 2·d_model = 32 too few: that is one LayerNorm's weight "
                                               r"and bias\. With norm_first=True, how many stacks")
    rejects(first_try(nb09.check_param_count), tied_twice, r"got \d+, d_model·tgt_vocab = 208 too many")
    rejects(first_try(nb09.check_param_count), no_attention_biases, "attention's biases")
    rejects(first_try(nb09.check_param_count), no_output_bias,
            r"got \d+, 13 too few, one per target word: did you count the output projection's bias")
    rejects(first_try(nb09.check_param_count), two_norms_per_decoder_layer,
            r"got \d+, 64 too few: one LayerNorm \(2·d_model\) per layer pair.*two sublayers, a decoder layer three")
    rejects(first_try(nb09.check_param_count), lambda *a: 1000, r"got 1000, count block by block.*A second wrong try")
    rejects(nb09.check_param_count, lambda *a: 1000, r"got 1000, expected \d+ \(difference -\d+\); count block")


def test_param_count_hints_only_what_a_second_case_confirms():
    """Two mistakes can give the same difference on one case: tying the source embedding too and
    leaving out the attention biases are both 384 short at (11, 13, 16, 2, 32, tied); leaving out
    the feed-forward biases is 2·N·(d_ff + d_model) short. The hint names the mistake only when the
    difference matches it on a second case with other sizes."""
    T = nb09.transformer_param_count

    def tie_source_too(s, t, d, n, f, nf, tie):  # the paper ties all three matrices
        return T(s, t, d, n, f, nf, tie) - ((s + t) * d if tie else 0)

    def no_feed_forward_biases(s, t, d, n, f, nf, tie):
        return T(s, t, d, n, f, nf, tie) - n * 2 * (f + d)

    def no_encoder_norm(s, t, d, n, f, nf, tie):  # one LayerNorm per encoder layer, not two
        return T(s, t, d, n, f, nf, tie) - n * 2 * d

    rejects(first_try(nb09.check_param_count), tie_source_too, r"384 too few: the model holds one matrix of tgt_vocab")
    rejects(first_try(nb09.check_param_count), no_feed_forward_biases, r"feed-forward networks' biases")
    rejects(first_try(nb09.check_param_count), no_encoder_norm, r"per layer pair\. An encoder layer has two sublayers")
    for wrong in (tie_source_too, no_feed_forward_biases):
        with pytest.raises(AssertionError) as err:
            first_try(nb09.check_param_count)(wrong)
        assert "attention's biases" not in str(err.value) and "LayerNorms" not in str(err.value)


def test_shape_checker_leaves_the_random_state_alone():
    torch.manual_seed(5)
    before = torch.rand(3)
    torch.manual_seed(5)
    with pytest.raises(AssertionError):
        nb09.check_shapes({k: (1,) for k in nb09.SHAPE_STEPS})
    assert torch.equal(torch.rand(3), before)


def test_param_count_formula_matches_the_model():
    from helpers import Transformer

    for nf in (False, True):
        for tie in (False, True):
            m = Transformer(7, 9, d_model=8, num_heads=2, num_layers=3, d_ff=20, norm_first=nf,
                            tie_weights=tie)
            assert sum(p.numel() for p in m.parameters()) == nb09.transformer_param_count(
                7, 9, 8, 3, 20, nf, tie)


def first_and_second_try(check, answer):
    """The messages of a first and a second wrong try of the same answer."""
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as err:
            check(answer)
        messages.append(str(err.value))
    return messages


def test_decoder_passes(capsys, fresh_session):
    assert nb09.decoder_passes() == (7, 28)
    check = lambda pair: nb09.check_decoder_passes(*pair)  # noqa: E731
    accepts(check, (7, 28), capsys)
    rejects(check, (8, 28), "max_len - 1 new tokens")
    rejects(check, (7, 7), "re-reads the whole prefix")
    rejects(check, (7, 36), "max_len - 1 tokens, not max_len")
    rejects(check, (7, 49), "grows by one token per call")
    rejects(check, (7, 30), "add up the length")
    rejects(check, (7.0, 28), "whole number")


@pytest.mark.parametrize("wrong", [(8, 36), (7, 7), (8, 28), (6, 21)])
def test_decoder_passes_hints_first_then_shows_the_count(wrong, fresh_session):
    first, second = first_and_second_try(lambda pair: nb09.check_decoder_passes(*pair), wrong)
    assert "hint" in first and "second wrong answer" in first
    assert "measured:" not in first and "ran 7 times" not in first and "processed 28" not in first
    assert "measured:" in second and ("28" in second or "ran 7 times" in second)


def test_embedding_rows(capsys, fresh_session):
    assert nb09.embedding_rows_with_gradient() == {"untied": [1, 3, 4, 5, 6], "tied": list(range(8))}
    check = lambda pair: nb09.check_embedding_rows(*pair)  # noqa: E731
    accepts(check, ({1, 3, 4, 5, 6}, range(8)), capsys)
    rejects(check, (range(8), range(8)), "an embedding table is a lookup")
    rejects(check, ([3, 4, 5, 6, 2], range(8)), "which ids does the decoder read")
    rejects(check, ([1, 3, 4, 5, 6], [1, 3, 4, 5, 6]), "whose scores does the softmax's gradient push")
    rejects(check, ([1, 3, 4, 5, 6], range(1, 8)), r"never reads <pad> \(id 0\), but the output scores it")
    rejects(check, ([1, 3, 4, 5, 6], [0]), "add up both uses")
    rejects(check, ([1, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]),  # the decoder input and the labels
            "the output projection scores every word at every position, and the softmax's gradient pushes "
            "every score, not only the label's")
    rejects(check, ("le chat", range(8)), "token ids")


@pytest.mark.parametrize("wrong", [([1, 3, 4, 5, 6], [1, 3, 4, 5, 6]), ([1, 3, 4, 5, 6], [1, 3, 4, 5, 6, 7]),
                                   ([1, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]),
                                   (range(8), range(8)), ([3, 4, 5, 6, 2], range(1, 8))])
def test_embedding_rows_hints_first_then_shows_the_rows(wrong, fresh_session):
    first, second = first_and_second_try(lambda pair: nb09.check_embedding_rows(*pair), wrong)
    assert "hint" in first and "second wrong answer" in first
    assert "measured:" not in first and "rows with a gradient are" not in first
    assert "rows with a gradient are" in second


RIGHT_SHAPES = {"decoder input": (4, 6), "memory": (4, 9, 64),
                "queries per head (cross-attention)": (4, 8, 6, 8),
                "cross-attention weights": (4, 8, 6, 9), "decoder self-attention weights": (4, 8, 6, 6),
                "feed-forward hidden (decoder)": (4, 6, 256), "logits": (4, 6, 40)}


def test_shapes(capsys):
    accepts(nb09.check_shapes, RIGHT_SHAPES, capsys)
    assert not nb09.check_shapes(dict.fromkeys(nb09.SHAPE_STEPS, ...))
    assert "not attempted" in capsys.readouterr().out

    def wrong(**changes):
        return {**RIGHT_SHAPES, **changes}

    rejects(nb09.check_shapes, wrong(**{"decoder input": (4, 7)}),
            r"first: 'decoder input', you gave \(4, 7\).*without one of its tokens")
    rejects(nb09.check_shapes, wrong(**{"queries per head (cross-attention)": (4, 8, 6, 64)}),
            "how wide is one head")
    rejects(nb09.check_shapes, wrong(**{"queries per head (cross-attention)": (4, 8, 9, 8)}),
            "queries come from the decoder")
    rejects(nb09.check_shapes, wrong(**{"cross-attention weights": (4, 8, 9, 6)}),
            r"you gave \(4, 8, 9, 6\): dimensions 2, 3 are wrong.*keys come from the encoder")
    rejects(nb09.check_shapes, wrong(**{"memory": (4, 9)}),
            r"you gave \(4, 9\): 2 numbers where the tensor has 3 dimensions")
    with pytest.raises(AssertionError) as err:
        nb09.check_shapes(wrong(**{"decoder input": (4, 7)}))
    assert "expected length" not in str(err.value)  # says which dimension, not "length 2, expected 2"
    rejects(nb09.check_shapes, wrong(logits=(4, 6, 30)), "which vocabulary")
    rejects(nb09.check_shapes, wrong(memory=(4, 6, 64)), "one vector of d_model per source position")
    rejects(nb09.check_shapes, wrong(**{"feed-forward hidden (decoder)": (4, 6, 64)}), "widens")
    rejects(nb09.check_shapes, {k: v for k, v in RIGHT_SHAPES.items() if k != "memory"}, "memory")
    rejects(nb09.check_shapes, wrong(memory="big"), "tuple of ints")


@pytest.mark.parametrize(("changes", "hint"), [
    ({"queries per head (cross-attention)": (4, 8, 9, 8)}, "queries come from the decoder"),
    ({"queries per head (cross-attention)": (4, 8, 6, 64)}, "how wide is one head"),
    ({"queries per head (cross-attention)": (4, 4, 6, 8)}, "how many heads"),
    ({"cross-attention weights": (4, 8, 9, 9)}, "one row per query"),
])
def test_shapes_hint_names_the_wrong_dimension_then_shows_the_shape(changes, hint):
    """A first wrong shape gets a hint about the dimension that is wrong, without the layout or the
    expected shape; the second try shows the expected shape."""
    first, second = first_and_second_try(nb09.check_shapes, {**RIGHT_SHAPES, **changes})
    (step, _), = changes.items()
    assert hint in first and "Expected" not in first and "(B, h" not in first
    assert "how wide is one head" not in first or "64" in str(changes)
    assert f"Expected {RIGHT_SHAPES[step]}" in second


READS = "one position per token the decoder reads: the target without its last token"


@pytest.mark.parametrize(("changes", "hint", "not_hint"), [
    # teacher forcing drops a token: the length is wrong, not the vocabulary or the width
    ({"logits": (4, 7, 40)}, READS, "which vocabulary"),
    ({"feed-forward hidden (decoder)": (4, 7, 256)}, READS, "widens"),
    ({"decoder self-attention weights": (4, 8, 7, 7)},
     "one query per token the decoder reads: the target without its last token.*the decoder's own positions",
     "how many heads"),
    # the right sizes, the heads and the positions swapped
    ({"queries per head (cross-attention)": (4, 6, 8, 8)},
     r"the right sizes in the wrong order: .*\.transpose\(1, 2\) puts the heads before the positions",
     "how many heads"),
])
def test_shapes_hint_names_the_length_and_the_order(changes, hint, not_hint):
    first, second = first_and_second_try(nb09.check_shapes, {**RIGHT_SHAPES, **changes})
    (step, _), = changes.items()
    assert re.search(hint, first) and not_hint not in first and "Expected" not in first
    assert f"Expected {RIGHT_SHAPES[step]}" in second


def test_decoder_passes_accepts_numpy_integers(capsys):
    np = pytest.importorskip("numpy")
    accepts(lambda pair: nb09.check_decoder_passes(*pair), (np.int64(7), np.int64(28)), capsys)


@pytest.mark.parametrize(("wrong", "match"), [
    (lambda s, t, d, n, f, nf, tie: nb09.transformer_param_count(s, t, d, n, f, nf, tie) + (0 if nf else 4 * d),
     "does a stack add a final one"),
    (lambda s, t, d, n, f, nf, tie: nb09.transformer_param_count(s, t, d, n, f, nf, tie) - (s * d if tie else 0),
     "the source embedding keeps its own"),
    (lambda s, t, d, n, f, nf, tie: nb09.transformer_param_count(s, t, d, n, f, nf, tie) - n * (4 * d * d + 6 * d),
     "did you count its cross-attention"),
])
def test_param_count_names_final_norms_tied_source_and_missing_cross_attention(wrong, match):
    first, second = first_and_second_try(nb09.check_param_count, wrong)
    assert re.search(match, first) and "expected 1" not in first
    assert re.search(r"expected \d+ \(difference", second)
