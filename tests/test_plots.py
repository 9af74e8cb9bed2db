"""What helpers.plots draws: tick labels, image data, annotations, bar heights, titles; and the
style every figure shares: dpi, font sizes, white background, colour bars, shared scales, masked
cells drawn unlike small weights, tick labels that never overlap (measured with the Agg renderer)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.collections import PatchCollection  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from helpers.plots import (  # noqa: E402
    MIN_FONT_PT,
    attention_heatmap,
    attention_heatmaps,
    cost_plot,
    cross_attention_grid,
    grad_norm_lines,
    lr_schedule_plot,
    online_softmax_figure,
    training_curves,
    use_tutorial_style,
    weight_bars,
)


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


# ---- the shared style --------------------------------------------------------------------------
@pytest.fixture
def styled():
    with matplotlib.rc_context():
        use_tutorial_style()
        yield


def _texts(fig):
    return [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]


@pytest.fixture(scope="module")
def all_figures():
    with matplotlib.rc_context():
        use_tutorial_style()
        figs = _all_figures()
        for fig in figs.values():
            fig.canvas.draw()
        yield figs


def _nb05_heads_row(g):
    """Notebook 05's three heads side by side, drawn as the notebook draws them: 8 x 8 weights,
    labels position:token id (up to 4 characters), one shared colour bar, 8 inches wide."""
    L = 8
    ids = torch.randint(0, 16, (L,), generator=g).tolist()
    labels = [f"{i}:{t}" for i, t in enumerate(ids)]
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    mats = [torch.softmax(torch.randn(L, L, generator=g).masked_fill(~causal, float("-inf")), -1)
            for _ in range(3)]
    return attention_heatmaps(mats, ["1 head", "2 heads: head 0", "2 heads: head 1"], labels, labels,
                              vmin=0.0, vmax=1.0, annotate=False, masks=causal, figsize=(8.0, 3.4))


def _all_figures():
    """One figure of every kind helpers.plots draws, with long and numeric labels."""
    g = torch.Generator().manual_seed(0)
    w = torch.softmax(torch.randn(6, 6, generator=g), -1)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    words = ["the", "international", "cat", "sat", "down", "quickly"]
    lengths = [64, 128, 256, 512]
    return {
        "heatmap": attention_heatmap(w, words, words, title="t"),
        "heatmap_masked": attention_heatmap(w * causal, words, list(range(6)), mask=causal),
        "heatmap_large": attention_heatmap(torch.softmax(torch.randn(40, 40, generator=g), -1)),
        "heatmaps": attention_heatmaps([w, w.flip(0)], ["a", "b"], words, words, masks=causal),
        "heatmaps_row": _nb05_heads_row(g),
        "heatmap_small": attention_heatmap(torch.eye(3), ["a", "b", "c"], ["x", "y", "z"], colorbar=False),
        "bars": weight_bars(w[0], words),
        "grad_norms": grad_norm_lines({"post-LN": [1.0, 0.5], "pre-LN": [0.4, 0.4]}),
        "cost": cost_plot(lengths, {"naive": [t * t for t in lengths]}, "bytes"),
        "online_softmax": online_softmax_figure(torch.randn(8, generator=g), 3),
        "training": training_curves({"step": [1, 2, 3], "loss": [3.0, 2.0, 1.0],
                                     "val_acc": [0.1, 0.5, 0.9]}),
        "lr": lr_schedule_plot([0.1, 0.2, 0.3, 0.2], warmup_steps=2),
        "cross_grid": cross_attention_grid(
            [torch.softmax(torch.randn(2, 11, 23, generator=g), -1) for _ in range(2)],
            list("tuesday, 12 march 2021 "), [*"2021-03-12", "<e>"], title="grid"),
    }


def test_tutorial_style_is_crisp_with_a_white_background(styled, all_figures):
    assert matplotlib.rcParams["figure.dpi"] >= 100
    assert matplotlib.rcParams["image.cmap"] == "viridis"
    for name, fig in all_figures.items():
        assert fig.dpi >= 100, name
        assert matplotlib.colors.to_rgba(fig.get_facecolor()) == (1, 1, 1, 1), name
        for ax in fig.axes:
            assert matplotlib.colors.to_rgba(ax.get_facecolor()) == (1, 1, 1, 1), name


def test_no_text_is_smaller_than_8_pt(all_figures):
    assert MIN_FONT_PT == 8
    for name, fig in all_figures.items():
        small = [(t.get_text(), t.get_fontsize()) for t in _texts(fig) if t.get_fontsize() < 8]
        assert small == [], name


def _overlaps(boxes, tol=0.5):
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:]
            if min(ba.x1, bb.x1) - max(ba.x0, bb.x0) > tol and min(ba.y1, bb.y1) - max(ba.y0, bb.y0) > tol]


def test_tick_labels_never_overlap(all_figures):
    for name, fig in all_figures.items():
        r = FigureCanvasAgg(fig).get_renderer()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                boxes = [(t.get_text(), t.get_window_extent(r)) for t in axis.get_ticklabels()
                         if t.get_text() and t.get_visible()]
                assert _overlaps(boxes) == [], (name, boxes)


def test_the_overlap_measure_catches_crowded_labels(styled):
    """The check above is not vacuous: crowded unrotated labels drawn by hand do overlap."""
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks(range(6), ["international"] * 6)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert _overlaps([(t.get_text(), t.get_window_extent(r)) for t in ax.get_xticklabels()])


def test_long_labels_are_shortened_and_rotated_numbers_accepted(styled):
    words = ["the", "internationalisation", "cat"]
    ax = attention_heatmap(torch.eye(3), words, [7, 8, 9]).axes[0]
    assert ticks(ax.get_xticklabels()) == ["the", "internation…", "cat"]
    assert ticks(ax.get_yticklabels()) == ["7", "8", "9"]
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {90.0}
    ax = attention_heatmap(torch.eye(2), "ab", "cd").axes[0]  # a str: one label per character
    assert ticks(ax.get_xticklabels()) == ["a", "b"] and ticks(ax.get_yticklabels()) == ["c", "d"]


def _is_colour_bar(ax):
    return ax.get_label() == "<colorbar>"


def test_every_heatmap_has_a_colour_bar(all_figures):
    figs = all_figures
    for name in ("heatmap", "heatmap_masked", "heatmap_large", "heatmaps", "cross_grid"):
        bars = [ax for ax in figs[name].axes if _is_colour_bar(ax)]
        assert len(bars) == 1, name  # one colour bar: for a grid, shared by every panel
        assert any(ax.images for ax in figs[name].axes), name


def test_attention_heatmaps_share_one_scale_and_one_colour_bar(styled):
    flat = torch.full((3, 3), 1 / 3)
    sharp = torch.eye(3) * 0.9 + 0.05
    fig = attention_heatmaps([flat, sharp], ["flat", "sharp"], vmin=0.0)
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == ["flat", "sharp"]
    for ax in panels:  # one scale: the max over BOTH matrices
        assert ax.images[0].get_clim() == pytest.approx((0.0, 0.95))
    assert sum(_is_colour_bar(ax) for ax in fig.axes) == 1
    fixed = attention_heatmaps(torch.stack([flat, sharp]), vmax=1.0)  # (n, Lq, Lk) works too
    assert {ax.images[0].get_clim() for ax in fixed.axes if ax.images} == {(0.0, 1.0)}


def test_attention_heatmap_vmin_vmax_give_comparable_colours(styled):
    a = attention_heatmap(torch.full((2, 2), 0.5), vmin=0.0, vmax=1.0).axes[0].images[0]
    b = attention_heatmap(torch.eye(2), vmin=0.0, vmax=1.0).axes[0].images[0]
    assert a.get_clim() == b.get_clim() == (0.0, 1.0)
    np.testing.assert_array_equal(a.to_rgba(0.5), b.to_rgba(0.5))


def _pixel(fig, ax, x, y):
    """RGB of the rendered figure at data coordinates (x, y) of ``ax``."""
    fig.canvas.draw()
    buf = np.asarray(fig.canvas.buffer_rgba())
    px, py = ax.transData.transform((x, y))
    return buf[int(buf.shape[0] - py), int(px), :3].astype(int)


def test_masked_cells_are_drawn_unlike_small_weights(styled):
    w = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    keep = torch.tensor([[True, False], [True, True]])
    fig = attention_heatmap(w, mask=keep, annotate=True)
    ax = fig.axes[0]
    assert np.ma.getmaskarray(ax.images[0].get_array()).tolist() == [[False, True], [False, False]]
    hatched = [c for c in ax.collections if isinstance(c, PatchCollection)]
    assert len(hatched) == 1 and hatched[0].get_hatch() == "///" and len(hatched[0].get_paths()) == 1
    assert "hatched = masked" in fig.axes[1].get_ylabel()  # the colour bar says what hatching means
    assert [t.get_text() for t in ax.texts] == ["1.00", "0.50", "0.50"]  # no number on a masked cell
    masked_rgb = _pixel(fig, ax, 1.0, 0.0)
    zero = np.array(ax.images[0].to_rgba(0.0, bytes=True)[:3], dtype=int)
    assert np.abs(masked_rgb - zero).sum() > 150  # grey hatching, far from the colour of 0
    # Without a mask a zero weight is drawn in the colour of 0.
    plain = attention_heatmap(w, annotate=False)
    assert np.abs(_pixel(plain, plain.axes[0], 1.0, 0.0) - zero).sum() < 10


def test_masked_heatmap_without_colour_bar_says_so_in_the_title(styled):
    ax = attention_heatmap(torch.eye(2), mask=torch.eye(2, dtype=torch.bool), colorbar=False,
                           title="causal").axes[0]
    assert ax.get_title() == "causal\n(hatched = masked)"


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: attention_heatmap(torch.ones(0, 3)), ValueError, r"weights is empty, shape \(0, 3\)"),
        (lambda: attention_heatmap([]), ValueError, r"2-D \(Lq, Lk\) matrix, got shape \(0,\)"),
        (lambda: attention_heatmap(torch.ones(2, 2), x_labels=3), TypeError,
         "x_labels must be a sequence of labels, got int"),
        (lambda: attention_heatmap(torch.ones(2, 2), mask=torch.ones(2, 2)), TypeError,
         "mask must be boolean"),
        (lambda: attention_heatmap(torch.ones(2, 2), mask=torch.ones(3, 3, dtype=torch.bool)),
         ValueError, r"mask of shape \(3, 3\) does not broadcast to the matrix's shape \(2, 2\)"),
        (lambda: attention_heatmaps([]), ValueError, "attention_heatmaps: weights is empty"),
        (lambda: attention_heatmaps([torch.eye(2)], figsize=(8, 0)), ValueError,
         r"attention_heatmaps: figsize must be \(width, height\) in inches, two numbers > 0, got \(8, 0\)"),
        (lambda: attention_heatmaps([torch.eye(2)], titles=["a", "b"]), ValueError,
         r"one title per matrix \(1\), got 2 titles"),
        (lambda: training_curves({}), ValueError, "needs the keys 'step' and 'loss'"),
        (lambda: training_curves([1, 2]), TypeError, "history must be the dict"),
        (lambda: training_curves({"step": [], "loss": []}), ValueError, "non-empty"),
        (lambda: training_curves({"step": [1], "loss": [1.0], "val_acc": [0.1, 0.2]}), ValueError,
         r"history\['val_acc'\] has 2 values for 1 steps"),
        (lambda: cross_attention_grid([], "ab", "cd"), ValueError,
         "weights must be a non-empty list .one entry per decoder layer"),
        (lambda: cross_attention_grid([torch.ones(2, 3, 4)], list("abc"), list("abc")), ValueError,
         "src_labels has 3 labels but the matrix needs 4"),
        (lambda: weight_bars([]), ValueError, "weights is empty"),
        (lambda: grad_norm_lines({}), ValueError, "series must be a non-empty dict"),
        (lambda: cost_plot([1, 2], {}, "s"), ValueError, "series must be a non-empty dict"),
    ],
)
def test_bad_input_gets_a_message_naming_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_training_curves_draws_loss_and_accuracy():
    fig = training_curves({"step": [10, 20], "loss": [2.0, 1.0], "val_acc": [0.5, 0.75]})
    loss, acc = fig.axes
    assert loss.lines[0].get_ydata().tolist() == [2.0, 1.0]
    assert acc.lines[0].get_xdata().tolist() == [10, 20]
    assert len(training_curves({"step": [1], "loss": [1.0]}).axes) == 1


def test_cross_attention_grid_draws_each_layer_and_head_on_one_scale():
    g = torch.Generator().manual_seed(0)
    ws = [torch.softmax(torch.randn(2, 3, 4, generator=g), -1) for _ in range(3)]
    fig = cross_attention_grid(ws, list("ab c"), ["x", "y", "z"])
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 6 and sum(_is_colour_bar(ax) for ax in fig.axes) == 1
    np.testing.assert_allclose(panels[3].images[0].get_array(), ws[1][1].numpy())
    assert {ax.images[0].get_clim() for ax in panels} == {(0.0, 1.0)}
    assert ticks(panels[0].get_xticklabels()) == ["a", "b", "␣", "c"]


def test_cross_attention_grid_hatches_masked_cells_and_shows_spaces_on_both_axes():
    """The decoder's self-attention (notebook 10): with its causal mask the cells above the
    diagonal are hatched, not drawn like weights of 0, and the colour bar says so; the encoder's
    (queries and keys both source pieces): a space is ␣ on the y axis too."""
    g = torch.Generator().manual_seed(0)
    causal = torch.ones(3, 3, dtype=torch.bool).tril()
    ws = [torch.softmax(torch.randn(2, 3, 3, generator=g).masked_fill(~causal, -torch.inf), -1)]
    fig = cross_attention_grid(ws, ["<bos>", "a", "b"], ["a", "b", "<eos>"], mask=causal)
    panels = [ax for ax in fig.axes if ax.images]
    for ax in panels:
        hatched = [c for c in ax.collections if isinstance(c, PatchCollection)]
        assert len(hatched) == 1 and len(hatched[0].get_paths()) == 3  # the 3 cells above the diagonal
        assert hatched[0].get_hatch()
    assert any("hatched = masked" in ax.get_ylabel() for ax in fig.axes if _is_colour_bar(ax))
    plt.close(fig)
    fig = cross_attention_grid(ws, ["a", " ", "b"], ["a", " ", "b"])
    panel = [ax for ax in fig.axes if ax.images][0]
    assert ticks(panel.get_yticklabels()) == ticks(panel.get_xticklabels()) == ["a", "␣", "b"]
    assert not any(isinstance(c, PatchCollection) for c in panel.collections)
    assert all("masked" not in ax.get_ylabel() for ax in fig.axes if _is_colour_bar(ax))
    plt.close(fig)
    with pytest.raises(ValueError, match="cross_attention_grid: mask of shape \\(2, 2\\) does not broadcast"):
        cross_attention_grid(ws, ["a", "b", "c"], ["a", "b", "c"], mask=torch.ones(2, 2, dtype=torch.bool))


def test_cross_attention_grid_keeps_every_source_character_legible(styled):
    """Four heads over 24 source characters: the panels wrap (two per row) rather than thin out
    or rotate the characters, and the figure stays about 10 inches wide."""
    g = torch.Generator().manual_seed(0)
    src = list("tuesday, 12 march 2021  ")
    ws = [torch.softmax(torch.randn(4, 3, 24, generator=g), -1) for _ in range(2)]
    fig = cross_attention_grid(ws, src, ["a", "b", "c"])
    assert fig.get_size_inches()[0] <= 10.6
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels[:3]] == ["layer 0, head 0", "layer 0, head 1",
                                                     "layer 0, head 2"]
    for ax in panels:
        labels = ax.get_xticklabels()
        assert all(t.get_visible() for t in labels) and {t.get_rotation() for t in labels} == {0.0}


def test_side_by_side_heatmaps_fit_a_notebook_column(all_figures):
    """Notebook 05's three heatmaps (issue 34: their text showed at about 7 pixels, the figure 13
    inches wide and shrunk to the column): 8 inches wide, so that a notebook column of 800 pixels
    shows them at their true size, and every text, ticks and colour bar included, at 8 pt or more
    (test_no_text_is_smaller_than_8_pt) with no two tick labels overlapping."""
    fig = all_figures["heatmaps_row"]
    assert fig.get_size_inches()[0] * fig.dpi <= 800
    heat_axes = [ax for ax in fig.axes if ax.get_images()]
    assert len(heat_axes) == 3 and len(fig.axes) == 4  # three heatmaps and one colour bar
    bar = next(ax for ax in fig.axes if ax not in heat_axes)
    assert all(t.get_fontsize() >= 8 for t in bar.get_yticklabels() + [bar.yaxis.label])
    for ax in heat_axes:
        shown = [t for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_visible() and t.get_text()]
        assert len(shown) >= 8 and all(t.get_fontsize() >= 8 for t in shown)  # (x and y: at least 4 of 8 each)
        for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
            boxes = [(t.get_text(), t.get_window_extent()) for t in ticks if t.get_visible() and t.get_text()]
            assert _overlaps(boxes) == []


def test_a_heatmap_of_its_own_is_at_least_400_pixels_wide(all_figures):
    """Issue 34: notebook 00's 4 x 4 alignment was 380 pixels wide."""
    for name in ("heatmap_small", "heatmap"):
        fig = all_figures[name]
        assert fig.get_size_inches()[0] * fig.dpi >= 400, name
