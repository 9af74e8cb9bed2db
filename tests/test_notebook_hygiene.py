"""Hygiene of every committed notebook in notebooks/ and solutions/ (pure JSON reading, no kernel).

nbval checks that the stored outputs are reproduced; these tests check what nbval cannot see: that
the stored file comes from one clean top-to-bottom run (nbval silently passes a cell that was never
executed), that it follows the layout of CONTRIBUTING.md, and that it stays small and self-contained.
Notebooks are discovered by glob, so every new notebook is covered automatically.
"""

from __future__ import annotations

import re

import pytest
from _repo import ALL_NOTEBOOKS, NOTEBOOKS, ROOT, SOLUTIONS, load, nbtools, rel, source

MAX_BYTES = 1_000_000
NOTEBOOK_NAME = re.compile(r"^(\d\d)_[a-z0-9]+(_[a-z0-9]+)*\.ipynb$")
SOLUTION_NAME = re.compile(r"^(\d\d)_[a-z0-9]+(_[a-z0-9]+)*_solutions\.ipynb$")
TITLE = re.compile(r"^# (\d\d) · \S")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# The only remote images allowed: the two badges (everything else must render offline).
BADGE_IMAGES = {
    "https://colab.research.google.com/assets/colab-badge.svg",
    "https://mybinder.org/badge_logo.svg",
}
# Sections that may follow "## Exercises" at the very end of a notebook (and "## Appendix: ...",
# material a learner may skip, such as notebook 00's measurements of what each layer costs).
CLOSING_SECTIONS = {"Further reading", "References", "What's next", "Next", "Next steps",
                    "Your run"}  # "Your run": claims.report() (CONTRIBUTING.md)

MD_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")
HTML_IMAGE = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
MD_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")


def ids(paths):
    return [rel(p) for p in paths]


every_notebook = pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=ids(ALL_NOTEBOOKS))
lesson_notebook = pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def markdown(nb):
    return [(i, source(c)) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"]


def tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def is_remote(url: str) -> bool:
    return re.match(r"^[a-z][a-z0-9+.-]*:", url, re.IGNORECASE) is not None and not url.startswith(
        "attachment:"
    )


# --- file names and pairing ------------------------------------------------------------------


@lesson_notebook
def test_notebook_file_name(path):
    assert NOTEBOOK_NAME.match(path.name), f"{rel(path)}: name it NN_topic.ipynb (lower case, _)"


@pytest.mark.parametrize("path", SOLUTIONS, ids=ids(SOLUTIONS))
def test_solution_file_name_and_pair(path):
    assert SOLUTION_NAME.match(path.name), f"{rel(path)}: name it NN_topic_solutions.ipynb"
    lesson = ROOT / "notebooks" / path.name.replace("_solutions.ipynb", ".ipynb")
    assert lesson.exists(), f"{rel(path)} has no lesson notebook {rel(lesson)}"


@lesson_notebook
def test_every_notebook_has_its_solutions(path):
    solution = ROOT / "solutions" / path.name.replace(".ipynb", "_solutions.ipynb")
    assert solution.exists(), f"{rel(path)}: its solutions belong in {rel(solution)}"


def test_notebook_numbers_are_unique():
    numbers = [p.name[:2] for p in NOTEBOOKS]
    assert len(numbers) == len(set(numbers)), f"two notebooks share a number: {numbers}"


# --- saved from one clean run ----------------------------------------------------------------


@every_notebook
def test_size_at_most_1_mb(path):
    size = path.stat().st_size
    assert size <= MAX_BYTES, f"{rel(path)} is {size / 1e6:.2f} MB (limit 1 MB): shrink its figures"


@every_notebook
def test_saved_from_one_clean_run(path):
    cells = code_cells(load(path))
    empty = [i for i, c in enumerate(cells) if not source(c).strip()]
    assert not empty, f"{rel(path)}: empty code cells (never executed, so never tested): {empty}"
    counts = [c.get("execution_count") for c in cells]
    fix = f"save it with `python3 tasks.py execute {rel(path)}`"
    assert any(counts), f"{rel(path)} was saved without running it (nbval would compare nothing): {fix}"
    assert counts == list(range(1, len(cells) + 1)), (
        f"{rel(path)}: execution counts are {counts}, expected 1..{len(cells)}: {fix}"
    )


@every_notebook
def test_errors_only_where_tagged_raises_exception(path):
    for i, cell in enumerate(code_cells(load(path)), start=1):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        tagged = "raises-exception" in tags(cell)
        if errors and not tagged:
            e = errors[0]
            pytest.fail(f"{rel(path)}, code cell {i}: {e.get('ename')}: {e.get('evalue')}")
        assert errors or not tagged, (
            f"{rel(path)}, code cell {i} is tagged raises-exception but raised nothing"
        )


@every_notebook
def test_metadata_is_clean(path):
    nb = load(path)
    assert nb.get("nbformat") == 4, f"{rel(path)}: nbformat {nb.get('nbformat')}, expected 4"
    meta = nb.get("metadata", {})
    assert meta.get("kernelspec", {}).get("name") == "python3", (
        f"{rel(path)}: kernelspec {meta.get('kernelspec')}, expected name python3"
    )
    assert "widgets" not in meta, f"{rel(path)}: stored widget state (metadata.widgets)"
    assert "version" not in meta.get("language_info", {}), (
        f"{rel(path)}: language_info.version is stored: save it with `python3 tasks.py execute`"
    )
    timed = [i for i, c in enumerate(nb["cells"]) if "execution" in c.get("metadata", {})]
    assert not timed, f"{rel(path)}: cells {timed} store metadata.execution (timings)"


@every_notebook
def test_widget_model_ids_are_normalized(path):
    for i, cell in enumerate(load(path)["cells"]):
        for j, out in enumerate(cell.get("outputs", [])):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view and "model_id" in view:
                assert view["model_id"] == f"{i:016x}{j:016x}", (
                    f"{rel(path)}, cell {i}: random widget model id: save it with "
                    "`python3 tasks.py execute`"
                )


# --- layout ----------------------------------------------------------------------------------


@every_notebook
def test_first_cell_is_title_and_badges(path):
    cells = load(path)["cells"]
    first = cells[0] if cells else {}
    assert first.get("cell_type") == "markdown", f"{rel(path)}: the first cell must be markdown"
    lines = source(first).split("\n")
    m = TITLE.match(lines[0])
    assert m, f"{rel(path)}: the first line must be '# NN · Title', got {lines[0]!r}"
    assert m.group(1) == path.name[:2], f"{rel(path)}: title number {m.group(1)} != file number"
    badge = nbtools.badge_line(path)
    assert lines[1:3] == ["", badge], (
        f"{rel(path)}: the Colab/Binder badge line must follow the title "
        "(run `python3 tasks.py sync " + rel(path) + "`)"
    )


@lesson_notebook
def test_first_cell_says_what_you_will_learn_and_need(path):
    text = source(load(path)["cells"][0])
    for heading in ("What you will learn", "What you need"):
        assert re.search(rf"^##\s+{heading}\s*$", text, re.MULTILINE), (
            f"{rel(path)}: the first cell needs a '## {heading}' heading"
        )


@every_notebook
def test_second_cell_is_the_colab_cell(path):
    cells = load(path)["cells"]
    assert len(cells) > 1 and cells[1]["cell_type"] == "code", (
        f"{rel(path)}: the second cell must be the Colab code cell"
    )
    assert source(cells[1]) == nbtools.colab_cell_source(path), (
        f"{rel(path)}: the Colab cell differs from pyproject.toml's: run "
        "`python3 tasks.py sync " + rel(path) + "` (never edit it by hand)"
    )
    assert cells[1].get("outputs") == [], f"{rel(path)}: the Colab cell printed something"


def level2_headings(nb):
    return [
        (i, m.group(1).strip())
        for i, text in markdown(nb)
        for m in re.finditer(r"^##\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
    ]


@lesson_notebook
def test_ends_with_summary_then_exercises(path):
    heads = level2_headings(load(path))
    names = [h for _, h in heads]
    for name in ("Summary", "Exercises"):
        assert names.count(name) == 1, f"{rel(path)}: needs exactly one '## {name}' ({names})"
    after = names[names.index("Summary") + 1 :]
    closing = {name for name in after[1:] if not name.startswith("Appendix")}
    assert after[:1] == ["Exercises"] and closing <= CLOSING_SECTIONS, (
        f"{rel(path)}: '## Summary' then '## Exercises' must be the last sections; after "
        f"Summary come {after} (allowed at the very end: {sorted(CLOSING_SECTIONS)}, and 'Appendix: ...')"
    )


UNNUMBERED = {"What you will learn", "What you need", "Summary", "Exercises"}
NUMBERED = re.compile(r"^(\d+)\. \S")


@lesson_notebook
def test_body_sections_are_numbered_one_style(path):
    """CONTRIBUTING.md: body sections read `## 1. Title`, `## 2. Title`, ... in order; the opening
    sections, Summary, Exercises and what follows them are not numbered."""
    names = [h for _, h in level2_headings(load(path))]
    body = names[names.index("What you need") + 1 : names.index("Summary")]
    numbers = []
    for name in body:
        m = NUMBERED.match(name)
        assert m, (f"{rel(path)}: section '## {name}' should read '## N. Title' (numbered with a "
                   "period, like every body section)")
        numbers.append(int(m.group(1)))
    assert numbers == list(range(1, len(body) + 1)), (
        f"{rel(path)}: body sections are numbered {numbers}, expected 1..{len(body)} in order")
    unnumbered = [h for h in names if h not in body and NUMBERED.match(h)]
    assert not unnumbered, f"{rel(path)}: only body sections are numbered, not {unnumbered}"


@every_notebook
def test_referenced_images_and_links_exist(path):
    for i, text in markdown(load(path)):
        cell = load(path)["cells"][i]
        images = MD_IMAGE.findall(text) + HTML_IMAGE.findall(text)
        for url in images:
            if url.startswith("attachment:"):
                name = url.split(":", 1)[1]
                assert name in cell.get("attachments", {}), f"{rel(path)}, cell {i}: {url} missing"
            elif is_remote(url):
                assert url in BADGE_IMAGES, (
                    f"{rel(path)}, cell {i}: remote image {url} (does not render offline: "
                    "put it in imgs/)"
                )
            else:
                target = (path.parent / url.split("#")[0]).resolve()
                assert target.is_file(), f"{rel(path)}, cell {i}: image {url} does not exist"
        for url in MD_LINK.findall(text):
            if is_remote(url) or url.startswith("#") or url in images:
                continue
            target = (path.parent / url.split("#")[0]).resolve()
            assert target.exists(), f"{rel(path)}, cell {i}: link target {url} does not exist"


def test_image_patterns_find_what_notebooks_write():
    """The reference finder itself: it must see both markdown and HTML images."""
    text = (
        '![heatmap](../imgs/a.png "t") and <img width="300" src="../imgs/b.svg">\n'
        "[![Binder](https://mybinder.org/badge_logo.svg)](https://x) [next](02_x.ipynb#top)"
    )
    assert MD_IMAGE.findall(text) == ["../imgs/a.png", "https://mybinder.org/badge_logo.svg"]
    assert HTML_IMAGE.findall(text) == ["../imgs/b.svg"]
    assert "02_x.ipynb#top" in MD_LINK.findall(text)
    assert is_remote("https://x") and not is_remote("../imgs/a.png")
    assert not is_remote("attachment:a.png")

