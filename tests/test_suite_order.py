"""The suite's plumbing for speed: the slowest files first (the browser tests, then the notebooks
that train), parallel workers that take whole files, trained models shared through a locked cache,
and JupyterLab kernels that use the repository's cache, not their copy's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time

import pytest
from _repo import ROOT
from test_environment_files import tasks

from helpers.cache import cache_lock

sys.path.insert(0, str(ROOT / "tests" / "browser"))
import jupyterlab_driver as jd  # noqa: E402


def _root_conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Item:
    def __init__(self, nodeid):
        self.nodeid = nodeid


IN_LAB = "tests/browser/test_widgets_in_jupyterlab.py::test_notebook_widgets_respond_in_jupyterlab"


def test_slow_units_come_first_longest_first_and_the_rest_keeps_its_order():
    names = ["tests/test_attention.py::test_a", "notebooks/00_start_here.ipynb::Cell 0",
             f"{IN_LAB}[notebooks/04_masks.ipynb]",
             "notebooks/12_decoder_only_gpt.ipynb::Cell 0", "tests/test_layers.py::test_b",
             f"{IN_LAB}[notebooks/13_modern_attention.ipynb]",
             "notebooks/10_training_a_translator.ipynb::Cell 0",
             "notebooks/10_training_a_translator.ipynb::Cell 1",
             "solutions/10_training_a_translator_solutions.ipynb::Cell 0",
             "solutions/04_masks_solutions.ipynb::Cell 0"]
    items = [Item(n) for n in names]
    _root_conftest().pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == [
        f"{IN_LAB}[notebooks/13_modern_attention.ipynb]",
        "notebooks/10_training_a_translator.ipynb::Cell 0",
        "notebooks/10_training_a_translator.ipynb::Cell 1",
        "notebooks/12_decoder_only_gpt.ipynb::Cell 0",
        f"{IN_LAB}[notebooks/04_masks.ipynb]",
        "tests/test_attention.py::test_a", "notebooks/00_start_here.ipynb::Cell 0",
        "tests/test_layers.py::test_b",
        "solutions/10_training_a_translator_solutions.ipynb::Cell 0",
        "solutions/04_masks_solutions.ipynb::Cell 0"]


def test_every_slow_prefix_names_something_that_exists():
    conftest = _root_conftest()
    for prefix in conftest.SLOW_FIRST:
        if prefix.startswith(conftest.IN_JUPYTERLAB):  # one notebook's run in JupyterLab
            assert (ROOT / "tests/browser/test_widgets_in_jupyterlab.py").exists()
            prefix = prefix.removeprefix(conftest.IN_JUPYTERLAB)
            assert prefix in {p.removesuffix(p.split("_", 1)[1]) for p in jd.widget_notebooks()}, prefix
        folder, _, start = prefix.rpartition("/")
        assert any(p.name.startswith(start) for p in (ROOT / folder).iterdir()), prefix


def test_workers_take_whole_files_but_one_notebook_at_a_time_in_jupyterlab():
    unit = _root_conftest().work_unit
    assert unit("notebooks/10_training_a_translator.ipynb::Cell 3") == "notebooks/10_training_a_translator.ipynb"
    assert unit("tests/test_llm.py::test_logits[1]") == "tests/test_llm.py"
    one = f"{IN_LAB}[notebooks/13_modern_attention.ipynb]"
    assert unit(one) == one
    selftest = "tests/browser/test_widgets_in_jupyterlab.py::test_checker_catches_broken_widgets"
    assert unit(selftest) == selftest


class Config:
    def __init__(self, dist):
        self.dist = dist

    def getvalue(self, name):
        return {"dist": self.dist}[name]


def test_the_scheduler_splits_by_work_unit_only_for_loadfile():
    from xdist.scheduler import LoadFileScheduling

    conftest = _root_conftest()
    assert conftest.pytest_xdist_make_scheduler(Config("load"), log=None) is None, \
        "other --dist choices stay xdist's own"
    scheduling = conftest.unit_scheduling()
    assert issubclass(scheduling, LoadFileScheduling)
    one = f"{IN_LAB}[notebooks/13_modern_attention.ipynb]"
    assert scheduling._split_scope(None, one) == one
    cell = "notebooks/13_modern_attention.ipynb::Cell 7"
    assert scheduling._split_scope(None, cell) == "notebooks/13_modern_attention.ipynb"


@pytest.mark.parametrize(("rest", "cpus", "parallel"), [
    ([], 2, True),
    (["-m", "not browser", "--junitxml=test-artifacts/junit.xml"], 2, True),
    (["-k", "04_masks"], 8, True),
    ([], 1, False),  # one core: nothing to share
    ([], None, False),  # unknown core count
    (["notebooks/04_masks.ipynb"], 2, False),  # a file named: run just it, serially
    (["-n", "3"], 2, False),  # the caller's own choice of workers
    (["-p", "no:xdist"], 2, False),
])
def test_parallel_test_args(rest, cpus, parallel):
    args, env = tasks.parallel_test_args(rest, cpus, {"PATH": "/bin"})
    if parallel:
        assert args[:2] == ["-n", str(min(cpus, 4) + 1)] and args[-len(rest) or len(args):] == rest
        assert "--dist" in args and args[args.index("--dist") + 1] == "loadfile"
        assert "--no-loadscope-reorder" in args, "the slow-first order must be kept"
        assert env == {"PATH": "/bin", "OMP_NUM_THREADS": "1"}
    else:
        assert (args, env) == (rest, {"PATH": "/bin"})


def test_parallel_run_keeps_the_callers_thread_count():
    _, env = tasks.parallel_test_args([], 2, {"OMP_NUM_THREADS": "2"})
    assert env["OMP_NUM_THREADS"] == "2"


def test_cache_lock_lets_one_process_in_at_a_time(tmp_path):
    """A second process asking for the same entry waits until the first lets go."""
    entry = tmp_path / "model.pt"
    script = ("import sys, time; from helpers.cache import cache_lock\n"
              "with cache_lock(sys.argv[1]):\n    print(time.monotonic(), flush=True)\n")
    with cache_lock(entry):
        child = subprocess.Popen([sys.executable, "-c", script, str(entry)],
                                 stdout=subprocess.PIPE, text=True, cwd=ROOT)
        time.sleep(1.0)
        released = time.monotonic()
    entered = float(child.communicate(timeout=60)[0])
    assert child.returncode == 0
    assert entered >= released, "the child got the lock while the parent held it"
    assert (tmp_path / "model.pt.lock").exists() and not entry.exists()


def test_lab_kernels_share_the_repository_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(jd.CACHE_ENV, raising=False)
    server = jd.LabServer(tmp_path)
    assert server._env()[jd.CACHE_ENV] == str(ROOT / ".cache")
    monkeypatch.setenv(jd.CACHE_ENV, str(tmp_path / "mine"))
    assert server._env()[jd.CACHE_ENV] == str(tmp_path / "mine"), "a user's choice is kept"


def test_the_cache_is_neither_copied_nor_committed():
    assert ".cache" in jd.COPY_IGNORE(str(ROOT), [".cache", "notebooks"])
    assert ".cache/" in (ROOT / ".gitignore").read_text().split()


@pytest.mark.parametrize(("run_them", "markexpr", "kept"), [
    (False, "", False), (True, "", True), (False, "conclusions", True),
    (False, "not browser", False), (True, "not browser", True),
])
def test_conclusions_run_only_when_asked_for(run_them, markexpr, kept):
    assert _root_conftest().wants_conclusions(run_them, markexpr) is kept


class MarkableItem(Item):
    def __init__(self, nodeid):
        super().__init__(nodeid)
        self.markers = []

    def add_marker(self, marker):
        self.markers.append(marker.name)
        self.marks = [*getattr(self, "marks", []), marker.mark]


class FakeConfig:
    def __init__(self, conclusions: bool, markexpr: str):
        self.conclusions, self.deselected = conclusions, []
        self.option = type("Option", (), {"markexpr": markexpr})()
        self.hook = type("Hook", (), {"pytest_deselected": lambda _, items: self.deselected.extend(items)})()

    def getoption(self, name):
        assert name == "--conclusions"
        return self.conclusions


@pytest.mark.parametrize(("conclusions", "markexpr", "kept"), [(False, "", False), (True, "", True),
                                                               (False, "conclusions", True)])
def test_conclusions_tests_are_marked_and_left_out_unless_asked_for(conclusions, markexpr, kept):
    items = [MarkableItem("tests/test_attention.py::test_a"),
             MarkableItem("tests/conclusions/test_nb05_heads.py::test_b")]
    config = FakeConfig(conclusions, markexpr)
    _root_conftest().pytest_collection_modifyitems(config, items)
    assert [i.nodeid.startswith("tests/conclusions/") for i in items] == ([True, False] if kept else [False])
    assert [i.nodeid for i in config.deselected] == ([] if kept else ["tests/conclusions/test_nb05_heads.py::test_b"])
    marked = [i for i in items + config.deselected if "conclusions" in i.markers]
    assert [i.nodeid for i in marked] == ["tests/conclusions/test_nb05_heads.py::test_b"]


def test_cells_that_train_a_date_model_get_a_longer_timeout():
    """A cold run of notebook 12 trains its date models for minutes in one cell each: those cells,
    and only those, get LONG_TRAINING_TIMEOUT_S instead of pytest-timeout's 300 s."""
    conftest = _root_conftest()
    items = [MarkableItem("notebooks/12_decoder_only_gpt.ipynb::Cell 23"),
             MarkableItem("notebooks/12_decoder_only_gpt.ipynb::Cell 2"), MarkableItem("tests/test_gpt.py::test_a")]
    items[0].cell = type("Cell", (), {"source": 'encdec, hist = train_date_model("encdec", seed=0)'})()
    items[1].cell = type("Cell", (), {"source": "from helpers.experiments import train_date_model"})()
    conftest.pytest_collection_modifyitems(None, items)
    for i in items:
        i.marks = getattr(i, "marks", [])
    timeouts = {i.nodeid: [m.args[0] for m in i.marks if m.name == "timeout"] for i in items}
    assert timeouts == {"notebooks/12_decoder_only_gpt.ipynb::Cell 23": [conftest.LONG_TRAINING_TIMEOUT_S],
                        "notebooks/12_decoder_only_gpt.ipynb::Cell 2": [], "tests/test_gpt.py::test_a": []}
    assert conftest.LONG_TRAINING_TIMEOUT_S > 300
