"""What helpers.plots draws: tick labels, image data, annotations, bar heights, titles."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.plots import attention_heatmap, use_tutorial_style, weight_bars  # noqa: E402


def ticks(labels):
    return [t.get_text() for t in labels]


def test_heatmap_draws_the_matrix_with_token_labels():
    w = torch.tensor([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]])  # (Lq=2, Lk=3)
    fig = attention_heatmap(w, ["the", "cat", "sat"], ["le", "chat"], title="demo")
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.images[0].get_array(), w.numpy())
    assert ticks(ax.get_xticklabels()) == ["the", "cat", "sat"]
    assert ticks(ax.get_yticklabels()) == ["le", "chat"]
    assert ax.get_title() == "demo"
    assert ax.get_xlabel() == "key (attended to)" and ax.get_ylabel() == "query (attending)"
    assert [t.get_text() for t in ax.texts] == ["0.70", "0.20", "0.10", "0.00", "0.50", "0.50"]
    assert len(fig.axes) == 2  # the heatmap and its colour bar
    assert ax.images[0].get_cmap().name == "viridis"


def test_heatmap_without_labels_numbers_the_positions_and_skips_annotations_when_large():
    w = torch.softmax(torch.randn(10, 10), dim=-1)
    ax = attention_heatmap(w, colorbar=False).axes[0]
    assert ticks(ax.get_xticklabels()) == [str(i) for i in range(10)]
    assert len(ax.texts) == 0  # 100 cells > 64: not annotated
    assert len(ax.figure.axes) == 1


def test_heatmap_draws_into_a_given_axes():
    fig, axes = plt.subplots(1, 2)
    out = attention_heatmap(torch.eye(2), ["a", "b"], ["a", "b"], ax=axes[1], colorbar=False)
    assert out is fig
    assert len(axes[1].images) == 1 and len(axes[0].images) == 0


@pytest.mark.parametrize(
    ("weights", "kwargs", "match"),
    [
        (torch.ones(3), {}, r"2-D \(Lq, Lk\) matrix, got shape \(3,\)"),
        (torch.ones(2, 3), {"x_labels": ["a", "b"]}, r"x_labels has 2 labels but the matrix \(2, 3\) needs 3"),
        (torch.ones(2, 3), {"y_labels": ["a"]}, r"y_labels has 1 labels but the matrix \(2, 3\) needs 2"),
    ],
)
def test_heatmap_rejects_bad_input(weights, kwargs, match):
    with pytest.raises(ValueError, match=match):
        attention_heatmap(weights, **kwargs)


def test_weight_bars_heights_labels_and_annotations():
    w = torch.tensor([0.1, 0.6, 0.3])
    fig = weight_bars(w, ["the", "cat", "sat"], title="where cat looks")
    ax = fig.axes[0]
    np.testing.assert_allclose([p.get_height() for p in ax.patches], [0.1, 0.6, 0.3], rtol=1e-6)
    assert ticks(ax.get_xticklabels()) == ["the", "cat", "sat"]
    assert ax.get_title() == "where cat looks"
    assert ax.get_ylabel() == "attention weight"
    assert ax.get_ylim() == pytest.approx((0.0, 1.1))
    assert [t.get_text() for t in ax.texts] == ["0.10", "0.60", "0.30"]


def test_weight_bars_accepts_negative_values_without_ylim():
    ax = weight_bars([1.0, -0.5], ylim=None, annotate=False).axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([1.0, -0.5])
    assert ticks(ax.get_xticklabels()) == ["0", "1"]
    assert len(ax.texts) == 0
    assert ax.get_ylim()[0] < -0.5


@pytest.mark.parametrize(
    ("weights", "labels", "match"),
    [
        (torch.ones(2, 2), None, r"1-D vector of weights, got shape \(2, 2\)"),
        (torch.ones(3), ["a", "b"], "labels has 2 entries but there are 3 weights"),
    ],
)
def test_weight_bars_rejects_bad_input(weights, labels, match):
    with pytest.raises(ValueError, match=match):
        weight_bars(weights, labels)


def test_tutorial_style_sets_white_background_and_small_dpi():
    use_tutorial_style()
    assert matplotlib.rcParams["figure.facecolor"] == "white"
    assert matplotlib.rcParams["figure.dpi"] == 80
    assert matplotlib.rcParams["image.cmap"] == "viridis"
