"""Figures of notebook 15 (a real language model): losses of several settings side by side, the
loss at each position of a repeated sequence, and the logit lens (what each layer predicts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

__all__ = ["logit_lens_plot", "loss_bars", "token_loss_plot"]


def loss_bars(results: Sequence[Mapping[str, float]], ax=None, ylabel: str = "loss (nats)",
              group_label: str = "run"):
    """Grouped bars: one group per entry of ``results`` (a dict setting -> loss each, the same
    settings in every dict), one colour per setting, the legend above the bars."""
    if not results or not all(isinstance(r, Mapping) and r for r in results):
        raise ValueError("loss_bars: results must be a non-empty list of non-empty dicts {setting: loss}")
    names = list(results[0])
    if any(list(r) != names for r in results):
        raise ValueError(f"loss_bars: every dict must hold the settings {names} in that order")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.4))
    width = 0.8 / len(names)
    x = np.arange(len(results))
    for i, name in enumerate(names):
        ax.bar(x + (i - (len(names) - 1) / 2) * width, [r[name] for r in results], width,
               color=f"C{i}", label=name)
    ax.set_xticks(x, [f"{group_label} {j + 1}" for j in range(len(results))])
    ax.set_ylabel(ylabel)
    top = max(max(r.values()) for r in results)
    ax.set_ylim(0, top * 1.3)  # room above the bars for the legend
    ax.legend(loc="upper center", ncol=len(names), fontsize=8, frameon=False)
    ax.figure.tight_layout()
    return ax.figure


def token_loss_plot(losses: torch.Tensor, n: int, ax=None):
    """The loss of each next token of a repeated sequence (period ``n``), averaged over the batch:
    losses (B, 2n - 1); a grey line where the second copy starts."""
    if not isinstance(losses, torch.Tensor) or losses.dim() != 2 or losses.shape[1] != 2 * n - 1:
        got = tuple(losses.shape) if isinstance(losses, torch.Tensor) else type(losses).__name__
        raise ValueError(f"token_loss_plot: losses must be (B, 2n - 1) = (B, {2 * n - 1}), got {got}")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    ax.plot(np.arange(1, 2 * n), losses.mean(0).numpy(), "o-", ms=3, color="C0")
    ax.axvline(n - 0.5, color="grey", lw=1, ls=":")
    ax.text(n, ax.get_ylim()[1] * 0.95, " second copy starts", va="top", fontsize=8, color="grey")
    ax.set_xlabel("position of the predicted token")
    ax.set_ylabel("loss (nats)")
    ax.figure.tight_layout()
    return ax.figure


def logit_lens_plot(target_probs: torch.Tensor, top_tokens: Sequence[str], target: str, ax=None):
    """The probability of ``target`` after the embedding (layer 0) and after each block, with the
    most likely token at every fifth layer and the last written above the curve."""
    if not isinstance(target_probs, torch.Tensor) or target_probs.dim() != 1:
        raise ValueError("logit_lens_plot: target_probs must be a 1-D tensor (one probability per layer)")
    if len(top_tokens) != len(target_probs):
        raise ValueError(f"logit_lens_plot: {len(top_tokens)} top tokens for {len(target_probs)} layers")
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.4))
    layers = np.arange(len(target_probs))
    ax.plot(layers, target_probs.numpy(), "o-", ms=3, color="C0", label=f"probability of {target!r}")
    last = len(layers) - 1
    for layer in [*range(0, last, 5), last]:
        ax.annotate(repr(top_tokens[layer]), (layer, float(target_probs[layer])), textcoords="offset points",
                    xytext=(0, 10), ha="center", fontsize=8, rotation=45)
    ax.set_ylim(0, 1.35)
    ax.set_xlabel("layer (0 = embedding)")
    ax.set_ylabel("probability")
    ax.set_title("most likely next token, read after each layer", fontsize=10)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.figure.tight_layout()
    return ax.figure
