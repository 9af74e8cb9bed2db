"""Plots shared by the notebooks. Colour maps are colour-blind safe (viridis / cividis);
figures have a white background so that they stay legible in dark themes too."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import torch

__all__ = [
    "attention_heatmap",
    "cost_plot",
    "cross_attention_grid",
    "grad_norm_lines",
    "lr_schedule_plot",
    "online_softmax_figure",
    "training_curves",
    "use_tutorial_style",
    "weight_bars",
]

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
    ylim: tuple[float, float] | None = (0.0, 1.1),
    annotate: bool = True,
    color: str = "#31688e",  # a viridis blue
) -> plt.Figure:
    """Bar chart of one row of attention weights (or any 1-D values): one bar per key.

    Bars are labelled with the tokens and, when ``annotate``, with their values (2 decimals).
    ``ylim=(0, 1.1)`` by default (room for the value labels) so that charts of weights can be
    compared by eye; pass ``None`` for values outside [0, 1] (scores, for instance).
    Returns the Figure.
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
    if not series:
        raise ValueError("grad_norm_lines needs at least one series")
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
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


# ---- notebook 11: cost of attention, online softmax -------------------------------------------


def cost_plot(lengths, series: dict, ylabel: str, ax: plt.Axes | None = None,
              title: str | None = None) -> plt.Figure:
    """Log-log plot of costs against sequence length, one line per entry of ``series``
    (label -> values); each legend entry gives the fitted slope, the exponent p in cost ~ T**p."""
    from .efficient import loglog_slope

    lengths = [float(t) for t in lengths]
    for label, values in series.items():
        if len(values) != len(lengths):
            raise ValueError(f"series {label!r} has {len(values)} values for {len(lengths)} lengths")
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 3.6))
    fig = ax.figure
    markers = "osD^v"
    colors = mpl.colormaps["viridis"]([0.15, 0.65, 0.9, 0.4, 0.8])
    for i, (label, values) in enumerate(series.items()):
        slope = loglog_slope(lengths, values)
        ax.plot(lengths, [float(v) for v in values], marker=markers[i % 5],
                color=colors[i % 5], label=f"{label} (slope {slope:.2f})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length T")
    ax.set_ylabel(ylabel)
    ax.legend()
    if title:
        ax.set_title(title)
    return fig


def online_softmax_figure(x, block_size: int) -> plt.Figure:
    """Online softmax of a 1-D ``x`` block by block: top, the values (blocks shaded alternately)
    and the running max m after each block; bottom, the running sum l after each block."""
    from .efficient import online_softmax_steps

    x = torch.as_tensor(x).detach().to("cpu", torch.float64)
    steps = online_softmax_steps(x, block_size)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 4.4), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    idx = range(x.numel())
    top.bar(idx, x.tolist(), color=mpl.colormaps["viridis"](0.35), label="x")
    for i, s in enumerate(steps):
        if i % 2 == 0:
            top.axvspan(s["start"] - 0.5, s["stop"] - 0.5, color="0.9", zorder=0)
            bottom.axvspan(s["start"] - 0.5, s["stop"] - 0.5, color="0.9", zorder=0)
    top.hlines([s["max"] for s in steps], [s["start"] - 0.5 for s in steps],
               [s["stop"] - 0.5 for s in steps], colors=[mpl.colormaps["viridis"](0.85)],
               lw=2, label="running max m after the block")
    top.set_ylabel("value")
    top.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
    fig.suptitle(f"online softmax, block_size={block_size}: {len(steps)} blocks")
    bottom.bar([(s["start"] + s["stop"] - 1) / 2 for s in steps], [s["sum"] for s in steps],
               width=[s["stop"] - s["start"] - 0.2 for s in steps],
               color=mpl.colormaps["viridis"](0.6))
    bottom.set_ylabel("running sum l")
    bottom.set_xlabel("position in x (blocks shaded)")
    bottom.set_xticks(list(idx))
    fig.tight_layout()
    return fig


# --- Notebook 10: training curves, learning-rate schedule, cross-attention grid --------------
def training_curves(history: dict, ax=None) -> plt.Figure:
    """Two panels: training loss per logged step, and validation exact-match accuracy
    (``history["val_acc"]``, logged at ``history["step"]``) when present."""
    has_acc = bool(history.get("val_acc"))
    if ax is None:
        fig, axes = plt.subplots(1, 2 if has_acc else 1, figsize=(9 if has_acc else 4.5, 3.2),
                                 squeeze=False)
        axes = list(axes[0])
    else:
        axes, fig = list(ax), ax[0].figure
    axes[0].plot(history["step"], history["loss"], marker="o", ms=3, color="#0072B2")
    axes[0].set_xlabel("training step")
    axes[0].set_ylabel("loss (label-smoothed cross-entropy)")
    axes[0].set_title("training loss")
    if has_acc:
        axes[1].plot(history["step"], history["val_acc"], marker="o", ms=3, color="#D55E00")
        axes[1].set_xlabel("training step")
        axes[1].set_ylabel("exact-match accuracy (validation)")
        axes[1].set_ylim(0, 1.02)
        axes[1].set_title("validation accuracy, greedy decoding")
    fig.tight_layout()
    return fig


def lr_schedule_plot(lrs: Sequence[float], warmup_steps: int | None = None, ax=None) -> plt.Figure:
    """The learning rate at every step; a dotted line marks the end of the warm-up."""
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


def cross_attention_grid(weights, src_labels: Sequence[str], out_labels: Sequence[str],
                         title: str | None = None) -> plt.Figure:
    """One heatmap per decoder layer (rows) and head (columns). ``weights`` is a list (one per
    layer) of (num_heads, Lt, Ls) tensors; x ticks are source characters, y ticks output tokens."""
    n_layers, n_heads = len(weights), int(torch.as_tensor(weights[0]).shape[0])
    fig, axes = plt.subplots(n_layers, n_heads, figsize=(2.6 * n_heads, 2.4 * n_layers),
                             squeeze=False)
    src_ticks = [repr(c)[1:-1] if c != " " else "␣" for c in src_labels]
    for layer in range(n_layers):
        w = torch.as_tensor(weights[layer]).detach().cpu()
        for head in range(n_heads):
            ax = axes[layer][head]
            attention_heatmap(w[head], src_ticks, list(out_labels), ax=ax, colorbar=False,
                              annotate=False, vmax=1.0, xlabel="", ylabel="",
                              title=f"layer {layer}, head {head}")
            ax.tick_params(labelsize=7, rotation=0)
            ax.tick_params(axis="x", labelsize=6)
        axes[layer][0].set_ylabel("output")
    for ax in axes[-1]:
        ax.set_xlabel("source")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
