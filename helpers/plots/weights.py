"""Pictures of attention weights (notebooks 00–10, 14): heatmaps and bar charts.

- A colour bar wherever colour encodes a value; heatmaps that are compared share one scale
  (``attention_heatmap(..., vmin=, vmax=)``, or ``attention_heatmaps`` for several side by side
  with one colour bar; ``cross_attention_grid`` for every layer and head of a translator).
- Masked entries (``mask=``, False = masked) are drawn hatched grey, unlike small weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.collections import PatchCollection
from matplotlib.patches import Rectangle

from .style import MASK_STYLE, MIN_FONT_PT, _fit_tick_labels, _short, _tick_texts

__all__ = ["attention_heatmap", "attention_heatmaps", "cross_attention_grid", "weight_bars"]


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
MIN_WIDTH = 4.0  # inches: a figure of its own is at least 400 pixels wide at the tutorial's 100 dpi


def _heatmap_size(lq: int, lk: int) -> tuple[float, float]:
    return (max(MIN_WIDTH, 1.6 + 0.55 * lk), 1.0 + 0.45 * lq) if lk <= 16 and lq <= 16 else (8.0, 6.0)


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
    figsize: tuple[float, float] | None = None,
) -> plt.Figure:
    """Several heatmaps side by side on ONE colour scale, with one colour bar: the way to compare
    attention matrices ("flatter", "sharper" become visible).

    ``weights`` is a list of (Lq, Lk) matrices or a (n, Lq, Lk) tensor; ``titles`` one title per
    matrix; ``x_labels``/``y_labels`` the tokens, shared by all panels. The scale runs from ``vmin``
    to ``vmax`` (``None``: the smallest / largest value over ALL matrices). ``masks`` is one boolean
    mask for every panel or a list with one per panel (``None`` entries allowed), True = may attend;
    masked cells are hatched grey. ``axes``: draw into these (one per matrix). ``figsize`` (inches)
    overrides the size chosen from the matrices' shape: a figure no wider than the notebook's column
    (8 inches) is shown at its true size, so its 8-pt text stays 8 pt on screen. Returns the Figure,
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
    if figsize is not None and (not isinstance(figsize, Sequence) or len(figsize) != 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in figsize)):
        raise ValueError(f"{fn}: figsize must be (width, height) in inches, two numbers > 0, got {figsize!r}")
    lo, hi = _heatmap_scale([w.numpy() for w in mats], keeps, vmin, vmax)
    if axes is None:
        lq, lk = max(w.shape[0] for w in mats), max(w.shape[1] for w in mats)
        pw, ph = _heatmap_size(lq, lk)
        pw, ph = (min(pw, 14.0 / n), min(ph, 14.0 / n * ph / pw)) if n * pw > 14 else (pw, ph)
        fig, axes = plt.subplots(1, n, figsize=figsize or (n * pw + 0.8, ph), layout="constrained",
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


# ---- notebook 11: cost of attention, online softmax -------------------------------------------


def cross_attention_grid(weights, src_labels: Sequence[str], out_labels: Sequence[str],
                         title: str | None = None, xlabel: str = "source (keys)",
                         ylabel: str = "output (queries)", mask=None) -> plt.Figure:
    """One heatmap per layer and head (layer by layer; as many heads per row as stay legible),
    all on the scale 0..1 with one colour bar. ``weights`` is a list (one per layer) of
    (num_heads, Lq, Lk) tensors; x ticks are ``src_labels`` (the keys; a space is shown as ␣),
    y ticks ``out_labels`` (the queries). The axis names default to cross-attention's (queries:
    output tokens, keys: source pieces); for self-attention name them with ``xlabel``/``ylabel``
    (the encoder's queries and keys are both source pieces, the decoder's keys are <bos> and the
    output so far). A space is shown as ␣ on both axes. ``mask`` (boolean, broadcastable to
    (Lq, Lk), True = may attend: the decoder's causal mask) draws the masked cells hatched grey,
    unlike a weight of 0, and says so on the colour bar."""
    fn = "cross_attention_grid"
    for name, value in (("xlabel", xlabel), ("ylabel", ylabel)):
        if not isinstance(value, str):
            raise TypeError(f"{fn}: {name} must be a str, got {type(value).__name__}")
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
    def shown(labels):
        if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
            return labels  # _tick_texts names what is wrong
        return ["␣" if c == " " else repr(c)[1:-1] if isinstance(c, str) else c for c in labels]

    src_ticks = _tick_texts(shown(list(src_labels)), ls, "src_labels", fn)
    out_ticks = _tick_texts(shown(out_labels), lt, "out_labels", fn)
    keep = _as_mask(mask, (lt, ls), fn) if mask is not None else None
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
        im = _draw_heatmap(ax, layers[layer][head], keep, src_ticks, out_ticks, annotate=False,
                           cmap="viridis", xlabel=xlabel if k + cols >= n else "",
                           ylabel=ylabel if k % cols == 0 else "", vmin=0.0, vmax=1.0,
                           title=f"layer {layer}, head {head}")
        ax.tick_params(labelsize=MIN_FONT_PT)
    masked = keep is not None and not keep.all()
    fig.colorbar(im, ax=axes, fraction=0.03, pad=0.02,
                 label="attention weight; hatched = masked" if masked else "attention weight")
    if title:
        fig.suptitle(title)
    _fit_tick_labels(*axes)
    return fig
