"""Exercise checkers of notebooks 00-02: each rejects plausible wrong answers with a helpful
message, accepts the right one, and reports an untouched stub as not attempted."""

import pytest
import torch

from helpers.exercises import nb00, nb01, nb02

X = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.2, 1.0], [0.0, 1.0, 0.0, 0.5],
                  [0.0, 0.1, 1.0, 0.0], [0.9, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, -0.8]])


def stub(*args):
    raise NotImplementedError


@pytest.fixture(autouse=True)
def fresh_session():
    """Each test starts as a fresh session: no wrong tries counted yet (notebook 00's exercise 1)."""
    for key in nb00.WRONG_TRIES:
        nb00.WRONG_TRIES[key] = 0


def assert_not_attempted(capsys, result):
    assert not result
    assert "not attempted yet" in capsys.readouterr().out


# --- notebook 00 ------------------------------------------------------------------------------
def test_nb00_alignment(capsys):
    assert_not_attempted(capsys, nb00.check_alignment(None))
    with pytest.raises(AssertionError, match="Hint: French puts most adjectives after the noun"):
        nb00.check_alignment([0, 1, 2, 3, 4])  # the first wrong try: a hint only
    with pytest.raises(AssertionError, match="word-for-word order"):
        nb00.check_alignment([0, 1, 2, 3, 4])
    with pytest.raises(AssertionError, match=r"'est' -> 'big', 'grande' -> 'is'"):
        nb00.check_alignment([0, 2, 1, 4, 3])
    with pytest.raises(AssertionError, match=r"expected one English index per French word .* got 3"):
        nb00.check_alignment([0, 2, 1])
    with pytest.raises(AssertionError, match="expected indices from 0 to 4 .* got 5"):
        nb00.check_alignment([1, 3, 2, 4, 5])  # 1-based indices
    with pytest.raises(AssertionError, match="list of 5 whole numbers"):
        nb00.check_alignment(["la", "the"])
    # the right digits as one string, or as strings and floats, are not a list of indices
    with pytest.raises(AssertionError, match="got the text '02134'"):
        nb00.check_alignment("02134")
    with pytest.raises(AssertionError, match="list of 5 whole numbers"):
        nb00.check_alignment(["0", "2", "1", "3", "4"])
    with pytest.raises(AssertionError, match="list of 5 whole numbers"):
        nb00.check_alignment([0.0, 2.0, 1.0, 3.0, 4.0])
    assert nb00.check_alignment((0, 2, 1, 3, 4))
    assert nb00.check_alignment([0, 2, 1, 3, 4])
    assert "correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong", [[0, 1, 2, 3, 4], [0, 2, 1, 4, 3], [4, 3, 2, 1, 0]])
def test_nb00_alignment_hints_first_then_explains(wrong):
    """The likeliest wrong answer, word-for-word order, must not get the answer on the first try."""
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as caught:
            nb00.check_alignment(wrong)
        messages.append(str(caught.value))
    first, second = messages
    assert "Hint" in first and "second wrong answer" in first
    assert "maison blanche" not in first and "house white" not in first and "->" not in first
    assert "Hint" not in second and ("house white" in second or "->" in second)


def test_nb00_alignment_format_errors_do_not_count_as_tries():
    with pytest.raises(AssertionError, match="list of 5 whole numbers"):
        nb00.check_alignment(["0", "2", "1", "3", "4"])
    with pytest.raises(AssertionError, match="Hint"):
        nb00.check_alignment([0, 1, 2, 3, 4])


ORDER_AWARE = {"mean": False, "sum": False, "max": False, "last RNN state": True, "all RNN states": True}


def test_nb00_order_aware(capsys):
    assert_not_attempted(capsys, nb00.check_order_aware(None))
    assert list(nb00.SUMMARIES) == list(ORDER_AWARE)
    assert nb00.check_order_aware(ORDER_AWARE)
    assert "correct!" in capsys.readouterr().out
    # the usual wrong predictions, each answered with the reason (after a first wrong try: a hint)
    with pytest.raises(AssertionError, match=r"1 of 5 predictions are wrong\. Hint"):
        nb00.check_order_aware({**ORDER_AWARE, "max": True})
    with pytest.raises(AssertionError, match=r"'max': you say it can tell the two sentences apart, but the "
                                             r"largest value of each feature"):
        nb00.check_order_aware({**ORDER_AWARE, "max": True})
    with pytest.raises(AssertionError, match=r"'last RNN state': you say it cannot .* after 'dog bites'"):
        nb00.check_order_aware({**ORDER_AWARE, "last RNN state": False})
    with pytest.raises(AssertionError, match=r"(?s)'mean': .*\n'sum': .*does not care in which order"):
        nb00.check_order_aware({**ORDER_AWARE, "mean": True, "sum": True})
    with pytest.raises(AssertionError, match=r"'sum': still None; write True or False"):
        nb00.check_order_aware({**ORDER_AWARE, "sum": None})
    with pytest.raises(AssertionError, match=r"'mean': expected True or False, got 'no'"):
        nb00.check_order_aware({**ORDER_AWARE, "mean": "no"})
    with pytest.raises(AssertionError, match=r"missing \['all RNN states'\], unknown \['all states'\]"):
        nb00.check_order_aware({k if k != "all RNN states" else "all states": v for k, v in ORDER_AWARE.items()})
    with pytest.raises(AssertionError, match="expected a dict"):
        nb00.check_order_aware([False, False, False, True, True])


@pytest.mark.parametrize("wrong", [{"max": True}, {"last RNN state": False},
                                   {"mean": True, "sum": True, "max": True, "all RNN states": False}])
def test_nb00_order_aware_hints_first_then_explains(wrong):
    """A first wrong prediction says how many are wrong and how to find out, not which (True/False:
    naming them would give the answer away); the second names them with the reasons."""
    answer = {**ORDER_AWARE, **wrong}
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as caught:
            nb00.check_order_aware(answer)
        messages.append(str(caught.value))
    first, second = messages
    assert "Hint" in first and "rnn(sentence_a[None]) with rnn(sentence_b[None])" in first
    assert f"{len(wrong)} of 5 predictions are wrong." in first
    assert not any(repr(name) in first for name in nb00.SUMMARIES)
    assert "you say" not in first and "but" not in first.split("Hint")[0]
    assert not any(why in first for why in ("does not care", "largest value", "after 'dog bites'", "one per position"))
    assert "Hint" not in second and all(f"{name!r}: you say" in second for name in wrong)


def test_nb00_order_aware_format_errors_do_not_count_as_tries():
    with pytest.raises(AssertionError, match="expected True or False"):
        nb00.check_order_aware({**ORDER_AWARE, "mean": "no"})
    with pytest.raises(AssertionError, match="Hint"):
        nb00.check_order_aware({**ORDER_AWARE, "max": True})


# --- notebook 01 ------------------------------------------------------------------------------
def right_dot_attention(q, k, v):
    w = torch.softmax(q @ k.T, dim=-1)
    return w @ v, w


def test_nb01_dot_attention_accepts_the_right_answer(capsys):
    assert_not_attempted(capsys, nb01.check_dot_attention(stub))
    assert nb01.check_dot_attention(right_dot_attention)


@pytest.mark.parametrize(
    ("wrong", "match"),
    [
        (lambda q, k, v: right_dot_attention(q, k, v)[0], r"expected a pair \(context, weights\)"),
        (lambda q, k, v: (torch.softmax(q @ k.T, dim=0) @ v, torch.softmax(q @ k.T, dim=0)),
         r"expected each row .* got row sums \[.*\]: your weights sum to 1 down each column"),
        (lambda q, k, v: ((q @ k.T) @ v, q @ k.T), r"got row sums \[.*\]: did you apply the softmax"),
        (lambda q, k, v: (torch.softmax((q @ k.T).flatten(), 0).reshape(3, 5) @ v,
                          torch.softmax((q @ k.T).flatten(), 0).reshape(3, 5)),
         r"got row sums \[.*\]: you normalised over all entries of the score matrix at once\. Normalise each row"),
        (lambda q, k, v: right_dot_attention(q / 2, k, v), r"expected largest weight 0\.\d{4}, got 0\.\d{4}: you scaled the scores"),
        (lambda q, k, v: (torch.softmax(q @ k.T, -1) @ v[:, :1], torch.softmax(q @ k.T, -1)),
         r"context should have shape \(Lq, d_v\) = \(3, 2\)"),
        (lambda q, k, v: (torch.softmax(k @ q.T, -1).T @ v, torch.softmax(k @ q.T, -1)),
         r"weights should have shape \(Lq, Lk\) = \(3, 5\)"),
        (lambda q, k, v: (torch.softmax(q @ k.T, -1) @ v * 2, torch.softmax(q @ k.T, -1)),
         r"context differs from weights @ values: context\[\d, \d\] should be -?\d\.\d{4}, got -?\d\.\d{4}"),
        (lambda q, k, v: (torch.softmax(q @ k.T, -1) @ k, torch.softmax(q @ k.T, -1)),
         r"context to have shape \(Lq, d_v\) = \(3, 2\), got \(3, 4\), the width of the keys: you mixed the keys; "
         r"the context mixes the values"),
        (lambda q, k, v: right_dot_attention(q, q[[0, 1, 2, 0, 1]], v),
         r"weights differ from softmax\(queries @ keys.T, dim=-1\): weights\[\d, \d\] should be 0\.\d{4}, "
         r"got 0\.\d{4} \(the entry furthest off\)"),
        # section 5's first idea: divide by the sum (rows sum to 1, some weights negative)
        (lambda q, k, v: ((q @ k.T / (q @ k.T).sum(-1, keepdim=True)) @ v, q @ k.T / (q @ k.T).sum(-1, keepdim=True)),
         r"expected weights >= 0, got -\d\.\d{4}: .* dividing the scores by their sum.*the softmax"),
    ],
)
def test_nb01_dot_attention_rejects_plausible_mistakes(wrong, match):
    with pytest.raises(AssertionError, match=match):
        nb01.check_dot_attention(wrong)


def test_nb01_query_for_mouse(capsys):
    assert_not_attempted(capsys, nb01.check_query(None, X))
    with pytest.raises(AssertionError, match=r"at least 0.7 on word 5, got 0.4895: it already gets the largest "
                                             r"weight.*Your query has length 1.2806 of the 2.0 allowed"):
        nb01.check_query(X[5], X)  # "mouse"'s own embedding: short, and others keep half the weight
    stretched = X[5] / X[5].norm() * 2  # the same direction at the largest length allowed
    with pytest.raises(AssertionError, match=r"got 0.6831: .* the others keep 0.3169 \(word 2 0.1346.*opposite sign"):
        nb01.check_query(stretched, X)
    with pytest.raises(AssertionError, match=r"got 0.5857: .*opposite sign"):
        nb01.check_query([0.0, 0.0, 0.0, -2.0], X)  # negative size alone leaves the articles and "chased" at 0
    with pytest.raises(AssertionError, match=r"got 0.6802"):
        nb01.check_query(torch.tensor([0.0, 0.6, 0.0, -1.9]), X)  # worse than the own direction
    with pytest.raises(AssertionError, match=r"the largest weight, 0.\d{4}, is on word 2\)\. Point the query"):
        nb01.check_query(torch.tensor([0.0, 2.0, 0.0, 0.0]), X)  # "animal" alone prefers "cat"
    with pytest.raises(AssertionError, match="expected a length of at most 2.0, got 12.8"):
        nb01.check_query(X[5] * 10, X)  # scaling up works, but is not allowed
    with pytest.raises(AssertionError, match=r"expected a vector of 4 numbers like the embeddings, got shape \(2,\)"):
        nb01.check_query(torch.tensor([0.0, -1.0]), X)
    with pytest.raises(AssertionError, match="expected finite numbers, got inf or nan"):
        nb01.check_query(torch.tensor([0.0, 0.0, 0.0, float("nan")]), X)
    assert nb01.check_query(torch.tensor([-0.5, 0.9, -0.4, -1.6]), X)  # the solution's query: 0.7302


def test_nb01_query_names_the_words_when_given_the_tokens():
    tokens = ["the", "big", "cat", "chased", "a", "mouse"]
    stretched = X[5] / X[5].norm() * 2
    with pytest.raises(AssertionError, match=r"at least 0.7 on 'mouse' \(word 5\), got 0.6831: .* the others keep "
                                             r"0.3169 \('cat' \(word 2\) 0.1346.*one that 'mouse' \(word 5\) lacks"):
        nb01.check_query(stretched, X, tokens=tokens)
    with pytest.raises(AssertionError, match=r"is on 'cat' \(word 2\)\)\. Point the query along the features that "
                                             r"'mouse' \(word 5\) has"):
        nb01.check_query(torch.tensor([0.0, 2.0, 0.0, 0.0]), X, tokens=tokens)
    assert nb01.check_query([0.0, 1.0, 0.0, -1.7], X)  # less "animal", more "size": 0.7042


# --- notebook 02 ------------------------------------------------------------------------------
def test_nb02_stable_log_softmax(capsys):
    assert_not_attempted(capsys, nb02.check_stable_log_softmax(stub))

    def right(s):
        m = s.amax(dim=-1, keepdim=True)
        return (s - m) - torch.log(torch.exp(s - m).sum(dim=-1, keepdim=True))

    assert nb02.check_stable_log_softmax(right)


def _global_max(s):  # subtracts the largest entry of the whole tensor instead of each row's
    shifted = s - s.max()
    return shifted - torch.log(torch.exp(shifted).sum(dim=-1, keepdim=True))


@pytest.mark.parametrize(
    ("wrong", "match"),
    [
        (lambda s: torch.log(torch.softmax(s, dim=-1)), r"expected finite numbers, got \[\[0\.0, -inf"),
        (lambda s: s - torch.log(torch.exp(s).sum(dim=-1, keepdim=True)), "expected finite numbers, got"),
        # the max of the whole tensor is not "subtract the max first" gone wrong: say what it is
        (_global_max, r"you subtracted the largest entry of the whole tensor \(1000\), so in a row whose own "
                      r"scores are far below it every exponential underflows .* s\.amax\(dim=-1, keepdim=True\)"),
        (lambda s: s - s.amax(dim=-1, keepdim=True),
         r"expected log softmax over the last dimension, e\.g\. -0\.4076 .* got 0\.0000: that is s - max\(s\) "
         r"only; the log of the sum"),
        (lambda s: torch.log_softmax(s, dim=0), r"for x of shape \(2, 3, 5\) .*normalised over the first dimension"),
        (lambda s: 2 * torch.log_softmax(s, dim=-1), r"exp of your result should sum to 1 .* sums to \[0\.\d{4}\]"),
        (lambda s: torch.log_softmax(s, dim=-1)[..., :1], r"expected the same shape, got \(1,\)"),
    ],
)
def test_nb02_stable_log_softmax_rejects_plausible_mistakes(wrong, match):
    with pytest.raises(AssertionError, match=match):
        nb02.check_stable_log_softmax(wrong)


def test_nb02_softmax_jacobian(capsys):
    assert_not_attempted(capsys, nb02.check_softmax_jacobian(stub))
    with pytest.raises(AssertionError, match=r"expected off-diagonal entries like J\[0, 1\] = -0\.\d{4}, got 0\.0000: diag\(a\)"):
        nb02.check_softmax_jacobian(torch.diag)
    # a @ a on a 1-D tensor: one number (the learner's most common stop, issue 32), either sign
    for scalar_outer in (lambda a: torch.diag(a) - a @ a, lambda a: a @ a - torch.diag(a)):
        with pytest.raises(AssertionError, match=r"got the same number -?0\.\d{4} everywhere off the diagonal: for "
                                                 r"a 1-D tensor a, a @ a is ONE number .* torch\.outer\(a, a\)"):
            nb02.check_softmax_jacobian(scalar_outer)
    # a * a: the elementwise square, broadcast along the rows (one number per column), either sign
    for squared in (lambda a: torch.diag(a) - a * a, lambda a: a * a - torch.diag(a)):
        with pytest.raises(AssertionError, match=r"expected off-diagonal entries -a_i a_j, e\.g\. J\[1, 0\] = -?0\.\d{4}, "
                                                 r"got -?0\.\d{4}, a_0 squared up to its sign: a \* a is the elementwise square .* "
                                                 r"torch\.outer\(a, a\)"):
            nb02.check_softmax_jacobian(squared)
    # the same square along each row: a_i (delta_ij - a_i), e.g. a[:, None] * (torch.eye(n) - a[:, None])
    for squared in (lambda a: a[:, None] * (torch.eye(len(a)) - a[:, None]),
                    lambda a: a[:, None] * (a[:, None] - torch.eye(len(a)))):
        with pytest.raises(AssertionError, match=r"expected off-diagonal entries -a_i a_j, e\.g\. J\[0, 1\] = -?0\.\d{4}, "
                                                 r"got -?0\.\d{4}, a_0 squared up to its sign: a\[:, None\] \* a\[:, None\] "
                                                 r"multiplies each a_i by itself .* one number per row.* torch\.outer\(a, a\)"):
            nb02.check_softmax_jacobian(squared)
    with pytest.raises(AssertionError, match=r"expected each column of J to sum to 0.*got column sums \[.*\]: check the sign"):
        nb02.check_softmax_jacobian(lambda a: torch.diag(a) + torch.outer(a, a))
    with pytest.raises(AssertionError, match=r"your signs are flipped \(a a\^T - diag\(a\)"):
        nb02.check_softmax_jacobian(lambda a: torch.outer(a, a) - torch.diag(a))
    with pytest.raises(AssertionError, match=r"the diagonal a_i\(1 - a_i\) is right, but raising score j"):
        nb02.check_softmax_jacobian(lambda a: torch.diag(a - a * a))
    # anything else: the entry that is furthest off, in words, not assert_close's dump
    with pytest.raises(AssertionError, match=r"expected J\[0, 0\] = a_0\(delta_00 - a_0\) = 0\.2247, got "
                                             r"0\.4419 \(the entry that is furthest off") as info:
        nb02.check_softmax_jacobian(lambda a: torch.diag(a) - torch.outer(a, a) * 0.5)
    assert "Greatest absolute difference" not in str(info.value)
    with pytest.raises(AssertionError, match=r"expected an \(3, 3\) matrix, got shape \(3,\)"):
        nb02.check_softmax_jacobian(lambda a: a)
    assert nb02.check_softmax_jacobian(lambda a: torch.diag(a) - torch.outer(a, a))
