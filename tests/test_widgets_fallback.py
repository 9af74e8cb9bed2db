"""Every widget shows something without a kernel: its display bundle carries, besides the live
widget view, a PNG of its first state and a text that says what it is and how to make it live.
Also the shared shell (ViewWidget) and the views of notebooks 02 and 11 on input that used to give
NaN bars or a raw traceback."""

import base64

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from IPython.core.formatters import DisplayFormatter  # noqa: E402

from helpers import sinusoidal_positional_encoding  # noqa: E402
from helpers.widgets import (  # noqa: E402
    LIVE_HINT,
    ViewWidget,
    alignment_widget,
    cross_attention_widget,
    grad_norm_widget,
    head_picker,
    mask_explorer,
    online_softmax_view,
    online_softmax_widget,
    position_explorer,
    softmax_with_temperature,
    temperature_view,
    temperature_widget,
)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _bundle(obj) -> dict:
    """What IPython puts into the notebook when a cell ends with ``obj``."""
    data, _ = DisplayFormatter().format(obj)
    return data


def _weights(shape):
    return torch.softmax(torch.randn(*shape, generator=torch.Generator().manual_seed(0)), -1)


WIDGETS = {
    "alignment (00)": lambda: alignment_widget(),
    "temperature (02)": lambda: temperature_widget([2.0, 1.0, 0.5], ["a", "b", "c"]),
    "mask explorer (04)": lambda: mask_explorer(),
    "head picker (05)": lambda: head_picker(_weights((2, 3, 3)), ["a", "b", "c"]),
    "position explorer (06)": lambda: position_explorer(sinusoidal_positional_encoding(10, 8)),
    "gradient norms (07)": lambda: grad_norm_widget(2),
    "cross-attention (08)": lambda: cross_attention_widget([_weights((2, 3, 4))] * 2),
    "online softmax (11)": lambda: online_softmax_widget(torch.arange(6.0), 2),
}


@pytest.mark.parametrize("name", list(WIDGETS))
def test_widget_bundle_carries_a_png_of_its_first_state_and_a_text(name):
    w = WIDGETS[name]()
    data = _bundle(w)
    assert data[WIDGET_VIEW]["model_id"] == w.model_id  # JupyterLab and Colab show the live widget
    png = base64.b64decode(data["image/png"])
    assert png.startswith(PNG_MAGIC) and len(png) > 2000  # a real picture, not an empty one
    assert png == w.initial_png
    text = data["text/plain"]
    assert text.startswith("Interactive widget: ") and LIVE_HINT in text
    assert w.about in text and "VBox(" not in text
    plt.close("all")


def test_the_png_is_the_first_state_not_the_latest():
    w = temperature_widget([2.0, 1.0], temperature=1.0)
    first = w.initial_png
    w.controls["temperature"].value = 0.2
    assert base64.b64decode(_bundle(w)["image/png"]) == first
    assert w.result.axes[0].get_title().startswith("temperature 0.20")


def test_widgets_stay_standard_ipywidgets_controls():
    w = WIDGETS["cross-attention (08)"]()
    assert isinstance(w, ipywidgets.VBox) and w._model_name == "VBoxModel"
    row, out = w.children
    assert [type(c).__name__ for c in row.children] == ["Dropdown", "Dropdown"]
    assert isinstance(out, ipywidgets.Output)


def test_view_widget_redraws_and_keeps_the_last_result(capsys):
    calls = []

    def view(n, word):
        calls.append((n, word))
        return f"{word} x{n}"

    n = ipywidgets.IntSlider(value=1, min=0, max=5)
    word = ipywidgets.Text(value="hi")
    w = ViewWidget(view, {"n": n, "word": word}, about="a test", rows=[("n", "word")])
    assert calls == [(1, "hi")] and w.result == "hi x1"
    assert isinstance(w.children[0], ipywidgets.HBox) and w.children[1] is w.out
    n.value = 3
    word.value = "yo"
    assert calls[-1] == (3, "yo") and w.result == "yo x3"
    assert "yo x3" in capsys.readouterr().out  # outside a kernel the Output prints
    bundle = _bundle(w)
    assert "image/png" not in bundle  # a message has no picture: the text carries it instead
    assert bundle["text/plain"].endswith("\nhi x1")


def test_after_an_invalid_combination_every_control_redraws_once_the_values_are_valid_again(capsys):
    """A view that refuses a combination (a message, or an exception) never leaves a control dead:
    once the values are valid again, a change of any control draws its new value."""
    def view(heads, kv_heads, layers):
        if heads % kv_heads:
            return f"Cannot draw this: {heads} heads are not a multiple of {kv_heads} kv heads"
        if layers == 13:
            raise ValueError("13 layers are refused")
        return f"heads={heads} kv={kv_heads} layers={layers}"

    controls = {"heads": ipywidgets.IntSlider(value=32, min=1, max=64),
                "kv_heads": ipywidgets.IntSlider(value=8, min=1, max=16),
                "layers": ipywidgets.IntSlider(value=4, min=1, max=32)}
    w = ViewWidget(view, controls, about="a test")
    controls["heads"].value = 35
    assert w.result.startswith("Cannot draw this: 35 heads")
    controls["layers"].value = 5  # still invalid: still the message
    assert w.result.startswith("Cannot draw this: 35 heads")
    controls["heads"].value = 40  # valid again
    assert w.result == "heads=40 kv=8 layers=5"
    controls["layers"].value = 13
    assert w.result == "Cannot draw this: 13 layers are refused"
    for name, value, expected in (("layers", 6, "heads=40 kv=8 layers=6"), ("kv_heads", 4, "heads=40 kv=4 layers=6"),
                                  ("heads", 48, "heads=48 kv=4 layers=6")):
        controls[name].value = value
        assert w.result == expected, (name, w.result)
    capsys.readouterr()


@pytest.mark.parametrize("name", list(WIDGETS))
def test_labels_are_not_cut(name):
    """ipywidgets' default label width cuts "temperature" to "temperat…": every labelled control
    of every widget gets the room its label needs."""
    widget = WIDGETS[name]()
    labelled = [c for c in widget.controls.values() if getattr(c, "description", "")]
    assert labelled
    assert all(c.style.description_width == "initial" for c in labelled), name
    plt.close("all")


def test_view_widget_refuses_a_layout_that_loses_a_control():
    with pytest.raises(ValueError, match="rows must place every control once"):
        ViewWidget(lambda a, b: "x", {"a": ipywidgets.Text(), "b": ipywidgets.Text()}, "t",
                   rows=["a"])


# ---- the temperature view on input that gave NaN bars or a raw TypeError ------------
def test_temperature_view_of_huge_finite_scores_draws_weights_not_nan():
    fig = temperature_view("1e39, 0", 1.0)
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert heights == pytest.approx([1.0, 0.0])
    w = softmax_with_temperature([1e39, 1e39, -1e39], 0.1)
    assert torch.isfinite(w).all()
    torch.testing.assert_close(w, torch.tensor([0.5, 0.5, 0.0]))


@pytest.mark.parametrize("scores", [None, 3.5, {"a": 1}, ["a", "b"]])
def test_temperature_view_of_scores_that_are_not_numbers_is_a_message(scores):
    msg = temperature_view(scores, 1.0)
    assert isinstance(msg, str) and msg.startswith("Cannot draw this: scores must be")
    assert plt.get_fignums() == []


def test_softmax_with_temperature_refuses_non_finite_tensor_scores():
    with pytest.raises(ValueError, match="scores must be finite numbers"):
        softmax_with_temperature(torch.tensor([1.0, float("inf")]), 1.0)


# ---- notebook 11: the online-softmax view ------------------------------------------------------
def test_online_softmax_view_draws_one_span_per_block_and_refuses_bad_sizes():
    x = torch.tensor([1.0, 3.0, 2.0, 0.0, 5.0])
    fig = online_softmax_view(x, 2)
    top, bottom = fig.axes
    np.testing.assert_allclose([p.get_height() for p in bottom.containers[0]], [
        float(torch.exp(x[:2] - 3).sum()),
        float(torch.exp(x[:4] - 3).sum()),
        float(torch.exp(x - 5).sum())], rtol=1e-6)
    assert "3 blocks" in fig.texts[0].get_text()
    assert online_softmax_view(x, 0) == "Cannot draw this: block_size must be a whole number in 1..5, got 0"
    assert "got 6" in online_softmax_view(x, 6)
    w = online_softmax_widget(x, 2)
    w.controls["block_size"].value = 5
    assert "1 blocks" in w.result.texts[0].get_text()


def test_a_static_renderer_shows_the_png_of_a_stored_widget_output():
    """nbconvert's HTML export (what nbviewer uses) of a saved widget output without widget state
    shows the PNG, not the widget's repr."""
    import nbformat
    from nbconvert import HTMLExporter

    data = _bundle(WIDGETS["alignment (00)"]())
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("alignment_widget()", outputs=[
        nbformat.v4.new_output("display_data", data=data)])]
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert f"data:image/png;base64,{data['image/png'][:60]}" in html
    assert "VBox(" not in html
