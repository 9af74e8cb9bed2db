"""Figures of notebook 13: the KV cache's size against the context length, the loss against the
sequence length for each kind of positions, and the largest attention logit during training."""

from __future__ import annotations

__all__ = ["UNITS", "extrapolation_plot", "kv_cache_plot", "logit_curves_plot"]


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
    colors = mpl.colormaps["viridis"]([0.1, 0.45, 0.75, 0.9])
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
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    colors = mpl.colormaps["viridis"]([0.1, 0.5, 0.85])
    for i, (label, values) in enumerate(losses.items()):
        if len(values) != len(lengths):
            raise ValueError(f"extrapolation_plot: {label!r} has {len(values)} losses for {len(lengths)} lengths")
        ax.plot(lengths, values, marker="osD"[i % 3], color=colors[i % 3], lw=2, label=label)
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
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.4))
    colors = mpl.colormaps["viridis"]([0.1, 0.5, 0.85])
    for i, (label, values) in enumerate(series.items()):
        if len(values) != len(steps):
            raise ValueError(f"logit_curves_plot: {label!r} has {len(values)} values for {len(steps)} steps")
        ax.plot(steps, values, marker="osD"[i % 3], color=colors[i % 3], lw=2, label=label)
    ax.set_xlabel("training step")
    ax.set_ylabel(r"largest logit $q \cdot k / \sqrt{d_k}$")
    ax.set_ylim(bottom=0)
    ax.legend()
    return ax.figure
