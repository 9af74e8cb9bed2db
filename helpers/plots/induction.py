"""Figures of notebook 14: the loss of the two halves during training (with the floor of a perfect
induction head), the loss at each position, the heads' scores and the in-context learning score as
they form, the previous-token score and the attention on the first token query by query, the full
OV circuits, composition scores against random ones, and the loss under path ablations."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import torch

__all__ = [
    "composition_plot",
    "icl_score_plot",
    "loss_curves_plot",
    "ov_circuits_plot",
    "path_ablation_plot",
    "per_position_plot",
    "previous_token_by_position_plot",
    "scores_over_training_plot",
    "sink_plot",
]

FLOOR_LABEL = "perfect one-token induction head"


def _legend_off_the_data(ax, handles=None, above: bool = False) -> None:
    """The legend beside the axes (right of them), or above them (``above``, for a figure with a
    right-hand axis): never over the lines, bars or bands it explains, whatever the run drew."""
    kw = {"handles": handles} if handles is not None else {}
    if above:
        ax.legend(**kw, fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 1.02), ncol=2,
                  borderaxespad=0.0)
    else:
        ax.legend(**kw, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _axes(figsize):
    """A new figure with one axes, laid out so that a legend beside or above it fits."""
    return plt.subplots(figsize=figsize, layout="constrained")[1]


def loss_curves_plot(histories: dict, ax=None, floor: float | None = None):
    """Repeated-half loss (solid) and first-half loss (dashed) against the step, one colour per
    run in ``histories`` ({label: history}), with the chance level ln|V| as a grey line and, if
    given, the ``floor`` of a perfect induction head (one that matches the current token alone) on
    the repeated half (dash-dotted)."""
    if not histories:
        raise ValueError("loss_curves_plot: histories is empty; pass {label: history}")
    if ax is None:
        ax = _axes((9.5, 3.6))
    for i, (label, h) in enumerate(histories.items()):
        colour = f"C{i}"
        ax.plot(h["step"], h["repeated_half"], color=colour, label=f"{label}: repeated half")
        ax.plot(h["step"], h["first_half"], color=colour, ls="--", label=f"{label}: first half")
    chance = next(iter(histories.values()))["chance"]
    ax.axhline(chance, color="grey", lw=1, ls=":", label=r"chance $\ln|\mathcal{V}|$")
    if floor is not None:
        ax.axhline(floor, color="black", lw=1, ls="-.", label=FLOOR_LABEL)
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_ylim(0, chance * 1.25)
    _legend_off_the_data(ax)
    return ax.figure


def per_position_plot(history: dict, indices: list[int], ax=None):
    """Loss at each position of the evaluation batch, at the recorded evaluations ``indices``."""
    if not indices:
        raise ValueError("per_position_plot: indices is empty; pass positions in history['step']")
    if ax is None:
        ax = _axes((10, 3))
    for i in indices:
        ax.plot(history["per_position"][i].numpy(), "o-", ms=4, label=f"step {history['step'][i]}")
    ax.axhline(history["chance"], color="grey", ls=":", lw=1, label="chance")
    ax.set_xlabel("position t (predicting token t + 1)")
    ax.set_ylabel("loss (nats)")
    _legend_off_the_data(ax)
    return ax.figure


def scores_over_training_plot(history: dict, ax=None):
    """The best previous-token score of layer 0 and the best induction score of the last layer
    against the step (left axis), with the repeated-half loss (right axis, dashed)."""
    if ax is None:
        ax = _axes((7.5, 3.8))
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
    _legend_off_the_data(ax, handles, above=True)
    return ax.figure


def icl_score_plot(history: dict, early: int, late: int, phase: int | None = None, ax=None):
    """The in-context learning score, loss at position ``late`` minus loss at position ``early``
    of the evaluation batch, against the step; a dashed line at step ``phase`` if given."""
    per = history["per_position"]
    size = len(per[0])
    if not (isinstance(early, int) and isinstance(late, int) and 0 <= early < late < size):
        raise ValueError(f"icl_score_plot: need 0 <= early < late < {size}, got early={early!r}, late={late!r}")
    if ax is None:
        ax = _axes((9.5, 3.2))
    scores = [float(p[late] - p[early]) for p in per]
    ax.plot(history["step"], scores, color="C2", label=f"loss at position {late} − loss at position {early}")
    ax.axhline(0.0, color="grey", lw=1, ls=":")
    if phase is not None:
        ax.axvline(phase, color="black", lw=1, ls="--", label=f"the loss drop (step {phase})")
    ax.set_xlabel("training step")
    ax.set_ylabel("in-context learning score (nats)")
    _legend_off_the_data(ax)
    return ax.figure


def ov_circuits_plot(circuits: Mapping[str, torch.Tensor], tick_every: int = 16):
    """Full OV circuits (|V|, |V|) side by side on one diverging colour scale, symmetric about 0,
    with one colour bar: row a = the logits a head adds when it attends to token a."""
    if not circuits:
        raise ValueError("ov_circuits_plot: circuits is empty; pass {title: (|V|, |V|) matrix}")
    mats = {}
    for title, c in circuits.items():
        c = torch.as_tensor(c).detach().to("cpu", torch.float32)
        if c.dim() != 2 or c.shape[0] != c.shape[1]:
            raise ValueError(f"ov_circuits_plot: {title!r} must be a square matrix, got {tuple(c.shape)}")
        mats[title] = c.numpy()
    top = max(float(np.abs(m).max()) for m in mats.values()) or 1.0
    fig, axes = plt.subplots(1, len(mats), figsize=(4.4 * len(mats) + 1.2, 4.3), layout="constrained",
                             squeeze=False)
    for ax, (title, m) in zip(axes[0], mats.items(), strict=True):
        im = ax.imshow(m, cmap="RdBu_r", vmin=-top, vmax=top, interpolation="nearest")
        ticks = np.arange(0, m.shape[0], tick_every)
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.set_title(title)
        ax.set_xlabel("logit of token")
        ax.set_ylabel("token attended to")
    fig.colorbar(im, ax=list(axes[0]), fraction=0.046, pad=0.04, label="logit added")
    return fig


def composition_plot(scores: Mapping[str, torch.Tensor], baseline: torch.Tensor, ax=None):
    """Composition scores of every layer-0 head i into every layer-1 head j, one group of bars per
    pair (0, i) -> (1, j), one bar per kind in ``scores`` ({kind: (h, h)}); the scores of random
    matrices ``baseline`` (samples,) as a grey band from the smallest to the 95th percentile, with
    their mean (dotted)."""
    if not scores:
        raise ValueError("composition_plot: scores is empty; pass {kind: (h, h) scores}")
    mats = {k: torch.as_tensor(v).detach().cpu().float() for k, v in scores.items()}
    shape = next(iter(mats.values())).shape
    if len(shape) != 2 or any(m.shape != shape for m in mats.values()):
        raise ValueError(f"composition_plot: every score matrix must be (h, h), got "
                         f"{[tuple(m.shape) for m in mats.values()]}")
    base = torch.as_tensor(baseline).detach().cpu().float().reshape(-1)
    if base.numel() == 0:
        raise ValueError("composition_plot: baseline is empty; pass random composition scores")
    if ax is None:
        ax = _axes((7.5, 3.8))
    pairs = [(i, j) for i in range(shape[0]) for j in range(shape[1])]
    width = 0.8 / len(mats)
    ax.axhspan(float(base.min()), float(base.quantile(0.95)), color="0.85",
               label="random matrices (smallest to 95th percentile)")
    ax.axhline(float(base.mean()), color="0.4", lw=1, ls=":", label="random matrices (mean)")
    for k, (kind, m) in enumerate(mats.items()):
        xs = np.arange(len(pairs)) + (k - (len(mats) - 1) / 2) * width
        ax.bar(xs, [float(m[i, j]) for i, j in pairs], width=width, color=f"C{k}", label=kind)
    ax.set_xticks(np.arange(len(pairs)), [f"(0, {i}) → (1, {j})" for i, j in pairs])
    ax.set_xlabel("layer-0 head → layer-1 head")
    ax.set_ylabel("composition score")
    ax.set_ylim(0, max(float(base.max()), max(float(m.max()) for m in mats.values())) * 1.3)
    _legend_off_the_data(ax, above=True)
    return ax.figure


def path_ablation_plot(losses: Mapping[str, float], intact: float, chance: float,
                       floor: float | None = None, ax=None):
    """Repeated-half loss after each ablation in ``losses`` ({label: loss}), as horizontal bars,
    with the intact model's loss, the chance level and (if given) the floor of a perfect
    one-token induction head."""
    if not losses:
        raise ValueError("path_ablation_plot: losses is empty; pass {label: loss}")
    if ax is None:
        ax = _axes((10, 0.45 * len(losses) + 1.4))
    labels = list(losses)
    ax.barh(range(len(labels)), [float(losses[k]) for k in labels], color="C0")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.axvline(intact, color="C1", lw=1.5, label=f"intact model ({intact:.2f})")
    ax.axvline(chance, color="grey", lw=1, ls=":", label=r"chance $\ln|\mathcal{V}|$")
    if floor is not None:
        ax.axvline(floor, color="black", lw=1, ls="-.", label=FLOOR_LABEL)
    ax.set_xlabel("repeated-half loss (nats)")
    ax.set_xlim(0, chance * 1.1)
    _legend_off_the_data(ax)
    return ax.figure


def previous_token_by_position_plot(curves: Mapping[str, torch.Tensor], n: int | None = None,
                                    longest_first_half: int | None = None, ax=None):
    """A head's attention on t - 1 at each query position t = 1, 2, ... (one line per entry of
    ``curves``: {label: (L-1,) weights}); the repeated half of period ``n`` shaded; a dashed line
    where queries are always in the repeated half during training (``longest_first_half``)."""
    if not curves:
        raise ValueError("previous_token_by_position_plot: curves is empty; pass {label: (L-1,) weights}")
    if ax is None:
        ax = _axes((10.5, 3.2))
    top = 0
    for k, (label, c) in enumerate(curves.items()):
        c = torch.as_tensor(c).detach().cpu().float().reshape(-1)
        ax.plot(np.arange(1, len(c) + 1), c.numpy(), "o-" if k == 0 else "x--", ms=4, color=f"C{k}",
                label=label)
        top = max(top, len(c))
    if n is not None:
        ax.axvspan(n - 0.5, top + 0.5, color="0.9", label=f"repeated half (n = {n})")
    if longest_first_half is not None:
        ax.axvline(longest_first_half - 0.5, color="black", lw=1, ls="--",
                   label=f"from {longest_first_half} on: never in a first half in training")
    ax.set_xlim(0.5, top + 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("query position t")
    ax.set_ylabel("attention on t − 1")
    _legend_off_the_data(ax)
    return ax.figure


def sink_plot(to_first: torch.Tensor, n: int | None = None, layer: int = 1, ax=None):
    """Attention on position 0 at each query position t, one line per head (``to_first`` (h, L)),
    with what a head spreading its attention evenly would give, 1 / (t + 1); the repeated half of
    period ``n`` shaded."""
    w = torch.as_tensor(to_first).detach().cpu().float()
    if w.dim() != 2:
        raise ValueError(f"sink_plot: to_first must be (h, L), got shape {tuple(w.shape)}")
    if ax is None:
        ax = _axes((10.5, 3.2))
    t = np.arange(w.shape[1])
    if n is not None:
        ax.axvspan(n - 0.5, w.shape[1] - 0.5, color="0.9", label=f"repeated half (n = {n})")
    for h in range(w.shape[0]):
        ax.plot(t, w[h].numpy(), "o-", ms=4, color=f"C{h}", label=f"layer {layer}, head {h}")
    ax.plot(t, 1.0 / (t + 1), color="grey", ls=":", label="even spread 1 / (t + 1)")
    ax.set_xlim(-0.5, w.shape[1] - 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("query position t")
    ax.set_ylabel("attention on position 0")
    _legend_off_the_data(ax)
    return ax.figure
