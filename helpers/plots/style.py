"""The one style of every figure in the tutorial, and the tick-label helpers the figures share.

- Crisp and legible: 100 dpi, tick labels of at least 8 pt, a white figure background (readable in
  JupyterLab's light and dark themes), colour-blind safe colour maps (viridis / cividis).
- Masked entries are drawn hatched grey (``MASK_STYLE``), unlike small weights.
- Long tick labels are shortened and rotated, and crowded ones thinned, so that none overlap.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

__all__ = ["MASK_STYLE", "MIN_FONT_PT", "STYLE", "use_tutorial_style"]


MIN_FONT_PT = 8  # no text in a figure is smaller than this


MASK_STYLE = {"facecolor": "0.82", "edgecolor": "0.45", "hatch": "///"}  # masked cells


MAX_LABEL_CHARS = 12  # longer tick labels are shortened with "…"


STYLE = {
    "figure.dpi": 100,  # crisp on a laptop screen; the notebooks stay well under 1 MB
    "savefig.dpi": "figure",
    "figure.facecolor": "white",
    "figure.edgecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.edgecolor": "white",
    "axes.edgecolor": "black",
    "axes.labelcolor": "black",
    "text.color": "black",
    "xtick.color": "black",
    "ytick.color": "black",
    "image.cmap": "viridis",
    "axes.grid": False,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "figure.titlesize": 12,
    "hatch.linewidth": 0.8,
}


def use_tutorial_style() -> None:
    """Apply the tutorial's matplotlib defaults (call once at the top of a notebook)."""
    mpl.rcParams.update(STYLE)


def _short(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tick_texts(labels, n: int, name: str, fn: str, shape: tuple | None = None) -> list[str]:
    """Tick labels as short strings: numbers are written with str(), a str gives one label per
    character, a label longer than MAX_LABEL_CHARS is cut with "…"."""
    if labels is None:
        return [str(i) for i in range(n)]
    try:  # a str gives one label per character
        labels = list(labels)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be a sequence of labels, got "
                        f"{type(labels).__name__}") from None
    if len(labels) != n:
        what = f"the matrix {tuple(shape)}" if shape is not None else "the matrix"
        raise ValueError(f"{name} has {len(labels)} labels but {what} needs {n}")
    return [_short(str(t)) for t in labels]


def _fit_tick_labels(*axes: plt.Axes, margin: float = 0.85) -> None:
    """Rotate x tick labels that are wider than their cell, and show only every k-th label where
    even rotated ones would touch (measured after a layout pass, so that no two labels overlap)."""
    if not axes:
        return
    axes[0].figure.draw_without_rendering()  # runs the layout engine, if any; sizes the text
    for ax in axes:
        box = ax.get_window_extent()
        for axis, size in ((ax.xaxis, box.width), (ax.yaxis, box.height)):
            ticks = [t for t in axis.get_ticklabels() if t.get_text()]
            if not ticks:
                continue
            cell = margin * size / len(ticks)
            extents = [t.get_window_extent() for t in ticks]
            if axis is ax.xaxis and max(e.width for e in extents) > cell:
                for t in ticks:
                    t.set_rotation(90)
            along = max(e.height for e in extents) if axis is ax.yaxis or ticks[0].get_rotation() \
                else max(e.width for e in extents)
            step = int(np.ceil(along / max(cell, 1e-6)))
            if step > 1:
                for i, t in enumerate(ticks):
                    t.set_visible(i % step == 0)
