"""What notebooks 07, 08 and 11 draw with their widgets and figures, beyond tests/test_layers.py
and tests/test_efficient.py: layers and depths get whole-number ticks, never "2.5 layers"."""

import matplotlib.pyplot as plt
import pytest

from helpers.plots import grad_norm_lines
from helpers.widgets import grad_norm_view


def tick_texts(fig):
    fig.canvas.draw()
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    return [t.get_text() for t, v in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True) if lo <= v <= hi]


@pytest.mark.parametrize("depth", [2, 4, 7, 16])
def test_the_gradient_widget_ticks_every_layer_with_a_whole_number(depth):
    fig = grad_norm_view(depth)
    assert tick_texts(fig) == [str(i) for i in range(1, depth + 1)]
    assert fig.axes[0].get_ylabel() == r"$\|\nabla W_2\|$ (feed-forward)"
    plt.close(fig)


def test_one_layer_is_refused_with_a_message():
    """With one layer the top and the bottom layer that the widget compares are the same layer."""
    assert grad_norm_view(1) == "Cannot draw this: depth must be a whole number of layers in 2..24, got 1"


def test_depths_are_ticked_where_they_were_measured():
    fig = grad_norm_lines({"post-LN": [0.15, 0.15, 0.17], "pre-LN": [0.12, 0.09, 0.06]}, x=[2, 4, 8])
    assert tick_texts(fig) == ["2", "4", "8"]
    plt.close(fig)


def test_many_layers_get_whole_number_ticks_only():
    fig = grad_norm_lines({"post-LN": [1.0] * 24})
    texts = tick_texts(fig)
    assert texts and all(t.isdigit() for t in texts)
    plt.close(fig)


def test_fractional_x_values_keep_matplotlibs_ticks():
    fig = grad_norm_lines({"a": [1.0, 2.0]}, x=[0.5, 1.5])
    assert any("." in t for t in tick_texts(fig))
    plt.close(fig)
