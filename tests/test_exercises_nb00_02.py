"""Exercise checkers of notebooks 00-02: each rejects plausible wrong answers with a helpful
message, accepts the right one, and reports an untouched stub as not attempted."""

import pytest
import torch

from helpers.exercises import nb00, nb01, nb02

X = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.2, 1.0], [0.0, 1.0, 0.0, 0.5],
                  [0.0, 0.1, 1.0, 0.0], [0.9, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, -0.8]])


def stub(*args):
    raise NotImplementedError


def assert_not_attempted(capsys, result):
    assert not result
    assert "not attempted yet" in capsys.readouterr().out


# --- notebook 00 ------------------------------------------------------------------------------
def test_nb00_alignment(capsys):
    assert_not_attempted(capsys, nb00.check_alignment(None))
    with pytest.raises(AssertionError, match="word-for-word order"):
        nb00.check_alignment([0, 1, 2, 3, 4])
    with pytest.raises(AssertionError, match=r"'est' -> 'big', 'grande' -> 'is'"):
        nb00.check_alignment([0, 2, 1, 4, 3])
    with pytest.raises(AssertionError, match="one English index per French word"):
        nb00.check_alignment([0, 2, 1])
    with pytest.raises(AssertionError, match="outside the English sentence"):
        nb00.check_alignment([1, 3, 2, 4, 5])  # 1-based indices
    with pytest.raises(AssertionError, match="list of 5 whole numbers"):
        nb00.check_alignment(["la", "the"])
    assert nb00.check_alignment([0, 2, 1, 3, 4])
    assert "correct" in capsys.readouterr().out


def test_nb00_bottleneck(capsys):
    assert_not_attempted(capsys, nb00.check_bottleneck_sizes(stub))
    with pytest.raises(AssertionError, match="only the encoder's last hidden state"):
        nb00.check_bottleneck_sizes(lambda n, h: (n * h, n * h))
    with pytest.raises(AssertionError, match="one hidden state per source word"):
        nb00.check_bottleneck_sizes(lambda n, h: (h, h))
    with pytest.raises(AssertionError, match="return a pair of whole numbers"):
        nb00.check_bottleneck_sizes(lambda n, h: h)
    assert nb00.check_bottleneck_sizes(lambda n, h: (h, n * h))


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
        (lambda q, k, v: right_dot_attention(q, k, v)[0], r"return a pair \(context, weights\)"),
        (lambda q, k, v: (torch.softmax(q @ k.T, dim=0) @ v, torch.softmax(q @ k.T, dim=0)),
         "sum to 1 down each column"),
        (lambda q, k, v: ((q @ k.T) @ v, q @ k.T), "did you apply the softmax"),
        (lambda q, k, v: right_dot_attention(q / 2, k, v), "you scaled the scores"),
        (lambda q, k, v: (torch.softmax(q @ k.T, -1) @ v[:, :1], torch.softmax(q @ k.T, -1)),
         r"context should have shape \(Lq, d_v\) = \(3, 2\)"),
        (lambda q, k, v: (torch.softmax(k @ q.T, -1).T @ v, torch.softmax(k @ q.T, -1)),
         r"weights should have shape \(Lq, Lk\) = \(3, 5\)"),
        (lambda q, k, v: (torch.softmax(q @ k.T, -1) @ v * 2, torch.softmax(q @ k.T, -1)),
         "context differs from weights @ values"),
        (lambda q, k, v: right_dot_attention(q, q[[0, 1, 2, 0, 1]], v),
         r"weights differ from softmax\(queries @ keys.T"),
    ],
)
def test_nb01_dot_attention_rejects_plausible_mistakes(wrong, match):
    with pytest.raises(AssertionError, match=match):
        nb01.check_dot_attention(wrong)


def test_nb01_query_for_mouse(capsys):
    assert_not_attempted(capsys, nb01.check_query(None, X))
    with pytest.raises(AssertionError, match="weight of 0.4895; it needs at least 0.5"):
        nb01.check_query(X[5], X)  # "mouse"'s own embedding falls just short
    with pytest.raises(AssertionError, match="length is 12.8"):
        nb01.check_query(X[5] * 10, X)  # scaling up works, but is not allowed
    with pytest.raises(AssertionError, match="vector of 4 numbers"):
        nb01.check_query(torch.tensor([0.0, -1.0]), X)
    with pytest.raises(AssertionError, match="inf or nan"):
        nb01.check_query(torch.tensor([0.0, 0.0, 0.0, float("nan")]), X)
    assert nb01.check_query(torch.tensor([0.0, 0.6, 0.0, -1.9]), X)
    assert nb01.check_query([0.0, 0.0, 0.0, -2.0], X)


# --- notebook 02 ------------------------------------------------------------------------------
def test_nb02_stable_log_softmax(capsys):
    assert_not_attempted(capsys, nb02.check_stable_log_softmax(stub))

    def right(s):
        m = s.amax(dim=-1, keepdim=True)
        return (s - m) - torch.log(torch.exp(s - m).sum(dim=-1, keepdim=True))

    assert nb02.check_stable_log_softmax(right)


@pytest.mark.parametrize(
    ("wrong", "match"),
    [
        (lambda s: torch.log(torch.softmax(s, dim=-1)), "log of the softmax itself"),
        (lambda s: s - torch.log(torch.exp(s).sum(dim=-1, keepdim=True)), "exp overflows"),
        (lambda s: s - s.amax(dim=-1, keepdim=True), "differs from torch.log_softmax"),
        (lambda s: torch.log_softmax(s, dim=0), "differs from torch.log_softmax"),
        (lambda s: torch.log_softmax(s, dim=-1)[..., :1], "return the same shape"),
    ],
)
def test_nb02_stable_log_softmax_rejects_plausible_mistakes(wrong, match):
    with pytest.raises(AssertionError, match=match):
        nb02.check_stable_log_softmax(wrong)


def test_nb02_softmax_jacobian(capsys):
    assert_not_attempted(capsys, nb02.check_softmax_jacobian(stub))
    with pytest.raises(AssertionError, match=r"diag\(p\) is only half of it"):
        nb02.check_softmax_jacobian(torch.diag)
    with pytest.raises(AssertionError, match="check the sign"):
        nb02.check_softmax_jacobian(lambda p: torch.diag(p) + torch.outer(p, p))
    with pytest.raises(AssertionError, match="differs from torch.autograd"):
        nb02.check_softmax_jacobian(lambda p: torch.diag(p) - torch.outer(p, p) * 0.5)
    with pytest.raises(AssertionError, match=r"return an \(3, 3\) matrix"):
        nb02.check_softmax_jacobian(lambda p: p)
    assert nb02.check_softmax_jacobian(lambda p: torch.diag(p) - torch.outer(p, p))
