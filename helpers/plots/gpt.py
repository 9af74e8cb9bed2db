"""Figures of notebook 12: accuracy against training steps (encoder–decoder against decoder-only),
the language model's loss against the language's entropy, and the quality–diversity trade-off of
sampling."""

from __future__ import annotations

__all__ = ["accuracy_curves_plot", "loss_vs_entropy_plot", "quality_diversity_plot"]


def loss_vs_entropy_plot(history: dict, entropy: float, val_loss: float | None = None, ax=None):
    """Training loss per logged step, and the language's entropy rate (nats per token) as a horizontal line."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    ax.plot(history["step"], history["loss"], marker="o", label="training loss")
    ax.axhline(entropy, color="black", linestyle="--", label="entropy rate of the language")
    if val_loss is not None:
        ax.plot([history["step"][-1]], [val_loss], marker="s", color="C3", linestyle="none",
                label="validation loss")
    ax.set_xlabel("step")
    ax.set_ylabel("nats per token")
    ax.legend()
    return ax.figure


def quality_diversity_plot(values, parse_share, parsed_shapes, xlabel: str, ceiling: int, ax=None):
    """The quality–diversity trade-off of sampling, against temperature or top-p: the share of
    samples that parse (left axis), and the number of distinct shapes among the samples that parse
    (right axis) under the language's own number of shapes, ``ceiling``, drawn as a dashed line
    (no correct sample can add a shape beyond it; broken samples are not counted as diversity)."""
    import matplotlib.pyplot as plt

    if len(parse_share) != len(values) or len(parsed_shapes) != len(values):
        raise ValueError(f"quality_diversity_plot: {len(values)} values, {len(parse_share)} shares and "
                         f"{len(parsed_shapes)} shape counts; give one of each per value")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    ax.plot(values, parse_share, marker="o", color="C0", label="share that parses")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share that parses", color="C0")
    twin = ax.twinx()
    twin.plot(values, parsed_shapes, marker="s", color="C1", label="shapes among parsed samples")
    twin.axhline(ceiling, color="black", linestyle="--", lw=1, label=f"the grammar's {ceiling} shapes")
    twin.set_ylim(0, ceiling * 1.15)
    twin.set_ylabel("shapes among parsed samples", color="C1")
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    twin.legend(handles=handles, loc="lower right")
    return ax.figure


def accuracy_curves_plot(curves: dict[str, tuple[list, list]], xlabel: str = "training step", ax=None,
                         title: str | None = None, xscale: float = 1.0):
    """Exact-match accuracy against training steps (or any other x, e.g. training FLOPs with
    ``xscale`` dividing them), one line per model: {label: (xs, accuracies)}."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
    for i, (label, (xs, acc)) in enumerate(curves.items()):
        if len(xs) != len(acc):
            raise ValueError(f"accuracy_curves_plot: {label!r} has {len(acc)} accuracies for {len(xs)} points")
        ax.plot([x / xscale for x in xs], acc, marker="os^D"[i % 4], ms=3, lw=2, color=f"C{i}", label=label)
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("exact match (held-out dates)")
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right")
    return ax.figure
