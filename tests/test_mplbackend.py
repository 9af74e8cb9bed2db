"""Notebooks show inline figures even when the caller exports MPLBACKEND (CI images, servers):
helpers/_inline.py switches such a kernel to the inline backend when `helpers` is imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _repo import ROOT

from helpers import _inline

FIGURE_NOTEBOOK = "notebooks/01_dot_product_attention.ipynb"  # two cells end in a figure


@pytest.mark.parametrize(
    ("backend", "in_kernel", "switch"),
    [
        ("Agg", True, True),
        ("agg", True, True),
        ("pdf", True, True),
        ("svg", True, True),
        ("module://matplotlib_inline.backend_inline", True, False),  # the default in a kernel
        ("inline", True, False),
        ("widget", True, False),  # ipympl: the learner's choice stays
        ("module://ipympl.backend_nbagg", True, False),
        ("QtAgg", True, False),
        ("Agg", False, False),  # scripts and pytest keep Agg
    ],
)
def test_needs_inline(backend, in_kernel, switch):
    assert _inline.needs_inline(backend, in_kernel) is switch


def test_outside_a_kernel_nothing_changes():
    import matplotlib

    before = matplotlib.get_backend()
    assert _inline.use_inline_backend_in_kernel() is False
    assert matplotlib.get_backend() == before


def test_figure_notebook_passes_nbval_with_mplbackend_agg_exported(tmp_path):
    """The stored outputs (figures included) come back from a kernel that inherited Agg."""
    notebook = ROOT / FIGURE_NOTEBOOK
    assert '"image/png"' in notebook.read_text(encoding="utf-8"), "pick a notebook with figures"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not CI's junit
    env["MPLBACKEND"] = "Agg"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
         "-c", str(ROOT / "pyproject.toml"), "--junitxml", str(tmp_path / "inner.xml"),
         str(notebook)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"nbval failed on {FIGURE_NOTEBOOK} with MPLBACKEND=Agg:\n{result.stdout[-4000:]}")
    assert " passed" in result.stdout and "failed" not in result.stdout
