"""helpers.induction (notebook 14): data, the attention-only model, ablation, scores, training,
plots and the widget's view, plus bad arguments."""

import math

import matplotlib.pyplot as plt
import pytest
import torch

from helpers.data.repeated import repeated_tokens
from helpers.induction import (
    AttentionOnlyTransformer,
    head_scores,
    induction_score,
    per_position_loss,
    previous_token_score,
)
from helpers.plots import loss_curves_plot, per_position_plot, scores_over_training_plot
from helpers.training import train_induction_model
from helpers.widgets import induction_view


def test_repeated_tokens_repeat_and_are_seeded():
    ids = repeated_tokens(4, 7, 10, torch.Generator().manual_seed(0))
    assert ids.shape == (4, 14) and ids.dtype == torch.long
    assert torch.equal(ids[:, :7], ids[:, 7:])
    assert ids.min() >= 0 and ids.max() < 10
    assert torch.equal(ids, repeated_tokens(4, 7, 10, torch.Generator().manual_seed(0)))


@pytest.mark.parametrize("args, word", [((0, 5, 10), "batch_size"), ((2, 1, 10), "n"),
                                        ((2, 5, 1), "vocab_size"), ((2, 2.5, 10), "n")])
def test_repeated_tokens_bad_arguments(args, word):
    with pytest.raises((ValueError, TypeError), match=word):
        repeated_tokens(*args)


def test_model_shapes_and_patterns():
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2, max_len=12)
    logits = model(torch.randint(0, 20, (3, 9)))
    assert logits.shape == (3, 9, 20)
    pats = model.patterns()
    assert len(pats) == 2 and pats[0].shape == (3, 2, 9, 9)
    assert torch.allclose(pats[1].sum(-1), torch.ones(3, 2, 9))
    assert (pats[0].triu(1) == 0).all()  # causal


def test_ablation_equals_zeroing_the_heads_columns_of_w_o():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2)
    ids = torch.randint(0, 20, (2, 10))
    ablated = model(ids, ablate=[(1, 0)])
    with torch.no_grad():
        model.layers[1].w_o.weight[:, :8] = 0.0  # head 0 of layer 1 reads columns 0..7
    torch.testing.assert_close(ablated, model(ids))
    assert not torch.allclose(ablated, model(ids, ablate=[(0, 1)]))


@pytest.mark.parametrize("ablate, word", [([(2, 0)], "ablate"), ([(0, 5)], "ablate"),
                                          ([(0,)], "ablate"), ([("a", 0)], "ablate")])
def test_bad_ablation(ablate, word):
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2)
    with pytest.raises((ValueError, TypeError), match=word):
        model(torch.zeros(1, 4, dtype=torch.long), ablate=ablate)


@pytest.mark.parametrize("ids", [torch.zeros(1, 4), torch.zeros(4, dtype=torch.long),
                                 torch.full((1, 4), 20), torch.zeros(1, 70, dtype=torch.long)])
def test_bad_ids(ids):
    model = AttentionOnlyTransformer(20, d_model=16, num_heads=2, num_layers=2)
    with pytest.raises(ValueError, match="ids"):
        model(ids)


def test_bad_constructor():
    with pytest.raises(ValueError, match="num_layers"):
        AttentionOnlyTransformer(20, num_layers=0)
    with pytest.raises(ValueError, match="divisible"):
        AttentionOnlyTransformer(20, d_model=10, num_heads=3)
    with pytest.raises(RuntimeError, match="run the model"):
        AttentionOnlyTransformer(20).patterns()


def test_scores_of_ideal_and_uniform_patterns():
    n = 5
    size = 2 * n
    ind = torch.zeros(size, size)
    prev = torch.zeros(size, size)
    for t in range(size):
        ind[t, t - n + 1 if t >= n else t] = 1.0
        prev[t, max(t - 1, 0)] = 1.0
    assert induction_score(ind, n) == 1.0 and previous_token_score(prev) == 1.0
    assert previous_token_score(ind) < 0.5 and induction_score(prev, n) < 0.5
    uniform = torch.ones(size, size).tril()
    uniform = uniform / uniform.sum(-1, keepdim=True)
    want = sum(1 / (t + 1) for t in range(n, size)) / n
    assert math.isclose(induction_score(uniform, n).item(), want, rel_tol=1e-6)


def test_score_bad_arguments():
    with pytest.raises(ValueError, match="2n"):
        induction_score(torch.ones(8, 8), 5)
    with pytest.raises(ValueError, match="weights"):
        previous_token_score(torch.ones(3, 4))


def test_per_position_loss_is_chance_for_a_blind_model():
    model = AttentionOnlyTransformer(16, d_model=8, num_heads=2, num_layers=1)
    with torch.no_grad():
        model.unembed.weight.zero_()
        model.unembed.bias.zero_()
    loss = per_position_loss(model, repeated_tokens(3, 4, 16))
    assert loss.shape == (7,)
    torch.testing.assert_close(loss, torch.full((7,), math.log(16)))


def test_training_runs_records_history_and_is_seeded():
    model, hist = train_induction_model(num_layers=1, steps=6, eval_every=3, d_model=16)
    assert hist["step"] == [0, 3, 6]
    assert len(hist["repeated_half"]) == 3 and hist["induction"][0].shape == (1, 2)
    assert hist["per_position"][0].shape == (23,)
    assert hist["chance"] == pytest.approx(math.log(64))
    _, again = train_induction_model(num_layers=1, steps=6, eval_every=3, d_model=16)
    assert again["repeated_half"] == hist["repeated_half"]
    scores = head_scores(model, repeated_tokens(2, 12, 64), 12)
    assert scores["previous"].shape == (1, 2) == scores["induction"].shape


def test_training_bad_arguments():
    with pytest.raises(ValueError, match="steps"):
        train_induction_model(steps=0)
    with pytest.raises(ValueError, match="n_range"):
        train_induction_model(n_range=(10, 40))


def test_loss_curves_plot_draws_every_run_and_chance():
    hist = {"step": [0, 10], "first_half": [4.0, 4.1], "repeated_half": [4.0, 1.0], "chance": 4.0}
    fig = loss_curves_plot({"a": hist, "b": hist})
    ax = fig.axes[0]
    assert len(ax.lines) == 5  # 2 runs x 2 halves + chance
    assert list(ax.lines[0].get_ydata()) == [4.0, 1.0]
    with pytest.raises(ValueError, match="empty"):
        loss_curves_plot({})


def test_induction_view_shows_the_chosen_head_and_the_loss():
    torch.manual_seed(0)
    model = AttentionOnlyTransformer(64, d_model=16, num_heads=2, num_layers=2)
    fig = induction_view(model, 1, 0, seed=3, n=6)
    heat, bars = fig.axes[0], fig.axes[1]  # fig.axes[2] is the heatmap's colour bar
    assert heat.get_title() == "layer 1, head 0"
    ids = repeated_tokens(1, 6, 64, torch.Generator().manual_seed(3))
    with torch.no_grad():
        model(ids)
    shown = heat.images[0].get_array()
    torch.testing.assert_close(torch.as_tensor(shown.data), model.patterns()[1][0, 0])
    heights = [p.get_height() for p in bars.patches]
    torch.testing.assert_close(torch.tensor(heights, dtype=torch.float32), per_position_loss(model, ids))
    with pytest.raises(ValueError, match="layer"):
        induction_view(model, 2, 0)
    with pytest.raises(ValueError, match="head"):
        induction_view(model, 0, "x")
    plt.close("all")


def _fake_history():
    return {"step": [0, 10], "repeated_half": [4.0, 1.0], "chance": 4.0,
            "per_position": [torch.full((5,), 4.0), torch.tensor([4.0, 4.0, 0.5, 0.2, 0.1])],
            "previous": [torch.tensor([[0.1, 0.2], [0.0, 0.1]]), torch.tensor([[0.7, 0.2], [0.0, 0.1]])],
            "induction": [torch.tensor([[0.1, 0.0], [0.2, 0.1]]), torch.tensor([[0.1, 0.0], [0.9, 0.8]])]}


def test_per_position_plot_draws_the_chosen_evaluations():
    hist = _fake_history()
    ax = per_position_plot(hist, [1]).axes[0]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([4.0, 4.0, 0.5, 0.2, 0.1])
    assert ax.get_legend().get_texts()[0].get_text() == "step 10"
    with pytest.raises(ValueError, match="indices"):
        per_position_plot(hist, [])


def test_scores_over_training_plot_draws_the_best_heads_and_the_loss():
    fig = scores_over_training_plot(_fake_history())
    left, right = fig.axes
    assert list(left.lines[0].get_ydata()) == pytest.approx([0.2, 0.9])  # best head, last layer
    assert list(left.lines[1].get_ydata()) == pytest.approx([0.2, 0.7])  # best head, layer 0
    assert list(right.lines[0].get_ydata()) == [4.0, 1.0]
    assert len(left.get_legend().get_texts()) == 3
