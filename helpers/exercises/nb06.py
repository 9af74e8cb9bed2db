"""Checkers for the exercises of notebook 06 (positional encoding).

Exercises 1 and 2 are predict-then-verify: the learner states what will happen, the checker
measures it and says, for each statement, what it found.
"""

from __future__ import annotations

import torch

from ._common import NotAttempted, call, checker

__all__ = ["SCORE_TERMS", "TERM_KINDS", "WRONG_TRIES", "check_before_or_after", "check_rope_score_at_offset",
           "check_score_terms", "offset_matrix", "term_kind"]


def _pe(max_len: int, d_model: int) -> torch.Tensor:
    """The sinusoidal table, written out here so that the checks do not lean on the learner's code."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d/2,)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * omega)
    pe[:, 1::2] = torch.cos(pos * omega)
    return pe


def offset_matrix(delta: float, d_model: int) -> torch.Tensor:
    """Notebook 06's M_delta: (d_model, d_model) with PE(p + delta) = M_delta PE(p) for every p."""
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d/2,)
    c, s = torch.cos(delta * omega), torch.sin(delta * omega)
    blocks = [torch.tensor([[ci, si], [-si, ci]], dtype=torch.float64)
              for ci, si in zip(c.tolist(), s.tolist(), strict=True)]
    return torch.block_diag(*blocks)


def _rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """x (L, d) rotated pair by pair: pair i of row r by positions[r] * 10000^(-2i/d)."""
    d = x.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angle = positions.to(torch.float64)[:, None] * omega  # (L, d/2)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1).flatten(-2)


def _as_bool(name: str, value) -> bool:
    if value is None or value is Ellipsis:
        raise NotAttempted
    if not isinstance(value, bool):
        raise AssertionError(f"({name}): answer True or False, got {value!r}")
    return value


# ---- Exercise 1 --------------------------------------------------------------------------------

def _measure_before_or_after() -> dict[str, tuple[bool, str]]:
    """Each statement of exercise 1: (whether it holds, the evidence in words)."""
    d_model, n = 16, 60
    pe = _pe(n, d_model)
    gaps = []
    for delta in range(1, 20):
        p = torch.arange(delta, n - delta)
        ahead = (pe[p] * pe[p + delta]).sum(-1)
        behind = (pe[p] * pe[p - delta]).sum(-1)
        gaps.append(float((ahead - behind).abs().max()))
    a_gap = max(gaps)
    b_gap = max(float((offset_matrix(-delta, d_model) - offset_matrix(delta, d_model).T).abs().max())
                for delta in range(1, 20))
    g = torch.Generator().manual_seed(6)
    q, k = torch.randn(d_model, generator=g, dtype=torch.float64), torch.randn(
        d_model, generator=g, dtype=torch.float64)
    pos = torch.tensor([10])
    c_gaps = []
    for delta in (1, 3, 7):
        score_ahead = (_rope(q[None], pos) * _rope(k[None], pos + delta)).sum()
        score_behind = (_rope(q[None], pos) * _rope(k[None], pos - delta)).sum()
        c_gaps.append((delta, float(score_ahead), float(score_behind)))
    c_holds = all(abs(a - b) < 1e-6 for _, a, b in c_gaps)
    delta, ahead, behind = c_gaps[1]
    return {
        "a": (a_gap < 1e-9, f"largest |PE(p)·PE(p+Δ) − PE(p)·PE(p−Δ)| over Δ = 1..19 and every p: "
                            f"{a_gap:.4f}; cos is even, so Σ cos(Δω_i) = Σ cos(−Δω_i)"),
        "b": (b_gap < 1e-9, f"largest |M_(−Δ) − M_Δ^T| over Δ = 1..19: {b_gap:.4f}; each 2×2 block is "
                            "a rotation, and a rotation back is the transpose"),
        "c": (c_holds, f"for one q and k, offset +{delta} scores {ahead:.4f} and offset −{delta} scores "
                       f"{behind:.4f}: rotating k forward or backward by Δω_i turns it different ways "
                       "relative to q"),
    }


@checker("Exercise 1 (before or after?)")
def check_before_or_after(answers):
    """``answers``: {"a": bool, "b": bool, "c": bool}, True where the statement holds.

    (a) PE(p)·PE(p+Δ) equals PE(p)·PE(p−Δ) for every p and Δ;
    (b) M_(−Δ) equals the transpose of M_Δ;
    (c) with RoPE, the score of q at p and k at p+Δ equals the score of q at p and k at p−Δ.
    """
    if not isinstance(answers, dict):
        raise AssertionError(f'give a dict {{"a": True or False, "b": ..., "c": ...}}, got '
                             f"{type(answers).__name__}")
    missing = [key for key in "abc" if key not in answers]
    if missing:
        raise AssertionError(f"answer every statement: {missing} missing")
    given = {key: _as_bool(key, answers[key]) for key in "abc"}
    measured = _measure_before_or_after()
    wrong = [key for key in "abc" if given[key] != measured[key][0]]
    if wrong:
        lines = [f"({key}) you said {given[key]}, it is {measured[key][0]}: {measured[key][1]}"
                 for key in wrong]
        raise AssertionError(f"{len(wrong)} of 3 predictions are wrong.\n" + "\n".join(lines))


# ---- Exercise 2 --------------------------------------------------------------------------------

SCORE_TERMS = ("x.x", "x.PE(key)", "PE(query).x", "PE(query).PE(key)")
TERM_KINDS = ("constant", "offset", "positions")


def term_kind(t: torch.Tensor, tol: float = 1e-9) -> str:
    """What a (L, L) table of scores (query position, key position) depends on: "constant" (one
    value everywhere), "offset" (one value per diagonal, i.e. only key position − query position)
    or "positions" (the positions themselves)."""
    if float((t - t[0, 0]).abs().max()) < tol:
        return "constant"
    n = t.shape[0]
    for offset in range(-n + 1, n):
        diag = torch.diagonal(t, offset=offset)
        if float((diag - diag[0]).abs().max()) > tol:
            return "positions"
    return "offset"


def _measure_terms() -> dict[str, str]:
    d_model, n = 16, 20
    pe = _pe(n, d_model)  # (n, d)
    x = torch.randn(d_model, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    ones = torch.ones(n, 1, dtype=torch.float64)
    tables = {"x.x": (ones * x) @ (ones * x).T, "x.PE(key)": (ones * x) @ pe.T,
              "PE(query).x": pe @ (ones * x).T, "PE(query).PE(key)": pe @ pe.T}  # (query, key)
    return {name: term_kind(t) for name, t in tables.items()}


_TERM_HINTS = {
    "x.x": "the same token at every position: nothing in it knows where it is",
    "x.PE(key)": "one row of the table holds x·PE(p′) for every key position p′: it changes with p′ "
                 "itself, not with the offset",
    "PE(query).x": "it changes with the query position p itself",
    "PE(query).PE(key)": "Σ cos(Δω_i): only the offset Δ = p′ − p counts",
}


@checker("Exercise 2 (which part of the score knows the offset?)")
def check_score_terms(answers):
    """``answers``: {term: "constant" | "offset" | "positions"} for each of ``SCORE_TERMS`` of
    (x + PE(p))·(x + PE(p′)) = x·x + x·PE(p′) + PE(p)·x + PE(p)·PE(p′)."""
    if not isinstance(answers, dict):
        raise AssertionError(f"give a dict {{term: kind}}, got {type(answers).__name__}")
    if any(answers.get(term) is None or answers.get(term) is Ellipsis for term in SCORE_TERMS):
        raise NotAttempted
    unknown = [term for term in answers if term not in SCORE_TERMS]
    if unknown:
        raise AssertionError(f"unknown term(s) {unknown}; the terms are {list(SCORE_TERMS)}")
    bad = {term: answers[term] for term in SCORE_TERMS if answers[term] not in TERM_KINDS}
    if bad:
        raise AssertionError(f"each answer is one of {list(TERM_KINDS)}; got {bad}")
    measured = _measure_terms()
    wrong = [term for term in SCORE_TERMS if answers[term] != measured[term]]
    if wrong:
        lines = [f"{term}: you said {answers[term]!r}, measured {measured[term]!r} ({_TERM_HINTS[term]})"
                 for term in wrong]
        raise AssertionError(f"{len(wrong)} of {len(SCORE_TERMS)} are wrong.\n" + "\n".join(lines))


# ---- Exercise 3 --------------------------------------------------------------------------------

# Wrong answers to exercise 3 so far in this session: the first gets a hint only, so that the learner
# looks for the slip before seeing the expected score; later ones the expected score as well.
WRONG_TRIES = {"rope_score_at_offset": 0}


def _rope_half(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """x (L, d) rotated in the half-split pairing: dimension i with i + d/2 (``rotate_half``)."""
    d = x.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angle = positions.to(torch.float64)[:, None] * omega  # (L, d/2)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1)


def _score(rope, q: torch.Tensor, k: torch.Tensor, offset: int) -> torch.Tensor:
    """q at position 0 and k at position ``offset``, both rotated by ``rope``: a float32 0-d tensor."""
    return (rope(q.double()[None], torch.tensor([0])) * rope(k.double()[None], torch.tensor([offset]))).sum().float()


def _rope_hint(got: torch.Tensor, q: torch.Tensor, k: torch.Tensor, offset: int) -> str:
    """What a wrong score most likely missed, in words; "" when it matches no known slip."""
    if offset != 0 and torch.allclose(got, _score(_rope, q, k, -offset), atol=1e-4):
        return (f"That is the score for offset {-offset}: which of q and k sits later, and which way does "
                "the angle go?")
    if offset != 0 and torch.allclose(got, (q * k).sum(), atol=1e-4):
        return "That is the score without any rotation: rotating q and k by the same angle changes nothing."
    if any(torch.allclose(got, _score(_rope_half, q, k, o), atol=1e-4) for o in (offset, -offset)):
        return ("That is RoPE in the half-split pairing (dimension i with i + d/2, Hugging Face's "
                "rotate_half): this notebook pairs adjacent dimensions, (x_2i, x_2i+1), as apply_rope does.")
    return ""


@checker("Exercise 3 (RoPE scores from the offset alone)")
def check_rope_score_at_offset(fn):
    """``fn(q, k, offset)`` -> the RoPE score of q at any position p and k at p + offset.

    Any pair of rotations whose angles differ by offset x omega_i (k later than q) gives that score
    and is accepted; the shortest rotates one vector once. A first wrong try gets a hint only, later
    ones the expected score as well (``WRONG_TRIES`` counts them in this session)."""
    g = torch.Generator().manual_seed(6)
    q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
    for offset in (3, -5, 0, 12):
        got = call(fn, q.clone(), k.clone(), offset)
        got = torch.as_tensor(got, dtype=torch.float32)
        assert got.numel() == 1, f"return one score (a number or a 0-d tensor), got shape {tuple(got.shape)}"
        got = got.reshape(())
        p = torch.tensor([0, 7, 20])  # several query positions, same offset
        want = (_rope(q.double().expand(3, 8), p) * _rope(k.double().expand(3, 8), p + offset)).sum(-1)
        want = want.float()  # (3,), all equal
        if torch.allclose(got, want[0], atol=1e-4):
            continue
        WRONG_TRIES["rope_score_at_offset"] += 1
        hint = _rope_hint(got, q, k, offset) or (
            f"The score of q at position p and k at p + {offset} is the same for every p: pick one p, and "
            "check the angle of each pair, p x omega_i with omega_i = 10000^(-2i/d).")
        if WRONG_TRIES["rope_score_at_offset"] == 1:
            raise AssertionError(f"offset {offset}: you returned {got.item():.4f}. Hint: {hint}\n"
                                 "Try again; a second wrong answer shows the expected score.")
        raise AssertionError(f"offset {offset}: expected {want[0].item():.4f} (the score of q at position p and "
                             f"k at p + {offset}, the same for every p), got {got.item():.4f}. {hint}")
