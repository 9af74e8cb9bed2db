"""Each checker of notebooks 03-05: says "not attempted" for the stub, rejects plausible wrong
answers with a helpful message, accepts a right one."""

import re

import pytest
import torch

from helpers.exercises import nb03, nb04, nb05


def stub(*args):
    raise NotImplementedError


def accepts(check, fn, capsys):
    assert check(fn)
    assert "correct!" in capsys.readouterr().out


def rejects(check, fn, match):
    with pytest.raises(AssertionError, match=match):
        check(fn)


@pytest.mark.parametrize("check", [nb04.check_sliding_window_mask,
                                   nb05.check_mha_param_count])
def test_stub_is_not_attempted(check, capsys):
    assert not check(stub)
    assert "not attempted yet" in capsys.readouterr().out


# --- notebook 03: predict where "mouse" looks, then make it look at "cat" ------------------------
def test_nb03_mouse_looks_at(capsys):
    assert not nb03.check_mouse_looks_at(None)
    assert "not attempted yet" in capsys.readouterr().out
    accepts(nb03.check_mouse_looks_at, {"the", "a"}, capsys)
    accepts(nb03.check_mouse_looks_at, ["a", "the"], capsys)
    # the first wrong try gets a hint (compute the query first), not the answer (issue 32)
    nb03.WRONG_TRIES["mouse_looks_at"] = 0
    with pytest.raises(AssertionError) as first:
        nb03.check_mouse_looks_at("cat")
    assert re.search(r"you name \['cat'\], but that is not where 'mouse' looks most\. Hint: compute the query of "
                     r"'mouse' first .* a second wrong answer shows the explanation", str(first.value))
    assert "'a'" not in str(first.value) and "SMALLEST" not in str(first.value)  # the answer is not given away
    # from the second wrong try on: the explanation. The guesses a learner makes: itself, the other
    # animal, one of the tied articles
    rejects(nb03.check_mouse_looks_at, "mouse", r"you name \['mouse'\]; the largest weight goes to \['a', 'the'\]\. "
            r"'mouse' has size -0\.8, so its query is -2\.4 .* SMALLEST 'big animal' value")
    rejects(nb03.check_mouse_looks_at, {"cat"}, r"Weights: the 0\.2619, big 0\.0480, cat 0\.0205")
    rejects(nb03.check_mouse_looks_at, "the", r"you name \['the'\], but \['a'\] get exactly the same weight")
    rejects(nb03.check_mouse_looks_at, ["mouse", "the", "a"], r"the largest weight goes to \['a', 'the'\]")
    # a partial tie: first a hint that another word ties, then the weights
    nb03.WRONG_TRIES["mouse_looks_at"] = 0
    with pytest.raises(AssertionError) as first:
        nb03.check_mouse_looks_at("the")
    assert "not alone" in str(first.value) and "'a'" not in str(first.value) and "0.2619" not in str(first.value)
    rejects(nb03.check_mouse_looks_at, "the", r"you name \['the'\], but \['a'\] get exactly the same weight")
    rejects(nb03.check_mouse_looks_at, {"dog"}, r"\['dog'\] are not words of the sentence")
    rejects(nb03.check_mouse_looks_at, 5, "expected a word of the sentence, or a set of words")


def test_nb03_mouse_query_weights(capsys):
    hand = torch.tensor(nb03.HAND_W_Q)
    assert not nb03.check_mouse_query_weights(None)
    assert "not attempted yet" in capsys.readouterr().out
    # the first wrong try: a hint only; from the second on, one W_q that works as well
    nb03.WRONG_TRIES["mouse_query_weights"] = 0
    with pytest.raises(AssertionError) as first:
        nb03.check_mouse_query_weights(hand)
    assert "which row of W_q" in str(first.value) and "One W_q that works" not in str(first.value)
    rejects(nb03.check_mouse_query_weights, hand, r"which row of W_q .*column 0\? One W_q that works: the hand-set one with "
            r"the animal row set to \(8, 0\)")
    animal = hand.clone()
    animal[1] = torch.tensor([8.0, 0.0])  # "mouse" is an animal: push its query along column 0
    accepts(nb03.check_mouse_query_weights, animal, capsys)
    accepts(nb03.check_mouse_query_weights, animal.tolist(), capsys)
    # unchanged: "mouse" looks at the articles; too weak a change: still below 0.5
    rejects(nb03.check_mouse_query_weights, hand, r"expected 'mouse' to give 'cat' at least 0\.5, got 0\.0205 "
            r"\(it looks most at 'the', 0\.2619\)\. Its query is \(-2\.40, 0\.00\)")
    weak = hand.clone()
    weak[1] = torch.tensor([3.0, 0.0])
    # the right row, too small: the message says so instead of asking which row (first try and later ones)
    nb03.WRONG_TRIES["mouse_query_weights"] = 0
    with pytest.raises(AssertionError, match=r"got 0\.2503 .* Its query is \(0\.60, 0\.00\).*the animal row is the "
                       r"right row; a larger entry in its column 0 moves 'mouse' further$") as first_weak:
        nb03.check_mouse_query_weights(weak)
    assert "which row of W_q" not in str(first_weak.value)
    rejects(nb03.check_mouse_query_weights, weak, r"moves 'mouse' further\. One W_q that works")
    # flipping the size row helps "mouse" but turns "big" away from "cat"
    flipped = hand.clone()
    flipped[3] = torch.tensor([-3.0, 0.0])
    rejects(nb03.check_mouse_query_weights, flipped, r"'big' looks most at 'mouse' instead of 'cat' .*"
            r"change the row that 'mouse' has and 'big' lacks")
    # the action row pointed at column 0 turns "chased" away from "mouse"
    chased = animal.clone()
    chased[2] = torch.tensor([3.0, 0.0])
    rejects(nb03.check_mouse_query_weights, chased, r"'chased' looks most at 'cat' instead of 'mouse'.*"
            r"change the row that 'mouse' has and 'chased' lacks")
    # the right row (animal), too large: 'chased' has 0.1 of it, so the message is about the size of the entry
    too_large = hand.clone()
    too_large[1] = torch.tensor([40.0, 0.0])
    rejects(nb03.check_mouse_query_weights, too_large, r"'chased' looks most at 'cat' .*\(its query is \(4\.00, 3\.00\)\): "
            r"'chased' has 0\.1 of the animal feature .* a smaller entry in that row keeps 'chased' where it was")
    rejects(nb03.check_mouse_query_weights, hand.T, r"expected W_q of shape \(d_model, d_k\) = \(4, 2\)")
    rejects(nb03.check_mouse_query_weights, hand * float("nan"), "expected finite numbers")


def test_nb04_sliding_window(capsys):
    def right(n, w):
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        return (j <= i) & (i - j < w)

    accepts(nb04.check_sliding_window_mask, right, capsys)
    rejects(nb04.check_sliding_window_mask, lambda n, w: ~right(n, w), "inverted")
    rejects(nb04.check_sliding_window_mask, lambda n, w: torch.ones(n, n, dtype=torch.bool).tril(),
            "just the causal mask")
    rejects(nb04.check_sliding_window_mask, lambda n, w: right(n, w + 1), "off by one")
    rejects(nb04.check_sliding_window_mask, lambda n, w: right(n, w).int(), "torch.bool")


def test_nb04_changed_outputs(capsys):
    right = {"a": [4], "b": [2, 3, 4, 5], "c": []}
    assert not nb04.check_changed_outputs(None)
    assert "not attempted yet" in capsys.readouterr().out
    accepts(nb04.check_changed_outputs, right, capsys)
    accepts(nb04.check_changed_outputs, {"a": (4,), "b": [5, 4, 3, 2], "c": ()}, capsys)
    # padding hides keys, not queries: the padding token's own output changes
    rejects(nb04.check_changed_outputs, {**right, "a": []}, r"case 'a' .* you listed \[\], but a padding mask "
            r"hides padding KEYS; the padding token's own query still attends")
    rejects(nb04.check_changed_outputs, {**right, "a": [4, 5]}, "no query may attend to a padding key")
    rejects(nb04.check_changed_outputs, {**right, "b": [3, 4, 5]}, "query 2 attends to itself")
    rejects(nb04.check_changed_outputs, {**right, "b": [1, 2, 3, 4, 5]}, r"positions before 2 cannot see it")
    rejects(nb04.check_changed_outputs, {**right, "b": [2]}, "every later position may attend to key 2")
    # an empty row gives zeros whatever its query
    rejects(nb04.check_changed_outputs, {**right, "c": [0]}, "query 0 has no key left")
    rejects(nb04.check_changed_outputs, {"a": [4]}, r"expected a dict with the keys \['a', 'b', 'c'\]")
    rejects(nb04.check_changed_outputs, {**right, "c": "none"}, r"case 'c': expected a list of positions")


HEAD_1 = {"split": [[2, 3], [6, 7], [10, 11]], "direct view": [[6, 7], [8, 9], [10, 11]], "tokens": [1, 2]}


def test_nb05_head_one(capsys):
    # x = arange(12).view(1, 3, 4), h = 2: the checker's answer is what the two expressions give
    x = torch.arange(12.0).view(1, 3, 4)
    assert x.view(1, 3, 2, 2).transpose(1, 2)[0, 1].tolist() == HEAD_1["split"]
    assert x.view(1, 2, 3, 2)[0, 1].tolist() == HEAD_1["direct view"]
    assert not nb05.check_head_one(None)
    assert "not attempted yet" in capsys.readouterr().out
    accepts(nb05.check_head_one, HEAD_1, capsys)
    accepts(nb05.check_head_one, {k: torch.tensor(v) for k, v in HEAD_1.items()}, capsys)
    # the usual mistakes: the two swapped, the same answer twice, head 0 instead of head 1
    rejects(nb05.check_head_one, {**HEAD_1, "split": HEAD_1["direct view"]}, "'split': .* that is what the direct view gives")
    rejects(nb05.check_head_one, {**HEAD_1, "direct view": HEAD_1["split"]},
            "'direct view': .* that is the right split: the direct view has the same shape but not the same numbers")
    rejects(nb05.check_head_one, {**HEAD_1, "split": [[0, 1], [4, 5], [8, 9]]}, r"that is head 0, each token's first d_k")
    rejects(nb05.check_head_one, {**HEAD_1, "direct view": [[0, 1], [2, 3], [4, 5]]},
            "that is head 0 of the direct view, the first 6 numbers")
    rejects(nb05.check_head_one, {**HEAD_1, "direct view": [[6, 7], [8, 9], [10, 12]]}, "reads the 12 numbers in memory order")
    rejects(nb05.check_head_one, {**HEAD_1, "split": [[2, 6, 10], [3, 7, 11]]}, r"got shape \(2, 3\): that is \(d_k, L\), transposed")
    rejects(nb05.check_head_one, {**HEAD_1, "split": "2, 3, 6, 7"}, r"'split': expected head 1 as 3 rows")
    rejects(nb05.check_head_one, [HEAD_1["split"], HEAD_1["direct view"]],
            r"expected a dict with the keys \['direct view', 'split', 'tokens'\]")


def test_nb05_head_one_tokens_hint_first_then_the_answer(capsys, monkeypatch):
    monkeypatch.setitem(nb05.WRONG_TRIES, "tokens", 0)
    accepts(nb05.check_head_one, {**HEAD_1, "tokens": (2, 1)}, capsys)
    with pytest.raises(AssertionError, match=r"'tokens': you said \[0, 1, 2\]; hint: token t holds the features 4t") as e:
        nb05.check_head_one({**HEAD_1, "tokens": [0, 1, 2]})
    assert "[1, 2]" not in str(e.value) and "a second wrong answer shows the tokens" in str(e.value)
    with pytest.raises(AssertionError, match=r"holds features of the tokens \[1, 2\]") as e:
        nb05.check_head_one({**HEAD_1, "tokens": [1]})
    assert "hint" not in str(e.value)
    rejects(nb05.check_head_one, {**HEAD_1, "tokens": "1 and 2"}, r"'tokens': give a list of token indices")


def test_nb05_param_count(capsys):
    accepts(nb05.check_mha_param_count, lambda d, h, b: 4 * d * d + (4 * d if b else 0), capsys)
    rejects(nb05.check_mha_param_count, lambda d, h, b: 3 * d * d + (3 * d if b else 0), "W_o")
    rejects(nb05.check_mha_param_count, lambda d, h, b: 4 * d * d, "biases")
    rejects(nb05.check_mha_param_count, lambda d, h, b: h * (4 * d * d + (4 * d if b else 0)), "number of heads")
    # one head's d_model x d_k projections counted once: depends on h in a way no fixed formula names
    rejects(nb05.check_mha_param_count, lambda d, h, b: 4 * d * (d // h) + (4 * d if b else 0),
            r"got 160, and 96 with num_heads=4: the count changes with the number of heads")
    rejects(nb05.check_mha_param_count, lambda d, h, b: 4 * d * d + 4 * d, "with bias=False the projections have no biases")
    # d_k biases per projection (one head's worth) instead of d_model: a message about biases, not heads
    rejects(nb05.check_mha_param_count, lambda d, h, b: 4 * d * d + (4 * (d // h) if b else 0),
            r"got 272: the weights are right, the biases are not.*d_model of them.*not d_k")


def test_nb04_sliding_window_message_names_the_rule_broken_not_the_answer():
    def window_from_the_future(n, w):
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        return (j >= i) & (j - i < w)

    def symmetric_band(n, w):
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        return (i - j).abs() < w

    def too_far_back(n, w):
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        return (j <= i) & (i - j < w + 2)

    with pytest.raises(AssertionError, match=r"(?s)query 0 may see key 1, which is in its future\n"
                                             r"query 1 may not see key 0 \(1 position back\), which a window of 2 allows") as info:
        nb04.check_sliding_window_mask(window_from_the_future)
    assert "expected\n" not in str(info.value)
    rejects(nb04.check_sliding_window_mask, symmetric_band, "query 0 may see key 1, which is in its future")
    rejects(nb04.check_sliding_window_mask, too_far_back,
            r"query 2 may see key 0, 2 positions back: further than a window of 2 reaches \(itself and the 1 before it\)")


def test_nb04_allowed_keys(capsys):
    assert not nb04.check_allowed_keys(None)
    assert "not attempted yet" in capsys.readouterr().out
    accepts(nb04.check_allowed_keys, {1: [], 3: [2, 3], 5: [3, 4, 5]}, capsys)
    rejects(nb04.check_allowed_keys, {1: [0, 1], 3: [1, 2, 3], 5: [3, 4, 5]}, "padding key")
    rejects(nb04.check_allowed_keys, {1: [], 3: [2, 3], 5: [2, 3, 4, 5]}, "further back than the window")
    rejects(nb04.check_allowed_keys, {1: [], 3: [2, 3, 4], 5: [3, 4, 5]}, "future key")
    rejects(nb04.check_allowed_keys, {1: [], 3: [3], 5: [3, 4, 5]}, r"leaves out 1 allowed")
    rejects(nb04.check_allowed_keys, [[], [2, 3], [3, 4, 5]], r"expected a dict with the queries \[1, 3, 5\]")
    rejects(nb04.check_allowed_keys, {1: None, 3: [2, 3], 5: [3, 4, 5]},
            r"query 1: expected a list of key positions \(0 to 5, or \[\] for none\), got None")


def test_nb05_messages_say_what_was_got():
    with pytest.raises(AssertionError, match=r"got 3 \* 2\*\*2|d_model=8, num_heads=2, bias=True: got 264"):
        nb05.check_mha_param_count(lambda d, h, b: 4 * d * d + 4 * d - 24)


def test_nb05_shapes(capsys):
    # B = 2, L = 10, d_model = 48, h = 4: d_k = 12, so every size differs from every other
    assert nb05.SHAPE_SIZES == (2, 10, 48, 4)
    right = {"q": (2, 10, 48), "q_split": (2, 10, 4, 12), "q_heads": (2, 4, 10, 12), "scores": (2, 4, 10, 10),
             "merged": (2, 10, 48)}
    assert not nb05.check_shapes(None)
    assert "not attempted yet" in capsys.readouterr().out
    accepts(nb05.check_shapes, right, capsys)
    rejects(nb05.check_shapes, {**right, "scores": (2, 10, 10)}, "head axis stays")
    rejects(nb05.check_shapes, {**right, "q_heads": (2, 4, 10, 48)}, r"d_k = d_model / h = 12 features")
    rejects(nb05.check_shapes, {**right, "scores": (2, 4, 10, 12)}, "summed away")
    # the two orders that d_model = 64, h = 8 (d_k = h) could not tell apart
    rejects(nb05.check_shapes, {**right, "q_split": (2, 10, 12, 4)}, r"cut into h pieces of d_k: \(B, L, h, d_k\)")
    rejects(nb05.check_shapes, {**right, "q_heads": (2, 10, 4, 12)}, "still the shape after view; transpose")
    rejects(nb05.check_shapes, {**right, "merged": (2, 48, 10)}, "wrong order")
    rejects(nb05.check_shapes, {**right, "merged": (2, 10, 4, 12)}, "the heads are still apart; merging")
    rejects(nb05.check_shapes, {**right, "q": (2, 10, 12)}, r"W_q projects d_model to d_model = 48 for all heads at once")
    rejects(nb05.check_shapes, {**right, "q": "B, L, d"}, r"q: expected a tuple of sizes")
    rejects(nb05.check_shapes, [(2, 10, 48)], "expected a dict with the keys")
