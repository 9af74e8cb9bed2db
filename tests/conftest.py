"""Shared by the unit tests: figures are drawn off-screen and closed after every test."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="session")
def sync_playwright_session():
    """One Playwright per test process, shared by tests/browser and the diagram checks: a second
    ``sync_playwright()`` opened in the same thread while the first is open fails with "using
    Playwright Sync API inside the asyncio loop" (which happens when one xdist worker gets both)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw
