"""One process at a time per cache entry of a trained model.

When the test suite runs notebooks in parallel (pytest-xdist workers, the browser tests'
JupyterLab), two kernels can ask for the same model at once. Whoever takes the lock first trains and
saves; the others wait, then find the file and load it, instead of training the same model again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock; parallel runs may then train twice (files are still
    fcntl = None  # written atomically, so nobody reads half a file)


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
