"""What notebooks 00 and 02 used to check in lesson cells about their widgets' view functions,
now here: the lessons assert what a learner should believe, the tests what the code must do."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.widgets import alignment_view, temperature_view  # noqa: E402

TOKENS = ["the", "big", "cat", "chased", "a", "mouse"]
CAT_SCORES = torch.tensor([0.0, 0.5, 1.25, 0.1, 0.0, 0.6])  # notebook 02's scores of "cat"


def test_nb00_alignment_view_draws_the_german_pair():
    fig = alignment_view("English → German")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["I", "have", "seen", "the", "film"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ich", "habe", "den", "Film", "gesehen"]
    plt.close(fig)


def test_nb00_alignment_view_answers_an_unknown_pair_with_a_message():
    msg = alignment_view("English → Klingon")
    assert isinstance(msg, str)
    assert msg.startswith("Cannot draw this: unknown language pair 'English → Klingon'")
    assert "English → French" in msg


@pytest.mark.parametrize(("tau", "tallest", "title"), [
    (0.1, 0.9979, "temperature 0.10: largest weight 1.00"),
    (10.0, 0.1811, "temperature 10.00: largest weight 0.18"),
])
def test_nb02_temperature_view_bars_are_the_weights(tau, tallest, title):
    fig = temperature_view(CAT_SCORES, tau, TOKENS)
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    assert max(heights) == pytest.approx(tallest, abs=1e-4)
    assert sum(heights) == pytest.approx(1.0, abs=1e-5)
    assert fig.axes[0].get_title() == title
    plt.close(fig)


@pytest.mark.parametrize(("args", "message"), [
    ((CAT_SCORES, 0.0, TOKENS), "Cannot draw this: temperature must be a number > 0, got 0.0"),
    (("2, 1, many", 1.0), "Cannot draw this: 'many' is not a number: type numbers separated by "
                          "commas, e.g. 2, 1, 0.5, -1"),
])
def test_nb02_temperature_view_answers_bad_input_with_a_message(args, message):
    assert temperature_view(*args) == message
