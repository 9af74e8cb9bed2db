"""Notebook 12: the sampling widget (a prompt, temperature, top-k and top-p; the samples, whether
each one parses, and the next-token distribution).

``sampling_view`` computes what the widget shows (a ``SamplingView``: samples, whether each parses,
the next-token distribution, or a message for bad input); ``sampling_figure`` draws the
distribution; ``sampling_widget_view`` lays both out; ``sampling_widget`` wires standard controls
to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..data import toy_language as tl
from ..gpt import sample_sentences
from ..sampling import filtered_probs
from ._shell import ViewWidget

__all__ = ["SamplingView", "sampling_figure", "sampling_view", "sampling_widget", "sampling_widget_view"]


@dataclass
class SamplingView:
    """What the sampling widget shows: the samples, whether each is a sentence, and the
    distribution of the next token after the prompt (``probs`` (|V|,), after the filters)."""

    prompt: str
    samples: list[str]
    parses: list[bool]
    probs: torch.Tensor
    labels: list[str]

    def __str__(self) -> str:
        ok = sum(self.parses)
        lines = [f"{ok} of {len(self.samples)} samples are sentences of the language"]
        lines += [f"  {'✓' if p else '✗'} {s}" for s, p in zip(self.samples, self.parses, strict=True)]
        return "\n".join(lines)


def sampling_view(model, prompt: str = "", temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None, n: int = 6, seed: int = 0) -> SamplingView | str:
    """Samples and the next-token distribution for a prompt; a message (str) for bad input."""
    if not isinstance(prompt, str):
        return f"The prompt must be text, got {type(prompt).__name__}"
    prompt = " ".join(prompt.lower().split())
    try:
        prompt_ids = [1] + tl.encode(prompt)
        if "." in tl.tokenize(prompt):
            return "Type the start of ONE sentence, without '.' (the model adds it)."
        device = next(model.parameters()).device
        with torch.no_grad():
            logits = model.eval()(torch.tensor([prompt_ids], device=device))[0, -1].float().cpu()  # (|V|,)
        logits[0] = float("-inf")  # <pad> is never generated (sample_sentences suppresses it)
        probs = filtered_probs(logits, temperature, top_k, top_p)
        samples = sample_sentences(model, n, temperature, top_k, top_p, prompt, seed)
    except ValueError as err:
        return f"Cannot sample: {err}"
    parses = [tl.is_sentence(s) for s in samples]
    return SamplingView(prompt, samples, parses, probs, list(tl.VOCAB))


def sampling_figure(view: SamplingView, top: int = 12, ax=None):
    """Bars of the ``top`` most probable next tokens of a ``SamplingView``."""
    import matplotlib.pyplot as plt

    from ..plots import weight_bars

    p, idx = view.probs.sort(descending=True)
    keep = min(top, int((p > 0).sum()) or 1)
    labels = [view.labels[i] for i in idx[:keep].tolist()]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 2.8))
    weight_bars(p[:keep], labels, ax=ax, xlabel="next token", ylabel="probability",
                title=f"next token after '. {view.prompt}'".replace("  ", " "))
    return ax.figure


def sampling_widget_view(model, prompt: str, temperature: float, top_k: int, top_p: float):
    """What the widget shows: a Figure with the samples (✓ = a sentence of the language) beside the
    bars of the next-token distribution, or a message (str) for a prompt the model cannot read.
    ``top_k = 0`` and ``top_p >= 1`` switch those filters off."""
    import matplotlib.pyplot as plt

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
