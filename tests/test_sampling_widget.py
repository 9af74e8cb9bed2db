"""Notebook 12's sampling widget (its pure view, helpers.widgets.sampling), its figures
(helpers.plots.gpt) and sample_sentences (helpers.gpt)."""

import matplotlib.pyplot as plt
import pytest
import torch

from helpers import GPT
from helpers.data import toy_language as tl
from helpers.gpt import sample_sentences
from helpers.plots import loss_vs_entropy_plot, quality_diversity_plot
from helpers.widgets import (
    SamplingView,
    sampling_figure,
    sampling_view,
    sampling_widget,
    sampling_widget_view,
)


def model():
    torch.manual_seed(0)
    return GPT(len(tl.VOCAB), d_model=16, num_heads=2, num_layers=1, d_ff=32, max_len=32).eval()


def test_sample_sentences_keep_prompt_and_stop_at_full_stop():
    texts = sample_sentences(model(), 5, temperature=1.0, prompt="the big cat", seed=1)
    assert len(texts) == 5
    for t in texts:
        assert t.startswith("the big cat")
        assert t.count(".") <= 1 and (t.endswith(".") or "." not in t)
    assert texts == sample_sentences(model(), 5, temperature=1.0, prompt="the big cat", seed=1)


def test_sampling_view_contents():
    view = sampling_view(model(), "The  cats", temperature=0.8, top_k=5, n=4, seed=0)
    assert isinstance(view, SamplingView) and view.prompt == "the cats"
    assert len(view.samples) == 4 and view.parses == [tl.is_sentence(s) for s in view.samples]
    assert int((view.probs > 0).sum()) == 5 and abs(float(view.probs.sum()) - 1) < 1e-5
    text = str(view)
    assert text.startswith(f"{sum(view.parses)} of 4 samples") and text.count("\n") == 4


def test_sampling_view_greedy_puts_all_mass_on_one_token():
    view = sampling_view(model(), "the", temperature=0.0, n=2)
    assert float(view.probs.max()) == 1.0 and view.samples[0] == view.samples[1]


def test_sampling_view_messages_for_bad_input():
    m = model()
    assert "unknown word" in sampling_view(m, "the elephant")
    assert "temperature" in sampling_view(m, "the", temperature=-1)
    assert "top-p" in sampling_view(m, "the", top_p=0.0)
    assert "without '.'" in sampling_view(m, "the cat sleeps.")
    assert "must be text" in sampling_view(m, 3)


def test_sampling_figure_draws_sorted_bars():
    view = sampling_view(model(), "the", temperature=1.0, top_k=4)
    fig = sampling_figure(view)
    ax = fig.axes[0]
    heights = [b.get_height() for b in ax.patches]
    assert len(heights) == 4 and heights == sorted(heights, reverse=True)
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks[0] == view.labels[int(view.probs.argmax())]
    assert ax.get_ylabel() == "probability" and ax.get_xlabel() == "next token"


def test_sampling_view_never_offers_pad():
    m = model()
    with torch.no_grad():
        m.lm_head.weight[0] += 3 * m.lm_head.weight[1]  # make <pad> likely for this model
    view = sampling_view(m, "the", temperature=2.0, n=20, seed=0)
    assert float(view.probs[0]) == 0.0 and not any("<pad>" in s for s in view.samples)


def test_loss_plot():
    fig = loss_vs_entropy_plot({"step": [1, 2, 3], "loss": [3.0, 2.0, 1.5]}, 1.42, 1.45)
    ax = fig.axes[0]
    assert list(ax.lines[0].get_ydata()) == [3.0, 2.0, 1.5]
    assert list(ax.lines[1].get_ydata()) == [1.42, 1.42]


def test_quality_diversity_plot_draws_parsed_shapes_under_the_grammars_ceiling():
    fig = quality_diversity_plot([0.1, 0.5, 2.0], [1.0, 1.0, 0.4], [13, 24, 19], "temperature $\\tau$", 24)
    left, right = fig.axes
    assert list(left.lines[0].get_ydata()) == [1.0, 1.0, 0.4]
    assert left.get_ylabel() == "share that parses" and left.get_xlabel() == "temperature $\\tau$"
    shapes, ceiling = right.lines
    assert list(shapes.get_ydata()) == [13, 24, 19] and shapes.get_label() == "shapes among parsed samples"
    assert list(ceiling.get_ydata()) == [24, 24] and ceiling.get_linestyle() == "--"  # a horizontal line
    assert ceiling.get_label() == "the grammar's 24 shapes"
    assert right.get_ylabel() == "shapes among parsed samples" and right.get_ylim()[1] > 24  # the ceiling in view
    legend = [t.get_text() for t in right.get_legend().get_texts()]
    assert legend == ["share that parses", "shapes among parsed samples", "the grammar's 24 shapes"]
    with pytest.raises(ValueError, match="one of each per value"):
        quality_diversity_plot([0.1, 0.5], [1.0], [13, 24], "top-p", 24)
    plt.close("all")


def test_widget_builds_and_redraws():
    w = sampling_widget(model(), "the cats")
    box, sliders, _ = w.children
    fig = sampling_widget_view(model(), "the cats", 1.0, 0, 1.0)
    assert "samples are sentences" in fig.axes[0].texts[0].get_text()
    assert len(fig.axes[1].patches) > 0  # the next-token bars
    assert "Type the start of ONE sentence" in sampling_widget_view(model(), "the cat .", 1.0, 0, 1.0)
    temp, k, p = sliders.children
    assert box.value == "the cats" and (temp.min, temp.max) == (0.0, 2.0)
    assert (k.min, k.max) == (0, len(tl.VOCAB)) and (p.min, p.max) == (0.05, 1.0)
    box.value = "the dog"  # the callbacks run the same view function (tested above)
    temp.value = 0.5


def test_accuracy_curves_plot():
    from helpers.plots import accuracy_curves_plot

    fig = accuracy_curves_plot({"encoder-decoder": ([100, 200], [0.1, 0.5]), "decoder-only": ([100, 200], [0.0, 0.6])},
                               xlabel="training compute (TFLOPs)", xscale=100)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["encoder-decoder", "decoder-only"]
    assert list(lines[1].get_xdata()) == [1.0, 2.0] and list(lines[1].get_ydata()) == [0.0, 0.6]
    assert ax.get_xlabel() == "training compute (TFLOPs)" and ax.get_ylim() == (0, 1.02)
    import pytest
    with pytest.raises(ValueError, match="1 accuracies for 2 points"):
        accuracy_curves_plot({"x": ([1, 2], [0.5])})
