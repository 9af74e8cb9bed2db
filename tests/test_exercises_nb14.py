"""Each checker of notebook 14 says "not attempted" for the stub, rejects plausible wrong answers
with a helpful message and accepts a right answer."""

import re

import pytest
import torch

from helpers.data.repeated import repeated_tokens
from helpers.exercises import nb14
from helpers.induction import (
    AttentionOnlyTransformer,
    eigenvalue_positivity,
    full_ov_circuit,
    per_position_loss,
)


def stub(*args):
    raise NotImplementedError


def duplicate_right(w, n):
    return w.diagonal(offset=-n, dim1=-2, dim2=-1).mean(-1)


def duplicate_is_induction(w, n):  # the token after the previous occurrence, t - n + 1
    return w.diagonal(offset=-(n - 1), dim1=-2, dim2=-1)[..., 1:].mean(-1)


def duplicate_over_all_queries(w, n):  # divides by 2n instead of n
    return w.diagonal(offset=-n, dim1=-2, dim2=-1).sum(-1) / w.shape[-1]


def duplicate_without_query_n(w, n):  # drops query t = n, as the induction score drops n - 1
    return w.diagonal(offset=-n, dim1=-2, dim2=-1)[..., 1:].mean(-1)


def duplicate_for_3d_weights_only(w, n):  # right on (B, 2n, 2n), not on (layers, h, 2n, 2n)
    return w[:, torch.arange(n, 2 * n), torch.arange(n)].mean(-1)


def ov_right(model, layer, head):
    attn = model.layers[layer]
    s = slice(head * attn.d_k, (head + 1) * attn.d_k)
    return model.embed.weight @ attn.w_v.weight[s].T @ attn.w_o.weight[:, s].T @ model.unembed.weight.T


def ov_transposed(model, layer, head):
    return ov_right(model, layer, head).T


def ov_whole_layer(model, layer, head):
    attn = model.layers[layer]
    return model.embed.weight @ attn.w_v.weight.T @ attn.w_o.weight.T @ model.unembed.weight.T


def ov_with_value_bias(model, layer, head):
    attn = model.layers[layer]
    s = slice(head * attn.d_k, (head + 1) * attn.d_k)
    v = model.embed.weight @ attn.w_v.weight[s].T + attn.w_v.bias[s]
    return v @ attn.w_o.weight[:, s].T @ model.unembed.weight.T


def ov_untransposed(model, layer, head):  # forgets that nn.Linear stores W^T
    attn = model.layers[layer]
    s = slice(head * attn.d_k, (head + 1) * attn.d_k)
    return model.embed.weight @ attn.w_v.weight[:, s] @ attn.w_o.weight[s] @ model.unembed.weight.T


def _model(seed=0):
    torch.manual_seed(seed)
    return AttentionOnlyTransformer(64, d_model=16, num_heads=2, num_layers=2)


def test_stubs_are_not_attempted(capsys):
    model = _model()
    assert not nb14.check_duplicate_token_score(stub)
    assert not nb14.check_ablation_guess(None, model)
    assert not nb14.check_one_layer_prediction(None, model)
    assert not nb14.check_full_ov_circuit(stub, model)
    assert capsys.readouterr().out.count("not attempted") == 4


def test_right_answers_pass(capsys):
    assert nb14.check_duplicate_token_score(duplicate_right)
    assert nb14.check_full_ov_circuit(ov_right, _model())
    assert capsys.readouterr().out.count("correct") == 2


@pytest.mark.parametrize("wrong, word", [(duplicate_is_induction, "induction score"),
                                         (duplicate_over_all_queries, "divide"),
                                         (duplicate_without_query_n, "left out query t = n"),
                                         (duplicate_for_3d_weights_only, "leading dims")])
def test_duplicate_token_score_rejects(wrong, word):
    with pytest.raises(AssertionError, match=word):
        nb14.check_duplicate_token_score(wrong)


@pytest.mark.parametrize("convert", [lambda t: t.tolist(), lambda t: tuple(t.tolist())])
def test_duplicate_token_score_asks_for_a_tensor(convert):
    """A list (``.tolist()``) holds the right numbers but is refused: exercise 2 combines the score
    with section 4's tensor scores. The message says what was expected and what came back."""
    def as_list(weights, n):
        return convert(duplicate_right(weights, n))

    with pytest.raises(AssertionError, match=r"torch tensor of shape \(3,\).*got a (list|tuple): \[") as err:
        nb14.check_duplicate_token_score(as_list)
    assert ".tolist()" in str(err.value)


def test_duplicate_token_score_asks_for_a_tensor_from_a_single_pattern_too():
    def item_for_one(weights, n):
        score = duplicate_right(weights, n)
        return score.item() if score.dim() == 0 else score

    with pytest.raises(AssertionError, match=r"torch tensor of shape \(\).*got a float"):
        nb14.check_duplicate_token_score(item_for_one)


@pytest.mark.parametrize("wrong, word", [(ov_transposed, "transpose"), (ov_whole_layer, "every head"),
                                         (ov_with_value_bias, "biases"),
                                         (ov_untransposed, r"nn\.Linear stores W\^T")])
def test_full_ov_circuit_rejects(wrong, word):
    with pytest.raises(AssertionError, match=word):
        nb14.check_full_ov_circuit(wrong, _model())


def test_full_ov_circuit_rejects_an_answer_that_ignores_its_model_argument():
    """An answer that reads a notebook global (here ``notebook_model``) instead of ``model`` is right
    on that one model only: the checker also tries a model of other sizes."""
    notebook_model = _model()

    def from_a_global(model, layer, head):
        return ov_right(notebook_model, layer, head)

    with pytest.raises(AssertionError, match=r"\|V\| = 24 and d_model = 48"):
        nb14.check_full_ov_circuit(from_a_global, notebook_model)


def test_full_ov_circuit_leaves_the_random_state_alone():
    model = _model()
    torch.manual_seed(3)
    expected = torch.rand(1)
    torch.manual_seed(3)
    nb14.check_full_ov_circuit(ov_right, model)  # seeds its second model inside fork_rng
    assert torch.equal(torch.rand(1), expected)


def test_ablation_guess_accepts_the_measured_head_only(capsys):
    model = _model()
    ids = repeated_tokens(256, 12, 64, torch.Generator().manual_seed(99))
    loss = {(0, h): per_position_loss(model, ids, ablate=[(0, h)])[12:].mean().item()
            for h in range(2)}
    best = max(loss, key=loss.get)
    assert nb14.check_ablation_guess(best, model)
    assert nb14.check_ablation_guess(list(best), model)  # [0, h] is the same answer
    assert capsys.readouterr().out.count("Measured: intact") == 2
    wrong = next(hd for hd in loss if hd != best)
    with pytest.raises(AssertionError, match=re.escape(f"head {best} raises it more") + ".*duplicate-token"):
        nb14.check_ablation_guess(wrong, model)
    with pytest.raises(AssertionError, match="layer 0"):
        nb14.check_ablation_guess((1, 0), model)
    for bad in ("0, 0", (0,), (0, True), (0.0, 1)):
        with pytest.raises(AssertionError, match=r"\(layer, head\) pair"):
            nb14.check_ablation_guess(bad, model)


@pytest.mark.parametrize("cost_00, accepted", [(1.0, True), (0.3, False)])
def test_ablation_guess_when_both_heads_cost_a_lot(monkeypatch, capsys, cost_00, accepted):
    """Where both layer-0 heads cost more than 0.5 nats (two circuits at once, as an outside reader
    found after 3200 steps at seed 13), the second-costliest head is accepted with a message saying
    both matter; where it costs less, the answer is refused as before."""
    cost = {(): 0.0, ((0, 0),): cost_00, ((0, 1),): 1.2}

    def fake_loss(model, ids, ablate=()):
        return torch.full((ids.shape[1] - 1,), 1.0 + cost[tuple(map(tuple, ablate))])

    monkeypatch.setattr(nb14, "per_position_loss", fake_loss)
    if accepted:
        assert nb14.check_ablation_guess((0, 0), _model())
        assert "Both layer-0 heads matter" in capsys.readouterr().out
    else:
        with pytest.raises(AssertionError, match=re.escape("head (0, 1) raises it more")):
            nb14.check_ablation_guess((0, 0), _model())


def _copy_head(model, layer, head, sign):
    """Set U = E and W_{v,h} W_{o,h} = sign * P (P: projection on d_k axes): the head's full OV
    circuit E W_{v,h} W_{o,h} U^T is then sign * E P E^T, a copier for sign 1 (its eigenvalues
    are >= 0) and an anti-copier for sign -1."""
    attn = model.layers[layer]
    s = slice(head * attn.d_k, (head + 1) * attn.d_k)
    with torch.no_grad():
        model.unembed.weight.copy_(model.embed.weight)  # U = E
        attn.w_v.weight[s] = torch.eye(attn.d_model)[s]  # W_{v,h}: the first d_k directions
        attn.w_o.weight[:, s] = sign * torch.eye(attn.d_model)[:, s]  # W_{o,h}: back to them


def _one_layer(signs, seed=0):
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(16, d_model=16, num_heads=2, num_layers=1)
    for head, sign in enumerate(signs):
        _copy_head(model, 0, head, sign)
    return model


@pytest.mark.parametrize("signs, truth", [((1, 1), True), ((1, -1), False), ((-1, -1), False)])
def test_one_layer_prediction_follows_the_measurement(signs, truth, capsys):
    model = _one_layer(signs)
    copies = [eigenvalue_positivity(full_ov_circuit(model, 0, h)) > 0.5 for h in range(2)]
    assert copies == [s > 0 for s in signs]  # the constructed heads measure as intended
    assert nb14.check_one_layer_prediction(truth, model)
    assert "Measured: head (0, 0)" in capsys.readouterr().out
    with pytest.raises(AssertionError, match=f"the answer is {truth}"):
        nb14.check_one_layer_prediction(not truth, model)
    with pytest.raises(AssertionError, match="True"):
        nb14.check_one_layer_prediction("yes", model)
