"""Notebook 11: online softmax block by block, with a block-size slider."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["online_softmax_view", "online_softmax_widget"]


def online_softmax_view(x, block_size: int):
    """The figure of ``helpers.plots.online_softmax_figure(x, block_size)``, or a message for a
    block size outside 1..len(x)."""
    import torch

    from ..plots import online_softmax_figure

    n = torch.as_tensor(x).numel()
    if isinstance(block_size, bool) or not isinstance(block_size, int) or not 1 <= block_size <= n:
        return f"Cannot draw this: block_size must be a whole number in 1..{n}, got {block_size!r}"
    return online_softmax_figure(x, block_size)


def online_softmax_widget(x, block_size: int = 3):
    """Widget: an IntSlider over the block size (1..len(x)) and the online-softmax figure."""
    import ipywidgets as widgets
    import torch

    n = torch.as_tensor(x).numel()
    slider = widgets.IntSlider(value=block_size, min=1, max=n, description="block_size")
    return ViewWidget(lambda block_size: online_softmax_view(x, block_size),
                      {"block_size": slider},
                      about="the online softmax, block by block: running max and running sum")
