"""Fixtures of the browser tests: one JupyterLab server and one Chromium for the whole session.

Locally the tests skip (with the reason) when Chromium or Playwright is missing; in CI (`CI=true`)
that is a failure. Never `playwright install`: we drive Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import jupyterlab_driver as jd  # noqa: E402

IN_CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}
ARTIFACTS = jd.ARTIFACTS
REPORTS: list[jd.Report] = []  # filled by the tests, summarised at the end of the run


def _missing(reason: str):
    if IN_CI:
        pytest.fail(f"CI=true but {reason}: the browser tests cannot run (.ci/run installs it)",
                    pytrace=False)
    pytest.skip(f"{reason}; install it to run the browser tests (apt-get install chromium)")


@pytest.fixture(scope="session")
def chromium_ready() -> None:
    if not os.access(jd.CHROMIUM, os.X_OK):
        _missing(f"no Chromium at {jd.CHROMIUM}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("the Python package playwright is not installed (requirements.txt)")


@pytest.fixture(scope="session")
def lab_server(chromium_ready, tmp_path_factory):
    server = jd.LabServer(tmp_path_factory.mktemp("jupyterlab"))
    try:
        server.start()
    except RuntimeError as err:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log = ARTIFACTS / "jupyterlab-server.log"
        log.write_text(server.log_text().replace(server.token, "<token>"))
        pytest.fail(f"{err}\nserver log saved to {log}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser(chromium_ready, sync_playwright_session):
    chromium = sync_playwright_session.chromium.launch(executable_path=jd.CHROMIUM, args=jd.CHROMIUM_ARGS)
    yield chromium
    chromium.close()


@pytest.fixture(scope="session")
def _shared_page(browser):
    """One JupyterLab page for all notebooks (loading the app costs seconds); replaced after a
    notebook that failed, so that one failure does not leak into the next test."""
    holder = {}
    yield holder
    if holder.get("context"):
        holder["context"].close()


@pytest.fixture
def page(browser, lab_server, _shared_page):
    if _shared_page.get("page") is None or _shared_page["page"].is_closed():
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(30_000)
        _shared_page.update(context=context, page=context.new_page())
    yield _shared_page["page"]
    # Kernels outlive the page: end them (in the background: a kernel takes seconds to shut
    # down, idle, while the next notebook opens).
    lab_server.shutdown_kernels(wait=False)


def _discard_page(holder) -> None:
    if holder.get("context"):
        holder["context"].close()
    holder.clear()


@pytest.fixture
def check(page, lab_server, _shared_page):
    """check(relpath, **kw) -> Report; saves artifacts when the report has problems."""

    def run(relpath: str, note: str = "", save: bool = True, **kw) -> jd.Report:
        report = jd.check_notebook(page, lab_server, relpath, **kw)
        report.note = note
        REPORTS.append(report)
        if save and not report.ok:
            report.artifacts = jd.save_artifacts(page, lab_server, report, ARTIFACTS)
            _discard_page(_shared_page)
        return report

    return run


def pytest_terminal_summary(terminalreporter):
    if not REPORTS:
        return
    tr = terminalreporter
    tr.section("browser tests: notebooks and widgets driven in JupyterLab")
    for r in REPORTS:
        status = "ok" if r.ok else f"{len(r.problems)} problem(s)"
        note = f" [{r.note}]" if r.note else ""
        phases = ", ".join(f"{k} {v:.1f}" for k, v in r.seconds.items() if k != "total")
        ran = f", ran {r.ran}" if r.ran else ""
        tr.write_line(f"{r.notebook}{note}: {status}, {len(r.widgets)} widget(s) driven{ran}, "
                      f"{r.seconds.get('total', 0):.1f} s ({phases})")
        for w in r.widgets:
            tr.write_line(f"    {w}")
