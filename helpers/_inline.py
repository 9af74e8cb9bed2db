"""Inline figures in every notebook kernel, whatever MPLBACKEND the kernel inherited.

A Jupyter kernel inherits the environment of whatever started it (JupyterLab, nbval, VS Code). When
that environment exports a non-interactive backend, as many CI images and servers do
(`MPLBACKEND=Agg`), ipykernel keeps it instead of its inline backend, and figures silently stop
showing. Importing `helpers` (every notebook does, before its first figure) switches such a kernel
to the inline backend, exactly as `%matplotlib inline` does. Outside a kernel (scripts, pytest) and
in kernels already showing figures (the default, Colab, `%matplotlib widget`) nothing changes.
"""

from __future__ import annotations

import sys

INLINE = "module://matplotlib_inline.backend_inline"
# Backends that draw only to files: in a notebook they show nothing.
FILE_ONLY = frozenset({"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"})


def needs_inline(backend: str, in_kernel: bool) -> bool:
    """Whether a session on `backend` must switch to the inline backend to show figures."""
    return in_kernel and backend.strip().lower() in FILE_ONLY


def _kernel_shell():
    """The IPython shell of a Jupyter kernel, or None (plain Python, terminal IPython)."""
    if "IPython" not in sys.modules:
        return None
    shell = sys.modules["IPython"].get_ipython()
    return shell if getattr(shell, "kernel", None) is not None else None


def use_inline_backend_in_kernel() -> bool:
    """Switch a kernel on a file-only backend to inline figures; True when it switched."""
    shell = _kernel_shell()
    if shell is None:
        return False
    import matplotlib

    if not needs_inline(matplotlib.get_backend(), in_kernel=True):
        return False
    shell.run_line_magic("matplotlib", "inline")
    return True


use_inline_backend_in_kernel()
