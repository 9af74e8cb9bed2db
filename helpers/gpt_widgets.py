"""Notebook 12's figures and the pure functions behind its sampling widget.

``sampling_view`` computes what the widget shows (samples, whether each parses, the next-token
distribution); ``sampling_figure`` draws the distribution; ``helpers.widgets.sampling_widget``
wires standard controls to them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import toy_language as tl
from .sampling import filtered_probs

__all__ = ["SamplingView", "loss_vs_entropy_plot", "sample_sentences", "sampling_figure",
           "sampling_view", "tradeoff_plot"]


def sample_sentences(model, n: int, temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None, prompt: str = "", seed: int = 0,
                     max_new_tokens: int = 16) -> list[str]:
    """``n`` sentences sampled from ``model`` after the start token '.' and the (optional)
    ``prompt`` words: each is the prompt plus the generated words up to the first '.' (kept).
    A sample that reaches no '.' within ``max_new_tokens`` is returned without one."""
    device = next(model.parameters()).device
    prompt_ids = [1] + tl.encode(prompt)  # "." starts every prompt, like the training rows
    ids = torch.tensor([prompt_ids] * n, device=device)  # (n, L0)
    gen = torch.Generator(device=device).manual_seed(seed)
    out = model.generate(ids, max_new_tokens, temperature, top_k, top_p, generator=gen)
    texts = []
    for row in out[:, 1:].tolist():
        text = tl.decode(row)
        cut = text.find(".", len(tl.decode(prompt_ids[1:])))
        texts.append(text if cut < 0 else text[: cut + 1])
    return texts


@dataclass
class SamplingView:
    """What the sampling widget shows: the samples, whether each is a sentence, and the
    distribution of the next token after the prompt (``probs`` (|V|,), after the filters)."""

    prompt: str
    samples: list[str]
    parses: list[bool]
    probs: torch.Tensor
    labels: list[str]

    def __str__(self) -> str:
        ok = sum(self.parses)
        lines = [f"{ok} of {len(self.samples)} samples are sentences of the language"]
        lines += [f"  {'✓' if p else '✗'} {s}" for s, p in zip(self.samples, self.parses, strict=True)]
        return "\n".join(lines)


def sampling_view(model, prompt: str = "", temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None, n: int = 6, seed: int = 0) -> SamplingView | str:
    """Samples and the next-token distribution for a prompt; a message (str) for bad input."""
    if not isinstance(prompt, str):
        return f"The prompt must be text, got {type(prompt).__name__}"
    prompt = " ".join(prompt.lower().split())
    try:
        prompt_ids = [1] + tl.encode(prompt)
        if "." in tl.tokenize(prompt):
            return "Type the start of ONE sentence, without '.' (the model adds it)."
        device = next(model.parameters()).device
        with torch.no_grad():
            logits = model.eval()(torch.tensor([prompt_ids], device=device))[0, -1]  # (|V|,)
        probs = filtered_probs(logits.float().cpu(), temperature, top_k, top_p)
        samples = sample_sentences(model, n, temperature, top_k, top_p, prompt, seed)
    except ValueError as err:
        return f"Cannot sample: {err}"
    parses = [tl.is_sentence(s) for s in samples]
    return SamplingView(prompt, samples, parses, probs, list(tl.VOCAB))


def sampling_figure(view: SamplingView, top: int = 12, ax=None):
    """Bars of the ``top`` most probable next tokens of a ``SamplingView``."""
    import matplotlib.pyplot as plt

    from .plots import weight_bars

    p, idx = view.probs.sort(descending=True)
    keep = min(top, int((p > 0).sum()) or 1)
    labels = [view.labels[i] for i in idx[:keep].tolist()]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 2.8))
    weight_bars(p[:keep], labels, ax=ax, xlabel="next token",
                title=f"next token after '. {view.prompt}'".replace("  ", " "))
    return ax.figure


def loss_vs_entropy_plot(history: dict, entropy: float, val_loss: float | None = None, ax=None):
    """Training loss per logged step, and the language's entropy rate as a horizontal line."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    ax.plot(history["step"], history["loss"], marker="o", label="training loss")
    ax.axhline(entropy, color="black", linestyle="--", label="entropy of the language")
    if val_loss is not None:
        ax.plot([history["step"][-1]], [val_loss], marker="s", color="C3", linestyle="none",
                label="validation loss")
    ax.set_xlabel("step")
    ax.set_ylabel("nats per token")
    ax.legend()
    return ax.figure


def tradeoff_plot(values, parse_share, distinct, xlabel: str, n: int, ax=None,
                  diversity_label: str = "distinct sentences"):
    """Share of samples that parse (left axis) and a diversity count, e.g. the number of distinct
    sentences (right axis), against temperature or top-p."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    ax.plot(values, parse_share, marker="o", color="C0", label="share that parses")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share that parses", color="C0")
    twin = ax.twinx()
    twin.plot(values, distinct, marker="s", color="C1", label=diversity_label)
    twin.set_ylim(0, n * 1.05)
    twin.set_ylabel(f"{diversity_label} (of {n})", color="C1")
    return ax.figure
