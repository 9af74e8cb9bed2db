"""The Colab set-up cell (tools/nbtools.colab_cell_source) does nothing outside Colab, and on Colab
clones the repository named in pyproject.toml, installs the helpers and enables widgets.

Every notebook's second cell is checked to be exactly this source by test_notebook_hygiene.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest
from _repo import ROOT, nbtools


def forbid(*args, **kwargs):
    raise AssertionError(f"the Colab cell ran a command outside Colab: {args}")


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_colab_cell_does_nothing_outside_colab(folder, monkeypatch):
    for name in ("google", "google.colab"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    for name in ("run", "call", "check_call", "check_output", "Popen"):
        monkeypatch.setattr(subprocess, name, forbid)
    monkeypatch.setattr(os, "system", forbid)
    monkeypatch.setattr(os, "chdir", forbid)
    cwd, modules = os.getcwd(), set(sys.modules)
    namespace: dict = {}
    exec(nbtools.colab_cell_source(ROOT / folder / "00_x.ipynb"), namespace)
    assert os.getcwd() == cwd
    assert "google.colab" not in sys.modules
    assert set(sys.modules) - modules == set(), "the Colab cell imported modules outside Colab"
    assert set(namespace) - {"__builtins__"} == {"sys"}, "the Colab cell defined names outside Colab"


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_colab_cell_on_colab_clones_installs_and_enables_widgets(folder, monkeypatch):
    repo, branch = nbtools.repo_location()
    calls, moved, enabled = [], [], []
    output = types.SimpleNamespace(enable_custom_widget_manager=lambda: enabled.append(True))
    colab = types.ModuleType("google.colab")
    colab.output = output
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append((cmd, kw)))
    monkeypatch.setattr(os, "chdir", moved.append)
    monkeypatch.setattr(os.path, "isdir", lambda p: False)
    exec(nbtools.colab_cell_source(ROOT / folder / "00_x.ipynb"), {})

    home = "/content/attention-tutorial"
    clone, install = calls
    assert clone[0] == ["git", "clone", "-q", "--depth", "1", "--branch", branch,
                        f"https://github.com/{repo}.git", home]
    assert install[0] == [sys.executable, "-m", "pip", "install", "-q", home]
    assert all(kw.get("check") for _, kw in calls), "a failed clone/install must stop the cell"
    assert moved == [f"{home}/{folder}"]
    assert enabled == [True]


def test_colab_cell_skips_the_clone_when_already_there(monkeypatch):
    calls = []
    colab = types.ModuleType("google.colab")
    colab.output = types.SimpleNamespace(enable_custom_widget_manager=lambda: None)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    monkeypatch.setattr(os, "chdir", lambda p: None)
    monkeypatch.setattr(os.path, "isdir", lambda p: True)
    exec(nbtools.colab_cell_source(ROOT / "notebooks" / "00_x.ipynb"), {})
    assert [c[:4] for c in calls] == [[sys.executable, "-m", "pip", "install"]]
