"""tools/nbtools.py: clean re-execution (byte-identical re-saves) and badge/Colab-cell syncing.

Uses tiny throwaway notebooks in a temporary folder, never the tutorial's own.
"""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest
from _repo import ROOT, nbtools

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def tiny_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 99 · Tiny"),
        nbformat.v4.new_code_cell("x = sum(range(5))\nprint(f'{x / 3:.4f}')"),
        nbformat.v4.new_code_cell("import ipywidgets as w\nw.IntSlider(value=x)"),
        nbformat.v4.new_code_cell("{'answer': x}"),
        nbformat.v4.new_code_cell("1 / 0", metadata={"tags": ["raises-exception"]}),
    ]
    return nb


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A throwaway project folder with the real pyproject.toml, as nbtools' ROOT."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for d in ("notebooks", "solutions"):
        (tmp_path / d).mkdir()
    monkeypatch.setattr(nbtools, "ROOT", tmp_path)
    return tmp_path


def test_execute_twice_resaves_byte_identical(project):
    path = project / "notebooks" / "99_tiny.ipynb"
    nbformat.write(tiny_notebook(), path)
    nbtools.execute(path)
    first = path.read_bytes()
    nbtools.execute(path)
    assert path.read_bytes() == first

    nb = json.loads(first)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == [1, 2, 3, 4]
    assert "".join(code[0]["outputs"][0]["text"]) == "3.3333\n"
    assert code[3]["outputs"][0]["ename"] == "ZeroDivisionError"  # tagged: execution went on
    view = code[1]["outputs"][0]["data"][WIDGET_VIEW]
    assert view["model_id"] == f"{2:016x}{0:016x}"  # cell 2, output 0
    assert "widgets" not in nb["metadata"]
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "version" not in nb["metadata"]["language_info"]
    assert all("execution" not in c["metadata"] for c in nb["cells"])


def test_execute_stops_on_an_untagged_error(project):
    path = project / "notebooks" / "99_tiny.ipynb"
    nb = tiny_notebook()
    nb.cells[-1].metadata = {}
    nbformat.write(nb, path)
    before = path.read_bytes()
    with pytest.raises(Exception, match="ZeroDivisionError"):
        nbtools.execute(path)
    assert path.read_bytes() == before, "a failed run must not overwrite the notebook"


def test_clean_normalizes_widget_ids_and_drops_volatile_metadata():
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    cell = nbformat.v4.new_code_cell("w", execution_count=1)
    cell.metadata.update(execution={"iopub.status.idle": "2024"}, scrolled=True, tags=["keep"])
    view = {"version_major": 2, "version_minor": 0, "model_id": "3f2a9c"}
    cell.outputs = [
        nbformat.v4.new_output("stream", text="hi\n"),
        nbformat.v4.new_output("display_data", data={WIDGET_VIEW: dict(view), "text/plain": "w"}),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    nbtools.clean(nb)
    assert "widgets" not in nb.metadata
    assert cell.metadata == {"tags": ["keep"]}
    assert cell.outputs[1]["data"][WIDGET_VIEW]["model_id"] == "0000000000000001" + "0000000000000001"
    assert cell.outputs[1]["data"]["text/plain"] == "w"
    nbtools.clean(nb)  # idempotent
    assert cell.outputs[1]["data"][WIDGET_VIEW]["model_id"] == f"{1:016x}{1:016x}"


def test_sync_writes_badges_and_colab_cell_once(project):
    path = project / "solutions" / "99_tiny_solutions.ipynb"
    nb = tiny_notebook()
    nb.cells[0].source = "# 99 · Tiny\nIntro line."
    nbformat.write(nb, path)
    assert nbtools.sync(path) is True
    assert nbtools.sync(path) is False  # idempotent
    cells = nbformat.read(path, as_version=4).cells
    assert cells[0].source == f"# 99 · Tiny\n\n{nbtools.badge_line(path)}\n\nIntro line."
    assert cells[1].source == nbtools.colab_cell_source(path)
    assert 'os.chdir(f"{HOME}/solutions")' in cells[1].source
    assert len(cells) == len(nb.cells) + 1


def test_sync_replaces_a_stale_repository(project):
    path = project / "notebooks" / "99_tiny.ipynb"
    nbformat.write(tiny_notebook(), path)
    nbtools.sync(path)
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    repo, branch = nbtools.repo_location()
    pyproject.write_text(text.replace(f'"{repo}"', '"someone/fork"'))
    assert nbtools.sync(path) is True
    first, colab = nbformat.read(path, as_version=4).cells[:2]
    assert "github/someone/fork/blob/" in first.source and repo not in first.source
    assert 'REPO, BRANCH, HOME = "someone/fork"' in colab.source
    assert first.source.count("colab-badge.svg") == 1


def test_badge_urls_follow_pyproject(project):
    repo, branch = nbtools.repo_location()
    line = nbtools.badge_line(project / "notebooks" / "03_x.ipynb")
    assert f"colab.research.google.com/github/{repo}/blob/{branch}/notebooks/03_x.ipynb)" in line
    assert f"mybinder.org/v2/gh/{repo}/{branch}?labpath=notebooks%2F03_x.ipynb)" in line


def test_synced_readme_rederives_badges_and_clone_url(project):
    stale = (
        "| [03](notebooks/03_x.ipynb) | [![Open In Colab](https://colab.research.google.com/"
        "assets/colab-badge.svg)](https://colab.research.google.com/github/old/repo/blob/dev/"
        "notebooks/03_x.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder"
        ".org/v2/gh/old/repo/dev?labpath=notebooks%2F03_x.ipynb) |\n"
        "git clone https://github.com/old/repo.git\nsee https://github.com/other/project\n"
    )
    repo, _ = nbtools.repo_location()
    fixed = nbtools.synced_readme(stale)
    assert nbtools.badge_line(project / "notebooks" / "03_x.ipynb") in fixed
    assert f"git clone https://github.com/{repo}.git" in fixed
    assert "old/repo" not in fixed
    assert "https://github.com/other/project" in fixed  # other links untouched
    assert nbtools.synced_readme(fixed) == fixed
