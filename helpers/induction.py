"""Induction heads (notebook 14): a small attention-only transformer trained on repeated random
tokens, and the measurements that find and test its heads.

Every sequence is ``n`` random tokens followed by the same ``n`` tokens again. The period ``n``
changes from batch to batch, so no head can solve the task by looking a fixed number of positions
back: the model has to find the previous occurrence of the current token by its content and read
the token that followed it. That is what an induction head does.
"""

from __future__ import annotations

import math
import time

import torch
import torch.nn.functional as F
from torch import nn

from ._cache import load_or_train
from .attention import MultiHeadAttention, causal_mask
from .training import warmup_lr

__all__ = [
    "AttentionOnlyTransformer",
    "head_scores",
    "induction_view",
    "loss_curves_plot",
    "per_position_plot",
    "scores_over_training_plot",
    "induction_score",
    "per_position_loss",
    "previous_token_score",
    "repeated_tokens",
    "train_induction_model",
]


def _check_int(name: str, value, low: int, func: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{func}: {name} must be an int, got {type(value).__name__} {value!r}")
    if value < low:
        raise ValueError(f"{func}: {name} must be >= {low}, got {value}")
    return value


def repeated_tokens(batch_size: int, n: int, vocab_size: int,
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """(batch_size, 2n) token ids: n random tokens, then the same n tokens again."""
    _check_int("batch_size", batch_size, 1, "repeated_tokens")
    _check_int("n", n, 2, "repeated_tokens")
    _check_int("vocab_size", vocab_size, 2, "repeated_tokens")
    first = torch.randint(0, vocab_size, (batch_size, n), generator=generator)  # (B, n)
    return torch.cat([first, first], dim=1)  # (B, 2n)


class AttentionOnlyTransformer(nn.Module):
    """Token + learned position embeddings, ``num_layers`` attention layers, an unembedding.

    No MLPs and no LayerNorm: each layer only adds its heads' outputs to the residual stream
    ``x`` (B, L, d_model), so every head's contribution stays visible. ``forward(ids,
    ablate=((layer, head), ...))`` zeroes the listed heads' outputs (before W_o).
    After a forward pass, ``patterns()`` gives each layer's attention weights (B, h, L, L).
    """

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 2,
                 num_layers: int = 2, max_len: int = 64):
        super().__init__()
        func = "AttentionOnlyTransformer"
        for name, value, low in (("vocab_size", vocab_size, 2), ("d_model", d_model, 1),
                                 ("num_heads", num_heads, 1), ("num_layers", num_layers, 1),
                                 ("max_len", max_len, 2)):
            _check_int(name, value, low, func)
        self.vocab_size, self.max_len = vocab_size, max_len
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList(MultiHeadAttention(d_model, num_heads) for _ in range(num_layers))
        self.unembed = nn.Linear(d_model, vocab_size)

    @property
    def num_heads(self) -> int:
        return self.layers[0].num_heads

    def _check_ablate(self, ablate) -> set[tuple[int, int]]:
        heads = set()
        for item in ablate:
            if (not isinstance(item, tuple | list) or len(item) != 2
                    or not all(isinstance(i, int) and not isinstance(i, bool) for i in item)):
                raise TypeError(f"AttentionOnlyTransformer: ablate must hold (layer, head) pairs of "
                                f"ints, got {item!r}")
            layer, head = item
            if not (0 <= layer < len(self.layers) and 0 <= head < self.num_heads):
                raise ValueError(f"AttentionOnlyTransformer: ablate names head {tuple(item)}, but "
                                 f"layers are 0..{len(self.layers) - 1} and heads "
                                 f"0..{self.num_heads - 1}")
            heads.add((layer, head))
        return heads

    def forward(self, ids: torch.Tensor, ablate=()) -> torch.Tensor:
        """ids (B, L) -> logits (B, L, vocab_size)."""
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype != torch.long:
            got = f"shape {tuple(ids.shape)} {ids.dtype}" if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"AttentionOnlyTransformer: ids must be a (B, L) torch.long tensor, got {got}")
        length = ids.shape[1]
        if not 1 <= length <= self.max_len:
            raise ValueError(f"AttentionOnlyTransformer: ids has length {length}, expected 1..{self.max_len}")
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"AttentionOnlyTransformer: ids must lie in 0..{self.vocab_size - 1}, "
                             f"got values {int(ids.min())}..{int(ids.max())}")
        off = self._check_ablate(ablate)
        x = self.embed(ids) + self.pos(torch.arange(length, device=ids.device))  # (B, L, d_model)
        mask = causal_mask(length, device=ids.device)  # (L, L)
        for i, attn in enumerate(self.layers):
            zero = [h for (layer, h) in off if layer == i]
            hook = attn.w_o.register_forward_pre_hook(_zero_heads(zero, attn.d_k)) if zero else None
            try:
                x = x + attn(x, x, x, mask=mask)  # the residual stream: (B, L, d_model)
            finally:
                if hook is not None:
                    hook.remove()
        return self.unembed(x)  # (B, L, vocab_size)

    def patterns(self) -> list[torch.Tensor]:
        """Attention weights of the last forward pass, one (B, h, L, L) tensor per layer."""
        if any(a.attn_weights is None for a in self.layers):
            raise RuntimeError("AttentionOnlyTransformer.patterns: run the model on some ids first")
        return [a.attn_weights for a in self.layers]


def _zero_heads(heads: list[int], d_k: int):
    """A forward pre-hook for W_o that zeroes the given heads' slices of its input (B, L, h*d_k)."""
    def hook(_module, args):
        (merged,) = args
        merged = merged.clone()
        for h in heads:
            merged[..., h * d_k:(h + 1) * d_k] = 0.0
        return (merged,)
    return hook


def per_position_loss(model: nn.Module, ids: torch.Tensor, ablate=()) -> torch.Tensor:
    """Cross-entropy of predicting ids[:, t+1] from ids[:, :t+1], averaged over the batch: (L-1,)."""
    with torch.no_grad():
        logits = model(ids[:, :-1], ablate=ablate)  # (B, L-1, V)
        loss = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")  # (B, L-1)
    return loss.mean(0)


def _check_patterns(weights: torch.Tensor, func: str) -> torch.Tensor:
    if not isinstance(weights, torch.Tensor) or weights.dim() < 2 or weights.shape[-1] != weights.shape[-2]:
        got = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        raise ValueError(f"{func}: weights must be (..., L, L) attention weights, got {got}")
    return weights


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean attention from each position t >= 1 to t - 1: weights (..., L, L) -> (...)."""
    w = _check_patterns(weights, "previous_token_score")
    return w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)


def induction_score(weights: torch.Tensor, n: int) -> torch.Tensor:
    """Mean attention from each position t >= n of a repeated sequence (period n) to t - n + 1,
    the token after the previous occurrence of the current one: weights (..., 2n, 2n) -> (...)."""
    w = _check_patterns(weights, "induction_score")
    _check_int("n", n, 2, "induction_score")
    if w.shape[-1] != 2 * n:
        raise ValueError(f"induction_score: weights cover {w.shape[-1]} positions, expected 2n = {2 * n}")
    return w.diagonal(offset=-(n - 1), dim1=-2, dim2=-1)[..., 1:].mean(-1)


def head_scores(model: AttentionOnlyTransformer, ids: torch.Tensor, n: int) -> dict[str, torch.Tensor]:
    """Previous-token and induction scores of every head on repeated sequences ids (B, 2n):
    two (num_layers, h) tensors, averaged over the batch."""
    with torch.no_grad():
        model(ids)
    pats = torch.stack([p.mean(0) for p in model.patterns()])  # (layers, h, 2n, 2n)
    return {"previous": previous_token_score(pats), "induction": induction_score(pats, n)}


def train_induction_model(num_layers: int = 2, steps: int = 600, seed: int = 0,
                          vocab_size: int = 64, n_range: tuple[int, int] = (8, 16),
                          d_model: int = 64, num_heads: int = 2, batch_size: int = 32,
                          peak_lr: float = 3e-3, eval_every: int = 20, eval_n: int = 12,
                          device=None, cache: bool = False):
    """Train an AttentionOnlyTransformer on repeated random tokens; returns (model, history).

    The period n is drawn from ``n_range`` for each batch. Every ``eval_every`` steps the history
    records, on one fixed evaluation batch of period ``eval_n``: the loss on the first half and
    on the repeated half, and every head's previous-token and induction scores.
    With ``cache=True`` the trained model is kept on disk and loaded the next time the same
    arguments are asked for (notebook 14 and its solutions share it); ``history["cached"]`` says
    which happened, and ``history["seconds"]`` is then the time the original training took.
    """
    _check_int("steps", steps, 1, "train_induction_model")
    _check_int("eval_every", eval_every, 1, "train_induction_model")
    lo, hi = n_range
    _check_int("n_range[0]", lo, 2, "train_induction_model")
    if hi < lo or 2 * max(hi, eval_n) > 64:
        raise ValueError(f"train_induction_model: n_range must be (lo, hi) with 2 <= lo <= hi <= 32, got {n_range}")
    device = torch.device(device or "cpu")
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(vocab_size, d_model, num_heads, num_layers).to(device)
    key = {"num_layers": num_layers, "steps": steps, "seed": seed, "vocab_size": vocab_size,
           "n_range": list(n_range), "batch_size": batch_size, "peak_lr": peak_lr,
           "eval_every": eval_every, "eval_n": eval_n}

    def fit() -> dict:
        return _fit_induction(model, steps, seed, vocab_size, (lo, hi), batch_size, peak_lr,
                              eval_every, eval_n, device)

    model, history = load_or_train("induction", model, fit, key, cache=cache)
    if not cache:
        history.pop("cached")
    return model, history


def _fit_induction(model, steps, seed, vocab_size, n_range, batch_size, peak_lr, eval_every,
                   eval_n, device) -> dict:
    """train_induction_model's loop: trains ``model`` in place, returns its history."""
    lo, hi = n_range
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    eval_ids = repeated_tokens(256, eval_n, vocab_size, torch.Generator().manual_seed(seed + 1)).to(device)
    history = {"step": [], "first_half": [], "repeated_half": [], "per_position": [],
               "previous": [], "induction": []}
    start = time.perf_counter()
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            model.eval()
            loss = per_position_loss(model, eval_ids)  # (2n-1,)
            scores = head_scores(model, eval_ids, eval_n)
            history["step"].append(step)
            history["first_half"].append(loss[:eval_n - 1].mean().item())
            history["repeated_half"].append(loss[eval_n:].mean().item())
            history["per_position"].append(loss.cpu())
            history["previous"].append(scores["previous"].cpu())
            history["induction"].append(scores["induction"].cpu())
            model.train()
        if step == steps:
            break
        n = int(torch.randint(lo, hi + 1, (1,), generator=gen))
        ids = repeated_tokens(batch_size, n, vocab_size, gen).to(device)  # (B, 2n)
        logits = model(ids[:, :-1])  # (B, 2n-1, V)
        loss = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:])
        for group in opt.param_groups:
            group["lr"] = warmup_lr(step, peak_lr, warmup_steps=steps // 20 + 1, total_steps=steps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    history["seconds"] = time.perf_counter() - start
    history["chance"] = math.log(vocab_size)
    return history


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


def induction_view(model: AttentionOnlyTransformer, layer: int, head: int, seed: int = 0, n: int = 12):
    """One new repeated sequence (period n, drawn from ``seed``): the chosen head's attention
    pattern (masked cells hatched) beside the model's loss at each position. Returns a Figure;
    ``helpers.widgets.induction_widget`` puts it behind controls."""
    import matplotlib.pyplot as plt

    from .plots import attention_heatmap

    if not isinstance(layer, int) or not 0 <= layer < len(model.layers):
        raise ValueError(f"induction_view: layer must be an int in 0..{len(model.layers) - 1}, got {layer!r}")
    if not isinstance(head, int) or not 0 <= head < model.num_heads:
        raise ValueError(f"induction_view: head must be an int in 0..{model.num_heads - 1}, got {head!r}")
    _check_int("seed", seed, 0, "induction_view")
    ids = repeated_tokens(1, n, model.vocab_size, torch.Generator().manual_seed(seed))  # (1, 2n)
    ids = ids.to(next(model.parameters()).device)
    loss = per_position_loss(model, ids).cpu()  # (2n-1,), runs the model on ids[:, :-1]
    with torch.no_grad():
        model(ids)
    weights = model.patterns()[layer][0, head].cpu()  # (2n, 2n)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.15, 1]})
    labels = [str(t) for t in ids[0].tolist()]
    attention_heatmap(weights, labels, labels, ax=ax0, vmin=0.0, vmax=1.0, annotate=False,
                      title=f"layer {layer}, head {head}", mask=causal_mask(2 * n))
    ax1.bar(range(1, 2 * n), loss.numpy(), color=["C0"] * (n - 1) + ["C1"] * n)
    ax1.axhline(math.log(model.vocab_size), color="grey", ls=":", lw=1)
    ax1.axvline(n - 0.5, color="black", lw=0.8)
    ax1.set_xlabel("predicted position (blue: first half, orange: repeated half)")
    ax1.set_ylabel("loss (nats)")
    ax1.set_title("loss at each position")
    fig.tight_layout()
    return fig
