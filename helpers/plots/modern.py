"""Figures of notebook 13: the KV cache's size against the context length, the bytes a decoding
step reads, the loss against the sequence length for each kind of positions and along a long
stream, and the largest attention logit during training."""

from __future__ import annotations

__all__ = ["UNITS", "decode_bytes_plot", "extrapolation_plot", "kv_cache_plot", "logit_curves_plot",
           "loss_by_position_plot"]


UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def kv_cache_plot(curves: dict[str, tuple[list[int], list[int]]], ax=None, title: str | None = None,
                  unit: str = "GiB"):
    """Lines of KV-cache size (in ``unit``) against the context length, one per entry of ``curves``."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    if unit not in UNITS:
        raise ValueError(f"kv_cache_plot: unit must be one of {list(UNITS)}, got {unit!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    colors = mpl.colormaps["viridis"]([0.0, 0.25, 0.45, 0.6])  # each at least 3:1 against white
    styles = ["-", "--", "-.", ":"]
    for i, (label, (lengths, sizes)) in enumerate(curves.items()):
        ax.plot(lengths, [s / UNITS[unit] for s in sizes], styles[i % 4], color=colors[i % 4], lw=2,
                label=label)
    ax.set_xlabel("context length L (tokens)")
    ax.set_ylabel(f"KV cache ({unit})")
    ax.set_ylim(bottom=0)
    ax.legend()
    if title:
        ax.set_title(title)
    return ax.figure


def extrapolation_plot(lengths, losses: dict[str, list[float]], trained_len: int, best: float | None = None,
                       ax=None):
    """Validation loss against the sequence length, one line per kind of positions; a dotted line
    at the trained length and, if given, a dashed line at the best possible loss."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    colors, markers = _series_style(len(losses))
    for i, (label, values) in enumerate(losses.items()):
        if len(values) != len(lengths):
            raise ValueError(f"extrapolation_plot: {label!r} has {len(values)} losses for {len(lengths)} lengths")
        ax.plot(lengths, values, marker=markers[i], color=colors[i], lw=2, label=label)
    ax.axvline(trained_len, color="0.5", ls=":", label=f"trained length {trained_len}")
    if best is not None:
        ax.axhline(best, color="0.3", ls="--", lw=1, label="best possible")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(lengths), [str(t) for t in lengths])
    ax.set_xlabel("sequence length L (tokens)")
    ax.set_ylabel("validation loss (nats/token)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)  # beside the lines
    return ax.figure


def logit_curves_plot(steps, series: dict[str, list[float]], ax=None):
    """The largest attention logit during training, one line per model (notebook 13's QK-norm)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    colors, markers = _series_style(len(series))
    for i, (label, values) in enumerate(series.items()):
        if len(values) != len(steps):
            raise ValueError(f"logit_curves_plot: {label!r} has {len(values)} values for {len(steps)} steps")
        ax.plot(steps, values, marker=markers[i], color=colors[i], lw=2, label=label)
    ax.set_xlabel("training step")
    ax.set_ylabel(r"largest logit $q \cdot k / \sqrt{d_k}$")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return ax.figure


def _series_style(n: int):
    """n colours spread over viridis (dark to yellow-green, readable on white) and n markers."""
    import matplotlib as mpl

    colors = mpl.colormaps["viridis"]([0.05 + 0.8 * i / max(n - 1, 1) for i in range(n)])
    markers = ["osD^vP*X"[i % 8] for i in range(n)]
    return list(colors), markers


def loss_by_position_plot(starts, series: dict[str, list[float]], trained_len: int, bin_size: int,
                          ax=None, title: str | None = None):
    """Loss per position while a model reads a long stream: one line per setting (full attention,
    a window, sinks ...), each value the mean loss over positions start .. start + bin_size - 1; a
    dotted line at the trained length."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    colors, markers = _series_style(len(series))
    centres = [s + bin_size / 2 for s in starts]
    for i, (label, values) in enumerate(series.items()):
        if len(values) != len(starts):
            raise ValueError(f"loss_by_position_plot: {label!r} has {len(values)} losses for {len(starts)} bins")
        ax.plot(centres, values, marker=markers[i], color=colors[i], lw=2, ms=4, label=label)
    ax.axvline(trained_len, color="0.5", ls=":", label=f"trained length {trained_len}")
    ax.set_xlabel(f"position in the stream (mean over {bin_size} positions)")
    ax.set_ylabel("loss (nats/token)")
    ax.set_xlim(0, starts[-1] + bin_size)
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return ax.figure


def decode_bytes_plot(contexts, weight_bytes: int, kv_bytes: dict[str, list[int]], ax=None,
                      unit: str = "GiB", title: str | None = None):
    """Bytes one decoding step reads against the context length: the weights (the same at every
    length) and, per kind of attention, the weights plus its KV cache."""
    import matplotlib.pyplot as plt

    if unit not in UNITS:
        raise ValueError(f"decode_bytes_plot: unit must be one of {list(UNITS)}, got {unit!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.6), layout="constrained")
    colors, markers = _series_style(len(kv_bytes))
    ax.axhline(weight_bytes / UNITS[unit], color="0.3", ls="--", lw=1.5, label="weights alone")
    for i, (label, sizes) in enumerate(kv_bytes.items()):
        if len(sizes) != len(contexts):
            raise ValueError(f"decode_bytes_plot: {label!r} has {len(sizes)} sizes for {len(contexts)} contexts")
        ax.plot(contexts, [(weight_bytes + b) / UNITS[unit] for b in sizes], color=colors[i], lw=2,
                marker=markers[i], ms=3, label=f"weights + {label} cache")
    ax.set_xlabel("context length L (tokens)")
    ax.set_ylabel(f"bytes read per step ({unit})")
    ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title)
    ax.legend()
    return ax.figure
