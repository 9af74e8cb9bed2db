"""Figures of training (notebooks 07 and 10): gradient norms per layer, loss and accuracy curves,
the learning-rate schedule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from .style import _short

__all__ = ["grad_norm_lines", "lr_schedule_plot", "training_curves"]


# --- Notebook 07: gradient norms per layer, post-LN vs pre-LN --------------------------------
LINE_STYLES = {"post-LN": ("#440154", "o-"), "pre-LN": ("#21918c", "s--")}  # viridis ends


def grad_norm_lines(
    series: dict[str, Sequence[float]],
    x: Sequence[float] | None = None,
    xlabel: str = "layer (1 = nearest the input)",
    ylabel: str = "gradient norm",
    title: str | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """One line per entry of ``series`` ({label: values}) against ``x`` (default 1..N).

    Labels "post-LN" and "pre-LN" get fixed colours and markers (also told apart without colour).
    Returns the Figure.
    """
    if not isinstance(series, Mapping) or not series:
        raise ValueError(f"grad_norm_lines: series must be a non-empty dict {{label: values}}, "
                         f"got {_short(repr(series), 60)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.2))
    fig = ax.figure
    for label, values in series.items():
        values = [float(v) for v in values]
        xs = list(x) if x is not None else list(range(1, len(values) + 1))
        if len(xs) != len(values):
            raise ValueError(f"series {label!r} has {len(values)} values but x has {len(xs)}")
        colour, fmt = LINE_STYLES.get(label, (None, "o-"))
        ax.plot(xs, values, fmt, color=colour, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    _whole_number_ticks(ax, x if x is not None else range(1, max(len(v) for v in series.values()) + 1))
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


def _whole_number_ticks(ax: plt.Axes, xs) -> None:
    """Layers and depths are whole numbers: tick exactly the values drawn (up to 16 of them),
    else whole numbers only, never "2.5 layers"."""
    values = sorted({float(v) for v in xs})
    if not values or any(v != int(v) for v in values):
        return
    if len(values) <= 16:
        ax.set_xticks([int(v) for v in values])
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


# --- Notebook 10: training curves, learning-rate schedule, cross-attention grid --------------
def training_curves(history: dict, ax=None) -> plt.Figure:
    """Two panels: training loss per logged step, and validation exact-match accuracy
    (``history["val_acc"]``, logged at ``history["step"]``) when present."""
    if not isinstance(history, Mapping):
        raise TypeError(f"training_curves: history must be the dict train_seq2seq returns, got "
                        f"{type(history).__name__}")
    missing = [k for k in ("step", "loss") if k not in history]
    if missing:
        raise ValueError(f"training_curves: history needs the keys 'step' and 'loss' (lists of "
                         f"equal length), missing {missing}; got keys {sorted(history)}")
    steps, loss = list(history["step"]), list(history["loss"])
    if not steps or len(steps) != len(loss):
        raise ValueError(f"training_curves: history['step'] and history['loss'] must be non-empty "
                         f"and of equal length, got {len(steps)} and {len(loss)}")
    has_acc = bool(history.get("val_acc"))
    if has_acc and len(history["val_acc"]) != len(steps):
        raise ValueError(f"training_curves: history['val_acc'] has {len(history['val_acc'])} "
                         f"values for {len(steps)} steps")
    if ax is None:
        fig, axes = plt.subplots(1, 2 if has_acc else 1, figsize=(9 if has_acc else 4.5, 3.2),
                                 squeeze=False)
        axes = list(axes[0])
    else:
        axes = list(np.ravel(ax)) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if len(axes) < (2 if has_acc else 1):
            raise ValueError(f"training_curves: ax must give {2 if has_acc else 1} Axes, got "
                             f"{len(axes)}")
        fig = axes[0].figure
    axes[0].plot(steps, loss, marker="o", ms=3, color="#0072B2")
    axes[0].set_xlabel("training step")
    axes[0].set_ylabel("loss (label-smoothed cross-entropy)")
    axes[0].set_title("training loss")
    if has_acc:
        axes[1].plot(steps, history["val_acc"], marker="o", ms=3, color="#D55E00")
        axes[1].set_xlabel("training step")
        axes[1].set_ylabel("exact-match accuracy (validation)")
        axes[1].set_ylim(0, 1.02)
        axes[1].set_title("validation accuracy, greedy decoding")
    if ax is None:
        fig.tight_layout()
    return fig


def lr_schedule_plot(lrs: Sequence[float], warmup_steps: int | None = None, ax=None) -> plt.Figure:
    """The learning rate at every step; a dotted line marks the end of the warm-up."""
    if len(lrs) == 0:
        raise ValueError("lr_schedule_plot: lrs is empty; expected one learning rate per step")
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 3))
    fig = ax.figure
    ax.plot(range(len(lrs)), list(lrs), color="#0072B2")
    if warmup_steps:
        ax.axvline(warmup_steps, color="gray", ls=":", label=f"end of warm-up (step {warmup_steps})")
        ax.legend()
    ax.set_xlabel("training step")
    ax.set_ylabel("learning rate")
    ax.set_title("warm-up, then cosine decay")
    fig.tight_layout()
    return fig
