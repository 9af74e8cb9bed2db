"""Root pytest configuration: point nbval at our sanitize file wherever pytest is started from, and
put the slowest test files first."""

from pathlib import Path

ROOT = Path(__file__).parent

# The files that take longest, longest first. `tasks.py test` runs the suite in pytest-xdist workers
# that take whole files in collection order (`--dist loadfile --no-loadscope-reorder`): starting
# with the longest ones keeps every worker busy to the end. The browser tests come first: they run
# a dozen notebooks in JupyterLab while the other workers run nbval. Trained models are shared
# through helpers' on-disk cache, under a lock: whichever run of notebook 10 (nbval, its solutions
# or the browser) comes first trains the translator, and the others wait for it and load it.
SLOW_FIRST = (
    "tests/browser/",
    "notebooks/10_",
    "notebooks/12_",
    "notebooks/13_",
    "notebooks/14_",
)


def slow_rank(nodeid: str) -> int:
    """Where a test's file goes: its place in SLOW_FIRST, or after all of them."""
    return next((i for i, prefix in enumerate(SLOW_FIRST) if nodeid.startswith(prefix)),
                len(SLOW_FIRST))


def pytest_configure(config):
    if getattr(config.option, "nbval_sanitize_with", None) is None:
        config.option.nbval_sanitize_with = str(ROOT / "tests" / "nbval_sanitize.cfg")


def pytest_collection_modifyitems(config, items):
    """Slow files first (stable otherwise: the rest keeps pytest's order)."""
    items.sort(key=lambda item: slow_rank(item.nodeid))
