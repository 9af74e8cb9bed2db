"""Figures of notebook 11: what attention costs against the length, and the online softmax block by
block."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib as mpl
import matplotlib.pyplot as plt
import torch

from .style import MIN_FONT_PT, _short

__all__ = ["cost_plot", "online_softmax_figure"]


def cost_plot(lengths, series: dict, ylabel: str, ax: plt.Axes | None = None,
              title: str | None = None) -> plt.Figure:
    """Log-log plot of costs against sequence length, one line per entry of ``series``
    (label -> values); each legend entry gives the fitted slope, the exponent p in cost ~ T**p."""
    from ..efficient import loglog_slope

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
    from ..efficient import online_softmax_steps

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
