"""The on-disk cache of trained models: where it lives, one process at a time per entry, and the
keys that say when a model must be trained again.

When the test suite runs notebooks in parallel (pytest-xdist workers, the browser tests'
JupyterLab), two kernels can ask for the same model at once. Whoever takes the lock first trains and
saves; the others wait, then find the file and load it, instead of training the same model again.

A cache never makes a run fail: an entry that cannot be read (empty, truncated, not written by
``torch.save``, holding other weights) is reported by its path and trained again, and a cache folder
that cannot be written is reported and the model trained without it. Entry names never leave the
cache folder.

In a notebook, ``load_or_train`` shows a progress line while it trains (``helpers._progress``),
blank again when done, and the same blank line when it loads: the stored output is the same either way.

This module imports only ``_checks`` and ``_progress`` from ``helpers``: the training code and the
notebooks build on it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import re
import types
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import _checks
from ._progress import progress

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


_NOT_IN_NAMES = re.compile(r'[/\\:*?"<>|\x00-\x1f]')  # folders, drives, and what Windows forbids


def check_name(where: str, name) -> str:
    """``name`` as the start of a cache file's name: a non-empty str of at most 100 characters with
    no path separator or other character a file name cannot hold, so the entry stays inside the
    cache folder ("../outside", "a/b" and "/abs" are refused)."""
    if not isinstance(name, str):
        raise TypeError(f"{where}: name must be a str (the start of the cache file's name), got "
                        f"{_checks.got(name)}")
    if not name or len(name) > 100 or _NOT_IN_NAMES.search(name) or name.strip() != name:
        raise ValueError(f"{where}: name must be a file name of 1 to 100 characters, without folders "
                         f"('/' or '\\'), ':', '*', '?', '\"', '<', '>', '|' or surrounding spaces: the "
                         f"entry stays in the cache folder; got {_checks.short(name)}")
    return name


def _file_name(text: str) -> str:
    """A function's name made safe for a cache file: '<lambda>' -> '_lambda_', '../x' -> '.._x'."""
    return _NOT_IN_NAMES.sub("_", text).strip()[:100] or "train"


def _read_entry(path: Path, model: nn.Module, device) -> tuple[dict | None, str]:
    """The stored entry if ``path`` holds this model's weights and a history, else (None, why).
    Never unpickles anything but tensors and plain values (``weights_only=True``)."""
    try:
        stored = torch.load(path, weights_only=True, map_location=device)
    except Exception as err:  # noqa: BLE001 - any unreadable file is retrained, never trusted
        size = path.stat().st_size if path.exists() else 0
        if size and isinstance(err, pickle.UnpicklingError) and "Unsupported global" in str(err):
            return None, ("it holds an object that is not a tensor or a plain value "
                          f"({type(err).__name__})")
        return None, ("it is empty" if size == 0 else
                      f"it is truncated or was not written by torch.save ({type(err).__name__})")
    if not isinstance(stored, dict) or not isinstance(stored.get("state_dict"), dict) \
            or not isinstance(stored.get("history"), dict):
        return None, "it holds no 'state_dict' and 'history'"
    expected, weights = model.state_dict(), stored["state_dict"]
    if set(weights) != set(expected) or any(
            not isinstance(weights[k], torch.Tensor) or weights[k].shape != v.shape
            or weights[k].dtype != v.dtype for k, v in expected.items()):
        return None, "its weights do not fit this model"
    return stored, ""


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=4)


def tensor_digest(*tensors: torch.Tensor) -> str:
    """A short hash of tensors' shapes, dtypes and values (for cache keys)."""
    h = hashlib.sha256()
    for t in tensors:
        t = t.detach().cpu().contiguous()
        h.update(f"{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:20]


_SETTING_TYPES = (bool, int, float, str, type(None))


def module_settings(model: nn.Module) -> list:
    """Each submodule's name, class and plain settings: its public attributes that are numbers,
    strings, booleans or None, or tuples of them (``num_heads``, ``norm_first``, ``eps``, ...), but
    not ``training``, which says only which mode it is in. They decide what a module computes as
    much as its weights do, and ``repr`` leaves many of them out: two attention layers with one
    head and with four have the same weights and the same ``repr``."""
    def plain(v):
        return isinstance(v, _SETTING_TYPES) or (isinstance(v, tuple) and all(map(plain, v)))

    return [(name, type(m).__qualname__,
             {k: v for k, v in sorted(vars(m).items()) if not k.startswith("_") and k != "training"
              and plain(v)})
            for name, m in model.named_modules()]


def module_digest(model: nn.Module) -> str:
    """A short hash of everything a module computes with before training: its structure (the
    modules it is built from, as ``repr`` lists them, and their settings: ``module_settings``),
    its parameters and persistent buffers (``state_dict``) and its other buffers (a
    positional-encoding table, say). Two models that differ in any of these get different cache
    entries, even when their ``state_dict``s match (a model whose positions were replaced by an
    ``nn.Identity()``, or whose attention has one head instead of four, has the same weights)."""
    h = hashlib.sha256(repr(model).encode())
    h.update(json.dumps(module_settings(model), default=repr).encode())
    h.update(tensor_digest(*model.state_dict().values()).encode())
    h.update(tensor_digest(*(b for _, b in model.named_buffers())).encode())
    return h.hexdigest()[:20]


def numerics() -> dict:
    """What decides a CPU's floating-point bits besides the code: PyTorch's vector kernels (AVX2,
    AVX-512, ...) and the settings that pin MKL's and oneDNN's code paths (tools/numerics.py).
    Part of every cache key: a model trained with other kernels is another model."""
    return {"capability": torch.backends.cpu.get_cpu_capability(),
            **{k: os.environ.get(k) for k in ("MKL_CBWR", "ONEDNN_MAX_CPU_ISA")}}


# Trained runs shipped with the repository (``helpers/data/pretrained/runs``): the models the notebooks
# train with their stored settings, written by ``python3 tools/ship_runs.py`` under the suite's pinned
# kernels and listed with their sha256 in ``manifest.json``. A run is found by ``shipped_name``: its
# key, initial weights and thread count, but not the torch version, device or kernels, so a learner's
# first run loads it instead of training wherever the same recipe builds the same starting model (a
# CPU with AVX2 or AVX-512, or a GPU for a model built on the CPU; a key that holds a function's
# bytecode also needs the same Python). Elsewhere it trains, as before.
# tests/conclusions/test_retrained_shipped_runs.py retrains every one and checks it gives the shipped bits.
SHIPPED_RUNS = Path(__file__).resolve().parent / "data" / "pretrained" / "runs"
SHIPPED_MANIFEST = SHIPPED_RUNS / "manifest.json"
_SHIPPED = {"use": os.environ.get("ATTENTION_TUTORIAL_RETRAIN", "").strip() in ("", "0")}


def use_shipped(use: bool = True) -> None:
    """The retrain switch: ``use_shipped(False)`` makes every later training in this process train
    (or load your own earlier training from the cache) instead of loading the weights shipped with the
    repository; ``use_shipped(True)`` turns them back on. The environment variable
    ``ATTENTION_TUTORIAL_RETRAIN=1`` sets False at start-up."""
    if not isinstance(use, bool):
        raise TypeError(f"use_shipped: use must be True or False, got {_checks.got(use)}")
    _SHIPPED["use"] = use


def shipped_in_use() -> bool:
    """Whether trainings load the shipped runs (the retrain switch, ``use_shipped``)."""
    return _SHIPPED["use"]


def shipped_name(name: str, key: dict, model: nn.Module, threads: int) -> str:
    """The file name a shipped run of ``load_or_train(name, model, ..., key)`` has: it covers what
    decides the weights on every machine (the key, the initial weights, the thread count), not the
    torch version, the device or the CPU's kernels."""
    parts = {"key": key, "init": module_digest(model), "threads": threads}
    return f"{name}-{hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:20]}.pt"


def shipped_manifest() -> dict:
    """``{file name: {"sha256": ..., "notebook": ...}}`` of the shipped runs ({} if there are none)."""
    try:
        return json.loads(SHIPPED_MANIFEST.read_text())
    except (OSError, ValueError):
        return {}


def _load_shipped(file_name: str, model: nn.Module, device) -> dict | None:
    """The shipped run ``file_name`` loaded into ``model`` (its history, marked shipped), or None if
    there is none, the switch is off, ``tools/ship_runs.py`` is recording, or the file's sha256 is not
    the manifest's (then a warning)."""
    recording = bool(os.environ.get("ATTENTION_TUTORIAL_SHIP_TO"))  # tools/ship_runs.py: train them all
    entry = shipped_manifest().get(file_name) if _SHIPPED["use"] and not recording else None
    if entry is None:
        return None
    path = SHIPPED_RUNS / file_name
    if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != entry.get("sha256"):
        _warn(f"the shipped run {path} is missing or not the file its manifest records (sha256): "
              f"training instead")
        return None
    stored, why = _read_entry(path, model, device)
    if stored is None:
        _warn(f"the shipped run {path} cannot be used ({why}): training instead")
        return None
    model.load_state_dict(stored["state_dict"])
    return {**_restored(stored["history"]), "cached": True, "shipped": True}


def load_or_train(name: str, model: nn.Module, train: Callable[[], dict], key: dict,
                  cache: bool = True, threads: int | None = None) -> tuple[nn.Module, dict]:
    """``train()`` trains ``model`` (freshly initialised) in place and returns its history; with
    ``cache`` the trained weights and history are kept on disk (``cache_folder()``)
    and loaded the next time instead: the same tensors, bit for bit, as training again.

    The file's key covers ``key`` (what the caller knows changes the result: steps, learning rate,
    data, ...), the model's structure, initial weights and buffers (``module_digest``), the torch
    version, the device, the thread count and, on a CPU, the kernels' ``numerics()``.
    ``threads`` (an int) trains with that many CPU threads, then restores the setting: small models
    train as fast on one thread, and then the weights do not depend on OMP_NUM_THREADS.
    With ``cache``, a run shipped with the repository (``SHIPPED_RUNS``, found by ``shipped_name``)
    is loaded when the cache has none, unless ``use_shipped(False)`` (the retrain switch).
    Returns ``(model, history)``, the model in eval mode; ``history["cached"]`` says whether it was
    loaded, ``history["shipped"]`` (present only then) that it came from the shipped runs.
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ValueError(f"load_or_train: threads must be None or an int >= 1, got {threads!r}")
    check_name("load_or_train", name)
    if not isinstance(model, nn.Module) or next(model.parameters(), None) is None:
        raise TypeError(f"load_or_train: model must be an nn.Module with parameters, got "
                        f"{_checks.got(model)}")
    if not callable(train):
        raise TypeError(f"load_or_train: train must be a function that trains the model, got "
                        f"{_checks.got(train)}")
    device = next(model.parameters()).device
    n_threads = threads if threads is not None else torch.get_num_threads()
    ship = shipped_name(name, key, model, n_threads)
    parts = {"key": key, "init": module_digest(model),
             "torch": torch.__version__, "device": str(device), "threads": n_threads,
             "numerics": numerics() if device.type == "cpu" else None}
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    folder = cache_folder()
    path = folder / f"{name}-{digest[:20]}.pt"
    with ExitStack() as stack:
        stack.enter_context(progress(name))
        if cache:
            try:
                stack.enter_context(cache_lock(path))
            except OSError as err:
                _warn(f"the cache folder {folder} cannot be written ({err.strerror or err}): training "
                      f"{name!r} without the cache (set ATTENTION_TUTORIAL_CACHE to a writable folder)")
                cache = False
        if cache and path.exists():
            stored, why = _read_entry(path, model, device)
            if stored is not None:
                model.load_state_dict(stored["state_dict"])
                return model.eval(), {**_restored(stored["history"]), "cached": True}
            _warn(f"the cache file {path} cannot be used ({why}): training again and replacing it")
        shipped = _load_shipped(ship, model, device) if cache else None
        if shipped is not None:
            return model.eval(), shipped
        previous = torch.get_num_threads()
        if threads is not None:
            torch.set_num_threads(threads)
        try:
            history = train()
        finally:
            torch.set_num_threads(previous)
        if not isinstance(history, dict):
            raise TypeError(f"load_or_train: train() must return the history as a dict, got "
                            f"{_checks.got(history)}")
        if cache:
            _save(path, model, history)
        if os.environ.get("ATTENTION_TUTORIAL_SHIP_TO"):  # tools/ship_runs.py records the run
            _save(Path(os.environ["ATTENTION_TUTORIAL_SHIP_TO"]) / ship, model, history)
    return model.eval(), {**history, "cached": False}


_NUMPY = "__numpy_array__"  # how a NumPy array or scalar of a history is stored: as a tensor


def _storable(value, where: str = "history"):
    """``value`` with NumPy arrays and scalars stored as tagged tensors (``torch.load`` with
    ``weights_only=True`` loads tensors and plain values only); TypeError naming the entry for
    anything else that could not be loaded back."""
    if value is None or isinstance(value, bool | int | float | str | torch.Tensor) \
            and not isinstance(value, np.generic):
        return value
    if isinstance(value, np.ndarray | np.generic):
        try:
            return {_NUMPY: torch.from_numpy(np.array(value)), "scalar": isinstance(value, np.generic)}
        except TypeError:
            raise TypeError(f"{where} is a NumPy array of dtype {value.dtype}, which a tensor cannot "
                            f"hold") from None
    if isinstance(value, list | tuple):
        items = [_storable(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _storable(v, f"{where}[{k!r}]") for k, v in value.items()}
    raise TypeError(f"{where} is a {type(value).__qualname__}: a cached history holds numbers, "
                    f"strings, lists, tuples, dicts, tensors and NumPy arrays only")


def _restored(value):
    """The inverse of ``_storable``."""
    if isinstance(value, dict):
        if _NUMPY in value and isinstance(value[_NUMPY], torch.Tensor):
            array = value[_NUMPY].numpy()
            return array[()] if value.get("scalar") else array
        return {k: _restored(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_restored(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _save(path: Path, model: nn.Module, history: dict) -> None:
    """Write the entry atomically (a reader never sees half a file); a failed write is reported,
    and so is a history that could not be loaded back (the model is then not kept)."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    try:
        history = _storable(history)
    except TypeError as err:
        _warn(f"the cache file {path} is not written: {err}. The model is trained but not kept")
        return
    try:
        torch.save({"state_dict": state, "history": history}, tmp)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        _warn(f"the cache file {path} cannot be written ({err.strerror or err}): the model is trained "
              f"but not kept")


_ACTIVE: set[int] = set()  # the callables being fingerprinted now (a recursive function stops)


def fingerprint(obj) -> object:
    """A JSON-able summary of a training argument for cache keys, the same in every process:
    tensors and modules by their values, containers element by element, plain values as they
    are, other objects by their attributes (a tokenizer by its vocabulary), and a function by what
    it computes (``function_fingerprint``), not by its name: a redefined ``fit``, two lambdas, or
    two closures of the same name over different values get different entries."""
    if isinstance(obj, torch.Tensor):
        return {"tensor": tensor_digest(obj)}
    if isinstance(obj, nn.Module):
        return {"module": type(obj).__qualname__, "state": module_digest(obj)}
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, list | tuple):
        return [fingerprint(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): fingerprint(v) for k, v in obj.items()}
    if isinstance(obj, set | frozenset):  # in a sorted order: a set's order changes between runs
        return {"set": sorted((fingerprint(x) for x in obj), key=repr)}
    if isinstance(obj, torch.device | torch.dtype | bytes | complex) or obj is Ellipsis:
        return str(obj)
    if isinstance(obj, type):
        return {"class": f"{obj.__module__}.{obj.__qualname__}"}
    if isinstance(obj, types.ModuleType):  # numpy, torch.nn.functional, ... read through a closure
        return {"pymodule": obj.__name__, "version": str(getattr(obj, "__version__", ""))}
    if isinstance(obj, np.ndarray | np.generic):
        return {"array": tensor_digest(torch.from_numpy(np.ascontiguousarray(obj).astype(np.float64)))
                if obj.dtype != object else repr(obj.tolist()), "dtype": str(obj.dtype)}
    if callable(obj):
        return function_fingerprint(obj)
    if hasattr(obj, "__dict__"):
        if id(obj) in _ACTIVE:  # an object that holds itself
            return {"recursive": type(obj).__qualname__}
        _ACTIVE.add(id(obj))
        try:
            return {"object": type(obj).__qualname__, "attrs": fingerprint(vars(obj))}
        finally:
            _ACTIVE.discard(id(obj))
    text = repr(obj)
    return type(obj).__qualname__ if " at 0x" in text else text  # no address: it changes per run


def _code_fingerprint(code: types.CodeType) -> dict:
    """The bytecode, constants (nested functions' code included) and names of a code object."""
    return {"code": hashlib.sha256(code.co_code).hexdigest()[:20],
            "consts": [_code_fingerprint(c) if isinstance(c, types.CodeType) else fingerprint(c)
                       for c in code.co_consts],
            "names": list(code.co_names), "args": code.co_argcount, "kwonly": code.co_kwonlyargcount,
            "locals": list(code.co_varnames)}


def function_fingerprint(fn) -> dict:
    """What a function computes, for cache keys: its code (bytecode, constants, names, nested
    functions), its default arguments, the values its closure holds, and the functions and plain
    values of its own module it reads by name (a helper it calls, a learning rate set in a cell);
    a method by its function and object, a ``functools.partial`` by its function and arguments.
    A function with a ``cache_version`` attribute is keyed by its name and that version instead
    (for code whose effect its text does not show, e.g. one that reads a file)."""
    if id(fn) in _ACTIVE:
        return {"recursive": getattr(fn, "__qualname__", type(fn).__qualname__)}
    _ACTIVE.add(id(fn))
    try:
        return _function_fingerprint(fn)
    finally:
        _ACTIVE.discard(id(fn))


def _function_fingerprint(fn) -> dict:
    name = f"{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"
    version = getattr(fn, "cache_version", None)
    if version is not None and not isinstance(fn, types.MethodType):
        return {"function": name, "version": fingerprint(version)}
    if isinstance(fn, functools.partial):
        return {"partial": function_fingerprint(fn.func), "args": fingerprint(list(fn.args)),
                "kwargs": fingerprint(fn.keywords)}
    if isinstance(fn, types.MethodType):
        return {"method": function_fingerprint(fn.__func__), "self": fingerprint(fn.__self__)}
    if not isinstance(fn, types.FunctionType):  # a builtin, or an object with __call__
        attrs = fingerprint(vars(fn)) if hasattr(fn, "__dict__") else None
        return {"callable": name, "attrs": attrs}
    code = fn.__code__
    cells = []
    for cell in fn.__closure__ or ():
        try:
            cells.append(fingerprint(cell.cell_contents))
        except ValueError:  # a cell not yet filled
            cells.append("<empty>")
    used = {}
    for word in _names(code):
        value = fn.__globals__.get(word)
        if isinstance(value, types.FunctionType) and value.__module__ == fn.__module__ \
                or isinstance(value, bool | int | float | str | tuple) and not word.startswith("__"):
            used[word] = fingerprint(value)
    return {"function": name, "code": _code_fingerprint(code),
            "defaults": fingerprint(fn.__defaults__), "kwdefaults": fingerprint(fn.__kwdefaults__),
            "closure": cells, "globals": used}


def _names(code: types.CodeType) -> list[str]:
    """The global names a code object and its nested functions read (in order, once each)."""
    found = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            found.extend(_names(c))
    return list(dict.fromkeys(found))


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
    if not callable(train):
        raise TypeError(f"train_once: train must be a training function train(model, ...) -> history "
                        f"dict, got {_checks.got(train)}")
    if not isinstance(model, nn.Module) or next(model.parameters(), None) is None:
        raise TypeError(f"train_once: model must be an nn.Module with parameters, got {_checks.got(model)}")
    key = {"train": fingerprint(train), "args": fingerprint(list(args)),
           "kwargs": fingerprint(kwargs)}
    name = _file_name(str(getattr(train, "__name__", "train")))  # a function's name: made safe
    _, history = load_or_train(name, model, lambda: train(model, *args, **kwargs), key,
                               cache=cache, threads=threads)
    return history
