"""The diagrams that notebooks 07-09 add follow CONTRIBUTING.md's diagram rules (what can be checked
without a browser; tests/test_diagrams.py, where present, renders them)."""

import re
import xml.etree.ElementTree as ET

import pytest

from helpers.diagrams import IMGS

NEW = ["07_encoder_post_pre_ln", "09_teacher_forcing"]
SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("name", NEW)
def test_diagram_rules(name):
    root = ET.parse(IMGS / f"{name}.svg").getroot()
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("font-family") == "sans-serif"
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert ids and all(i.startswith(name) for i in ids), ids
    for el in root.iter():
        size = el.get("font-size")
        if size is not None:
            assert float(size) >= 12, (el.tag, size)
    background = root.find(f"{SVG}rect")
    assert background.get("fill") == "white" and background.get("stroke"), "white, with a border"
    assert float(background.get("width")) >= width - 2 and float(background.get("height")) >= height - 2
    for text in root.iter(f"{SVG}text"):
        x, y = float(text.get("x")), float(text.get("y"))
        assert 0 < x < width and 0 < y < height, (name, "".join(text.itertext()), x, y)


@pytest.mark.parametrize("name", NEW)
def test_diagram_notation(name):
    """Shapes are written with the notebooks' symbols: a subscripted d_model / L_t, never 'd_model'."""
    text = (IMGS / f"{name}.svg").read_text(encoding="utf-8")
    assert "d_model" not in text and "W_Q" not in text
    assert re.search(r'\(B, L(<tspan[^>]*>t</tspan>)?, ', text)
