"""Plots shared by the notebooks, in one style.

- Crisp and legible: 100 dpi, tick labels of at least 8 pt, a white figure background (readable in
  JupyterLab's light and dark themes), colour-blind safe colour maps (viridis / cividis).
- A colour bar wherever colour encodes a value; heatmaps that are compared share one scale
  (``attention_heatmap(..., vmin=, vmax=)``, or ``attention_heatmaps`` for several side by side
  with one colour bar).
- Masked entries (``mask=``, False = masked) are drawn hatched grey, unlike small weights.
- Long tick labels are shortened and rotated, and crowded ones thinned, so that none overlap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.collections import PatchCollection
from matplotlib.patches import Rectangle

__all__ = [
    "MIN_FONT_PT",
    "attention_heatmap",
    "attention_heatmaps",
    "cost_plot",
    "cross_attention_grid",
    "grad_norm_lines",
    "lr_schedule_plot",
    "online_softmax_figure",
    "training_curves",
    "use_tutorial_style",
    "weight_bars",
]

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


# ---- checks and tick labels ----------------------------------------------------------------------
def _as_2d(weights, name: str = "weights", fn: str = "attention_heatmap") -> torch.Tensor:
    try:
        w = torch.as_tensor(weights)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"{fn}: {name} must be a 2-D tensor or nested list of numbers, "
                        f"got {type(weights).__name__} ({err})") from None
    if w.is_complex() or w.dtype == torch.bool:
        raise TypeError(f"{fn}: {name} must hold real numbers, got dtype {w.dtype}")
    w = w.detach().to("cpu", torch.float32)
    if w.dim() != 2:
        where = "" if name == "weights" else f" as {name}"
        raise ValueError(f"{fn} expects a 2-D (Lq, Lk) matrix{where}, got shape {tuple(w.shape)}")
    if w.numel() == 0:
        raise ValueError(f"{fn}: {name} is empty, shape {tuple(w.shape)}; expected at least one "
                         "query (row) and one key (column)")
    return w


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


def _short(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def _annotate(ax, w: np.ndarray, im, keep: np.ndarray | None) -> None:
    """Write each value (2 decimals) in its cell, black on light colours and white on dark ones."""
    cmap, norm = im.get_cmap(), im.norm
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            if keep is not None and not keep[i, j]:
                continue
            v = float(w[i, j])
            r, g, b, _ = cmap(norm(v)) if np.isfinite(v) else (1.0, 1.0, 1.0, 1.0)
            light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=MIN_FONT_PT,
                    color="black" if light else "white")


def _as_mask(mask, shape: tuple[int, int], fn: str, name: str = "mask") -> np.ndarray:
    m = torch.as_tensor(mask)
    if m.dtype != torch.bool:
        raise TypeError(f"{fn}: {name} must be boolean (True = may attend, False = masked), "
                        f"got dtype {m.dtype}")
    try:
        m = torch.broadcast_to(m.detach().cpu(), shape)
    except RuntimeError:
        raise ValueError(f"{fn}: {name} of shape {tuple(m.shape)} does not broadcast to the "
                         f"matrix's shape {shape}") from None
    return m.numpy()


def _draw_masked(ax, keep: np.ndarray) -> None:
    """Hatched grey squares over the masked cells (keep == False)."""
    rows, cols = np.nonzero(~keep)
    if rows.size == 0:
        return
    cells = [Rectangle((j - 0.5, i - 0.5), 1, 1) for i, j in zip(rows, cols, strict=True)]
    patches = PatchCollection(cells, linewidth=0, zorder=2, **MASK_STYLE)
    patches.set_label("masked")
    ax.add_collection(patches)


def _heatmap_scale(mats: list[np.ndarray], keeps: list[np.ndarray | None], vmin, vmax):
    """vmin/vmax shared by every matrix: the given ones, else the range of the unmasked values."""
    vals = [m[k] if k is not None else m.ravel() for m, k in zip(mats, keeps, strict=True)]
    vals = np.concatenate(vals) if vals else np.zeros(0)
    vals = vals[np.isfinite(vals)]
    lo = float(vals.min()) if vmin is None and vals.size else (0.0 if vmin is None else float(vmin))
    hi = float(vals.max()) if vmax is None and vals.size else (1.0 if vmax is None else float(vmax))
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi


# ---- heatmaps --------------------------------------------------------------------------------
def _heatmap_size(lq: int, lk: int) -> tuple[float, float]:
    return (1.6 + 0.55 * lk, 1.0 + 0.45 * lq) if lk <= 16 and lq <= 16 else (8.0, 6.0)


def _draw_heatmap(ax, w: torch.Tensor, keep, xt, yt, *, title, annotate, cmap, xlabel, ylabel,
                  vmin, vmax):
    lq, lk = w.shape
    arr = w.numpy()
    cm = mpl.colormaps[cmap] if isinstance(cmap, str) else cmap
    data = np.ma.masked_array(arr, mask=~keep) if keep is not None else arr
    im = ax.imshow(data, cmap=cm, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    if keep is not None:
        _draw_masked(ax, keep)
    ax.set_xticks(range(lk), xt)
    ax.set_yticks(range(lq), yt)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = lq * lk <= 64
    if annotate:
        _annotate(ax, arr, im, keep)
    return im


def _colorbar(fig, im, ax, label: str | None, masked: bool):
    if masked:
        label = f"{label}; hatched = masked" if label else "hatched = masked"
    cb = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if label:
        cb.set_label(label)
    values = np.ma.compressed(im.get_array())
    if values.size and np.isin(values, (0.0, 1.0)).all():  # a 0/1 matrix: only two colours mean
        cb.set_ticks([0.0, 1.0])
    return cb


def attention_heatmap(
    weights,
    x_labels: Sequence | None = None,
    y_labels: Sequence | None = None,
    ax: plt.Axes | None = None,
    title: str | None = None,
    annotate: bool | None = None,
    cmap: str = "viridis",
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
    colorbar: bool = True,
    vmin: float | None = 0.0,
    vmax: float | None = None,
    mask=None,
    colorbar_label: str | None = None,
) -> plt.Figure:
    """Heatmap of a (Lq, Lk) attention matrix: rows are queries, columns are keys.

    Tick labels are the tokens (numbers are written with ``str``); small matrices (64 cells or
    fewer) are annotated with their values (2 decimals). Colours run from ``vmin`` to ``vmax``
    (``None``: the smallest / largest value): give two heatmaps that are compared the same
    ``vmin``/``vmax``, or draw them with ``attention_heatmaps``. ``mask`` (boolean, broadcastable to
    (Lq, Lk), True = may attend as in ``helpers.attention``) draws the masked cells hatched grey,
    unlike a small weight, and says so on the colour bar. Returns the Figure (the one of ``ax``
    when given).
    """
    fn = "attention_heatmap"
    w = _as_2d(weights, fn=fn)
    lq, lk = w.shape
    xt = _tick_texts(x_labels, lk, "x_labels", fn, (lq, lk))
    yt = _tick_texts(y_labels, lq, "y_labels", fn, (lq, lk))
    keep = _as_mask(mask, (lq, lk), fn) if mask is not None else None
    lo, hi = _heatmap_scale([w.numpy()], [keep], vmin, vmax)
    own = ax is None
    if own:
        _, ax = plt.subplots(figsize=_heatmap_size(lq, lk))  # no layout engine: tight_layout works
    fig = ax.figure
    im = _draw_heatmap(ax, w, keep, xt, yt, title=title, annotate=annotate, cmap=cmap,
                       xlabel=xlabel, ylabel=ylabel, vmin=lo, vmax=hi)
    if colorbar:
        _colorbar(fig, im, ax, colorbar_label, keep is not None and not keep.all())
    elif keep is not None and not keep.all():
        ax.set_title(f"{title}\n(hatched = masked)" if title else "hatched = masked")
    _fit_tick_labels(ax)
    if own:
        fig.tight_layout()
    return fig


def attention_heatmaps(
    weights,
    titles: Sequence[str] | None = None,
    x_labels: Sequence | None = None,
    y_labels: Sequence | None = None,
    *,
    vmin: float | None = 0.0,
    vmax: float | None = None,
    masks=None,
    annotate: bool | None = None,
    cmap: str = "viridis",
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
    colorbar_label: str | None = "attention weight",
    suptitle: str | None = None,
    axes: Sequence[plt.Axes] | None = None,
) -> plt.Figure:
    """Several heatmaps side by side on ONE colour scale, with one colour bar: the way to compare
    attention matrices ("flatter", "sharper" become visible).

    ``weights`` is a list of (Lq, Lk) matrices or a (n, Lq, Lk) tensor; ``titles`` one title per
    matrix; ``x_labels``/``y_labels`` the tokens, shared by all panels. The scale runs from ``vmin``
    to ``vmax`` (``None``: the smallest / largest value over ALL matrices). ``masks`` is one boolean
    mask for every panel or a list with one per panel (``None`` entries allowed), True = may attend;
    masked cells are hatched grey. ``axes``: draw into these (one per matrix). Returns the Figure,
    laid out by matplotlib's constrained layout (so do not call ``tight_layout`` on it).
    """
    fn = "attention_heatmaps"
    if isinstance(weights, torch.Tensor) and weights.dim() == 3:
        weights = list(weights)
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence):
        raise TypeError(f"{fn}: weights must be a list of (Lq, Lk) matrices or a (n, Lq, Lk) "
                        f"tensor, got {type(weights).__name__}")
    if len(weights) == 0:
        raise ValueError(f"{fn}: weights is empty; expected at least one (Lq, Lk) matrix")
    mats = [_as_2d(m, f"weights[{i}]", fn) for i, m in enumerate(weights)]
    n = len(mats)
    if titles is not None and (isinstance(titles, str) or len(titles) != n):
        got = repr(_short(titles, 40)) if isinstance(titles, str) else f"{len(titles)} titles"
        raise ValueError(f"{fn}: titles must give one title per matrix ({n}), got {got}")
    if masks is None or isinstance(masks, (torch.Tensor, np.ndarray)):
        masks = [masks] * n
    elif len(masks) != n:
        raise ValueError(f"{fn}: masks has {len(masks)} entries but there are {n} matrices")
    keeps = [_as_mask(m, tuple(w.shape), fn, f"masks[{i}]") if m is not None else None
             for i, (m, w) in enumerate(zip(masks, mats, strict=True))]
    lo, hi = _heatmap_scale([w.numpy() for w in mats], keeps, vmin, vmax)
    if axes is None:
        lq, lk = max(w.shape[0] for w in mats), max(w.shape[1] for w in mats)
        pw, ph = _heatmap_size(lq, lk)
        pw, ph = (min(pw, 14.0 / n), min(ph, 14.0 / n * ph / pw)) if n * pw > 14 else (pw, ph)
        fig, axes = plt.subplots(1, n, figsize=(n * pw + 0.8, ph), layout="constrained",
                                 squeeze=False)
        axes = list(axes[0])
    else:
        axes = list(np.ravel(axes))
        if len(axes) != n:
            raise ValueError(f"{fn}: axes has {len(axes)} entries but there are {n} matrices")
        fig = axes[0].figure
    im = None
    for i, (w, keep, ax) in enumerate(zip(mats, keeps, axes, strict=True)):
        im = _draw_heatmap(
            ax, w, keep, _tick_texts(x_labels, w.shape[1], "x_labels", fn, tuple(w.shape)),
            _tick_texts(y_labels, w.shape[0], "y_labels", fn, tuple(w.shape)),
            title=titles[i] if titles is not None else None, annotate=annotate, cmap=cmap,
            xlabel=xlabel, ylabel=ylabel if i == 0 else "", vmin=lo, vmax=hi)
    masked = any(k is not None and not k.all() for k in keeps)
    label = colorbar_label
    if masked:
        label = f"{label}; hatched = masked" if label else "hatched = masked"
    cb = fig.colorbar(im, ax=axes, fraction=0.046 if n == 1 else 0.03, pad=0.03)
    if label:
        cb.set_label(label)
    if suptitle:
        fig.suptitle(suptitle)
    _fit_tick_labels(*axes)
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
    if n == 0:
        raise ValueError("weight_bars: weights is empty; expected at least one weight")
    if labels is not None and len(labels) != n:
        raise ValueError(f"labels has {len(labels)} entries but there are {n} weights")
    names = _tick_texts(labels, n, "labels", "weight_bars")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.4 + 0.6 * max(n, 3), 2.8))
    fig = ax.figure
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
        ax.bar_label(bars, labels=[f"{float(v):.2f}" for v in w], fontsize=MIN_FONT_PT, padding=2)
    _fit_tick_labels(ax)
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

    if not isinstance(series, Mapping) or not series:
        raise ValueError(f"cost_plot: series must be a non-empty dict {{label: values}}, "
                         f"got {_short(repr(series), 60)}")
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
    ax.set_xlabel("sequence length L")
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
    top.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=MIN_FONT_PT + 1, frameon=False)
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


def cross_attention_grid(weights, src_labels: Sequence[str], out_labels: Sequence[str],
                         title: str | None = None) -> plt.Figure:
    """One heatmap per decoder layer and head (layer by layer; as many heads per row as stay
    legible), all on the scale 0..1 with one colour bar. ``weights`` is a list (one per layer)
    of (num_heads, Lt, Ls) tensors; x ticks are source characters (a space is shown as ␣),
    y ticks output tokens."""
    fn = "cross_attention_grid"
    if isinstance(weights, torch.Tensor) and weights.dim() == 4:
        weights = list(weights)
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence) or not weights:
        got = f"an empty {type(weights).__name__}" if isinstance(weights, Sequence) \
            else type(weights).__name__
        raise ValueError(f"{fn}: weights must be a non-empty list (one entry per decoder layer) "
                         f"of (num_heads, Lt, Ls) tensors, got {got}")
    layers = [torch.as_tensor(w).detach().to("cpu", torch.float32) for w in weights]
    for i, w in enumerate(layers):
        if w.dim() != 3 or w.shape != layers[0].shape or w.numel() == 0:
            raise ValueError(f"{fn}: weights[{i}] must be a non-empty (num_heads, Lt, Ls) tensor "
                             f"like weights[0] {tuple(layers[0].shape)}, got {tuple(w.shape)}")
    n_layers, (n_heads, lt, ls) = len(layers), layers[0].shape
    src_ticks = _tick_texts(["␣" if c == " " else repr(c)[1:-1] if isinstance(c, str) else c
                             for c in src_labels], ls, "src_labels", fn)
    out_ticks = _tick_texts(out_labels, lt, "out_labels", fn)
    # Panels in reading order (layer by layer, head by head), as many per row as fit in about
    # 10 inches with every source character legible (a cell of at least 0.12 in).
    n = n_layers * n_heads
    cols = max(1, min(n_heads, int(9.6 // (0.8 + 0.12 * ls))))
    rows = -(-n // cols)
    pw = min(max(2.6, 0.8 + 0.17 * ls), 9.6 / cols)
    ph = max(2.2, 0.9 + 0.17 * lt)
    fig, grid = plt.subplots(rows, cols, figsize=(pw * cols + 0.9, ph * rows), squeeze=False,
                             layout="constrained")
    axes = list(grid.ravel())
    for ax in axes[n:]:
        ax.remove()
    axes = axes[:n]
    im = None
    for k, ax in enumerate(axes):
        layer, head = divmod(k, n_heads)
        im = _draw_heatmap(ax, layers[layer][head], None, src_ticks, out_ticks, annotate=False,
                           cmap="viridis", xlabel="source" if k + cols >= n else "",
                           ylabel="output" if k % cols == 0 else "", vmin=0.0, vmax=1.0,
                           title=f"layer {layer}, head {head}")
        ax.tick_params(labelsize=MIN_FONT_PT)
    fig.colorbar(im, ax=axes, fraction=0.03, pad=0.02, label="attention weight")
    if title:
        fig.suptitle(title)
    _fit_tick_labels(*axes)
    return fig
