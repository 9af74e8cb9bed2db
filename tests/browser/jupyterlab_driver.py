"""Drive notebooks with widgets in a real JupyterLab: the support code of tests/browser.

- `LabServer` starts a fresh JupyterLab from this Python environment on a temporary copy of the
  repository (so nothing on disk changes), bound to 127.0.0.1 with a random token on a free port,
  with its own temporary Jupyter config/data/runtime/settings folders (the user's are not touched).
- `widget_notebooks()` finds every notebook that displays a widget (saved widget-view outputs, or
  code that mentions ipywidgets / helpers.widgets), so a notebook added later is tested by itself.
- `check_notebook()` opens one notebook in Chromium, waits for the kernel to be really connected and
  idle, runs all cells, checks no cell shows an error, then finds every rendered widget, changes it
  as a person would (keyboard and mouse on sliders, typing + Enter in text boxes, choosing in
  dropdowns, clicking buttons) and checks that the output next to it (figure or text) changes.
  It returns a `Report`; its `problems` list is empty when everything worked. A widget kind it does
  not know how to drive is a problem, never a silent pass.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIRS = ("notebooks", "solutions")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_CODE = re.compile(r"\bipywidgets\b|helpers\.widgets|\binteract(ive)?\(|_widget\(")
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts" / "browser"  # gitignored; CI keeps what fails
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
# Copied to the server's root folder: everything a notebook may read, not the heavy or private bits.
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "test-artifacts", "__pycache__", "*.egg-info", ".ipynb_checkpoints",
    ".pytest_cache", ".ruff_cache", "build", "dist", ".gl", ".whl", ".cache", ".lock-tool", ".hypothesis",
)
CACHE_ENV = "ATTENTION_TUTORIAL_CACHE"  # helpers.training's cache of trained weights
LAB_SETTINGS = {
    # No news/update pop-up over the notebook, and no network request for it.
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    # Keep every cell in the DOM (the default lazily attaches off-screen cells).
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
}


# ----------------------------------------------------------------------------------------------
# Which notebooks have widgets
# ----------------------------------------------------------------------------------------------
def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def saved_widget_views(nb: dict) -> dict[int, int]:
    """{code cell index: number of widget-view outputs saved in it} (cell index over all cells)."""
    views = {}
    for i, cell in enumerate(nb.get("cells", [])):
        n = sum(WIDGET_VIEW in out.get("data", {}) for out in cell.get("outputs", []))
        if n:
            views[i] = n
    return views


def has_widgets(nb: dict) -> bool:
    if saved_widget_views(nb):
        return True
    return any(cell.get("cell_type") == "code" and WIDGET_CODE.search(_source(cell))
               for cell in nb.get("cells", []))


def widget_notebooks(root: Path = ROOT) -> list[str]:
    """Paths (relative to root, posix) of every notebook that displays a widget."""
    found = []
    for folder in NOTEBOOK_DIRS:
        for path in sorted((root / folder).glob("*.ipynb")):
            try:
                nb = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                found.append(path.relative_to(root).as_posix())  # unreadable: let the test say so
                continue
            if has_widgets(nb):
                found.append(path.relative_to(root).as_posix())
    return found


# ----------------------------------------------------------------------------------------------
# The server
# ----------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A JupyterLab server on a temporary copy of the repository. Use as a context manager."""

    def __init__(self, workdir: Path, source_root: Path = ROOT, startup_timeout: float = 90.0):
        self.workdir = Path(workdir)
        self.source_root = Path(source_root)
        self.startup_timeout = startup_timeout
        self.root = self.workdir / "repo"
        self.log_path = self.workdir / "jupyterlab-server.log"
        self.token = secrets.token_hex(24)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self._shutdowns: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LabServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _env(self) -> dict[str, str]:
        w = self.workdir
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(w / "jupyter-config"),
            JUPYTER_DATA_DIR=str(w / "jupyter-data"),
            JUPYTER_RUNTIME_DIR=str(w / "jupyter-runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(w / "lab-user-settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(w / "lab-workspaces"),
            IPYTHONDIR=str(w / "ipython"),
            JUPYTER_PLATFORM_DIRS="1",
            PYTHONUNBUFFERED="1",
        )
        # Kernels share the repository's cache of trained weights (notebook 10's translator, trained
        # by its nbval run just before), not an empty one in this temporary copy.
        env.setdefault(CACHE_ENV, str(self.source_root / ".cache"))
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_CONFIG_PATH", None)
        # The kernel must be this environment's Python (jupyter_client maps "python" to it too).
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        return env

    def start(self) -> None:
        shutil.copytree(self.source_root, self.root, ignore=COPY_IGNORE, symlinks=True)
        settings = self.workdir / "lab-app-settings"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "overrides.json").write_text(json.dumps(LAB_SETTINGS, indent=1))
        last_error = ""
        for _ in range(3):  # a free port can be taken between finding and binding it: retry
            self.port = _free_port()
            cmd = [
                sys.executable, "-m", "jupyter", "lab", "--no-browser",
                "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}", "--ServerApp.terminals_enabled=False",
                "--LabApp.expose_app_in_browser=True", f"--LabApp.app_settings_dir={settings}",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                cmd.append("--allow-root")
            with open(self.log_path, "a") as log:
                log.write(f"$ {' '.join(cmd).replace(self.token, '<token>')}\n")
                log.flush()
                self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env=self._env(),
                                             cwd=self.root)
            deadline = time.monotonic() + self.startup_timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    self.api("GET", "/api/status", timeout=2)
                    return
                except OSError:
                    time.sleep(0.25)
            last_error = (f"exited with code {self.proc.returncode}" if self.proc.poll() is not None
                          else f"not answering after {self.startup_timeout:.0f} s")
            self.stop()
        raise RuntimeError(f"JupyterLab did not start ({last_error}); see {self.log_path}")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.wait_for_shutdowns()
        if self.proc.poll() is None:
            try:
                for s in self.api("GET", "/api/sessions", timeout=5):
                    self.api("DELETE", f"/api/sessions/{s['id']}", timeout=10)
            except OSError:
                pass
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def api(self, method: str, path: str, timeout: float = 10):
        req = urllib.request.Request(self.url + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self, wait: bool = True) -> None:
        """End every session (and its kernel): a kernel outlives the browser page that used it.
        A kernel takes ~2.7 s to shut down, idle all the while: with wait=False the next notebook
        starts meanwhile (`stop()` and `wait_for_shutdowns()` wait for them)."""
        sessions = self.api("GET", "/api/sessions")

        def delete() -> None:
            for s in sessions:
                self.api("DELETE", f"/api/sessions/{s['id']}", timeout=30)
        if wait:
            delete()
            return
        thread = threading.Thread(target=delete, daemon=True, name="shutdown-kernels")
        thread.start()
        self._shutdowns.append(thread)

    def wait_for_shutdowns(self, timeout: float = 60) -> None:
        for thread in self._shutdowns:
            thread.join(timeout)
        self._shutdowns = [t for t in self._shutdowns if t.is_alive()]

    def lab_url(self) -> str:
        # A fresh, empty workspace: nothing opened by an earlier page is restored.
        return f"{self.url}/lab/workspaces/t{secrets.token_hex(4)}?reset&token={self.token}"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


# ----------------------------------------------------------------------------------------------
# Checking one notebook
# ----------------------------------------------------------------------------------------------
@dataclass
class Report:
    notebook: str
    problems: list[str] = field(default_factory=list)
    widgets: list[str] = field(default_factory=list)  # "cell 5: slider 'T' (keyboard, drag)", ...
    seconds: dict[str, float] = field(default_factory=dict)
    console: list[str] = field(default_factory=list)
    artifacts: list[Path] = field(default_factory=list)
    note: str = ""
    ran: str = ""  # "all 41 cells" or "cells 0-19 of 65 (through the last widget)"

    @property
    def ok(self) -> bool:
        return not self.problems


# Widget views are the `lm-Widget` elements carrying a `widget-*` class. Their kind is the first of
# these classes found (order matters: an IntRangeSlider is a slider, an interact is a box).
CONTROL_KINDS = ("slider", "dropdown", "textarea", "text", "toggle-buttons", "toggle-button",
                 "button", "checkbox", "radio", "select-multiple", "select")
PASSIVE_KINDS = ("box", "container", "output", "label", "html", "htmlmath", "image", "valid",
                 "hprogress", "vprogress", "progress")
# What a control's callback may change: the Output widgets (figures, text) and display widgets.
OUTPUT_SELECTOR = (".lm-Widget.widget-output, .lm-Widget.widget-html, .lm-Widget.widget-htmlmath, "
                   ".lm-Widget.widget-label, .lm-Widget.widget-image")

JS_HELPERS = r"""
(() => {
  const bt = window.__bt = {};
  bt.panel = () => window.jupyterapp.shell.currentWidget;
  bt.kernel = () => { const p = bt.panel(); return p && p.sessionContext && p.sessionContext.session
                        && p.sessionContext.session.kernel; };
  bt.kernelReady = () => { const k = bt.kernel();
    return !!k && k.connectionStatus === 'connected' && k.status === 'idle'; };
  bt.cells = () => bt.panel().content.widgets.map(w => w.node);
  bt.hash = (s) => { let h = 5381; for (let i = 0; i < s.length; i++) h = ((h * 33) ^ s.charCodeAt(i)) >>> 0;
                     return s.length + ':' + h.toString(16); };
  bt.outputsOf = (scope) => [...scope.querySelectorAll(OUTPUT_SELECTOR)];
  bt.signature = (cellIndex) => {
    const cell = bt.cells()[cellIndex];
    let outs = cell ? bt.outputsOf(cell) : [];
    if (!outs.length) outs = bt.outputsOf(bt.panel().content.node);
    return outs.map(e => bt.hash(e.innerText + '|' + [...e.querySelectorAll('img')].map(i => i.src).join('|'))).join(',');
  };
  bt.busy = () => { const k = bt.kernel(); return !k || k.status !== 'idle'; };
  bt.cellModels = () => bt.panel().content.widgets.map((w, i) => ({
      index: i, type: w.model.type,
      tags: (w.model.getMetadata && w.model.getMetadata('tags')) || [],
      count: w.model.type === 'code' ? w.model.executionCount : null,
      outputs: w.model.type === 'code' ? w.model.outputs.toJSON().map(o => ({
          type: o.output_type, ename: o.ename || '', evalue: o.evalue || '',
          widget: !!(o.data && o.data['application/vnd.jupyter.widget-view+json'])})) : []}));
  // Tracebacks shown inside widget Outputs (a callback that raised inside `with out:`).
  bt.widgetTracebacks = () => [...bt.panel().content.node.querySelectorAll('.widget-output .jp-OutputArea-output')]
      .filter(e => /Traceback \(most recent call last\)|^\w*(Error|Exception)\b/m.test(e.innerText)
                   && e.getAttribute('data-mime-type') === 'application/vnd.jupyter.stderr')
      .map(e => e.innerText.slice(-400));
  // Every widget view in the cells' outputs: tag it so Python can find it again.
  bt.scan = (controlKinds, passiveKinds) => {
    const found = [];
    let n = 0;
    bt.cells().forEach((cell, ci) => {
      bt.widgetAreas(cell).forEach(area => {
        area.querySelectorAll('.lm-Widget').forEach(el => {
          const classes = [...el.classList].filter(c => c.startsWith('widget-')).map(c => c.slice(7));
          if (!classes.length) return;
          const kind = controlKinds.find(k => classes.includes(k))
                    || (passiveKinds.find(k => classes.includes(k)) ? 'passive' : null);
          const id = 'w' + (n++);
          el.setAttribute('data-bt', id);
          const label = [...el.querySelectorAll(':scope > label.widget-label, :scope label.widget-label-basic')]
              .find(l => l.innerText.replace(/\u200b/g, '').trim());
          const r = el.getBoundingClientRect();
          found.push({id, cell: ci, kind: kind || 'unknown', classes: classes.join(' '),
                      description: (label && label.innerText.trim()) || el.innerText.trim().slice(0, 30),
                      visible: r.width > 0 && r.height > 0});
        });
      });
    });
    return found;
  };
  // The cell's own outputs (not those inside Output widgets) that hold a rendered widget view.
  bt.isView = (el) => el.classList.contains('lm-Widget') && [...el.classList].some(c => c.startsWith('widget-'));
  bt.widgetAreas = (cell) => [...cell.querySelectorAll(
      '.jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output')]
      .filter(a => [...a.children].some(bt.isView) && !/^Error displaying widget/.test(a.innerText));
  bt.renderedViews = () => bt.cells().map(cell => bt.widgetAreas(cell).length);
  // Errors the kernel reports on its iopub channel, wherever they would be shown (a widget callback
  // raising outside any Output only reaches JupyterLab's log console, which nobody looks at).
  bt.kernelErrors = [];
  bt.listenForErrors = () => {
    const k = bt.kernel();
    if (!k || k.__btListening) return;
    k.__btListening = true;
    k.iopubMessage.connect((_, msg) => {
      const t = msg.header.msg_type, c = msg.content || {};
      if (t === 'error') bt.kernelErrors.push(`${c.ename}: ${c.evalue}`);
      else if (t === 'stream' && c.name === 'stderr' && /Traceback \(most recent call last\)/.test(c.text))
        bt.kernelErrors.push(c.text.slice(-400));
    });
  };
  bt.dialogs = () => [...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText.slice(0, 300));
  return true;
})()
""".replace("OUTPUT_SELECTOR", json.dumps(OUTPUT_SELECTOR))


class _Timeout(Exception):
    pass


def _wait(page, js: str, timeout: float, arg=None, interval: float = 0.1):
    """Poll a JS expression until it is truthy; returns its value or raises _Timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(js, arg)
        if value:
            return value
        if time.monotonic() > deadline:
            raise _Timeout(js)
        time.sleep(interval)


class NotebookChecker:
    IDLE_DONE = 3.0  # seconds of uninterrupted kernel idleness that end a Run All which stopped

    def __init__(self, page, server: LabServer, relpath: str, *, change_timeout: float = 15.0,
                 run_timeout: float = 600.0, expected_views: dict[int, int] | None = None,
                 through_last_widget: bool = False):
        self.page = page
        self.server = server
        self.relpath = relpath
        self.change_timeout = change_timeout
        self.run_timeout = run_timeout
        self.report = Report(relpath)
        if expected_views is None:
            nb = json.loads((server.root / relpath).read_text(encoding="utf-8"))
            expected_views = saved_widget_views(nb)
        self.expected_views = expected_views
        # With through_last_widget, Run All stops after the last cell that shows a widget: the
        # cells after it show none, and nbval runs every cell anyway (in the same kernel code).
        self.through = max(expected_views) if through_last_widget and expected_views else None
        self._listeners = {
            "console": lambda m: self.report.console.append(f"{m.type}: {m.text}"),
            "pageerror": lambda e: self.report.console.append(f"pageerror: {e}"),
        }

    def problem(self, text: str) -> None:
        self.report.problems.append(text)

    # -- steps --------------------------------------------------------------------------------
    def open(self) -> None:
        """Open the notebook in the page's JupyterLab (loaded once, reused by later notebooks)."""
        t = time.monotonic()
        page = self.page
        if not page.url.startswith(self.server.url + "/lab"):
            page.goto(self.server.lab_url())
        _wait(page, "() => !!(window.jupyterapp && window.jupyterapp.shell)", 90, interval=0.2)
        page.evaluate("() => window.jupyterapp.restored")
        page.evaluate(JS_HELPERS)
        # Close what an earlier notebook (or the launcher) left open, without "save?" dialogs.
        page.evaluate("""() => { for (const w of [...window.jupyterapp.shell.widgets('main')]) {
            if (w.context && w.context.model) w.context.model.dirty = false; w.dispose(); } }""")
        page.evaluate("(p) => { window.jupyterapp.commands.execute('docmanager:open', "
                      "{path: p, factory: 'Notebook'}); }", self.relpath)
        _wait(page, """(p) => { const w = window.jupyterapp.shell.currentWidget;
            return !!(w && w.context && w.context.path === p && w.sessionContext); }""",
              60, self.relpath, interval=0.2)
        try:
            _wait(page, "() => __bt.kernelReady()", 120, interval=0.2)
        except _Timeout:
            raise AssertionError(f"the kernel never became connected and idle; dialogs open: "
                                 f"{page.evaluate('() => __bt.dialogs()')}") from None
        page.evaluate("() => __bt.listenForErrors()")
        self.report.seconds["open"] = time.monotonic() - t

    def run_all(self) -> None:
        t = time.monotonic()
        n_cells = self.page.evaluate("() => __bt.panel().content.widgets.length")
        if self.through is not None and self.through + 1 >= n_cells:
            self.through = None  # the last widget is in the last cell: run them all
        self.page.evaluate("""(through) => { window.__btRun = null;
            const content = __bt.panel().content;
            let command = 'notebook:run-all-cells';
            if (through !== null) {  // Run All Above the cell after the last widget
                content.activeCellIndex = through + 1;
                command = 'notebook:run-all-above';
            }
            window.jupyterapp.commands.execute(command).then(
                r => { window.__btRun = 'done'; }, e => { window.__btRun = 'error: ' + e; }); }""",
                           self.through)
        # The kernel is idle for a moment between two cells, and Run All's promise and the
        # rendered prompts are not reliable signs of the end (a windowed notebook renders only the
        # cells in view). Done means: idle, and either every code cell has run, or the kernel has
        # stayed idle for IDLE_DONE seconds (Run All stopped at an error).
        deadline, idle_since = t + self.run_timeout, None
        last = n_cells if self.through is None else self.through
        self.report.ran = (f"all {n_cells} cells" if self.through is None else
                           f"cells 0-{self.through} of {n_cells} (through the last widget)")
        while True:
            ready, all_ran = self.page.evaluate("""(last) => [window.__btRun !== null && __bt.kernelReady()
                && !__bt.cells().some(c => (c.querySelector('.jp-InputPrompt') || {}).textContent?.includes('*')),
                __bt.panel().content.widgets.every((w, i) => i > last || w.model.type !== 'code'
                                                   || w.model.executionCount !== null)]""", last)
            now = time.monotonic()
            idle_since = (idle_since or now) if ready else None
            if ready and (all_ran or now - idle_since >= self.IDLE_DONE):
                break
            if now > deadline:
                raise AssertionError(f"Run All did not finish within {self.run_timeout:.0f} s")
            time.sleep(0.5)  # gently: the kernel needs the CPU
        self.report.seconds["run_all"] = time.monotonic() - t
        self.settle()

    def settle(self, quiet: float = 0.3, timeout: float = 30.0) -> None:
        """Wait until the kernel is idle and the widget outputs stop changing for `quiet` s."""
        deadline = time.monotonic() + timeout
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            state = self.page.evaluate("() => [__bt.busy(), __bt.signature(-1)]")
            if state != last or state[0]:
                last, since = state, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            time.sleep(0.05)

    def check_cells(self) -> None:
        """Every code cell ran, and no cell shows an error (except cells tagged raises-exception)."""
        for c in self.page.evaluate("() => __bt.cellModels()"):
            if c["type"] != "code":
                continue
            errors = [o for o in c["outputs"] if o["type"] == "error"]
            expected = "raises-exception" in c["tags"]
            if errors and not expected:
                e = errors[0]
                self.problem(f"cell {c['index']} shows an error in JupyterLab: "
                             f"{e['ename']}: {e['evalue']}"[:500])
            elif c["count"] is None and (self.through is None or c["index"] <= self.through):
                self.problem(f"cell {c['index']} did not run (Run All stopped before it)")

    def check_rendered(self) -> None:
        views = self.page.evaluate("() => __bt.renderedViews()")
        models = self.page.evaluate("() => __bt.cellModels()")
        for i, n in sorted(self.expected_views.items()):
            ok = views[i] if i < len(views) else 0
            made = sum(o["widget"] for o in models[i]["outputs"]) if i < len(models) else 0
            if ok < n or ok < made:
                self.problem(f"cell {i}: {n} widget(s) saved in the notebook, {made} displayed by "
                             f"the kernel, {ok} rendered in JupyterLab")
        if not any(views):
            self.problem("no widget rendered in JupyterLab, yet the notebook has widgets")

    def tracebacks(self) -> list[str]:
        return self.page.evaluate("() => __bt.widgetTracebacks()")

    # -- driving ------------------------------------------------------------------------------
    def drive_all(self) -> None:
        before = set(self.tracebacks())
        for tb in before:
            self.problem(f"a widget output shows a traceback after Run All: ...{tb}")
        errors_seen = self.page.evaluate("() => __bt.kernelErrors.length")  # Run All's are known
        widgets = self.page.evaluate("(k) => __bt.scan(k[0], k[1])",
                                     [list(CONTROL_KINDS), list(PASSIVE_KINDS)])
        for w in widgets:
            if w["kind"] == "passive":
                continue
            name = f"cell {w['cell']}: {w['kind']} {w['description']!r}"
            if w["kind"] == "unknown":
                self.problem(f"{name} (classes: {w['classes']}): this widget kind is not driven by "
                             "tests/browser; teach jupyterlab_driver.py how a person would use it")
                continue
            if not w["visible"]:
                self.problem(f"{name}: rendered with no size (invisible)")
                continue
            try:
                actions = getattr(self, "_drive_" + w["kind"].replace("-", "_"))(w, name)
            except Exception as err:  # a Playwright timeout, a detached element, ...
                self.problem(f"{name}: driving it failed: {type(err).__name__}: {err}"[:800])
                continue
            if actions:
                self.report.widgets.append(f"{name} ({', '.join(actions)})")
            new = [tb for tb in self.tracebacks() if tb not in before]
            if new:
                self.problem(f"{name}: a traceback appeared in a widget output: ...{new[0]}")
                before |= set(new)
            raised = self.page.evaluate("(n) => __bt.kernelErrors.slice(n)", errors_seen)
            errors_seen += len(raised)
            if raised and not new:
                self.problem(f"{name}: its callback raised in the kernel: {raised[0]}"[:800])

    def _locator(self, w):
        return self.page.locator(f'[data-bt="{w["id"]}"]')

    def _expect_change(self, w, name: str, action: str, do, required: bool = True) -> bool:
        """Run `do()` (a person's action) and wait for the widget's outputs to change."""
        before = self.page.evaluate("(i) => __bt.signature(i)", w["cell"])
        do()
        try:
            _wait(self.page, "(a) => __bt.signature(a[0]) !== a[1]",
                  self.change_timeout if required else min(self.change_timeout, 5.0),
                  [w["cell"], before])
        except _Timeout:
            if required:
                self.problem(f"{name}: {action} did not change its output (figure or text) "
                             f"within {self.change_timeout:.0f} s")
            return False
        finally:
            self.settle()
        return True

    def _drive_slider(self, w, name):
        el = self._locator(w)
        handles = el.locator(".noUi-handle")
        track = el.locator(".noUi-base").first
        vertical = "vslider" in w["classes"].split()
        actions = []
        for h in range(handles.count()):
            handle = handles.nth(h)
            handle.scroll_into_view_if_needed()
            now, hi = (float(handle.get_attribute(a) or 0) for a in ("aria-valuenow", "aria-valuemax"))
            key = "ArrowLeft" if now >= hi else "ArrowRight"
            if vertical:
                key = "ArrowDown" if now >= hi else "ArrowUp"

            def press(handle=handle, key=key):
                handle.focus()
                self.page.keyboard.press(key)
            if self._expect_change(w, name, f"pressing {key} on the slider", press):
                actions.append(f"key {key}")
            box, tbox = handle.bounding_box(), track.bounding_box()
            if not box or not tbox or tbox["width"] < 4 or tbox["height"] < 4:
                self.problem(f"{name}: slider handle or track has no position on the page")
                continue
            x0, y0 = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            if vertical:
                frac = (tbox["y"] + tbox["height"] - y0) / tbox["height"]
                target = 0.2 if frac > 0.5 else 0.8
                x1, y1 = x0, tbox["y"] + tbox["height"] * (1 - target)
            else:
                frac = (x0 - tbox["x"]) / tbox["width"]
                target = 0.2 if frac > 0.5 else 0.8
                x1, y1 = tbox["x"] + tbox["width"] * target, y0

            def drag(x0=x0, y0=y0, x1=x1, y1=y1):
                self.page.mouse.move(x0, y0)
                self.page.mouse.down()
                self.page.mouse.move(x1, y1, steps=8)
                self.page.mouse.up()
            if self._expect_change(w, name, "dragging the slider handle", drag):
                actions.append("drag")
        return actions

    def _drive_dropdown(self, w, name):
        select = self._locator(w).locator("select")
        options = [o.replace("\xa0", " ") for o in select.locator("option").all_inner_texts()]
        current = select.evaluate("s => s.selectedIndex")
        if len(options) < 2:
            self.problem(f"{name}: a dropdown with {len(options)} option(s) cannot be changed")
            return []
        choice = (current + 1) % len(options)
        ok = self._expect_change(w, name, f"choosing {options[choice]!r}",
                                 lambda: select.select_option(index=choice))
        return [f"chose {options[choice]!r}"] if ok else []

    def _drive_select(self, w, name):
        return self._drive_dropdown(w, name)

    def _drive_select_multiple(self, w, name):
        return self._drive_dropdown(w, name)

    def _drive_text(self, w, name):
        box = self._locator(w).locator("input").first
        kind = box.get_attribute("type") or "text"
        if kind == "number":
            value = float(box.input_value() or 0)
            top = box.get_attribute("max")
            key = "ArrowDown" if top not in (None, "") and value >= float(top) else "ArrowUp"

            def step():
                box.click()
                self.page.keyboard.press(key)
                self.page.keyboard.press("Enter")
            ok = self._expect_change(w, name, f"pressing {key} in the number box", step)
            return [f"number {key}"] if ok else []
        actions = []
        # First a sensible edit, which must change the output; then nonsense and an impossible
        # date, which must not give a traceback (checked after each widget): a widget answers bad
        # input with a message.
        # Then the original text again, so that the widgets driven next start from a sane state.
        original = box.input_value()
        steps = ((_edited_text(original), True), (NONSENSE, False), (IMPOSSIBLE_DATE, False),
                 (original, False))
        for new, required in steps:
            def type_it(new=new):
                box.click()
                self.page.keyboard.press("ControlOrMeta+a")
                self.page.keyboard.type(new, delay=5)
                self.page.keyboard.press("Enter")
            if self._expect_change(w, name, f"typing {new!r} + Enter", type_it, required):
                actions.append(f"typed {new!r}")
            elif required:
                break  # already reported; the other steps would only repeat it
        return actions

    def _drive_textarea(self, w, name):
        box = self._locator(w).locator("textarea").first
        new = _edited_text(box.input_value())

        def type_it():
            box.click()
            self.page.keyboard.press("ControlOrMeta+a")
            self.page.keyboard.type(new, delay=10)
            self.page.keyboard.press("Tab")
        ok = self._expect_change(w, name, f"typing {new!r}", type_it)
        return [f"typed {new!r}"] if ok else []

    def _drive_toggle_buttons(self, w, name):
        buttons = self._locator(w).locator("button")
        labels = buttons.all_inner_texts()
        actions = []
        others = [i for i in range(len(labels))
                  if "mod-active" not in (buttons.nth(i).get_attribute("class") or "")]
        if not others:
            self.problem(f"{name}: no other option to click")
        for i in others[:3]:
            if self._expect_change(w, name, f"clicking {labels[i]!r}", buttons.nth(i).click):
                actions.append(f"clicked {labels[i]!r}")
        return actions

    def _drive_toggle_button(self, w, name):
        ok = self._expect_change(w, name, "clicking it", self._locator(w).click)
        return ["clicked"] if ok else []

    def _drive_button(self, w, name):
        return self._drive_toggle_button(w, name)

    def _drive_checkbox(self, w, name):
        ok = self._expect_change(w, name, "ticking/unticking it",
                                 self._locator(w).locator("input[type=checkbox]").click)
        return ["clicked"] if ok else []

    def _drive_radio(self, w, name):
        radios = self._locator(w).locator("input[type=radio]")
        labels = self._locator(w).locator("label:has(input[type=radio])").all_inner_texts()
        actions = []
        others = [i for i in range(radios.count()) if not radios.nth(i).is_checked()]
        if not others:
            self.problem(f"{name}: no other option to click")
        for i in others[:3]:
            label = labels[i] if i < len(labels) else str(i)
            if self._expect_change(w, name, f"clicking {label!r}", radios.nth(i).click):
                actions.append(f"clicked {label!r}")
        return actions

    # -- all together -------------------------------------------------------------------------
    def run(self) -> Report:
        t = time.monotonic()
        for event, handler in self._listeners.items():
            self.page.on(event, handler)
        try:
            self.open()
            self.run_all()
            self.check_cells()
            self.check_rendered()
            t2 = time.monotonic()
            self.drive_all()
            self.report.seconds["widgets"] = time.monotonic() - t2
        except AssertionError as err:
            self.problem(str(err))
        except Exception as err:  # a Playwright timeout, a page crash, ...
            self.problem(f"{type(err).__name__}: {err}"[:1000])
        finally:
            for event, handler in self._listeners.items():
                self.page.remove_listener(event, handler)
        self.report.seconds["total"] = time.monotonic() - t
        return self.report


NONSENSE = "@@ ??"
IMPOSSIBLE_DATE = "31.02.2021"  # well-formed but no date: the translator must say so, not translate


def _edited_text(value: str) -> str:
    """What a person would type instead of `value`: a slightly different phrase."""
    if value.count(",") >= 1:  # a list such as "2, 1, 0.5, -1": drop the last entry
        return ",".join(value.split(",")[:-1]).strip() or "1"
    words = value.split()
    if len(words) > 1:
        return " ".join(words[:-1])
    if len(words) == 1:
        return value + " " + value
    return "hello"


def check_notebook(page, server: LabServer, relpath: str, **kw) -> Report:
    return NotebookChecker(page, server, relpath, **kw).run()


def save_artifacts(page, server: LabServer, report: Report, folder: Path) -> list[Path]:
    """Screenshot, server log, browser console and the report, for a failed check."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", report.notebook.removesuffix(".ipynb"))
    paths = []
    shot = folder / f"{stem}.png"
    try:
        page.screenshot(path=str(shot), full_page=True, timeout=20000)
        paths.append(shot)
    except Exception as err:  # the page may be gone: still save the logs
        report.console.append(f"(screenshot failed: {err})")
    log = folder / f"{stem}.server.log"
    log.write_text(server.log_text().replace(server.token, "<token>"))
    paths.append(log)
    details = folder / f"{stem}.report.txt"
    details.write_text("\n".join([
        f"notebook: {report.notebook}", "problems:", *[f"  - {p}" for p in report.problems],
        "widgets driven:", *[f"  - {w}" for w in report.widgets],
        f"seconds: {report.seconds}", "browser console:", *[f"  {c}" for c in report.console],
    ]) + "\n")
    paths.append(details)
    return paths


def failure_message(report: Report) -> str:
    lines = [f"{report.notebook} in JupyterLab:", *[f"  - {p}" for p in report.problems]]
    if report.widgets:
        lines += ["widgets that worked:", *[f"  - {w}" for w in report.widgets]]
    lines += ["artifacts (screenshot, server log, report with browser console):",
              *[f"  {p}" for p in report.artifacts]]
    return "\n".join(lines)
