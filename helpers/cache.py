"""The on-disk cache of trained models: where it lives, one process at a time per entry, and the
keys that say when a model must be trained again.

When the test suite runs notebooks in parallel (pytest-xdist workers, the browser tests'
JupyterLab), two kernels can ask for the same model at once. Whoever takes the lock first trains and
saves; the others wait, then find the file and load it, instead of training the same model again.

This module imports nothing else from ``helpers``: the training code and the notebooks build on it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import torch
from torch import nn

try:
    import fcntl
except ImportError:  # Windows: no lock; parallel runs may then train twice (files are still
    fcntl = None  # written atomically, so nobody reads half a file)


def cache_folder() -> Path:
    """Where trained models are kept: $ATTENTION_TUTORIAL_CACHE if set, else ``.cache/`` in the
    repository (next to the helpers package), else ~/.cache/attention-tutorial."""
    if os.environ.get("ATTENTION_TUTORIAL_CACHE"):
        return Path(os.environ["ATTENTION_TUTORIAL_CACHE"])
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").exists():
        return root / ".cache"
    return Path.home() / ".cache" / "attention-tutorial"


@contextmanager
def cache_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` (created next to the cache entry) while inside."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def tensor_digest(*tensors: torch.Tensor) -> str:
    """A short hash of tensors' shapes, dtypes and values (for cache keys)."""
    h = hashlib.sha256()
    for t in tensors:
        t = t.detach().cpu().contiguous()
        h.update(f"{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:20]


def load_or_train(name: str, model: nn.Module, train: Callable[[], dict], key: dict,
                  cache: bool = True, threads: int | None = None) -> tuple[nn.Module, dict]:
    """``train()`` trains ``model`` (freshly initialised) in place and returns its history; with
    ``cache`` the trained weights and history are kept on disk (``cache_folder()``)
    and loaded the next time instead: the same tensors, bit for bit, as training again.

    The file's key covers ``key`` (what the caller knows changes the result: steps, learning rate,
    data, ...), the model's initial weights, the torch version, the device and the thread count.
    ``threads`` (an int) trains with that many CPU threads, then restores the setting: small models
    train as fast on one thread, and then the weights do not depend on OMP_NUM_THREADS.
    Returns ``(model, history)``, the model in eval mode; ``history["cached"]`` says which happened.
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ValueError(f"load_or_train: threads must be None or an int >= 1, got {threads!r}")
    device = next(model.parameters()).device
    parts = {"key": key, "init": tensor_digest(*model.state_dict().values()),
             "torch": torch.__version__, "device": str(device),
             "threads": threads if threads is not None else torch.get_num_threads()}
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    path = cache_folder() / f"{name}-{digest[:20]}.pt"
    with cache_lock(path) if cache else nullcontext():
        if cache and path.exists():
            stored = torch.load(path, weights_only=True, map_location=device)
            model.load_state_dict(stored["state_dict"])
            return model.eval(), {**stored["history"], "cached": True}
        previous = torch.get_num_threads()
        if threads is not None:
            torch.set_num_threads(threads)
        try:
            history = train()
        finally:
            torch.set_num_threads(previous)
        if cache:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
            torch.save({"state_dict": state, "history": history}, tmp)
            os.replace(tmp, path)  # atomic: nobody reads half a file
    return model.eval(), {**history, "cached": False}


def fingerprint(obj) -> object:
    """A JSON-able summary of a training argument for cache keys: tensors and modules by their
    values, containers element by element, plain values as they are, other objects by their
    attributes (a tokenizer by its vocabulary), functions by their qualified name."""
    if isinstance(obj, torch.Tensor):
        return {"tensor": tensor_digest(obj)}
    if isinstance(obj, nn.Module):
        return {"module": type(obj).__qualname__, "state": tensor_digest(*obj.state_dict().values())}
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, list | tuple):
        return [fingerprint(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): fingerprint(v) for k, v in obj.items()}
    if isinstance(obj, torch.device | torch.dtype):
        return str(obj)
    if callable(obj):
        return {"callable": getattr(obj, "__qualname__", repr(obj))}
    if hasattr(obj, "__dict__"):
        return {"object": type(obj).__qualname__, "attrs": fingerprint(vars(obj))}
    return repr(obj)


def train_once(train: Callable[..., dict], model: nn.Module, *args, cache: bool = True,
               threads: int | None = 1, **kwargs) -> dict:
    """``train(model, *args, **kwargs)``, done once: the trained weights and the history it returns
    are kept on disk (``.cache/``) and loaded into ``model`` the next time the same call is made.

    "The same call" means the same function, the same initial weights of ``model`` and the same
    arguments (data, tokenizer, steps, learning rate, seed, ...), on the same torch version, device
    and thread count: change any of them and it trains again. Loading gives the same tensors, bit
    for bit, as training again. Returns the history, with ``history["cached"]`` saying which
    happened; ``model`` is left in eval mode either way.

    On a CPU it trains on ``threads`` threads (one by default, then the setting is restored): the
    small models of these notebooks train as fast on one thread, much faster when other programs
    share the cores, and the weights then do not depend on OMP_NUM_THREADS. ``threads=None``
    keeps torch's setting.
    """
    key = {"train": fingerprint(train), "args": fingerprint(list(args)),
           "kwargs": fingerprint(kwargs)}
    name = getattr(train, "__name__", "train")
    _, history = load_or_train(name, model, lambda: train(model, *args, **kwargs), key,
                               cache=cache, threads=threads)
    return history
