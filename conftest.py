"""Root pytest configuration: point nbval at our sanitize file wherever pytest is started from."""

from pathlib import Path

ROOT = Path(__file__).parent


def pytest_configure(config):
    if getattr(config.option, "nbval_sanitize_with", None) is None:
        config.option.nbval_sanitize_with = str(ROOT / "tests" / "nbval_sanitize.cfg")
