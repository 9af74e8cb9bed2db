"""Notebook 14: the induction-head explorer (one head's pattern and the loss at each position)."""

from __future__ import annotations

import math

import torch

from .._checks import int_at_least
from ..attention import causal_mask
from ..data.repeated import repeated_tokens
from ..induction import AttentionOnlyTransformer, per_position_loss
from ._shell import ViewWidget

__all__ = ["induction_view", "induction_widget"]


def induction_view(model: AttentionOnlyTransformer, layer: int, head: int, seed: int = 0, n: int = 12):
    """One new repeated sequence (period n, drawn from ``seed``): the chosen head's attention
    pattern (masked cells hatched) beside the model's loss at each position t, predicting token
    t + 1 (blue: first half, grey: t = n - 1, orange: repeated half). Returns a Figure;
    ``helpers.widgets.induction_widget`` puts it behind controls."""
    import matplotlib.pyplot as plt

    from ..plots import attention_heatmap

    if not isinstance(layer, int) or not 0 <= layer < len(model.layers):
        raise ValueError(f"induction_view: layer must be an int in 0..{len(model.layers) - 1}, got {layer!r}")
    if not isinstance(head, int) or not 0 <= head < model.num_heads:
        raise ValueError(f"induction_view: head must be an int in 0..{model.num_heads - 1}, got {head!r}")
    int_at_least("induction_view", "seed", seed, 0)
    ids = repeated_tokens(1, n, model.vocab_size, torch.Generator().manual_seed(seed))  # (1, 2n)
    ids = ids.to(next(model.parameters()).device)
    loss = per_position_loss(model, ids).cpu()  # (2n-1,), runs the model on ids[:, :-1]
    with torch.no_grad():
        model(ids)
    weights = model.patterns()[layer][0, head].cpu()  # (2n, 2n)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.15, 1]})
    labels = [str(t) for t in ids[0].tolist()]
    attention_heatmap(weights, labels, labels, ax=ax0, vmin=0.0, vmax=1.0, annotate=False,
                      title=f"layer {layer}, head {head}", mask=causal_mask(2 * n),
                      colorbar_label="attention weight")
    # positions t = 0 .. 2n-2, each predicting token t + 1: the first half (t < n - 1), position
    # n - 1 (whose next token, the first repeated one, has no earlier occurrence to copy from) and
    # the repeated half (t >= n), as in notebook 14's sections 1-3
    colours = ["C0"] * (n - 1) + ["0.6"] + ["C1"] * (n - 1)
    ax1.bar(range(2 * n - 1), loss.numpy(), color=colours)
    ax1.axhline(math.log(model.vocab_size), color="grey", ls=":", lw=1)
    ax1.set_xlabel("position t (predicting token t + 1)")
    ax1.set_ylabel("loss (nats)")
    ax1.set_title("loss at each position")
    fig.tight_layout()
    return fig


def induction_widget(model, n: int = 12):
    """Widget: pick a layer, a head and a sequence seed; see the head's attention pattern on a new
    repeated sequence and the model's loss at each position (``induction_view``)."""
    import ipywidgets as widgets

    controls = {
        "layer": widgets.Dropdown(options=list(range(len(model.layers))),
                                  value=len(model.layers) - 1, description="layer"),
        "head": widgets.Dropdown(options=list(range(model.num_heads)), value=0, description="head"),
        "seed": widgets.IntSlider(value=0, min=0, max=20, description="sequence"),
    }
    return ViewWidget(lambda layer, head, seed: induction_view(model, layer, head, seed, n), controls,
                      about="one head's attention pattern on a repeated random sequence, and the "
                            "loss at each position", rows=[("layer", "head"), "seed"])
