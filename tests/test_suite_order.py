"""The suite's plumbing for speed: browser tests run last (after notebook 10 has trained and cached
its translator), and their JupyterLab kernels use the repository's cache, not their copy's."""

from __future__ import annotations

import importlib.util
import sys

from _repo import ROOT

sys.path.insert(0, str(ROOT / "tests" / "browser"))
import jupyterlab_driver as jd  # noqa: E402


def _root_conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Item:
    def __init__(self, name, browser=False):
        self.name, self.browser = name, browser

    def get_closest_marker(self, name):
        return object() if name == "browser" and self.browser else None


def test_browser_tests_are_moved_last_and_the_rest_keeps_its_order():
    items = [Item("unit1"), Item("browser1", True), Item("unit2"), Item("nb10 cell 3"),
             Item("browser2", True), Item("solutions10 cell 2")]
    _root_conftest().pytest_collection_modifyitems(None, items)
    assert [i.name for i in items] == ["unit1", "unit2", "nb10 cell 3", "solutions10 cell 2",
                                       "browser1", "browser2"]


def test_lab_kernels_share_the_repository_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(jd.CACHE_ENV, raising=False)
    server = jd.LabServer(tmp_path)
    assert server._env()[jd.CACHE_ENV] == str(ROOT / ".cache")
    monkeypatch.setenv(jd.CACHE_ENV, str(tmp_path / "mine"))
    assert server._env()[jd.CACHE_ENV] == str(tmp_path / "mine"), "a user's choice is kept"


def test_the_cache_is_neither_copied_nor_committed():
    assert ".cache" in jd.COPY_IGNORE(str(ROOT), [".cache", "notebooks"])
    assert ".cache/" in (ROOT / ".gitignore").read_text().split()
