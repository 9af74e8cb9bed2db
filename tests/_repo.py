"""What the repository-level tests share: paths, the notebook list, tools/nbtools.py, cheap JSON reads.

Notebooks are found by glob, so a notebook added later is covered by every test without editing them.
Reading is plain `json` (no nbformat/jsonschema import), which keeps these tests fast.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
ALL_NOTEBOOKS = NOTEBOOKS + SOLUTIONS


def _load_nbtools():
    if "nbtools" in sys.modules:
        return sys.modules["nbtools"]
    spec = importlib.util.spec_from_file_location("nbtools", ROOT / "tools" / "nbtools.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["nbtools"] = module
    spec.loader.exec_module(module)
    return module


nbtools = _load_nbtools()


def rel(path: Path) -> str:
    """The path as the repository names it (a file outside the repository: its full path)."""
    path = Path(path)
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


@functools.cache
def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src
