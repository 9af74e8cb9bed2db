"""The repository's location is written once, in pyproject.toml's [tool.attention-tutorial]; the
README's badges and clone command, every notebook's badges and Colab cell derive from it.

(The notebooks' badge line and Colab cell are compared exactly in test_notebook_hygiene.py.)
"""

from __future__ import annotations

import re
import tomllib

import pytest
from _repo import NOTEBOOKS, ROOT, nbtools, rel

# The tutorial's notebooks, as the README lists them.
EXPECTED = [
    "00_start_here", "01_dot_product_attention", "02_softmax_and_scaling", "03_self_attention_qkv",
    "04_masks", "05_multi_head_attention", "06_positional_encoding", "07_encoder", "08_decoder",
    "09_full_transformer", "10_training_a_translator", "11_efficient_attention",
    "12_decoder_only_gpt", "13_modern_attention", "14_induction_heads", "15_a_real_language_model",
]
COLAB = re.compile(r"colab\.research\.google\.com/github/([^/\s)]+/[^/\s)]+)/blob/([^/\s)]+)/")
BINDER = re.compile(r"mybinder\.org/v2/gh/([^/\s)]+/[^/\s)]+)/([^/?\s)]+)")
TEXT_FILES = ("*.md", "*.ipynb", "*.py", "*.toml", "*.yml", "*.yaml", "*.cfg", "*.txt", "*.html")
# tests/ holds deliberately foreign URLs (to test the tools); everything learners see is scanned.
SKIP_DIRS = {".venv", ".git", "node_modules", "build", "dist", "test-artifacts", "tests"}


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def project_files():
    for pattern in TEXT_FILES:
        for path in ROOT.rglob(pattern):
            parts = path.relative_to(ROOT).parts
            if not SKIP_DIRS.intersection(parts) and not any(p.endswith(".egg-info") for p in parts):
                yield path


def test_location_is_declared_once_in_pyproject():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["attention-tutorial"]
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", conf["repository"]), "repository must be OWNER/NAME"
    assert re.fullmatch(r"[\w./-]+", conf["branch"])
    assert nbtools.repo_location() == (conf["repository"], conf["branch"])


def test_readme_is_in_sync_with_pyproject():
    assert nbtools.synced_readme(readme()) == readme(), (
        "README.md's badges or clone URL differ from pyproject.toml: run `python3 tasks.py sync`"
    )


@pytest.mark.parametrize("name", EXPECTED)
def test_readme_lists_each_notebook_with_its_badges(name):
    path = ROOT / "notebooks" / f"{name}.ipynb"
    text = readme()
    assert f"](notebooks/{name}.ipynb)" in text, f"README does not link notebooks/{name}.ipynb"
    assert nbtools.badge_line(path) in text, f"README lacks the Colab/Binder badges of {name}"


@pytest.mark.parametrize("name", EXPECTED)
def test_each_listed_notebook_exists(name):
    path = ROOT / "notebooks" / f"{name}.ipynb"
    assert path.is_file(), f"README lists {rel(path)}, which does not exist (yet)"


def test_every_notebook_is_listed_in_the_readme():
    unlisted = [rel(p) for p in NOTEBOOKS if p.stem not in EXPECTED]
    assert not unlisted, f"add {unlisted} to README.md's table and to EXPECTED here"


def test_readme_names_exactly_the_commands_that_exist():
    text = readme()
    for command in ("python3 tasks.py lab", "python3 tasks.py test"):
        assert f"\n{command}" in text, f"README's set-up block must show `{command}`"
    tasks = (ROOT / "tasks.py").read_text()
    for command in set(re.findall(r"python3 tasks\.py (\w+)", text)):
        assert f'"{command}"' in tasks, f"README mentions `tasks.py {command}`, unknown to tasks.py"


def test_every_colab_and_binder_url_in_the_project_uses_the_declared_location():
    repo, branch = nbtools.repo_location()
    wrong = []
    for path in project_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in (COLAB, BINDER):
            for m in pattern.finditer(text):
                if "{" in m.group(0):  # a template, e.g. in tools/nbtools.py
                    continue
                if m.groups() != (repo, branch):
                    wrong.append(f"{rel(path)}: {m.group(0)}")
    assert not wrong, f"URLs not derived from pyproject.toml ({repo}@{branch}): {wrong[:10]}"


def test_url_patterns_catch_a_foreign_location():
    """The scan above sees both badges of another repository or branch."""
    repo, branch = nbtools.repo_location()
    line = nbtools.badge_line(ROOT / "notebooks" / "00_x.ipynb")
    line = line.replace(f"{repo}/blob/{branch}/", "someone/fork/blob/dev/")
    line = line.replace(f"{repo}/{branch}?", "someone/fork/dev?")
    found = [m.groups() for p in (COLAB, BINDER) for m in p.finditer(line)]
    assert found == [("someone/fork", "dev"), ("someone/fork", "dev")]
