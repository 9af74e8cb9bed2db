"""Every notebook that displays a widget, run in a real JupyterLab in Chromium (through its last
widget's cell), its widgets driven as a person would (see jupyterlab_driver.py). Run with the rest: `python3 tasks.py test`; alone:
`.venv/bin/python -m pytest -m browser tests/browser`.

The notebooks are found by scanning their saved outputs and code, so a notebook added later is
tested without editing this file. Two generated notebooks check the checker itself: one where every
widget kind works, one where callbacks are broken, which must be reported.
"""

from __future__ import annotations

import json

import jupyterlab_driver as jd
import pytest
from jupyterlab_driver import ARTIFACTS, failure_message

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

NOTEBOOKS = jd.widget_notebooks()


@pytest.mark.parametrize("relpath", NOTEBOOKS)
def test_notebook_widgets_respond_in_jupyterlab(relpath, check):
    # Run All stops after the last widget's cell: nbval runs every cell of every notebook, and the
    # cells after the last widget show none (the self-tests below run all their cells).
    report = check(relpath, through_last_widget=True)
    if not report.ok:
        pytest.fail(failure_message(report), pytrace=False)


# ----------------------------------------------------------------------------------------------
# The checker checked: generated notebooks (built at test time, never stored under tests/, where
# nbval would collect them).
# ----------------------------------------------------------------------------------------------
def _notebook(cells: list[str | tuple[str, dict]], saved_views: set[int]) -> dict:
    """A notebook from code sources; cells in `saved_views` carry a saved widget-view output, as
    tools/nbtools.py writes them (stable model id, no widget state)."""
    nb_cells = []
    for i, cell in enumerate(cells):
        src, meta = cell if isinstance(cell, tuple) else (cell, {})
        outputs = []
        if i in saved_views:
            outputs = [{"output_type": "display_data", "metadata": {}, "data": {
                "text/plain": "VBox()",
                jd.WIDGET_VIEW: {"model_id": f"{i:016x}{0:016x}", "version_major": 2,
                                 "version_minor": 0}}}]
        nb_cells.append({"cell_type": "code", "execution_count": None, "metadata": meta,
                         "outputs": outputs, "source": src})
    return {"cells": nb_cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"}}}


def _write(server: jd.LabServer, name: str, nb: dict) -> str:
    relpath = f"_browser_selftest/{name}.ipynb"
    path = server.root / relpath
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(nb, indent=1))
    return relpath


# `import helpers` as every tutorial notebook does: it keeps figures inline when the kernel
# inherited a file-only MPLBACKEND (helpers/_inline.py), so the self-tests pass under
# MPLBACKEND=Agg too.
IMPORTS = ("import helpers\nimport ipywidgets as W\nimport matplotlib.pyplot as plt\n"
           "from IPython.display import display")

GOOD = [
    IMPORTS,
    # A figure driven by four controls (the common case in the notebooks).
    """out = W.Output()
t = W.FloatSlider(value=1.0, min=0.1, max=5.0, step=0.1, description="temperature")
pair = W.Dropdown(options=["en-fr", "en-de", "en-ja"], description="pair")
text = W.Text(value="the black cat sleeps", description="sentence", continuous_update=False)
heads = W.ToggleButtons(options=["head 1", "head 2", "head 3"], description="head")
def draw(change=None):
    with out:
        out.clear_output(wait=True)
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.bar(range(len(text.value.split())), [t.value * len(w) for w in text.value.split()])
        ax.set_title(f"{pair.value} {heads.value}")
        plt.show()
for w in (t, pair, text, heads):
    w.observe(draw, names="value")
draw()
display(W.VBox([t, pair, text, heads, out]))""",
    # interact: text output, several control kinds made by interact itself.
    """def f(n, causal, mode, size, span):
    print(f"n={n} causal={causal} mode={mode} size={size} span={span}")
W.interact(f, n=W.IntSlider(3, 0, 8, description="n"), causal=True,
           mode=W.RadioButtons(options=["sum", "mean", "max"]),
           size=W.SelectionSlider(options=["small", "medium", "large"]),
           span=W.IntRangeSlider(value=(2, 6), min=0, max=10));""",
    # The other kinds the driver knows, wired to one text Output.
    """log = W.Output()
parts = [W.Textarea("a b c", description="notes"), W.BoundedIntText(3, min=0, max=9, description="k"),
         W.ToggleButton(description="mask"), W.Select(options=["x", "y", "z"], description="pick"),
         W.Button(description="sample")]
def show(change=None):
    with log:
        log.clear_output(wait=True)
        print([getattr(p, "value", None) for p in parts[:-1]], show.clicks)
show.clicks = 0
def clicked(_):
    show.clicks += 1
    show()
for p in parts[:-1]:
    p.observe(show, names="value")
parts[-1].on_click(clicked)
show()
display(W.VBox([*parts, log]))""",
    # Controls in one cell, their output in another: the whole notebook's outputs are watched.
    """far_out = W.Output()
far = W.IntSlider(5, 0, 10, description="far")
far.observe(lambda c: far_out.clear_output() or far_out.append_stdout(f"far={c['new']}"), names="value")
display(far)""",
    "display(far_out)",
    # A cell meant to fail (tagged raises-exception) is not an error of the notebook.
    ("raise ValueError('this cell is meant to fail')", {"tags": ["raises-exception"]}),
]

BROKEN = [
    IMPORTS,
    # 1: the callback raises inside `with out:`: a traceback appears in the Output.
    """out1 = W.Output()
s1 = W.FloatSlider(1.0, min=0.0, max=2.0, description="raises")
def cb1(change):
    with out1:
        raise RuntimeError("broken callback")
s1.observe(cb1, names="value")
with out1:
    print("start")
display(W.VBox([s1, out1]))""",
    # 2: the callback raises before drawing, outside any Output: nothing changes on screen.
    """out2 = W.Output()
d2 = W.Dropdown(options=["a", "b"], description="raises-early")
def cb2(change):
    1 / 0
    with out2:
        print(change["new"])
d2.observe(cb2, names="value")
with out2:
    print("start")
display(W.VBox([d2, out2]))""",
    # 3: the callback does nothing.
    """out3 = W.Output()
t3 = W.Text("one two three", description="does-nothing")
t3.observe(lambda change: None, names="value")
with out3:
    print("start")
display(W.VBox([t3, out3]))""",
    # 4: a widget kind the driver cannot use.
    "display(W.ColorPicker(description='unknown-kind'))",
    # 5: saved with a widget, but shows none in JupyterLab.
    "print('no widget here any more')",
    # 6: an error, then 7: a cell that Run All never reaches.
    "undefined_name_in_cell_6",
    "print('never run')",
]


@pytest.fixture
def selftest_notebook(lab_server):
    return lambda name, cells, saved: _write(lab_server, name, _notebook(cells, saved))


def test_checker_drives_every_widget_kind_it_knows(check, selftest_notebook):
    relpath = selftest_notebook("good", GOOD, saved={1, 2, 3, 4, 5})
    report = check(relpath, note="self-test: all must work")
    if not report.ok:
        pytest.fail(failure_message(report), pytrace=False)
    driven = "\n".join(report.widgets)
    for name in ["slider 'temperature' (key ArrowRight, drag)", "dropdown 'pair'",
                 "text 'sentence' (typed 'the black cat'", "toggle-buttons 'head'",
                 "slider 'n'", "checkbox 'causal'", "radio 'mode'", "slider 'size'",
                 "slider 'span' (key ArrowRight, drag, key ArrowRight, drag)", "textarea 'notes'",
                 "text 'k' (number ArrowUp)", "toggle-button 'mask'", "select 'pick'",
                 "button 'sample'", "slider 'far'"]:
        assert name in driven, f"{name!r} not driven; driven:\n{driven}"


def test_checker_catches_broken_widgets(check, selftest_notebook, page, lab_server):
    relpath = selftest_notebook("broken", BROKEN, saved={1, 2, 3, 4, 5})
    report = check(relpath, note="self-test: problems expected", save=False, change_timeout=3.0)
    expected = {
        "raising callback (traceback in the Output)": ("cell 1: slider 'raises'", "traceback"),
        "callback raising before it draws": ("cell 2: dropdown 'raises-early'", "did not change"),
        "exception outside any Output": ("cell 2: dropdown 'raises-early'", "ZeroDivisionError"),
        "callback doing nothing": ("cell 3: text 'does-nothing'", "did not change"),
        "unknown widget kind": ("cell 4: unknown", "not driven by tests/browser"),
        "widget saved but not rendered": ("cell 5: 1 widget(s) saved", "0 rendered"),
        "error in a cell": ("cell 6 shows an error", "NameError"),
        "cell never run": ("cell 7 did not run", ""),
    }
    missed = [what for what, (start, words) in expected.items()
              if not any(p.startswith(start) and words in p for p in report.problems)]
    if missed:
        if not report.artifacts:
            report.artifacts = jd.save_artifacts(page, lab_server, report, ARTIFACTS)
        pytest.fail(f"the checker missed: {missed}\n" + failure_message(report), pytrace=False)


# ----------------------------------------------------------------------------------------------
# A path a person found that the generic drive above can miss: notebook 13's KV-cache widget with
# its heads moved by single steps (32 -> 35 once made every later draw an error message).
# ----------------------------------------------------------------------------------------------
KV_CACHE_CELLS = [IMPORTS, "from helpers.widgets import kv_cache_widget\nkv_cache_widget()"]


def test_kv_cache_widget_heads_by_single_steps_then_every_control(page, lab_server, selftest_notebook):
    relpath = selftest_notebook("kv_cache", KV_CACHE_CELLS, saved={1})
    checker = jd.NotebookChecker(page, lab_server, relpath)
    checker.open()
    checker.run_all()
    checker.check_cells()
    widgets = {w["description"]: w for w in page.evaluate("(k) => __bt.scan(k[0], k[1])",
                                                          [list(jd.CONTROL_KINDS), list(jd.PASSIVE_KINDS)])
               if w["kind"] != "passive"}
    assert {"heads", "kv heads", "layers", "head dim", "dtype", "batch", "context", "window"} <= set(widgets)

    def shown():
        return page.evaluate("(i) => __bt.outputsOf(__bt.cells()[i]).map(e => e.innerText + "
                             "e.querySelectorAll('img').length).join('|')", widgets["heads"]["cell"])

    heads = checker._locator(widgets["heads"]).locator(".noUi-handle").first
    for expected in (33, 34, 35):
        def press():
            heads.focus()
            page.keyboard.press("ArrowRight")
        assert checker._expect_change(widgets["heads"], "heads", "ArrowRight", press), checker.report.problems
        assert float(heads.get_attribute("aria-valuenow")) == expected
        assert "Cannot draw" not in shown(), shown()
    for name, w in widgets.items():
        if name == "heads":
            continue
        actions = getattr(checker, "_drive_" + w["kind"].replace("-", "_"))(w, name)
        assert actions and "Cannot draw" not in shown(), (name, actions, shown())
    assert not checker.report.problems, failure_message(checker.report)
    lab_server.shutdown_kernels(wait=False)


def test_run_through_the_last_widget_runs_no_later_cell(check, selftest_notebook):
    cells = [IMPORTS,
             "s = W.IntSlider(1, 0, 5, description='k')\nout = W.Output()\n"
             "s.observe(lambda c: out.clear_output() or out.append_stdout(str(c['new'])), names='value')\n"
             "display(W.VBox([s, out]))",
             "raise RuntimeError('a cell after the last widget must not run')"]
    report = check(selftest_notebook("through", cells, saved={1}), note="self-test: stops after cell 1",
                   through_last_widget=True)
    assert report.ok, failure_message(report)
    assert report.ran == "cells 0-1 of 3 (through the last widget)"
    assert any(w.startswith("cell 1: slider 'k'") for w in report.widgets), report.widgets
