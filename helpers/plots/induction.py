"""Figures of notebook 14: the loss of the two halves during training, the loss at each position,
and the heads' scores as they form."""

from __future__ import annotations

__all__ = ["loss_curves_plot", "per_position_plot", "scores_over_training_plot"]


def loss_curves_plot(histories: dict, ax=None):
    """Repeated-half loss (solid) and first-half loss (dashed) against the step, one colour per
    run in ``histories`` ({label: history}), with the chance level ln|V| as a grey line."""
    import matplotlib.pyplot as plt

    if not histories:
        raise ValueError("loss_curves_plot: histories is empty; pass {label: history}")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    for i, (label, h) in enumerate(histories.items()):
        colour = f"C{i}"
        ax.plot(h["step"], h["repeated_half"], color=colour, label=f"{label}: repeated half")
        ax.plot(h["step"], h["first_half"], color=colour, ls="--", label=f"{label}: first half")
    chance = next(iter(histories.values()))["chance"]
    ax.axhline(chance, color="grey", lw=1, ls=":", label=r"chance $\ln|\mathcal{V}|$")
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_ylim(0, chance * 1.25)
    ax.legend(fontsize=8, loc="lower left")
    return ax.figure


def per_position_plot(history: dict, indices: list[int], ax=None):
    """Loss at each position of the evaluation batch, at the recorded evaluations ``indices``."""
    import matplotlib.pyplot as plt

    if not indices:
        raise ValueError("per_position_plot: indices is empty; pass positions in history['step']")
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3))
    for i in indices:
        ax.plot(history["per_position"][i].numpy(), "o-", ms=4, label=f"step {history['step'][i]}")
    ax.axhline(history["chance"], color="grey", ls=":", lw=1, label="chance")
    ax.set_xlabel("position t (predicting token t + 1)")
    ax.set_ylabel("loss (nats)")
    ax.legend(fontsize=8)
    return ax.figure


def scores_over_training_plot(history: dict, ax=None):
    """The best previous-token score of layer 0 and the best induction score of the last layer
    against the step (left axis), with the repeated-half loss (right axis, dashed)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.4))
    steps = history["step"]
    ax.plot(steps, [s[-1].max().item() for s in history["induction"]], label="induction score (last layer)")
    ax.plot(steps, [s[0].max().item() for s in history["previous"]], label="previous-token score (layer 0)")
    ax.set_ylim(0, 1)
    ax.set_xlabel("training step")
    ax.set_ylabel("score")
    right = ax.twinx()
    right.plot(steps, history["repeated_half"], color="black", ls="--", label="repeated-half loss")
    right.set_ylabel("loss (nats)")
    right.set_ylim(0, history["chance"] * 1.25)
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    ax.legend(handles=handles, fontsize=8, loc="center left")
    return ax.figure
