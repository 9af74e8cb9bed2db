"""The widgets of notebooks 00 and 02 (language alignments, softmax temperature): what their
pure functions draw, the messages they give for bad input, and that the controls redraw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.widgets import (  # noqa: E402
    ALIGNMENTS,
    alignment_matrix,
    alignment_view,
    alignment_widget,
    parse_scores,
    softmax_with_temperature,
    temperature_view,
    temperature_widget,
)


def ticks(labels):
    return [t.get_text() for t in labels]


# --- temperature: pure functions -------------------------------------------------------------
def test_parse_scores_reads_commas_semicolons_and_spaces():
    assert parse_scores(" 2, 1.5 ;-1, 1e-1 ") == [2.0, 1.5, -1.0, 0.1]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "no scores given"),
        ("   ", "no scores given"),
        ("2, x", r"'x' is not a number"),
        ("2,,1", r"'' is not a number"),
        ("1, inf", "scores must be finite"),
        ("nan", "scores must be finite"),
        (", ".join(["1"] * 13), "at most 12 scores fit in the chart, got 13"),
    ],
)
def test_parse_scores_names_what_is_wrong(text, match):
    with pytest.raises(ValueError, match=match):
        parse_scores(text)


def test_softmax_with_temperature_matches_torch_and_limits():
    s = torch.tensor([2.0, 1.0, 0.1, -1.0])
    for t in (0.1, 0.5, 1.0, 3.0):
        torch.testing.assert_close(softmax_with_temperature(s, t), torch.softmax(s / t, dim=-1))
    assert softmax_with_temperature(s, 0.01)[0] > 0.999  # cold: all weight on the largest score
    torch.testing.assert_close(softmax_with_temperature(s, 1e4), torch.full((4,), 0.25), atol=1e-3, rtol=0)
    order = softmax_with_temperature(s, 2.0).argsort()
    assert order.tolist() == s.argsort().tolist()  # temperature never changes the order


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, float("nan"), float("inf"), "1", None, True])
def test_softmax_with_temperature_rejects_bad_temperatures(bad):
    with pytest.raises(ValueError, match="temperature must be a number > 0"):
        softmax_with_temperature([1.0, 2.0], bad)


def test_softmax_with_temperature_rejects_bad_scores():
    with pytest.raises(ValueError, match=r"non-empty 1-D list, got shape \(2, 2\)"):
        softmax_with_temperature([[1.0, 2.0], [3.0, 4.0]], 1.0)
    with pytest.raises(ValueError, match=r"non-empty 1-D list, got shape \(0,\)"):
        softmax_with_temperature([], 1.0)


def test_temperature_view_draws_the_weights_as_bars():
    s = [2.0, 1.0, 0.5, -1.0]
    fig = temperature_view(s, 0.5, ["the", "cat", "sat", "down"])
    ax = fig.axes[0]
    want = torch.softmax(torch.tensor(s) / 0.5, dim=-1).numpy()
    np.testing.assert_allclose([p.get_height() for p in ax.patches], want, rtol=1e-6)
    assert ticks(ax.get_xticklabels()) == ["the", "cat", "sat", "down"]
    assert ax.get_title() == f"temperature 0.50: largest weight {want.max():.2f}"
    assert [t.get_text() for t in ax.texts] == [f"{v:.2f}" for v in want]


def test_temperature_view_reads_typed_text_and_numbers_bars_when_labels_do_not_fit():
    ax = temperature_view("1, 1", 3.0, ["only", "three", "labels"]).axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([0.5, 0.5])
    assert ticks(ax.get_xticklabels()) == ["#1", "#2"]


def test_temperature_extremes_sharpen_and_flatten():
    s = [1.25, 0.6, 0.5, 0.1, 0.0, 0.0]
    cold = [p.get_height() for p in temperature_view(s, 0.1).axes[0].patches]
    hot = [p.get_height() for p in temperature_view(s, 10.0).axes[0].patches]
    assert max(cold) > 0.99
    assert max(hot) - min(hot) < 0.05


@pytest.mark.parametrize(
    ("scores", "temperature", "match"),
    [
        ([1.0, 2.0], 0.0, "temperature must be a number > 0, got 0.0"),
        ([1.0, 2.0], -2.0, "temperature must be a number > 0, got -2.0"),
        ("2, 1, many", 1.0, "'many' is not a number"),
        ("", 1.0, "no scores given"),
    ],
)
def test_temperature_view_answers_bad_input_with_a_message(scores, temperature, match):
    msg = temperature_view(scores, temperature)
    assert isinstance(msg, str)
    assert msg.startswith("Cannot draw this: ")
    assert match in msg
    assert plt.get_fignums() == []  # no half-drawn figure left behind


# --- temperature: the widget shell ---------------------------------------------------------
def test_temperature_widget_controls_redraw(capsys):
    box = temperature_widget([2.0, 1.0, 0.1], ["a", "b", "c"], temperature=1.0)
    (text, slider), out = box.children[0].children, box.children[1]
    assert text.value == "2, 1, 0.1"
    assert slider.value == pytest.approx(1.0) and slider.min == -1 and slider.max == 1
    # issue 34: the label showed as "temperat…" in JupyterLab's default 80-pixel label column; it
    # now takes its own width, and every other label fits that column (8 characters or fewer)
    assert slider.description == "temperature" and slider.style.description_width == "initial"
    assert len(text.description) <= 8 or text.style.description_width == "initial"
    capsys.readouterr()
    slider.value = 0.2  # a redraw: outside a kernel the Output shows it on stdout
    assert "Figure" in capsys.readouterr().out
    text.value = "1, oops"
    assert "Cannot draw this: 'oops' is not a number" in capsys.readouterr().out
    assert out is box.children[1]


# --- alignments (notebook 00) ----------------------------------------------------------------
def test_alignment_matrices_link_each_target_word_to_at_most_one_source_word():
    for pair, (source, target, links) in ALIGNMENTS.items():
        m, src, tgt = alignment_matrix(pair)
        assert (src, tgt) == (source, target)
        assert m.shape == (len(target), len(source))
        assert set(m.unique().tolist()) <= {0.0, 1.0}
        assert (m.sum(dim=1) <= 1).all(), pair
        assert int(m.sum()) == len(links)


def test_alignment_french_swaps_adjective_and_noun():
    m, source, target = alignment_matrix("English → French")
    assert source[int(m[target.index("noir")].argmax())] == "black"
    assert source[int(m[target.index("chat")].argmax())] == "cat"


def test_alignment_view_draws_labelled_heatmap():
    fig = alignment_view("English → German")
    ax = fig.axes[0]
    m, source, target = alignment_matrix("English → German")
    np.testing.assert_allclose(ax.images[0].get_array(), m.numpy())
    assert ticks(ax.get_xticklabels()) == ["I", "have", "seen", "the", "film"]
    assert ticks(ax.get_yticklabels()) == ["ich", "habe", "den", "Film", "gesehen"]
    assert ax.get_xlabel() == "English (source)" and ax.get_ylabel() == "German (target)"
    assert "English → German" in ax.get_title()
    assert int(np.asarray(ax.images[0].get_array())[4].argmax()) == 2  # gesehen -> seen


def test_alignment_view_answers_unknown_pair_with_a_message():
    msg = alignment_view("English → Klingon")
    assert isinstance(msg, str)
    assert msg.startswith("Cannot draw this: unknown language pair 'English → Klingon'")
    assert "English → French" in msg


def test_alignment_widget_dropdown_redraws(capsys):
    box = alignment_widget()
    dropdown = box.children[0]
    assert list(dropdown.options) == list(ALIGNMENTS)
    capsys.readouterr()
    dropdown.value = "English → Japanese"
    assert "Figure" in capsys.readouterr().out
