"""Induction heads (notebook 14): a small attention-only transformer, and the measurements that find
and test its heads: previous-token and induction scores, the loss at each position, head ablation
(everywhere, or only on some paths: the keys, queries or values of later layers), and the weight
circuits (what a head writes, the full OV circuit to the logits, composition scores).

It is trained on repeated random tokens (``helpers.data.repeated``; ``helpers.training.
train_induction_model``): every sequence is ``n`` random tokens followed by the same ``n`` tokens
again. The period ``n`` changes from batch to batch, so no head can solve the task by looking a
fixed number of positions back: the model has to find the previous occurrence of the current token
by its content and read the token that followed it. That is what an induction head does.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import int_at_least
from .attention import MultiHeadAttention, causal_mask

__all__ = [
    "PATHS",
    "AttentionOnlyTransformer",
    "composition_score",
    "composition_scores",
    "copying_share",
    "eigenvalue_positivity",
    "full_ov_circuit",
    "head_scores",
    "head_writes",
    "induction_score",
    "ov_matrix",
    "per_position_loss",
    "previous_token_score",
    "qk_matrix",
    "random_composition_scores",
]

PATHS = ("queries", "keys", "values", "logits")  # where a head's write is read after its layer


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
            int_at_least(func, name, value, low)
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

    def _check_paths(self, into, positions, length: int, device) -> tuple[set[str], torch.Tensor | None]:
        where = "AttentionOnlyTransformer"
        if isinstance(into, str):
            into = (into,)
        try:
            into = set(into)
        except TypeError:
            raise TypeError(f"{where}: into must name some of {PATHS}, got {into!r}") from None
        if not into or not into <= set(PATHS):
            raise ValueError(f"{where}: into must be a non-empty subset of {PATHS}, got {sorted(into)}")
        if positions is not None:
            if (not isinstance(positions, torch.Tensor) or positions.dtype != torch.bool
                    or positions.shape != (length,)):
                got = (f"{positions.dtype} of shape {tuple(positions.shape)}"
                       if isinstance(positions, torch.Tensor) else type(positions).__name__)
                raise ValueError(f"{where}: positions must be a bool tensor of shape ({length},) "
                                 f"(True = remove the write there), got {got}")
            positions = positions.to(device)
        return into, positions

    def forward(self, ids: torch.Tensor, ablate=(), into=PATHS, positions=None) -> torch.Tensor:
        """ids (B, L) -> logits (B, L, vocab_size).

        ``ablate`` lists (layer, head) pairs whose writes to the residual stream are removed. By
        default they are removed everywhere, as if the heads were switched off (their outputs
        zeroed before W_o). ``into`` removes them only where they are read after their layer: a
        subset of ``PATHS`` = ("queries", "keys", "values", "logits"). For example
        ``into=("keys",)`` takes a head's write out of the keys of the later layers while their
        queries, their values and the unembedding still see it: a *path* ablation. ``positions``
        (bool (L,), True = remove) removes the writes at those positions of the stream only.
        """
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
        into, positions = self._check_paths(into, positions, length, ids.device)
        x = self.embed(ids) + self.pos(torch.arange(length, device=ids.device))  # (B, L, d_model)
        mask = causal_mask(length, device=ids.device)  # (L, L)
        if into != set(PATHS) or positions is not None:
            return self._forward_paths(x, mask, off, into, positions)
        for i, attn in enumerate(self.layers):
            zero = [h for (layer, h) in off if layer == i]
            hook = attn.w_o.register_forward_pre_hook(_zero_heads(zero, attn.d_k)) if zero else None
            try:
                x = x + attn(x, x, x, mask=mask)  # the residual stream: (B, L, d_model)
            finally:
                if hook is not None:
                    hook.remove()
        return self.unembed(x)  # (B, L, vocab_size)

    def _forward_paths(self, x, mask, off, into, positions) -> torch.Tensor:
        """The forward pass with every head's write kept apart: ``x`` is the full stream,
        ``removed`` the part of it written by the ablated heads (at ``positions``); each path in
        ``into`` reads ``x - removed``, the others read ``x``."""
        removed = torch.zeros_like(x)  # (B, L, d_model)
        where = 1.0 if positions is None else positions[None, :, None].to(x.dtype)  # (1, L, 1)
        for i, attn in enumerate(self.layers):
            seen = {p: x - removed if p in into else x for p in ("queries", "keys", "values")}
            writes, weights = head_writes(attn, seen["queries"], seen["keys"], seen["values"], mask)
            attn.attn_weights = weights  # (B, h, L, L), for patterns()
            x = x + writes.sum(1) + attn.w_o.bias  # (B, h, L, d_model) -> (B, L, d_model)
            for h in sorted(h for (layer, h) in off if layer == i):
                removed = removed + writes[:, h] * where
        return self.unembed(x - removed if "logits" in into else x)  # (B, L, vocab_size)

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


def per_position_loss(model: nn.Module, ids: torch.Tensor, ablate=(), into=PATHS,
                      positions=None) -> torch.Tensor:
    """Cross-entropy of predicting ids[:, t+1] from ids[:, :t+1], averaged over the batch: (L-1,).
    ``ablate``, ``into`` and ``positions`` go to the model (``positions`` covers the L-1 inputs)."""
    with torch.no_grad():
        if into is PATHS and positions is None:
            logits = model(ids[:, :-1], ablate=ablate)  # (B, L-1, V)
        else:
            logits = model(ids[:, :-1], ablate=ablate, into=into, positions=positions)
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
    int_at_least("induction_score", "n", n, 2)
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




def head_writes(attn: MultiHeadAttention, query: torch.Tensor, key: torch.Tensor | None = None,
                value: torch.Tensor | None = None, mask: torch.Tensor | None = None):
    """What each head of ``attn`` adds to the residual stream, kept apart.

    query (B, Lq, d_model), key and value (B, Lk, d_model) (default: the query), ``mask`` as for
    ``MultiHeadAttention`` (True = may attend). Returns ``(writes, weights)``: writes (B, h, Lq,
    d_model), one term per head, whose sum plus ``attn.w_o.bias`` is ``attn(query, key, value,
    mask)``; weights (B, h, Lq, Lk), the attention patterns.
    """
    if not isinstance(attn, MultiHeadAttention):
        raise TypeError(f"head_writes: attn must be a MultiHeadAttention, got {type(attn).__name__}")
    key = query if key is None else key
    value = key if value is None else value
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != attn.d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"head_writes: {name} must be (B, L, d_model={attn.d_model}), got {got}")
    b, lq, _ = query.shape
    lk, h, d_k = key.shape[1], attn.num_heads, attn.d_k
    q = attn.w_q(query).view(b, lq, h, d_k).transpose(1, 2)  # (B, Lq, d_model) -> (B, h, Lq, d_k)
    k = attn.w_k(key).view(b, lk, h, d_k).transpose(1, 2)  # (B, Lk, d_model) -> (B, h, Lk, d_k)
    v = attn.w_v(value).view(b, lk, h, d_k).transpose(1, 2)  # (B, Lk, d_model) -> (B, h, Lk, d_k)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, Lq, Lk)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (B, h, Lq, Lk)
    z = weights @ v  # (B, h, Lq, d_k)
    w_o = attn.w_o.weight.view(attn.d_model, h, d_k)  # (d_model, h * d_k) -> (d_model, h, d_k)
    writes = torch.einsum("bhqk,mhk->bhqm", z, w_o)  # (B, h, Lq, d_model)
    return writes, weights


# ---- the weights as circuits ---------------------------------------------------------------------
def _head(model, layer, head, func: str) -> tuple[MultiHeadAttention, slice]:
    if not isinstance(model, AttentionOnlyTransformer):
        raise TypeError(f"{func}: model must be an AttentionOnlyTransformer, got {type(model).__name__}")
    for name, value, top in (("layer", layer, len(model.layers)), ("head", head, model.num_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < top:
            raise ValueError(f"{func}: {name} must be an int in 0..{top - 1}, got {value!r}")
    attn = model.layers[layer]
    return attn, slice(head * attn.d_k, (head + 1) * attn.d_k)


def ov_matrix(model: AttentionOnlyTransformer, layer: int, head: int) -> torch.Tensor:
    """(d_model, d_model): what the head writes when it attends to a stream vector x (a row) is
    ``x @ ov_matrix`` (value bias aside): W_{v,h} W_{o,h}, head h's d_k columns of W_v times its
    d_k rows of W_o (``nn.Linear`` stores the transposes: rows of ``w_v.weight``, columns of
    ``w_o.weight``). It acts on row vectors, so it is the transpose of Elhage et al.'s (2021)
    W_OV = W_O W_V, which acts on column vectors."""
    attn, s = _head(model, layer, head, "ov_matrix")
    w_v = attn.w_v.weight[s]  # (d_k, d_model): W_{v,h} transposed (rows of w_v.weight)
    w_o = attn.w_o.weight[:, s]  # (d_model, d_k): W_{o,h} transposed (columns of w_o.weight)
    return (w_v.T @ w_o.T).detach()  # (d_model, d_k) @ (d_k, d_model)


def qk_matrix(model: AttentionOnlyTransformer, layer: int, head: int) -> torch.Tensor:
    """(d_model, d_model): the head's score of a query x_q on a key x_k is
    ``x_q @ qk_matrix @ x_k`` / sqrt(d_k) (biases aside): W_{QK} = W_{q,h} W_{k,h}^T."""
    attn, s = _head(model, layer, head, "qk_matrix")
    return (attn.w_q.weight[s].T @ attn.w_k.weight[s]).detach()  # (d_model, d_k) @ (d_k, d_model)


def full_ov_circuit(model: AttentionOnlyTransformer, layer: int, head: int) -> torch.Tensor:
    """(|V|, |V|): row a holds the logits the head adds (through the direct path to the
    unembedding) when it attends to a position holding token a: E W_{v,h} W_{o,h} U^T."""
    _head(model, layer, head, "full_ov_circuit")
    embed, unembed = model.embed.weight.detach(), model.unembed.weight.detach()  # (|V|, d_model) each
    return embed @ ov_matrix(model, layer, head) @ unembed.T  # (|V|, |V|)


def _square(circuit, func: str) -> torch.Tensor:
    if not isinstance(circuit, torch.Tensor) or circuit.dim() != 2 or circuit.shape[0] != circuit.shape[1]:
        got = tuple(circuit.shape) if isinstance(circuit, torch.Tensor) else type(circuit).__name__
        raise ValueError(f"{func}: circuit must be a square (|V|, |V|) matrix, got {got}")
    if circuit.shape[0] == 0:
        raise ValueError(f"{func}: circuit is empty, shape {tuple(circuit.shape)}; it needs one row "
                         f"and column per token")
    if not torch.isfinite(circuit).all():
        raise ValueError(f"{func}: circuit holds NaN or infinite values")
    return circuit.detach()


def copying_share(circuit: torch.Tensor) -> float:
    """Share of tokens a whose own logit is the largest of row a of a (|V|, |V|) circuit."""
    c = _square(circuit, "copying_share")
    return (c.argmax(-1) == torch.arange(c.shape[0], device=c.device)).float().mean().item()


def eigenvalue_positivity(circuit: torch.Tensor) -> float:
    """sum(eigenvalues) / sum(|eigenvalues|) of a square circuit, in [-1, 1]: 1 when every
    eigenvalue is real and positive (the matrix maps each direction to a positive multiple of
    itself, as a copying circuit does), -1 when every eigenvalue is real and negative."""
    c = _square(circuit, "eigenvalue_positivity")
    eig = torch.linalg.eigvals(c.to("cpu", torch.float64))  # complex, in conjugate pairs
    total = eig.abs().sum()
    if total == 0:
        raise ValueError("eigenvalue_positivity: circuit is zero, its eigenvalues have no sign")
    return (eig.sum().real / total).item()


def composition_score(first: torch.Tensor, second: torch.Tensor) -> float:
    """||first @ second||_F / (||first||_F ||second||_F): how much of what ``first`` writes
    ``second`` reads. 1 at most; for random matrices of the shapes here, near 1/sqrt(d_model)."""
    for name, t in (("first", first), ("second", second)):
        if not isinstance(t, torch.Tensor) or t.dim() != 2:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"composition_score: {name} must be a 2-D matrix, got {got}")
    if first.shape[1] != second.shape[0]:
        raise ValueError(f"composition_score: first {tuple(first.shape)} and second "
                         f"{tuple(second.shape)} cannot be multiplied")
    for name, t in (("first", first), ("second", second)):
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"composition_score: {name} holds NaN or infinite values")
        if not bool(t.any()):
            raise ValueError(f"composition_score: {name} is all zeros: the score divides by its norm, "
                             f"so it is undefined (a head that writes or reads nothing composes with none)")
    return ((first @ second).norm() / (first.norm() * second.norm())).item()


def composition_scores(model: AttentionOnlyTransformer, kind: str, source: int = 0,
                       target: int = 1) -> torch.Tensor:
    """(h, h): entry [i, j] is the composition score of head i of layer ``source`` into the
    ``kind`` ("queries", "keys" or "values") of head j of layer ``target``. With W_{OV,i} = W_{v,i} W_{o,i} (``ov_matrix``) and W_{QK,j} (``qk_matrix``): queries
    W_{OV,i} W_{QK,j}; keys W_{OV,i} W_{QK,j}^T; values W_{OV,i} W_{OV,j}."""
    if kind not in ("queries", "keys", "values"):
        raise ValueError(f"composition_scores: kind must be 'queries', 'keys' or 'values', got {kind!r}")
    _head(model, source, 0, "composition_scores")
    _head(model, target, 0, "composition_scores")
    if not source < target:
        raise ValueError(f"composition_scores: source must be an earlier layer than target, got "
                         f"{source} and {target}")
    h = model.num_heads
    out = torch.zeros(h, h)
    for i in range(h):
        write = ov_matrix(model, source, i)  # (d_model, d_model)
        for j in range(h):
            read = {"queries": qk_matrix(model, target, j), "keys": qk_matrix(model, target, j).T,
                    "values": ov_matrix(model, target, j)}[kind]
            out[i, j] = composition_score(write, read)
    return out


def random_composition_scores(d_model: int, d_k: int, samples: int = 200,
                              generator: torch.Generator | None = None) -> torch.Tensor:
    """(samples,): composition scores of random pairs of matrices shaped like two heads' circuits,
    each a (d_model, d_k) @ (d_k, d_model) product of Gaussian matrices (the score ignores scale):
    the baseline a trained score is compared with."""
    int_at_least("random_composition_scores", "d_model", d_model, 1)
    int_at_least("random_composition_scores", "d_k", d_k, 1)
    int_at_least("random_composition_scores", "samples", samples, 1)
    factors = torch.randn(samples, 4, d_model, d_k, generator=generator)  # (samples, 4, d_model, d_k)
    first = factors[:, 0] @ factors[:, 1].transpose(-2, -1)  # (samples, d_model, d_model)
    second = factors[:, 2] @ factors[:, 3].transpose(-2, -1)
    return ((first @ second).norm(dim=(-2, -1))
            / (first.norm(dim=(-2, -1)) * second.norm(dim=(-2, -1))))  # (samples,)
