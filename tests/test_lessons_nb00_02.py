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


# --- notebook 00: what moved out of its lesson cells, and what keeps it true to the repository ---
def _markdown(name: str) -> str:
    from _repo import ROOT, load, source

    nb = load(ROOT / "notebooks" / f"{name}.ipynb")
    return "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")


def _table_after(text: str, heading: str) -> list[str]:
    """The rows of the first markdown table after ``heading``."""
    lines = text[text.index(heading):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line.strip())
    return rows


def test_nb00_roadmap_lists_every_notebook():
    from _repo import NOTEBOOKS

    roadmap = _markdown("00_start_here").split("## 4. The roadmap")[1].split("## 5.")[0]
    missing = [p.stem for p in NOTEBOOKS if f"`{p.stem}`" not in roadmap]
    assert missing == [], f"notebook 00's roadmap does not list {missing}"


def test_nb00_notation_table_is_contributings_table():
    from _repo import ROOT

    ours = _table_after(_markdown("00_start_here"), "## 5. One notation")
    theirs = _table_after((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"), "## One notation")
    assert ours == theirs


def test_nb00_widget_starts_on_another_pair_than_the_figure_above_it():
    """The widget's saved picture (its first state) must not repeat the static figure before it."""
    import re

    from _repo import ROOT, load, source

    code = "\n".join(source(c) for c in load(ROOT / "notebooks" / "00_start_here.ipynb")["cells"]
                     if c["cell_type"] == "code")
    figure = re.search(r'alignment_matrix\("([^"]+)"\)', code).group(1)
    widget = re.search(r'alignment_widget\("([^"]+)"\)', code).group(1)
    assert figure != widget


def test_nb00_appendix_rnn_loop_equals_torch_rnn():
    """The appendix steps an nn.RNNCell by hand: the same as nn.RNN with the cell's weights."""
    from notebook_code import notebook_definitions

    ns = notebook_definitions("00_start_here", "F", "d_model", "cell", "run_rnn")
    rnn = torch.nn.RNN(ns["d_model"], ns["d_model"], batch_first=True)
    rnn.load_state_dict({f"{n}_l0": p for n, p in ns["cell"].state_dict().items()})
    x = torch.randn(2, 16, ns["d_model"], generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(ns["run_rnn"](x), rnn(x)[0])


# --- notebook 02 ------------------------------------------------------------------------------------
def test_nb02_scaling_diagram_shows_as_many_keys_as_the_notebook_measures():
    import xml.etree.ElementTree as ET

    from _repo import ROOT

    svg = ET.parse(ROOT / "imgs" / "02_scaling.svg").getroot()
    ns = "{http://www.w3.org/2000/svg}"
    bars = [[r for r in g.iter(f"{ns}rect")] for g in svg.iter(f"{ns}g") if g.get("fill") in ("#b23b3b", "#1f7a3a")]
    assert [len(b) for b in bars] == [8, 8]  # notebook 02 draws one query against 8 keys
    title = next(t for t in svg.iter(f"{ns}text") if t.get("font-weight") == "bold")
    assert "eight keys" in title.text


def test_nb02_additive_score_takes_far_longer_than_the_dot_product():
    """Notebook 02 prints the two timings only (a loaded machine with two threads can make a 0.03 ms
    matrix product wait for a scheduler slice); the claim "far longer" is checked here, on one
    thread, at the notebook's sizes (L = 128, d_k = d_a = 64)."""
    from notebook_code import notebook_definitions

    ns = notebook_definitions("02_softmax_and_scaling", "additive_scores", "dot_scores", "median_time")
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(128, 64, generator=g), torch.randn(128, 64, generator=g)
    U_q, U_k, u = torch.randn(64, 64, generator=g) / 8, torch.randn(64, 64, generator=g) / 8, torch.randn(64, generator=g)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        t_add = ns["median_time"](ns["additive_scores"], q, k, U_q, U_k, u, repeats=15, best=True)
        t_dot = ns["median_time"](ns["dot_scores"], q, k, repeats=15, best=True)
    finally:
        torch.set_num_threads(threads)
    assert t_add > 3 * t_dot, f"additive {t_add * 1e3:.3f} ms, dot product {t_dot * 1e3:.3f} ms"


def _saturation_namespace():
    from notebook_code import notebook_definitions

    return notebook_definitions("02_softmax_and_scaling", "g", "gradient_stats", "saturation")


def test_nb02_saturation_prints_and_returns_the_share_and_gap_from_its_own_draws(capsys):
    """The Try it of section 5: the same numbers at every call (its own seed 0), the notebook's
    generator left as it was, and a printed line that says which case it measured, with the share's
    standard error over its 3,000 queries. The values at (8 keys, d_k = 1024) are those the
    notebook's Try it cell printed in its stored run (8 keys: a tenth of the time 128 keys take)."""
    ns = _saturation_namespace()
    before = ns["g"].get_state()
    share, gap = ns["saturation"](8, 1024)
    assert torch.equal(ns["g"].get_state(), before)
    assert (round(share, 4), round(gap, 4)) == (0.6080, 14.6094)
    assert capsys.readouterr().out == ("8 keys, d_k = 1024, unscaled: share with |dL/dq| < 1e-3 0.6080 "
                                       "± 0.0089 (standard error), median gap 14.6094\n")
    ns["gradient_stats"](64, False)  # the notebook's g moves on ...
    assert ns["saturation"](8, 1024) == (share, gap)  # ... the Try it does not
    share_scaled, _ = ns["saturation"](8, 1024, scaled=True)
    assert share_scaled == 0.0
    assert "8 keys, d_k = 1024, scaled: share" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    ((1, 1024), "n_keys must be a whole number >= 2 and d_k one >= 1, got 1 and 1024"),
    ((8, 0), "got 8 and 0"),
    (("8", 1024), "got '8' and 1024"),
    ((8, 1024.0), "got 8 and 1024.0"),
    ((True, 64), "got True and 64"),
    ((32, 16384), r"32 keys at d_k = 16384 need about 3\.5 GiB; try fewer keys or a smaller d_k"),
    ((32, 8192), r"32 keys at d_k = 8192 need about 1\.8 GiB; try fewer keys or a smaller d_k"),
])
def test_nb02_saturation_refuses_bad_sizes_with_a_message(args, message):
    ns = _saturation_namespace()
    with pytest.raises(ValueError, match=message):
        ns["saturation"](*args)


def test_nb02_saturation_takes_32_keys_at_d_k_4096_as_the_prose_says():
    """The prose says 32 keys at d_k = 4096 fit under the limit (about 1 GiB): checked without running them."""
    ns = _saturation_namespace()
    ns["gradient_stats"] = lambda d_k, scaled, n_keys: {"q": torch.ones(3), "gap": torch.zeros(3)}
    assert ns["saturation"](32, 4096) == (0.0, 0.0)
