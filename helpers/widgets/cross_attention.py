"""Notebook 08: cross-attention weights, with a layer and head picker."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["cross_attention_view", "cross_attention_widget"]


def cross_attention_view(weights, layer, head, src_tokens=None, tgt_tokens=None, ax=None):
    """Heatmap of cross-attention weights: ``weights`` is a list (one per decoder layer) of
    (num_heads, Lt, Ls) tensors; ``head`` is an index or "mean". Rows are target (decoder)
    positions, columns source (encoder) positions. A Figure, or a message for a bad choice."""
    import torch

    from ..plots import attention_heatmap

    n_layers = len(weights)
    if not isinstance(layer, int) or not 0 <= layer < n_layers:
        return f"Cannot draw this: layer must be in 0..{n_layers - 1}, got {layer!r}"
    w = torch.as_tensor(weights[layer]).detach().cpu()
    if w.dim() != 3:
        return f"Cannot draw this: each layer's weights must be (num_heads, Lt, Ls), got {tuple(w.shape)}"
    if head == "mean":
        w2, name = w.mean(0), f"mean of {w.shape[0]} heads"
    elif isinstance(head, int) and 0 <= head < w.shape[0]:
        w2, name = w[head], f"head {head}"
    else:
        return f"Cannot draw this: head must be in 0..{w.shape[0] - 1} or 'mean', got {head!r}"
    lt, ls = w2.shape
    return attention_heatmap(w2, src_tokens, tgt_tokens, ax=ax, vmax=1.0,
                             xlabel=f"source position (encoder memory, $L_s$ = {ls})",
                             ylabel=f"target position (decoder, $L_t$ = {lt})",
                             title=f"cross-attention, layer {layer}, {name}")


def cross_attention_widget(weights, src_tokens=None, tgt_tokens=None):
    """Widget: Dropdowns for the decoder layer and the head (or their mean)."""
    import ipywidgets as widgets

    n_heads = len(weights[0])
    layer = widgets.Dropdown(options=[(f"layer {i}", i) for i in range(len(weights))], value=0,
                             description="layer")
    head = widgets.Dropdown(options=[(f"head {h}", h) for h in range(n_heads)] + [("mean", "mean")],
                            value="mean", description="head")
    return ViewWidget(
        lambda layer, head: cross_attention_view(weights, layer, head, src_tokens, tgt_tokens),
        {"layer": layer, "head": head}, rows=[("layer", "head")],
        about="cross-attention weights of one decoder layer and head")
