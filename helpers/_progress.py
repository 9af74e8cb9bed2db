"""A progress line while a model trains, shown in place in a notebook and gone when training ends.

In a Jupyter kernel, ``progress(name)`` displays one output (a blank text line) with a display id;
``train_loop`` updates it in place with the step, the loss and the elapsed time; at the end it
is set back to the blank line. So the output a notebook stores is the same whether the model was
trained or loaded from the cache (``helpers.cache.load_or_train`` displays the same blank line),
and nbval's strict comparison still holds: it sees the first display, and Jupyter applies the
updates. Outside a kernel (scripts, tests) nothing is shown.

This module imports nothing from ``helpers``: the cache and the training loop build on it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager

BLANK = {"text/plain": ""}  # what stays in the notebook: the same for a trained and a loaded model
MIN_INTERVAL_S = 0.5  # the line is redrawn at most twice a second
_ids = itertools.count()
_stack: list[Progress] = []


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Progress:
    """One progress line: ``update(step, steps, loss)`` redraws it (at most every
    ``MIN_INTERVAL_S``, and always at the last step)."""

    def __init__(self, name: str, show: bool):
        self.name, self.show = name, show
        self.display_id = f"attention-tutorial-progress-{next(_ids)}"
        self.start = time.perf_counter()
        self.last = -float("inf")
        self.text = ""

    def _draw(self, bundle: dict, update: bool) -> None:
        if not self.show:
            return
        from IPython.display import display
        display(bundle, raw=True, display_id=self.display_id, update=update)

    def update(self, step: int, steps: int, loss: float) -> None:
        now = time.perf_counter()
        if now - self.last < MIN_INTERVAL_S and step < steps:
            return
        self.last = now
        self.text = line(self.name, step, steps, loss, now - self.start)
        self._draw({"text/plain": self.text}, update=True)


def line(name: str, step: int, steps: int, loss: float, seconds: float, width: int = 20) -> str:
    """``training translator  [#####.....]  step 1,000/2,000  loss 0.4321  12 s``"""
    done = round(width * step / steps) if steps else width
    return (f"training {name}  [{'#' * done}{'.' * (width - done)}]  step {step:,}/{steps:,}  "
            f"loss {loss:.4f}  {seconds:.0f} s")


@contextmanager
def progress(name: str) -> Iterator[Progress]:
    """Show a progress line for ``name`` while inside (in a Jupyter kernel); blank again after.
    Nested calls share the outer line (a cached model's training loop draws on the cache's)."""
    if _stack:
        yield _stack[-1]
        return
    bar = Progress(name, _in_kernel())
    bar._draw(BLANK, update=False)
    _stack.append(bar)
    try:
        yield bar
    finally:
        _stack.pop()
        bar._draw(BLANK, update=True)


def current() -> Progress | None:
    """The progress line being shown, if any."""
    return _stack[-1] if _stack else None
