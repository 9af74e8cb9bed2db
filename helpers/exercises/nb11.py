"""Checkers for the exercises of notebook 11 (efficient attention)."""

from __future__ import annotations

import math
import numbers

import torch

from ._common import call, checker

__all__ = ["WRONG_TRIES", "check_attention_step", "check_kv_cache_bytes", "check_merge_softmax_stats"]

# Exercise 3 asks for a count: a first wrong answer gets a hint, from the second on the expected
# counts as well (``WRONG_TRIES`` counts them in this session), so that a table of the three cases'
# answers is not handed out at the first try.
WRONG_TRIES = {"kv_cache_bytes": 0}


def _wrong_try(exercise: str) -> bool:
    """Count a wrong answer; True for the first one (a hint only, not yet the answer)."""
    WRONG_TRIES[exercise] += 1
    return WRONG_TRIES[exercise] == 1


def _stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m = x.amax(dim=-1)
    return m, torch.exp(x - m[..., None]).sum(dim=-1)


@checker("Exercise 1 (merge two softmax statistics)")
def check_merge_softmax_stats(fn):
    """``fn(m1, l1, m2, l2)`` -> (m, l) of the two blocks together."""
    g = torch.Generator().manual_seed(11)
    x = torch.randn(4, 10, generator=g, dtype=torch.float64) * 3
    x[0, 5:] += 10.0  # the second block holds the max in row 0 ...
    x[1, :5] += 10.0  # ... the first block in row 1
    (m1, l1), (m2, l2) = _stats(x[:, :5]), _stats(x[:, 5:])
    try:
        got = call(fn, m1, l1, m2, l2)
    except RuntimeError as err:
        hint = ("Python's max(m1, m2) compares whole tensors; m1 and m2 hold one max per row, so "
                "take the larger one row by row with torch.maximum(m1, m2)"
                if "ambiguous" in str(err) else "use element-wise tensor operations (torch.maximum, "
                "torch.exp), one entry per row")
        raise AssertionError(f"your function raised \"{str(err).rstrip('.')}\": {hint}") from None
    assert isinstance(got, (tuple, list)) and len(got) == 2, (
        f"return a pair (m, l), got {type(got).__name__}"
        + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else "")
    )
    if any(isinstance(t, tuple) for t in got):  # torch.max(x, dim) returns (values, indices)
        raise AssertionError("m came back as a pair (values, indices): torch.max(..., dim) and .max(dim) "
                             "return both. Keep the values alone (.values), or take the larger max row "
                             "by row with torch.maximum(m1, m2)")
    try:
        m, l_ = (torch.as_tensor(t, dtype=torch.float64) for t in got)
    except (TypeError, ValueError, RuntimeError) as err:
        raise AssertionError(f"return m and l as tensors, one entry per row; turning yours into tensors "
                             f"raised {type(err).__name__}: {err}") from None
    want_m, want_l = _stats(x)
    if m.numel() == 1 and m.shape != want_m.shape and torch.isclose(m.reshape(()), want_m.max()):
        raise AssertionError(f"m is one number, the largest over all {want_m.numel()} rows. Each row is a "
                             "softmax of its own, so m holds one max per row, like m1 and m2: take the "
                             "larger of the two row by row, with no max over the rows after it")
    assert m.shape == want_m.shape, f"m should have shape {tuple(want_m.shape)}, got {tuple(m.shape)}"
    assert torch.allclose(m, want_m), "m should be the larger of the two maxima, max(m1, m2)"
    if torch.allclose(l_, l1 + l2):
        raise AssertionError(
            "l1 and l2 are sums of exp(x - m1) and exp(x - m2): different reference points. "
            "Rescale each to the new max m (multiply by exp(m1 - m) and exp(m2 - m)) before adding"
        )
    if torch.allclose(l_, want_l):
        return
    shown = f"expected {_four(want_l)}, got {_four(l_)}"
    smaller = torch.minimum(m1, m2)
    if torch.allclose(l_, l1 * torch.exp(m1 - smaller) + l2 * torch.exp(m2 - smaller)):
        raise AssertionError(f"l: {shown}. You rescaled both sums to the smaller of the two maxima, but "
                             "the merged sum is measured from the merged max m, the larger one: multiply "
                             "by exp(m1 - m) and exp(m2 - m), which are at most 1")
    if torch.allclose(l_, l1 * torch.exp(want_m - m1) + l2 * torch.exp(want_m - m2)):
        raise AssertionError(f"l: {shown}. The factors go the wrong way: seen from the larger max m, "
                             "every exp(x - m) is smaller, so multiply by exp(m1 - m) and exp(m2 - m), "
                             "which are at most 1")
    one_sided = (l1 * torch.exp(m1 - want_m) + l2, l1 + l2 * torch.exp(m2 - want_m))
    if any(torch.allclose(l_, s) for s in one_sided):
        raise AssertionError(f"l: {shown}. You rescaled only one of the two sums: each was measured "
                             "from its own max, so both move to the merged max m")
    raise AssertionError(f"l should be sum(exp(x - m)) over both blocks: {shown}")


def _four(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in t.tolist()) + "]"


def _diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


@checker("Exercise 2 (one decoding step with a KV cache)")
def check_attention_step(fn):
    """``fn(q_t, k_t, v_t, cache_k, cache_v)`` -> (out, cache_k, cache_v) for one new token:
    q_t, k_t (B, h, 1, d_k), v_t (B, h, 1, d_v), caches (B, h, L, d_k) and (B, h, L, d_v)."""
    g = torch.Generator().manual_seed(12)
    b, h, t, d, dv = 2, 3, 6, 4, 5  # d_v differs from d_k, so the two cannot be mixed up
    q, k = (torch.randn(b, h, t, d, generator=g) for _ in range(2))
    v = torch.randn(b, h, t, dv, generator=g)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (B, h, T, T)
    scores = scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
    want = torch.softmax(scores, dim=-1) @ v  # causal attention, all positions at once
    cache_k, cache_v = k[:, :, :0], v[:, :, :0]
    for i in range(t):
        q_i, k_i, v_i = q[:, :, i : i + 1], k[:, :, i : i + 1], v[:, :, i : i + 1]
        try:
            got = call(fn, q_i, k_i, v_i, cache_k, cache_v)
        except RuntimeError as err:
            raise AssertionError(
                f"step {i} (the cache holds {i} positions): your function raised \"{str(err).rstrip('.')}\". "
                f"Keys are "
                f"(B, h, L, d_k) = {tuple(cache_k.shape)}: the new key is appended along dim 2, "
                "the positions") from None
        assert isinstance(got, tuple) and len(got) == 3, "return a tuple (out, cache_k, cache_v)"
        out, new_k, new_v = got
        assert new_k.shape == (b, h, i + 1, d) and new_v.shape == (b, h, i + 1, dv), (
            f"at step {i} the returned cache should hold {i + 1} positions: keys (B, h, {i + 1}, "
            f"d_k) = {(b, h, i + 1, d)} and values (B, h, {i + 1}, d_v) = {(b, h, i + 1, dv)}, got "
            f"{tuple(new_k.shape)} and {tuple(new_v.shape)}. Append the new key and value along "
            "dim 2, the positions")
        if i > 0 and not (torch.equal(new_k, k[:, :, : i + 1]) and torch.equal(new_v, v[:, :, : i + 1])):
            reversed_ = torch.equal(new_k, k[:, :, : i + 1].flip(2)) and torch.equal(new_v, v[:, :, : i + 1].flip(2))
            raise AssertionError(
                f"step {i}: the returned cache " + (
                    "holds the positions in reverse order, the newest first: the new key and value go after "
                    "the cached ones. Without a mask attention does not see the "
                    "order, so the output is right here, but index j of the cache must stay position j: "
                    "a mask and the positions of later steps count on it" if reversed_ else
                    f"should hold the keys and values of positions 0 to {i} in order, the cached ones "
                    "unchanged and the new one appended at the end (dim 2)"))
        assert out.shape == (b, h, 1, dv), (
            f"step {i}: out should be (B, h, 1, d_v) = {(b, h, 1, dv)}, got {tuple(out.shape)}"
            + (": the output is a mix of values, so its last dimension is d_v" if out.shape[-1] == d
               else ""))
        far = _diff(out, want[:, :, i : i + 1]) if torch.isfinite(out).all() else float("nan")
        if i == 0 and (not torch.isfinite(out).all() or torch.allclose(out, torch.zeros_like(out))):
            raise AssertionError(
                "step 0: the cache is empty, and your output is " +
                ("not finite (a softmax over no keys)" if not torch.isfinite(out).all() else "zero")
                + ": the new token must attend to itself. Append its key and value to the cache "
                  "first, then attend over everything cached")
        if i > 0 and _sees_the_first_key_only(fn, out, q, k, v, i):
            raise AssertionError(
                f"step {i}: the new query sees only the first key. That is a causal mask aligned to "
                "the top-left: F.scaled_dot_product_attention(..., is_causal=True) does that when "
                "there are fewer queries than keys, and so does row 0 of causal_mask(L + 1). The new "
                "query is the latest position, so it may see every cached key and its own: for a "
                "one-token step, pass no mask and no is_causal")
        if i > 0:
            past_only = torch.softmax(q_i @ cache_k.transpose(-2, -1) / math.sqrt(d), -1) @ cache_v
            if torch.allclose(out, past_only, atol=1e-5):
                raise AssertionError(
                    f"step {i}: the new token attends only to the {i} cached position{'s' if i > 1 else ''}: "
                    "append its own "
                    "key and value to the cache first, then attend (a token may attend to itself)")
        unscaled = torch.softmax(q_i @ new_k.transpose(-2, -1), -1) @ new_v
        if i > 0 and torch.allclose(out, unscaled, atol=1e-5):
            raise AssertionError(f"step {i}: divide the scores by sqrt(d_k) before the softmax")
        by_d = torch.softmax(q_i @ new_k.transpose(-2, -1) / d, -1) @ new_v
        if i > 0 and torch.allclose(out, by_d, atol=1e-5):
            raise AssertionError(f"step {i}: the scores are divided by d_k = {d}; the scale is "
                                 f"1/sqrt(d_k) = 1/{math.sqrt(d):g}")
        s_i = q_i @ new_k.transpose(-2, -1) / math.sqrt(d)  # (B, h, 1, i + 1)
        # over the batch or the heads; over the single query (all ones) only once there are two keys
        for dim, name in ((0, "the batch"), (1, "the heads"), (2, "the single query"))[: 3 if i > 0 else 2]:
            if torch.allclose(out, torch.softmax(s_i, dim=dim) @ new_v, atol=1e-5):
                raise AssertionError(f"step {i}: the softmax runs over the wrong dimension (dim {dim}, "
                                     f"{name}): each query's weights over the cached keys (the last "
                                     "dimension) sum to 1")
        if not torch.allclose(out, want[:, :, i : i + 1], atol=1e-5):
            raise AssertionError(
                f"step {i}: your output differs from causal attention over all {t} positions at once "
                f"by up to {far:.4f}: scores of the new query against every cached key (itself "
                "included), scaled by 1/sqrt(d_k), softmax over the keys, then a mix of the values")
        cache_k, cache_v = new_k, new_v


def _sees_the_first_key_only(fn, out, q, k, v, i) -> bool:
    """Whether the output of step i is the first value alone, what a top-left causal mask leaves
    (is_causal=True with one query). At step 1 attending to the cache alone gives the same, so the
    function is then tried one step further, where the two differ."""
    first = v[:, :, :1]  # (B, h, 1, d_v): attention on key 0 alone
    if not torch.allclose(out, first, atol=1e-5):
        return False
    if i > 1:
        return True
    try:
        probe = call(fn, q[:, :, 2:3], k[:, :, 2:3], v[:, :, 2:3], k[:, :, :2], v[:, :, :2])
    except Exception:  # noqa: BLE001 - any failure here is reported by the step that hits it
        return False
    return (isinstance(probe, tuple) and len(probe) == 3 and isinstance(probe[0], torch.Tensor)
            and probe[0].shape == first.shape and torch.allclose(probe[0], first, atol=1e-5))


# Plausible slips, each a formula that differs from the right one by one factor. The cases below
# change the factors from one case to the next so that at most one slip fits all of them.
_KV_SLIPS = (
    ("keys only", lambda n, b, t, d, nb: n * b * t * d * nb,
     "every layer caches two tensors per token, keys and values: count both"),
    ("one layer", lambda n, b, t, d, nb: 2 * b * t * d * nb,
     "each decoder layer keeps its own cache: count all of them"),
    ("one sequence", lambda n, b, t, d, nb: 2 * n * t * d * nb,
     "each sequence of the batch has its own keys and values"),
    ("values, not bytes", lambda n, b, t, d, nb: 2 * n * b * t * d,
     "that counts values: multiply by the bytes each value takes"),
    ("a fixed size", lambda n, b, t, d, nb: 2 * n * b * t * d * 4,
     "your count takes 4 bytes per value in every case, but the last argument, bytes_per_value, says "
     "how many each value takes (4 for float32, 2 for float16 or bfloat16): use it"),
    ("a fixed size", lambda n, b, t, d, nb: 2 * n * b * t * d * 2,
     "your count takes 2 bytes per value in every case, but the last argument, bytes_per_value, says "
     "how many each value takes (4 for float32, 2 for float16 or bfloat16): use it"),
    ("MiB", lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 2**20,
     "that is the count in MiB: the function returns bytes, so leave out the division by 2**20"),
    ("MB", lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 1e6,
     "that is the count in megabytes: the function returns bytes, so leave out the division by 10**6"),
    ("GiB", lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 2**30,
     "that is the count in GiB: the function returns bytes, so leave out the division by 2**30"),
    ("GB", lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 1e9,
     "that is the count in gigabytes: the function returns bytes, so leave out the division by 10**9"),
    ("KiB", lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 2**10,
     "that is the count in KiB: the function returns bytes, so leave out the division by 2**10"),
    ("kB", lambda n, b, t, d, nb: 2 * n * b * t * d * nb / 1e3,
     "that is the count in kilobytes: the function returns bytes, so leave out the division by 10**3"),
    ("bits", lambda n, b, t, d, nb: 2 * n * b * t * d * nb * 8,
     "that counts bits: bytes_per_value is already in bytes, so leave out the factor 8"),
    ("one token more", lambda n, b, t, d, nb: 2 * n * b * (t + 1) * d * nb,
     "the cache holds seq_len tokens per sequence, not seq_len + 1"),
    ("four tensors", lambda n, b, t, d, nb: 4 * n * b * t * d * nb,
     "count keys and values once per decoder layer (the self-attention cache; here we leave "
     "the cross-attention cache out)"),
)


def _bytes(case: tuple, value):
    """A learner's count of bytes as a Python int or float: NumPy numbers and one-element tensors are
    accepted as the numbers they hold."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AssertionError(f"expected a number of bytes for kv_cache_bytes{case}, got {type(value).__name__}")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


@checker("Exercise 3 (how big the KV cache grows)")
def check_kv_cache_bytes(fn):
    """``fn(num_layers, batch, seq_len, d_model, bytes_per_value)`` -> int bytes (a NumPy integer or a
    one-element integer tensor counts as an int)."""
    cases = ((2, 1, 128, 128, 4), (12, 8, 1024, 768, 2), (32, 3, 4096, 4096, 2))
    got = [_bytes(case, call(fn, *case)) for case in cases]
    want = [2 * n * b * t * d * nb for n, b, t, d, nb in cases]
    if got == want and any(isinstance(value, float) for value in got):
        raise AssertionError("the numbers are right, but a count of bytes is a whole number: return an "
                             "int (multiply whole numbers, or use // rather than /)")
    if got == want:
        return
    hint = next((h for _, slip, h in _KV_SLIPS
                 if all(math.isclose(g, slip(*c), rel_tol=1e-9) for c, g in zip(cases, got, strict=True))),
                None)
    if _wrong_try("kv_cache_bytes"):
        case, value = next((c, g) for c, w, g in zip(cases, want, got, strict=True) if g != w)
        raise AssertionError(
            f"kv_cache_bytes{case} returned {value:,}, not the number of bytes the cache holds. "
            + (f"Hint: {hint}. " if hint else "Count what each decoder layer keeps for every token of "
               "every sequence, and how many bytes each value takes. ")
            + "Try again; a second wrong answer shows the expected counts.")
    report = "; ".join(f"kv_cache_bytes{c}: expected {w:,}, got {g:,}"
                       for c, w, g in zip(cases, want, got, strict=True) if g != w)
    raise AssertionError(f"{report}. Hint: {hint}" if hint else report)
