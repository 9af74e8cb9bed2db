"""Every widget output stored in notebooks/ and solutions/ carries its static fallback, so that a
reader without a kernel (GitHub, nbviewer) sees the widget's first state and is told how to make
it live: besides the widget view, a PNG and a text/plain naming the widget (helpers.widgets)."""

from __future__ import annotations

import base64

import pytest
from _repo import ALL_NOTEBOOKS, load, rel

from helpers.widgets import LIVE_HINT

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fallback_problems(nb: dict) -> list[str]:
    """One line per stored widget output that lacks the PNG or the explaining text."""
    problems = []
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            text = data.get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            png = data.get("image/png", "")
            try:
                png_ok = base64.b64decode("".join(png) if isinstance(png, list) else png)
                png_ok = png_ok.startswith(PNG_MAGIC)
            except ValueError:
                png_ok = False
            if not png_ok:
                problems.append(f"cell {i}: widget output without a PNG of its first state")
            if not text.startswith("Interactive widget: ") or LIVE_HINT not in text:
                problems.append(f"cell {i}: widget output whose text/plain does not say what it is "
                                f"and how to make it live: {text[:80]!r}")
    return problems


WITH_WIDGETS = [p for p in ALL_NOTEBOOKS if any(
    WIDGET_VIEW in out.get("data", {}) for c in load(p)["cells"] for out in c.get("outputs", []))]


@pytest.mark.parametrize("path", WITH_WIDGETS, ids=rel)
def test_stored_widget_outputs_carry_a_static_fallback(path):
    problems = fallback_problems(load(path))
    assert problems == [], f"{rel(path)}: re-execute it with helpers.widgets (python3 tasks.py " \
                           f"execute {rel(path)}):\n" + "\n".join(problems)


def test_the_check_rejects_a_bare_widget_output_and_accepts_one_with_the_fallback():
    view = {WIDGET_VIEW: {"model_id": "0" * 32, "version_major": 2, "version_minor": 0}}
    bare = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "data": {**view, "text/plain": "VBox(children=(...))"}}]}]}
    assert len(fallback_problems(bare)) == 2
    good_png = base64.b64encode(PNG_MAGIC + b"rest").decode()
    good = {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {
        **view, "image/png": good_png, "text/plain": f"Interactive widget: x ({LIVE_HINT})"}}]}]}
    assert fallback_problems(good) == []
