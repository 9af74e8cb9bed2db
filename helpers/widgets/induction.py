"""Notebook 14: the induction-head explorer (one head's pattern and the loss at each position)."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["induction_widget"]


def induction_widget(model, n: int = 12):
    """Widget: pick a layer, a head and a sequence seed; see the head's attention pattern on a new
    repeated sequence and the model's loss at each position (``helpers.induction.induction_view``)."""
    import ipywidgets as widgets

    from ..induction import induction_view

    controls = {
        "layer": widgets.Dropdown(options=list(range(len(model.layers))),
                                  value=len(model.layers) - 1, description="layer"),
        "head": widgets.Dropdown(options=list(range(model.num_heads)), value=0, description="head"),
        "seed": widgets.IntSlider(value=0, min=0, max=20, description="sequence"),
    }
    return ViewWidget(lambda layer, head, seed: induction_view(model, layer, head, seed, n), controls,
                      about="one head's attention pattern on a repeated random sequence, and the "
                            "loss at each position", rows=[("layer", "head"), "seed"])
