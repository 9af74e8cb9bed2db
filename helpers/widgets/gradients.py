"""Notebook 07: post-LN vs pre-LN gradient norms per layer, with a depth slider."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["grad_norm_view", "grad_norm_widget"]


def grad_norm_view(depth: int, ax=None):
    """Per-layer gradient norms at initialisation (``helpers.layers.layer_grad_norms``) of a
    post-LN and a pre-LN encoder of ``depth`` layers: a Figure, or a message for a bad depth (at
    least 2: with one layer the top and the bottom layer, which section 7 compares, are the same)."""
    from ..layers import layer_grad_norms
    from ..plots import grad_norm_lines

    if not isinstance(depth, int) or not 2 <= depth <= 24:
        return f"Cannot draw this: depth must be a whole number of layers in 2..24, got {depth!r}"
    series = {"post-LN": layer_grad_norms(depth, norm_first=False),
              "pre-LN": layer_grad_norms(depth, norm_first=True)}
    return grad_norm_lines(series, ax=ax, ylabel=r"$\|\nabla W_2\|$ (feed-forward)",
                           title=f"{depth}-layer encoder at initialisation")


def grad_norm_widget(depth: int = 6):
    """Widget: an IntSlider over the encoder depth and the post-LN / pre-LN gradient norms."""
    import ipywidgets as widgets

    slider = widgets.IntSlider(value=depth, min=2, max=16, description="layers",
                               continuous_update=False)
    return ViewWidget(grad_norm_view, {"depth": slider},
                      about="gradient norms per layer of a post-LN and a pre-LN encoder")
