"""Plots shared by the notebooks. Colour maps are colour-blind safe (viridis / cividis);
figures have a white background so that they stay legible in dark themes too."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import torch

__all__ = ["attention_heatmap", "use_tutorial_style", "weight_bars"]

STYLE = {
    "figure.dpi": 80,  # small PNGs keep the notebooks under 1 MB
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "image.cmap": "viridis",
    "axes.grid": False,
    "font.size": 10,
}


def use_tutorial_style() -> None:
    """Apply the tutorial's matplotlib defaults (call once at the top of a notebook)."""
    mpl.rcParams.update(STYLE)


def _as_2d(weights) -> torch.Tensor:
    w = torch.as_tensor(weights).detach().to("cpu", torch.float32)
    if w.dim() != 2:
        raise ValueError(f"attention_heatmap expects a 2-D (Lq, Lk) matrix, got shape {tuple(w.shape)}")
    return w


def attention_heatmap(
    weights,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    ax: plt.Axes | None = None,
    title: str | None = None,
    annotate: bool | None = None,
    cmap: str = "viridis",
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
    colorbar: bool = True,
    vmin: float | None = 0.0,
    vmax: float | None = None,
) -> plt.Figure:
    """Heatmap of a (Lq, Lk) attention matrix: rows are queries, columns are keys.

    Tick labels are the tokens; small matrices are annotated with their values (2 decimals).
    Returns the Figure (the one of ``ax`` when given).
    """
    w = _as_2d(weights)
    lq, lk = w.shape
    for name, labels, n in (("x_labels", x_labels, lk), ("y_labels", y_labels, lq)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{name} has {len(labels)} labels but the matrix {tuple(w.shape)} needs {n}")
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.0 + 0.55 * lk, 0.8 + 0.45 * lq) if lk <= 16 else (8, 6))
    fig = ax.figure
    im = ax.imshow(w.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(lk), list(x_labels) if x_labels is not None else range(lk),
                  rotation=90 if x_labels is not None and max(map(len, x_labels), default=0) > 2 else 0)
    ax.set_yticks(range(lq), list(y_labels) if y_labels is not None else range(lq))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = lq * lk <= 64
    if annotate:
        hi = float(w.max()) if vmax is None else vmax
        for i in range(lq):
            for j in range(lk):
                v = float(w[i, j])
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                        color="black" if v > 0.6 * hi else "white")
    if colorbar:
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return fig


def weight_bars(
    weights,
    labels: Sequence[str] | None = None,
    ax: plt.Axes | None = None,
    title: str | None = None,
    xlabel: str = "key (attended to)",
    ylabel: str = "attention weight",
    ylim: tuple[float, float] | None = (0.0, 1.0),
    annotate: bool = True,
    color: str = "#31688e",  # a viridis blue
) -> plt.Figure:
    """Bar chart of one row of attention weights (or any 1-D values): one bar per key.

    Bars are labelled with the tokens and, when ``annotate``, with their values (2 decimals).
    ``ylim=(0, 1)`` by default so that charts of weights can be compared by eye; pass ``None``
    for values outside [0, 1] (scores, for instance). Returns the Figure.
    """
    w = torch.as_tensor(weights).detach().to("cpu", torch.float32)
    if w.dim() != 1:
        raise ValueError(f"weight_bars expects a 1-D vector of weights, got shape {tuple(w.shape)}")
    n = w.shape[0]
    if labels is not None and len(labels) != n:
        raise ValueError(f"labels has {len(labels)} entries but there are {n} weights")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.2 + 0.6 * max(n, 3), 2.6))
    fig = ax.figure
    names = list(labels) if labels is not None else [str(i) for i in range(n)]
    bars = ax.bar(range(n), w.numpy(), color=color)
    ax.set_xticks(range(n), names)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.axhline(0.0, color="black", linewidth=0.8)
    if title:
        ax.set_title(title)
    if annotate:
        ax.bar_label(bars, labels=[f"{float(v):.2f}" for v in w], fontsize=8, padding=2)
    return fig
