"""Online softmax and tiled (FlashAttention-style) attention in plain PyTorch (notebook 11)."""

from __future__ import annotations

import contextlib
import math
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from . import _checks
from .attention import _check_qkv, check_mask

__all__ = [
    "attention_training_flops",
    "count_flops",
    "loglog_slope",
    "median_time",
    "naive_attention_traffic",
    "online_softmax",
    "online_softmax_steps",
    "ops_called",
    "peak_memory",
    "saved_for_backward",
    "tiled_attention",
    "threads",
    "tiled_attention_traffic",
]


def online_softmax(x: torch.Tensor, dim: int = -1, block_size: int = 128) -> torch.Tensor:
    """Softmax computed in one pass over blocks of ``dim``, keeping a running max and sum.

    Equal to ``torch.softmax(x, dim)``. Each new block may raise the running max m; the sum
    collected so far is then rescaled by exp(m_old - m_new). The running max and sum are kept in
    float32 (float64 for float64 input), as PyTorch's softmax does: a half-precision sum of
    70,000 terms would stop growing long before it reached the true total.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() == 0:
        got = f"shape {tuple(x.shape)}, dtype {x.dtype}" if isinstance(x, torch.Tensor) else _checks.got(x)
        raise TypeError(f"online_softmax: x must be a floating-point tensor with >= 1 dimension, got {got}")
    dim = _checks.as_int("online_softmax", "dim", dim)
    if not -x.dim() <= dim < x.dim():
        raise ValueError(f"online_softmax: dim={dim} is out of range for a tensor of shape {tuple(x.shape)}")
    block_size = _checks.as_int("online_softmax", "block_size", block_size)
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    out_dtype = x.dtype
    x = x.movedim(dim, -1).to(_accumulator(x.dtype))  # (..., n)
    running_max = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    running_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start : start + block_size]  # (..., b)
        new_max = torch.maximum(running_max, block.amax(dim=-1))
        safe_max = new_max.masked_fill(new_max == float("-inf"), 0.0)  # an all -inf prefix
        running_sum = running_sum * torch.exp(running_max - safe_max) + torch.exp(
            block - safe_max[..., None]
        ).sum(dim=-1)
        running_max = new_max
    safe_max = running_max.masked_fill(running_max == float("-inf"), 0.0)
    out = torch.exp(x - safe_max[..., None]) / running_sum[..., None]  # second, elementwise pass
    return out.movedim(-1, dim).to(out_dtype)


def _accumulator(dtype: torch.dtype) -> torch.dtype:
    """The dtype running sums are kept in: float32, or float64 for float64 input."""
    return torch.promote_types(dtype, torch.float32)


def tiled_attention(query, key, value, mask=None, block_size: int = 64):
    """Scaled dot-product attention over blocks of keys/values with online-softmax rescaling.

    Same shapes and mask polarity (True = may attend) as ``scaled_dot_product_attention``, but it
    returns only the output (..., Lq, d_v): the full (Lq, Lk) weight matrix is never built, only
    (Lq, block_size) pieces of it. Rows with nothing to attend to give zeros. The running max, sum
    and output are kept in float32 (float64 for float64 input), as fused kernels do, and the
    result is returned in the inputs' dtype.
    """
    _check_qkv(query, key, value, "tiled_attention")
    block_size = _checks.as_int("tiled_attention", "block_size", block_size)
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    lq, lk = query.shape[-2], key.shape[-2]
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    if mask is not None:
        check_mask(mask, (*batch, lq, lk), "tiled_attention", query.device)
    scale = 1.0 / math.sqrt(query.shape[-1])
    acc = _accumulator(query.dtype)
    q = query.to(acc)
    out = torch.zeros(*batch, lq, value.shape[-1], dtype=acc, device=query.device)
    row_max = torch.full((*batch, lq, 1), float("-inf"), dtype=acc, device=query.device)
    row_sum = torch.zeros((*batch, lq, 1), dtype=acc, device=query.device)
    for start in range(0, lk, block_size):
        k = key[..., start : start + block_size, :].to(acc)  # (..., b, d_k)
        v = value[..., start : start + block_size, :].to(acc)  # (..., b, d_v)
        s = (q @ k.transpose(-2, -1)) * scale  # (..., Lq, b)
        if mask is not None:
            m = mask if mask.shape[-1] == 1 else mask[..., start : start + block_size]
            s = s.masked_fill(~m, float("-inf"))
        new_max = torch.maximum(row_max, s.amax(dim=-1, keepdim=True))  # (..., Lq, 1)
        safe_max = new_max.masked_fill(new_max == float("-inf"), 0.0)
        correction = torch.exp(row_max - safe_max)  # rescales what was summed so far
        p = torch.exp(s - safe_max)  # (..., Lq, b)
        row_sum = row_sum * correction + p.sum(dim=-1, keepdim=True)
        out = out * correction + p @ v  # (..., Lq, d_v)
        row_max = new_max
    out = out / row_sum.clamp_min(torch.finfo(row_sum.dtype).tiny)  # zero rows stay zero
    return out.to(query.dtype)


def _callable(where: str, fn) -> None:
    if not callable(fn):
        raise TypeError(f"{where}: fn must be a function to call (e.g. a lambda), got {_checks.got(fn)}")


class _TensorBytes(TorchDispatchMode):
    """Counts the bytes of the tensors PyTorch operators create while the mode is on."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self._tracked: set[int] = set()

    def _free(self, key: int, nbytes: int) -> None:
        self._tracked.discard(key)
        self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs))
                  if isinstance(t, torch.Tensor)}
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            key = storage.data_ptr()
            if key in inputs or key in self._tracked or storage.nbytes() == 0:
                continue  # a view, an in-place result or an empty tensor: nothing new
            self._tracked.add(key)
            self.live += storage.nbytes()
            self.peak = max(self.peak, self.live)
            weakref.finalize(storage, self._free, key, storage.nbytes())
        return out


def peak_memory(fn, *args, **kwargs) -> int:
    """Peak bytes of tensors that ``fn(*args, **kwargs)`` creates and holds at the same time.

    Every operator's new tensors are added up while they are alive (the result included); views
    and in-place results add nothing. Scratch space used inside one operator (e.g. by a fused
    kernel) is not seen. The count is exact and the same on every machine and device, which makes
    it a good yardstick for comparing algorithms: e.g. the (Lq, Lk) score matrix of naive attention.
    """
    _callable("peak_memory", fn)
    counter = _TensorBytes()
    with counter:
        result = fn(*args, **kwargs)
    del result
    return counter.peak


def online_softmax_steps(x: torch.Tensor, block_size: int) -> list[dict]:
    """The running max m and sum l of ``online_softmax`` after each block of a 1-D ``x``.

    One dict per block: ``start``, ``stop`` (the block is x[start:stop]), ``block_max``, ``max``
    and ``sum`` (floats). After the last block, ``sum`` is sum(exp(x - max(x))).
    """
    if not isinstance(x, torch.Tensor) or x.dim() != 1 or x.numel() == 0:
        got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"online_softmax_steps: x must be a non-empty 1-D tensor, got {got}")
    _checks.floating("online_softmax_steps", "x", x)
    block_size = _checks.as_int("online_softmax_steps", "block_size", block_size)
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    m, total, steps = float("-inf"), 0.0, []
    for start in range(0, x.numel(), block_size):
        block = x[start : start + block_size].double()
        block_max = float(block.max())
        new_m = max(m, block_max)
        if new_m != float("-inf"):  # an all -inf prefix adds nothing
            total = total * math.exp(m - new_m) + float(torch.exp(block - new_m).sum())
        m = new_m
        steps.append({"start": start, "stop": min(start + block_size, x.numel()),
                      "block_max": block_max, "max": m, "sum": total})
    return steps


def loglog_slope(x, y) -> float:
    """Least-squares slope of log(y) against log(x): the exponent p in y ~ x**p.

    ``x`` and ``y`` are sequences of the same length >= 2 of finite numbers > 0 (a logarithm is
    taken), and ``x`` needs at least two different values."""
    values = {}
    for name, seq in (("x", x), ("y", y)):
        try:
            values[name] = torch.as_tensor(seq, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"loglog_slope: {name} must be a sequence of numbers > 0, got "
                            f"{_checks.got(seq)}") from None
    lx, ly = values["x"], values["y"]
    if lx.dim() != 1 or lx.shape != ly.shape or lx.numel() < 2:
        raise ValueError(f"loglog_slope needs two 1-D sequences x and y of the same length >= 2, got "
                         f"{tuple(lx.shape)} and {tuple(ly.shape)}")
    for name, t in (("x", lx), ("y", ly)):
        bad = ~(torch.isfinite(t) & (t > 0))
        if bad.any():
            raise ValueError(f"loglog_slope: {name} must hold finite numbers > 0 (its logarithm is "
                             f"taken), got {t[bad][0].item():g} at position {int(bad.nonzero()[0])}")
    if bool((lx == lx[0]).all()):
        raise ValueError(f"loglog_slope: x needs at least two different values (a slope needs a run), "
                         f"got {lx[0].item():g} every time")
    lx, ly = torch.log(lx), torch.log(ly)
    lx, ly = lx - lx.mean(), ly - ly.mean()
    return float((lx * ly).sum() / (lx * lx).sum())


@contextlib.contextmanager
def threads(num_threads: int):
    """Run the ``with`` block on ``num_threads`` CPU threads (``torch.set_num_threads``), restoring
    the previous count afterwards, even after an error. Timings taken on one thread compare like
    with like: on a busy machine, threads that wait for each other's cores distort a timing more
    than they speed it up."""
    num_threads = _checks.as_int("threads", "num_threads", num_threads, minimum=1)
    before = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def median_time(fn, *args, repeats: int = 5, warmup: int = 1, best: bool = False, **kwargs) -> float:
    """Median wall-clock seconds of ``fn(*args, **kwargs)`` (waits for the GPU when there is one).

    ``best=True`` returns the fastest run instead: the one least disturbed by other programs.
    """
    import statistics
    import time

    _callable("median_time", fn)
    repeats = _checks.as_int("median_time", "repeats", repeats, minimum=1)
    warmup = _checks.as_int("median_time", "warmup", warmup, minimum=0)
    _checks.as_bool("median_time", "best", best)

    def sync():
        if torch.cuda.is_available():
            torch.cuda.synchronize()

    for _ in range(warmup):
        fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn(*args, **kwargs)
        sync()
        times.append(time.perf_counter() - start)
    return min(times) if best else statistics.median(times)


class _OpNames(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


def ops_called(fn, *args, **kwargs) -> list[str]:
    """Names of the PyTorch operators (kernels) that ``fn(*args, **kwargs)`` runs, in order,
    e.g. ``aten._scaled_dot_product_flash_attention_for_cpu``: shows which backend was chosen."""
    _callable("ops_called", fn)
    mode = _OpNames()
    with mode:
        fn(*args, **kwargs)
    return mode.names


def count_flops(fn, *args, **kwargs) -> int:
    """Floating-point operations of the matrix multiplications ``fn(*args, **kwargs)`` runs
    (PyTorch's ``FlopCounterMode``; a multiply-add counts 2). Exact and machine-independent, unlike
    a timing."""
    from torch.utils.flop_counter import FlopCounterMode

    _callable("count_flops", fn)
    with FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return counter.get_total_flops()


# ---------------------------------------------------------------- memory traffic (notebook 11, section 4)
# A model of what one head's attention moves between slow memory (a GPU's HBM, off the chip) and fast
# memory (the SRAM on the chip, about 192 KB per streaming multiprocessor on an A100; Dao et al. 2022,
# "FlashAttention", section 2.1). Counts are in bytes, every value ``bytes_per_value`` bytes.


def _traffic_args(where: str, seq_len, head_dim, bytes_per_value) -> None:
    for name, value in (("seq_len", seq_len), ("head_dim", head_dim), ("bytes_per_value", bytes_per_value)):
        _checks.int_at_least(where, name, value, 1)


def naive_attention_traffic(seq_len: int, head_dim: int, bytes_per_value: int = 2) -> dict[str, int | float]:
    """Bytes the standard attention algorithm moves between slow and fast memory (Dao et al. 2022,
    Algorithm 0), one head, no mask, no dropout:

    1. read Q and K, write the scores S (L x L);
    2. read S, write the weights P = softmax(S);
    3. read P and V, write the output O (L x d).

    ``slow_bytes`` = (4 L d + 4 L^2) values; ``flops`` = 4 L^2 d (the two matrix products, as
    ``count_flops`` counts them); ``intensity`` = flops per byte moved.
    """
    _traffic_args("naive_attention_traffic", seq_len, head_dim, bytes_per_value)
    n, d = seq_len, head_dim
    slow = (4 * n * d + 4 * n * n) * bytes_per_value
    flops = 4 * n * n * d
    return {"flops": flops, "slow_bytes": slow, "intensity": flops / slow}


def tiled_attention_traffic(seq_len: int, head_dim: int, block_q: int, block_k: int,
                            bytes_per_value: int = 2) -> dict[str, int | float]:
    """Bytes tiled attention moves between slow and fast memory, one head, no mask, in the loop order
    of FlashAttention-2: for each block of ``block_q`` queries, read the block Q_i, then every block of
    ``block_k`` keys and values (K_j, V_j) in turn, keeping the block's running output, max and sum in
    fast memory; at the end write the output block O_i and one log-sum-exp per row (kept for the
    backward pass). The scores never leave fast memory.

    - ``slow_bytes``: Q once, K and V once per query block, O and the row statistics once:
      (2 L d + 2 L d * ceil(L / block_q) + L) values;
    - ``fast_bytes``: what must fit on the chip at one time: Q_i and O_i (2 block_q d), K_j and V_j
      (2 block_k d), the score tile (block_q * block_k) and the running max and sum (2 block_q);
    - ``flops``: 4 L^2 d, the same matrix products as the naive algorithm; ``intensity``: flops per
      byte of slow memory moved.

    ``block_q = seq_len`` is tiling over the keys only (notebook 11's ``my_tiled_attention``): the
    least slow traffic, but a fast working set that grows with L.
    """
    where = "tiled_attention_traffic"
    _traffic_args(where, seq_len, head_dim, bytes_per_value)
    for name, value in (("block_q", block_q), ("block_k", block_k)):
        _checks.int_at_least(where, name, value, 1)
        if value > seq_len:
            raise ValueError(f"{where}: {name} must be at most seq_len={seq_len}, got {value}")
    n, d = seq_len, head_dim
    query_blocks = -(-n // block_q)  # ceil
    slow = (2 * n * d + 2 * n * d * query_blocks + n) * bytes_per_value
    fast = (2 * block_q * d + 2 * block_k * d + block_q * block_k + 2 * block_q) * bytes_per_value
    flops = 4 * n * n * d
    return {"flops": flops, "slow_bytes": slow, "fast_bytes": fast, "intensity": flops / slow}


def attention_training_flops(seq_len: int, head_dim: int, recompute: bool = False) -> int:
    """FLOPs of the matrix products of one head's attention, forward and backward (no mask).

    Forward: S = Q K^T and O = P V, 2 products of 2 L^2 d FLOPs each. Backward: dV = P^T dO,
    dP = dO V^T, dQ = dS K and dK = dS^T Q, 4 more. Stored for the backward: P (L x L). With
    ``recompute=True`` (FlashAttention's backward) P is not stored: the backward recomputes
    S = Q K^T from Q, K and the saved row log-sum-exp, one product more: 14 L^2 d instead of 12 L^2 d.
    """
    where = "attention_training_flops"
    _traffic_args(where, seq_len, head_dim, 1)
    _checks.as_bool(where, "recompute", recompute)
    products = 7 if recompute else 6
    return products * 2 * seq_len * seq_len * head_dim


def saved_for_backward(fn, *args, **kwargs) -> int:
    """Bytes of the tensors autograd keeps for the backward pass while ``fn(*args, **kwargs)`` runs,
    beyond the tensor arguments themselves (each storage counted once; views of an argument add
    nothing). For naive attention that is the (L, L) weight matrix; a kernel that recomputes it in
    the backward pass keeps only its output and one number per row."""
    _callable("saved_for_backward", fn)
    inputs = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in inputs:
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn(*args, **kwargs)
    del result
    return sum(seen.values())
