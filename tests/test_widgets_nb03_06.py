"""Widgets of notebooks 04-06: the pure functions draw what they should, and each widget's
callback redraws when a control changes (nbval never moves a slider)."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

from helpers import sinusoidal_positional_encoding  # noqa: E402
from helpers.widgets import (  # noqa: E402
    build_mask,
    head_heatmap_figure,
    head_picker,
    mask_explorer,
    mask_explorer_figure,
    position_dimension_figure,
    position_explorer,
)


def _image(ax):
    return torch.as_tensor(ax.images[0].get_array().data)


def _labels(ticks):
    return [t.get_text() for t in ticks]


def test_build_mask_kinds():
    assert torch.equal(build_mask("none", 3), torch.ones(3, 3, dtype=torch.bool))
    assert torch.equal(build_mask("causal", 3), torch.ones(3, 3, dtype=torch.bool).tril())
    pad = build_mask("padding", 4, 1)
    assert pad[:, 3].sum() == 0 and pad[:, :3].all()
    both = build_mask("causal + padding", 4, 2)
    assert torch.equal(both, torch.ones(4, 4, dtype=torch.bool).tril() & pad.logical_or(pad).logical_and(
        torch.tensor([True, True, False, False])))
    with pytest.raises(ValueError, match="kind must be one of"):
        build_mask("diagonal", 3)
    with pytest.raises(ValueError, match="n_pad must be between 0 and length=3, got 4"):
        build_mask("padding", 3, 4)


def test_mask_explorer_figure_draws_mask_and_masked_weights():
    fig = mask_explorer_figure("causal + padding", length=5, n_pad=2)
    ax_m, ax_w = fig.axes[:2]
    mask = build_mask("causal + padding", 5, 2)
    torch.testing.assert_close(_image(ax_m), mask.float())
    weights = _image(ax_w)
    assert (weights[~mask] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(5))  # every row has a real key
    assert _labels(ax_m.get_xticklabels()) == ["t0", "t1", "t2", "PAD", "PAD"]
    assert ax_m.get_title() == "mask: causal + padding (1 = may attend)"


def test_mask_explorer_all_padding_rows_are_zero_not_nan():
    weights = _image(mask_explorer_figure("padding", length=3, n_pad=3).axes[1])
    assert not torch.isnan(weights).any()
    assert (weights == 0).all()


def test_mask_explorer_widget_redraws_and_explains_bad_input():
    w = mask_explorer()
    kind, length, n_pad = w.children[:3]
    assert [type(c).__name__ for c in (kind, length, n_pad)] == ["Dropdown", "IntSlider", "IntSlider"]
    kind.value = "none"
    assert torch.equal(_image(w.result.axes[0]), torch.ones(6, 6))
    length.value = 4
    assert _image(w.result.axes[0]).shape == (4, 4)
    n_pad.value = 7
    assert isinstance(w.result, str) and "larger than the sequence length 4" in w.result


def test_head_heatmap_figure_and_picker():
    g = torch.Generator().manual_seed(0)
    weights = torch.softmax(torch.randn(3, 4, 4, generator=g), dim=-1)
    tokens = ["a", "b", "c", "d"]
    fig = head_heatmap_figure(weights, 2, tokens)
    torch.testing.assert_close(_image(fig.axes[0]), weights[2])
    assert fig.axes[0].get_title() == "head 2"
    assert _labels(fig.axes[0].get_yticklabels()) == tokens
    torch.testing.assert_close(_image(head_heatmap_figure(weights, "mean").axes[0]), weights.mean(0))
    with pytest.raises(ValueError, match=r"head must be an int in 0..2 or 'mean', got 3"):
        head_heatmap_figure(weights, 3)
    with pytest.raises(ValueError, match=r"\(num_heads, Lq, Lk\), got \(4, 4\)"):
        head_heatmap_figure(weights[0], 0)
    picker = head_picker(weights, tokens)
    dropdown = picker.children[0]
    assert dropdown.options[-1] == ("mean", "mean") and len(dropdown.options) == 4
    dropdown.value = 1
    torch.testing.assert_close(_image(picker.result.axes[0]), weights[1])


def test_position_dimension_figure_and_explorer():
    pe = sinusoidal_positional_encoding(20, 8)
    fig = position_dimension_figure(pe, position=5, dimension=3)
    ax_t, ax_c, ax_r, _ = fig.axes  # the colorbar comes last
    assert fig.get_size_inches()[0] <= 8  # fits the notebook's column: 8-pt text stays 8 pt
    torch.testing.assert_close(_image(ax_t), pe)
    line, marker = ax_c.get_lines()
    torch.testing.assert_close(torch.as_tensor(line.get_ydata(), dtype=torch.float32), pe[:, 3])
    assert float(marker.get_ydata()[0]) == pytest.approx(float(pe[5, 3]))
    assert "cos" in ax_c.get_title()
    torch.testing.assert_close(torch.tensor([float(b.get_height()) for b in ax_r.patches]), pe[5])
    with pytest.raises(ValueError, match=r"position must be in 0..19, got 20"):
        position_dimension_figure(pe, 20, 0)
    with pytest.raises(ValueError, match=r"dimension must be in 0..7, got -1"):
        position_dimension_figure(pe, 0, -1)
    w = position_explorer(pe)
    pos, dim = w.children[:2]
    assert (pos.max, dim.max) == (19, 7)
    pos.value, dim.value = 7, 2
    bars = w.result.axes[2].patches
    torch.testing.assert_close(torch.tensor([float(b.get_height()) for b in bars]), pe[7])
    assert w.result.axes[1].get_title() == "dimension 2 (sin) over positions"
