"""Notebook 04: the mask explorer (mask kind, sequence length, padding)."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["MASK_KINDS", "build_mask", "mask_explorer", "mask_explorer_figure", "mask_explorer_view"]

MASK_KINDS = ("none", "causal", "padding", "causal + padding")


def build_mask(kind: str, length: int, n_pad: int = 0):
    """(length, length) boolean mask, True = may attend, for one sequence whose last ``n_pad``
    tokens are padding. ``kind`` is one of MASK_KINDS."""
    import torch

    from .._checks import int_at_least

    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}, got {kind!r}")
    int_at_least("build_mask", "length", length, 1)
    int_at_least("build_mask", "n_pad", n_pad, 0)
    if not 0 <= n_pad <= length:
        raise ValueError(f"n_pad must be between 0 and length={length}, got {n_pad}")
    mask = torch.ones(length, length, dtype=torch.bool)
    if "causal" in kind:
        mask = mask.tril()
    if "padding" in kind:
        mask[:, length - n_pad :] = False  # nobody attends to a padding key
    return mask


def mask_explorer_figure(kind: str, length: int = 6, n_pad: int = 2, seed: int = 0):
    """Two panels: the mask (1 = may attend) and the attention weights it produces for random
    queries and keys (seeded), masked cells hatched. Rows with nothing to attend to get all-zero
    weights."""
    import matplotlib.pyplot as plt
    import torch

    from ..attention import scaled_dot_product_attention
    from ..plots import attention_heatmap

    mask = build_mask(kind, length, n_pad)
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(length, 4, generator=g), torch.randn(length, 4, generator=g)  # (L, 4)
    _, weights = scaled_dot_product_attention(q, k, k, mask=mask)  # (L, L)
    labels = [f"t{i}" if i < length - n_pad or "padding" not in kind else "PAD" for i in range(length)]
    fig, (ax_m, ax_w) = plt.subplots(1, 2, figsize=(3.2 + 1.1 * length, 1.4 + 0.45 * length),
                                     layout="constrained")
    attention_heatmap(mask.float(), labels, labels, ax=ax_m, title=f"mask: {kind} (1 = may attend)",
                      cmap="cividis", vmax=1.0, colorbar_label="1 = may attend", annotate=False)
    attention_heatmap(weights, labels, labels, ax=ax_w, title="attention weights", vmax=1.0,
                      mask=mask, colorbar_label="weight")
    return fig


def mask_explorer_view(kind: str, length: int, n_pad: int):
    """What the mask explorer shows: the two panels, or a message when ``n_pad > length``."""
    try:
        if n_pad > length:
            return f"n_pad={n_pad} is larger than the sequence length {length}: lower it."
        return mask_explorer_figure(kind, length, n_pad)
    except (ValueError, TypeError) as err:
        return f"Cannot draw this: {err}"


def mask_explorer(length: int = 6, n_pad: int = 2):
    """Widget: choose the mask kind, the sequence length and how many tokens are padding."""
    import ipywidgets as widgets

    controls = {
        "kind": widgets.Dropdown(options=MASK_KINDS, value="causal", description="mask"),
        "length": widgets.IntSlider(value=length, min=1, max=10, description="length"),
        "n_pad": widgets.IntSlider(value=n_pad, min=0, max=10, description="padding"),
    }
    return ViewWidget(mask_explorer_view, controls,
                      about="a mask (causal, padding or both) and the attention weights it allows")
