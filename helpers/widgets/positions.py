"""Notebook 06: the position / dimension explorer of a positional-encoding table."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["position_dimension_figure", "position_explorer"]


def position_dimension_figure(pe, position: int, dimension: int):
    """Three panels for a positional-encoding table ``pe`` (max_len, d_model): the table with the
    chosen position (row) and dimension (column) outlined; the chosen dimension along every
    position (a wave); the vector of the chosen position (bars)."""
    import matplotlib.pyplot as plt
    import torch

    pe = torch.as_tensor(pe).detach().cpu()
    max_len, d_model = pe.shape
    if not 0 <= position < max_len:
        raise ValueError(f"position must be in 0..{max_len - 1}, got {position}")
    if not 0 <= dimension < d_model:
        raise ValueError(f"dimension must be in 0..{d_model - 1}, got {dimension}")
    # 8 inches wide, the notebook's column, so that 8-pt text shows at 8 pt: the table on top, the
    # wave and the bars below it
    fig = plt.figure(figsize=(8, 5.6), layout="constrained")
    grid = fig.add_gridspec(2, 2)
    ax_t, ax_c, ax_r = fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
    im = ax_t.imshow(pe.numpy(), cmap="viridis", aspect="auto", vmin=-1, vmax=1)
    ax_t.axhline(position, color="white", linewidth=1.5)
    ax_t.axvline(dimension, color="orange", linewidth=1.5)
    ax_t.set(xlabel="dimension", ylabel="position", title="PE table")
    fig.colorbar(im, ax=ax_t, fraction=0.046, pad=0.04, label="value")
    kind = "sin" if dimension % 2 == 0 else "cos"
    ax_c.plot(range(max_len), pe[:, dimension].numpy(), color="#31688e")
    ax_c.plot([position], [float(pe[position, dimension])], "o", color="orange")
    ax_c.set(xlabel="position", ylabel="value", ylim=(-1.1, 1.1),
             title=f"dimension {dimension} ({kind}) over positions")
    ax_r.bar(range(d_model), pe[position].numpy(), color="#35b779")
    ax_r.set(xlabel="dimension", ylabel="value", ylim=(-1.1, 1.1), title=f"vector of position {position}")
    return fig


def position_explorer(pe):
    """Widget: sliders over position and dimension of a positional-encoding table (max_len, d)."""
    import ipywidgets as widgets

    max_len, d_model = pe.shape
    controls = {
        "position": widgets.IntSlider(value=0, min=0, max=max_len - 1, description="position"),
        "dimension": widgets.IntSlider(value=0, min=0, max=d_model - 1, description="dimension"),
    }
    return ViewWidget(lambda position, dimension: position_dimension_figure(pe, position, dimension),
                      controls, about="one position's vector and one dimension's wave in the "
                      "positional-encoding table")
