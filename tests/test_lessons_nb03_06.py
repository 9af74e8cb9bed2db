"""What notebooks 03-06 used to check inside lesson cells, now tests: the widgets' view functions
draw the data they are given, and notebook 03's toy embeddings are notebook 01's sentence."""

import matplotlib

matplotlib.use("Agg")

import torch  # noqa: E402

from helpers import sinusoidal_positional_encoding  # noqa: E402
from helpers.data.toy_embeddings import FEATURES, TOKENS, toy_embeddings  # noqa: E402
from helpers.widgets import (  # noqa: E402
    build_mask,
    head_heatmap_figure,
    mask_explorer_figure,
    position_dimension_figure,
)


def _image(ax):
    return torch.as_tensor(ax.images[0].get_array().data)


def test_mask_explorer_weights_respect_the_mask_and_rows_sum_to_one():
    fig = mask_explorer_figure("causal + padding", length=6, n_pad=2)
    shown = _image(fig.axes[1])  # the weights drawn on the right
    assert (shown[~build_mask("causal + padding", 6, 2)] == 0).all()
    assert int(torch.isclose(shown.sum(-1), torch.tensor(1.0)).sum()) == 6


def test_mask_explorer_all_padding_gives_zero_rows():
    shown = _image(mask_explorer_figure("causal + padding", length=6, n_pad=6).axes[1])
    assert not build_mask("causal + padding", 6, 6).any()
    assert (shown == 0).all()


def test_head_heatmap_draws_the_chosen_head_with_token_labels():
    weights = torch.softmax(torch.randn(2, 6, 6, generator=torch.Generator().manual_seed(1)), dim=-1)
    tokens = ["a", "cat", "sat", "on", "the", "mat"]
    fig = head_heatmap_figure(weights, 1, tokens)
    torch.testing.assert_close(_image(fig.axes[0]), weights[1])
    assert fig.axes[0].get_title() == "head 1"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == tokens


def test_position_dimension_figure_draws_the_row_as_bars():
    pe = sinusoidal_positional_encoding(50, 16)
    fig = position_dimension_figure(pe, position=10, dimension=3)
    bars = torch.tensor([float(b.get_height()) for b in fig.axes[2].patches])
    torch.testing.assert_close(bars, pe[10])
    assert fig.axes[1].get_title() == "dimension 3 (cos) over positions"
    assert fig.axes[2].get_title() == "vector of position 10"


def test_toy_embeddings_are_notebook_01s_sentence():
    x = toy_embeddings()
    assert TOKENS == ("the", "big", "cat", "chased", "a", "mouse")
    assert FEATURES == ("article", "animal", "action", "size")
    assert x.shape == (6, 4) and x.dtype == torch.float32
    torch.testing.assert_close(x[TOKENS.index("cat")], torch.tensor([0.0, 1.0, 0.0, 0.5]))
    torch.testing.assert_close(x[TOKENS.index("mouse")], torch.tensor([0.0, 1.0, 0.0, -0.8]))
