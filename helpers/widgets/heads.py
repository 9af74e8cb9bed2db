"""Notebook 05: the head picker (one head's attention weights, or their mean)."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["head_heatmap_figure", "head_picker"]


def head_heatmap_figure(weights, head, tokens=None):
    """Heatmap of one head's weights from ``weights`` (num_heads, Lq, Lk); ``head`` is an index
    or "mean" (the average over heads)."""
    import torch

    from ..plots import attention_heatmap

    w = torch.as_tensor(weights).detach().cpu()
    if w.dim() != 3:
        raise ValueError(f"weights must have shape (num_heads, Lq, Lk), got {tuple(w.shape)}")
    if head == "mean":
        return attention_heatmap(w.mean(0), tokens, tokens, title=f"mean over {w.shape[0]} heads",
                                 vmax=1.0)
    if not isinstance(head, int) or not 0 <= head < w.shape[0]:
        raise ValueError(f"head must be an int in 0..{w.shape[0] - 1} or 'mean', got {head!r}")
    return attention_heatmap(w[head], tokens, tokens, title=f"head {head}", vmax=1.0)


def head_picker(weights, tokens=None):
    """Widget: pick a head (or their mean) and see its attention weights."""
    import ipywidgets as widgets

    options = [(f"head {h}", h) for h in range(len(weights))] + [("mean", "mean")]
    head = widgets.Dropdown(options=options, value=0, description="head")
    return ViewWidget(lambda head: head_heatmap_figure(weights, head, tokens), {"head": head},
                      about="the attention weights of one head, or their mean over heads")
