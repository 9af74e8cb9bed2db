"""Root pytest configuration: point nbval at our sanitize file wherever pytest is started from, put
the slowest test files first, and keep the robustness checks of the notebooks' conclusions
(tests/conclusions, marker ``conclusions``) out of a run unless it asks for them."""

import os
from pathlib import Path

import pytest

from tools import numerics

ROOT = Path(__file__).parent

# The same floating-point bits on every x86-64 machine (tools/numerics.py): set before any test
# imports torch, and inherited by every kernel, JupyterLab and worker this run starts.
if numerics.torch_loaded() and not numerics.pinned():  # pragma: no cover - a plugin imported torch
    raise RuntimeError("conftest.py: torch was imported before the numerics could be pinned")
numerics.pin()

# The checks that every experimental conclusion of a notebook survives other seeds, the notebook's
# own variations and the control that would refute it (CONTRIBUTING.md). They train many small
# models, so they take minutes: `python3 tasks.py test --conclusions` adds them to the suite (CI
# does), `python3 tasks.py test -m conclusions` runs only them.
CONCLUSIONS = "tests/conclusions/"

# The units of work that take longest, longest first. `tasks.py test` runs the suite in pytest-xdist
# workers that take whole units in collection order (`--dist loadfile --no-loadscope-reorder`; a
# unit is a file, or one notebook's run in JupyterLab: `work_unit` below): starting with the longest
# ones keeps every worker busy to the end. Trained models are shared through helpers' on-disk
# cache, under a lock: whichever run of a notebook (nbval, or JupyterLab in the browser tests)
# comes first trains its models, and the other waits for it and loads them. The order follows the
# durations of a run of the whole suite on 2 cores (pytest's --junitxml times per unit).
BROWSER = "tests/browser/"
IN_JUPYTERLAB = BROWSER + "test_widgets_in_jupyterlab.py::test_notebook_widgets_respond_in_jupyterlab["
SLOW_FIRST = (
    CONCLUSIONS + "test_nb12_gpt.py",  # the longest file (date models at six seeds): from the start
    CONCLUSIONS + "test_nb12_smoothing.py",  # its control, more models, in another worker
    CONCLUSIONS,
    # The rest by their measured time (2026-12-06, 3 workers, the trained runs shipped):
    "notebooks/15_",  # 74 s: a real language model, no training
    IN_JUPYTERLAB + "notebooks/13_",  # 61 s
    IN_JUPYTERLAB + "notebooks/12_",  # 55 s
    IN_JUPYTERLAB + "notebooks/10_",  # 55 s
    "tests/test_llm.py",  # 43 s
    IN_JUPYTERLAB + "notebooks/11_",  # 34 s
    "notebooks/13_",  # 33 s
    "notebooks/10_",  # 30 s
    "notebooks/11_",  # 29 s
    IN_JUPYTERLAB + "notebooks/07_",  # 27 s
    IN_JUPYTERLAB + "notebooks/14_",  # 27 s
    IN_JUPYTERLAB + "notebooks/05_",  # 26 s
    "notebooks/12_",  # 24 s
    "tests/test_exercises_nb07_09.py",
    "tests/test_bpe.py",
    "notebooks/14_",
    BROWSER,  # the other notebooks in JupyterLab, and the checks of the browser checker itself
)


# Cells that train a model for minutes when the cache is empty (notebook 12's two date models,
# 2,000 steps each on one thread: about 2-5 min each on a 2-core machine, more while other workers
# run) get a longer limit than pytest-timeout's 300 s; a hung cell still fails.
LONG_TRAINING_CALLS = ("train_date_model(",)
LONG_TRAINING_TIMEOUT_S = 900


def work_unit(nodeid: str) -> str:
    """The unit of work a pytest-xdist worker takes whole (`--dist loadfile`): a test's file (the
    cells of a notebook share one kernel; a module's fixtures are built once), except in the
    browser tests, where each test (one notebook run in JupyterLab) is a unit of its own, so that
    a dozen notebooks run in JupyterLab share out over the workers instead of queueing in one."""
    path = nodeid.split("::", 1)[0]
    return nodeid if path.startswith(BROWSER) else path


def unit_scheduling():
    """xdist's `loadfile` scheduler, with the units of `work_unit` (imported late: a run with
    `-p no:xdist` never needs it)."""
    from xdist.scheduler import LoadFileScheduling

    class UnitScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return UnitScheduling


@pytest.hookimpl(optionalhook=True)  # optional: a run with `-p no:xdist` has no such hook
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` with the units of `work_unit`; any other `--dist` is xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    return unit_scheduling()(config, log)


def slow_rank(nodeid: str) -> int:
    """Where a test's file goes: its place in SLOW_FIRST, or after all of them."""
    return next((i for i, prefix in enumerate(SLOW_FIRST) if nodeid.startswith(prefix)),
                len(SLOW_FIRST))


def pytest_addoption(parser):
    parser.addoption("--conclusions", action="store_true", default=False,
                     help="also run tests/conclusions (marker 'conclusions'): the robustness checks "
                          "of the notebooks' conclusions, which take minutes")


def wants_conclusions(run_them: bool, markexpr: str) -> bool:
    """Whether a run keeps the conclusions tests: asked for with --conclusions, or named in -m."""
    return run_them or "conclusions" in markexpr


def pytest_configure(config):
    if getattr(config.option, "nbval_sanitize_with", None) is None:
        config.option.nbval_sanitize_with = str(ROOT / "tests" / "nbval_sanitize.cfg")


@pytest.hookimpl(tryfirst=True)  # mark before `-m` selects
def pytest_collection_modifyitems(config, items):
    """Slow files first (stable otherwise: the rest keeps pytest's order); every test under
    tests/conclusions carries the ``conclusions`` marker, and is left out unless asked for."""
    items.sort(key=lambda item: slow_rank(item.nodeid))
    for item in items:
        source = getattr(getattr(item, "cell", None), "source", "")
        if isinstance(source, str) and any(call in source for call in LONG_TRAINING_CALLS):
            item.add_marker(pytest.mark.timeout(LONG_TRAINING_TIMEOUT_S))
    if config is None:
        return
    conclusions = [item for item in items if item.nodeid.startswith(CONCLUSIONS)]
    for item in conclusions:
        item.add_marker(pytest.mark.conclusions)
    if conclusions and not wants_conclusions(config.getoption("--conclusions"),
                                             config.option.markexpr or ""):
        config.hook.pytest_deselected(items=conclusions)
        items[:] = [item for item in items if not item.nodeid.startswith(CONCLUSIONS)]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before every test: the pinned numerics in this process's environment (inherited by the
    kernels, JupyterLab servers and subprocesses it starts), except while a notebook that runs with
    the processor's native kernels starts its kernel (tools/numerics.py). Set for every test, so that
    a native notebook's setting never leaks into the tests after it."""
    name = Path(str(item.fspath)).name if ".ipynb::" in item.nodeid else ""
    env = numerics.for_notebook(name)
    for key in numerics.PINNED:
        if key in env:
            os.environ[key] = env[key]
        else:
            os.environ.pop(key, None)
