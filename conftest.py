"""Root pytest configuration: point nbval at our sanitize file wherever pytest is started from, and
run the browser tests last."""

from pathlib import Path

ROOT = Path(__file__).parent


def pytest_configure(config):
    if getattr(config.option, "nbval_sanitize_with", None) is None:
        config.option.nbval_sanitize_with = str(ROOT / "tests" / "nbval_sanitize.cfg")


def pytest_collection_modifyitems(config, items):
    """Browser tests after everything else (stable otherwise): by then nbval has run notebook 10,
    which trains its translator once and caches the weights in .cache/, so its solutions and the
    browser test load them instead of training again (helpers.training, ATTENTION_TUTORIAL_CACHE)."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
