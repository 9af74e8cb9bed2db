"""Notebook 12: the sampling widget (a prompt, temperature, top-k and top-p; the samples, whether
each one parses, and the next-token distribution)."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["sampling_widget", "sampling_widget_view"]


def sampling_widget_view(model, prompt: str, temperature: float, top_k: int, top_p: float):
    """What the widget shows: a Figure with the samples (✓ = a sentence of the language) beside the
    bars of the next-token distribution, or a message (str) for a prompt the model cannot read.
    ``top_k = 0`` and ``top_p >= 1`` switch those filters off."""
    import matplotlib.pyplot as plt

    from ..gpt_widgets import SamplingView, sampling_figure, sampling_view

    view = sampling_view(model, prompt, temperature, top_k or None, None if top_p >= 1.0 else top_p)
    if not isinstance(view, SamplingView):
        return view
    fig, (ax_text, ax_bars) = plt.subplots(1, 2, figsize=(12, 3.2), gridspec_kw={"width_ratios": [1, 1.1]})
    ax_text.axis("off")
    ax_text.text(0.0, 1.0, str(view), va="top", ha="left", family="DejaVu Sans Mono", fontsize=9,
                 transform=ax_text.transAxes)
    sampling_figure(view, ax=ax_bars)
    fig.tight_layout()
    return fig


def sampling_widget(model, prompt: str = "the big cat", temperature: float = 1.0):
    """Text box for the prompt, sliders for the temperature, top-k (0 = off) and top-p."""
    import ipywidgets as widgets

    from .. import toy_language as tl

    controls = {
        "prompt": widgets.Text(value=prompt, description="prompt", continuous_update=False),
        "temperature": widgets.FloatSlider(value=temperature, min=0.0, max=2.0, step=0.1,
                                           description="temperature"),
        "top_k": widgets.IntSlider(value=0, min=0, max=len(tl.VOCAB), description="top-k (0=off)"),
        "top_p": widgets.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.05, description="top-p"),
    }
    return ViewWidget(lambda **v: sampling_widget_view(model, **v), controls,
                      about="samples of the tiny GPT for a prompt, whether each one parses, and the "
                            "next-token distribution", rows=["prompt", ("temperature", "top_k", "top_p")])
