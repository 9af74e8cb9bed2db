"""The diagrams in imgs/ and how the notebooks show them (CONTRIBUTING.md, "Diagrams").

- Every SVG is valid XML with a viewBox, a width and a height, a white background with a visible
  border, a sans-serif font of at least 12 px, and ids that start with the file's name (all SVG
  outputs of a page share one id namespace); every url(#id) points into the same file.
- Rendered in headless Chromium, no text leaves the canvas, no two texts overlap, and no line,
  path or arrow runs through a text's bounding box (unless an opaque shape is painted over the line
  there, as a box drawn on top of a connector). Self-tests plant each fault and check that it is
  caught, and that a connector hidden under a box or passing beside a text is not.
- Every notebook cell that calls show_diagram("X") stores an image/svg+xml output equal to
  imgs/X.svg.

The Chromium part is skipped when Chromium or Playwright is missing, except in CI (CI=true),
where that is a failure (as in tests/browser).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _repo import ALL_NOTEBOOKS, ROOT, load, rel, source

IMGS = ROOT / "imgs"
SVGS = sorted(IMGS.glob("*.svg"))
SVG_NS = "{http://www.w3.org/2000/svg}"
MIN_FONT_PX = 12
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
IN_CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}
TOLERANCE_PX = 1.0  # overlaps and overhangs smaller than this are rounding, not a fault


def _font_sizes(el: ET.Element) -> list[str]:
    sizes = [el.get("font-size")] if el.get("font-size") else []
    sizes += re.findall(r"font-size\s*:\s*([^;]+)", el.get("style", ""))
    return sizes


def static_problems(path: Path) -> list[str]:
    """What is wrong with one SVG file without rendering it (an empty list when nothing)."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        return [f"not valid XML: {err}"]
    problems = []
    if root.tag != f"{SVG_NS}svg":
        problems.append(f"the root element is {root.tag}, not an SVG <svg> element")
    for attr in ("viewBox", "width", "height"):
        if not root.get(attr):
            problems.append(f"the <svg> element has no {attr}")
    if "sans-serif" not in root.get("font-family", ""):
        problems.append(f"the <svg> font-family {root.get('font-family')!r} does not end in sans-serif")
    stem = path.stem
    ids = set()
    for el in root.iter():
        if el.get("id") is not None:
            ids.add(el.get("id"))
            if not el.get("id").startswith(stem):
                problems.append(f"id {el.get('id')!r} does not start with the file name {stem!r}")
        for size in _font_sizes(el):
            value = re.fullmatch(r"\s*([0-9.]+)\s*(px)?\s*", size)
            if value is None or float(value.group(1)) < MIN_FONT_PX:
                problems.append(f"font-size {size!r} on <{el.tag.removeprefix(SVG_NS)}> (at least "
                                f"{MIN_FONT_PX}, in px)")
        for attr, value in el.attrib.items():
            for ref in re.findall(r"url\(#([^)]+)\)", value) + (
                    [value[1:]] if attr.endswith("href") and value.startswith("#") else []):
                if ref not in ids and ref not in {e.get("id") for e in root.iter()}:
                    problems.append(f"{attr}={value!r} points to no id in this file")
    if root.get("viewBox"):
        _, _, vw, vh = (float(v) for v in root.get("viewBox").replace(",", " ").split())
        backgrounds = [r for r in root.findall(f"{SVG_NS}rect")
                       if r.get("fill") in {"white", "#fff", "#ffffff"}
                       and float(r.get("width", 0)) >= vw - 2 and float(r.get("height", 0)) >= vh - 2]
        if not backgrounds:
            problems.append("no white background rectangle covering the canvas")
        elif not any(r.get("stroke") not in {None, "none", "white", "#fff", "#ffffff"}
                     for r in backgrounds):
            problems.append("the background rectangle has no visible border (stroke)")
    return problems


@pytest.mark.parametrize("path", SVGS, ids=lambda p: p.name)
def test_svg_is_valid_and_follows_the_rules(path):
    assert static_problems(path) == []


def test_static_check_catches_planted_faults(tmp_path):
    bad = tmp_path / "99_bad.svg"
    bad.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" font-family="serif">'
                   '<rect width="10" height="10" fill="white"/><marker id="arrow"/>'
                   '<text font-size="9">x</text><line marker-end="url(#nowhere)"/></svg>')
    found = "\n".join(static_problems(bad))
    for fault in ("no viewBox", "no height", "sans-serif", "id 'arrow' does not start with",
                  "font-size '9'", "url(#nowhere)"):
        assert fault in found
    broken = tmp_path / "99_broken.svg"
    broken.write_text("<svg><text>unclosed</svg>")
    assert static_problems(broken)[0].startswith("not valid XML")


# ---- rendered in Chromium ----------------------------------------------------------------------
LAYOUT_JS = """(tol) => {
  const svg = document.querySelector('svg');
  const canvas = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
  const boxes = texts.map(t => ({text: t.textContent.trim(), r: t.getBoundingClientRect()}));
  const problems = [];
  for (const b of boxes) {
    const r = b.r;
    if (r.left < canvas.left - tol || r.top < canvas.top - tol ||
        r.right > canvas.right + tol || r.bottom > canvas.bottom + tol)
      problems.push(`text "${b.text}" leaves the canvas: [${Math.round(r.left - canvas.left)}, ` +
                    `${Math.round(r.top - canvas.top)}, ${Math.round(r.right - canvas.left)}, ` +
                    `${Math.round(r.bottom - canvas.top)}] outside ${canvas.width} x ${canvas.height}`);
  }
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].r, b = boxes[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > tol && h > tol)
        problems.push(`text "${boxes[i].text}" overlaps "${boxes[j].text}" (${Math.round(w)} x ${Math.round(h)} px)`);
    }
  return {count: boxes.length, problems};
}"""


@pytest.fixture(scope="module")
def chromium_page(request):
    if not os.access(CHROMIUM, os.X_OK):
        if IN_CI:
            pytest.fail(f"CI=true but no Chromium at {CHROMIUM}", pytrace=False)
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if IN_CI:
            pytest.fail("CI=true but the Python package playwright is not installed", pytrace=False)
        pytest.skip("the Python package playwright is not installed (requirements.txt)")
    del sync_playwright  # imported above only to learn whether playwright is installed
    pw = request.getfixturevalue("sync_playwright_session")
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = browser.new_page()
    yield page
    browser.close()


# A diagram is read with whatever sans-serif font the reader's browser has: Helvetica/Arial (Liberation
# Sans has their metrics) or the wider DejaVu Sans of many Linux desktops. It must fit in each.
FONTS = (None, "Liberation Sans", "DejaVu Sans")


def layout_problems(page, svg_text: str, font: str | None = None) -> tuple[int, list[str]]:
    """(number of texts, problems) of one SVG rendered alone in the page at its own size, in its
    own fonts or with every text forced into ``font``."""
    style = f"<style>svg text {{ font-family: '{font}' !important; }}</style>" if font else ""
    page.set_content(f"<!doctype html><html><head>{style}</head>"
                     f"<body style='margin:0'>{svg_text}</body></html>")
    result = page.evaluate(LAYOUT_JS, TOLERANCE_PX)
    return result["count"], result["problems"]


@pytest.mark.parametrize("path", SVGS, ids=lambda p: p.name)
def test_rendered_text_stays_inside_and_apart(chromium_page, path):
    svg = path.read_text(encoding="utf-8")
    for font in FONTS:
        count, problems = layout_problems(chromium_page, svg, font)
        assert count > 0, "no text found: is this the SVG?"
        assert problems == [], f"in the font {font or 'of the file'}"


PLANTED = """<svg xmlns="http://www.w3.org/2000/svg" width="300" height="100" viewBox="0 0 300 100"
 font-family="sans-serif" font-size="14">{}</svg>"""


def test_layout_check_catches_a_planted_overlap_and_a_clipped_text(chromium_page):
    ok = PLANTED.format('<text x="10" y="30">left</text><text x="150" y="30">right</text>')
    assert layout_problems(chromium_page, ok) == (2, [])
    overlap = PLANTED.format('<text x="10" y="30">encoder output</text><text x="60" y="34">K (Ls, d_k)</text>')
    (_, problems) = layout_problems(chromium_page, overlap)
    assert len(problems) == 1 and problems[0].startswith('text "encoder output" overlaps "K (Ls, d_k)"')
    clipped = PLANTED.format('<text x="200" y="60">(may share the target embedding)</text>')
    (_, problems) = layout_problems(chromium_page, clipped)
    assert len(problems) == 1 and "leaves the canvas" in problems[0]
    above = PLANTED.format('<text x="10" y="5">too high</text>')
    assert "leaves the canvas" in layout_problems(chromium_page, above)[1][0]


# A line crossing a text: every <line>, <path>, <polyline> and <polygon> outside <defs> and <marker>
# is sampled every 1.5 px along its length; a sample strictly inside a text's bounding box (shrunk by
# the tolerance) is a fault, unless an opaque filled shape is painted over the line at that point
# (document.elementsFromPoint lists what is on top), as when a connector runs under a box.
LINES_JS = """(tol) => {
  const svg = document.querySelector('svg');
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
    .map(t => ({el: t, text: t.textContent.trim(), r: t.getBoundingClientRect()}));
  const toLocal = (el, x, y) => {
    const m = el.getScreenCTM().inverse();
    return new DOMPoint(m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f);
  };
  const coveredAt = (line, x, y) => {
    const stack = document.elementsFromPoint(x, y);
    const below = stack.indexOf(line);
    return stack.slice(0, below < 0 ? stack.length : below).some(e => {
      if (e.closest('text') || !(e instanceof SVGGeometryElement)) return false;
      const cs = getComputedStyle(e);
      return cs.fill !== 'none' && parseFloat(cs.fillOpacity) * parseFloat(cs.opacity) > 0.5 &&
             e.isPointInFill(toLocal(e, x, y));
    });
  };
  const shapes = [...svg.querySelectorAll('line, path, polyline, polygon')]
    .filter(el => !el.closest('defs, marker, clipPath, mask, pattern, symbol'))
    .filter(el => el.tagName === 'line' || getComputedStyle(el).stroke !== 'none');
  const problems = [];
  for (const el of shapes) {
    const len = el.getTotalLength(), m = el.getScreenCTM();
    const steps = Math.max(2, Math.ceil(len / 1.5));
    const deepest = new Map();
    for (let i = 0; i <= steps; i++) {
      const p = el.getPointAtLength(len * i / steps);
      const x = m.a * p.x + m.c * p.y + m.e, y = m.b * p.x + m.d * p.y + m.f;
      texts.forEach((t, j) => {
        const r = t.r;
        const depth = Math.min(x - r.left, r.right - x, y - r.top, r.bottom - y);
        if (depth > tol && !coveredAt(el, x, y)) deepest.set(j, Math.max(deepest.get(j) || 0, depth));
      });
    }
    const name = el.id ? `<${el.tagName} id="${el.id}">` : `<${el.tagName}>`;
    for (const [j, depth] of deepest)
      problems.push(`${name} runs through the text "${texts[j].text}" (${depth.toFixed(1)} px inside its box)`);
  }
  return problems;
}"""


def line_problems(page, svg_text: str, font: str | None = None) -> list[str]:
    """The lines, paths and arrows of one SVG that run through a text, rendered as in layout_problems."""
    style = f"<style>svg text {{ font-family: '{font}' !important; }}</style>" if font else ""
    page.set_content(f"<!doctype html><html><head>{style}</head>"
                     f"<body style='margin:0'>{svg_text}</body></html>")
    return page.evaluate(LINES_JS, TOLERANCE_PX)


@pytest.mark.parametrize("path", SVGS, ids=lambda p: p.name)
def test_no_line_runs_through_a_text(chromium_page, path):
    svg = path.read_text(encoding="utf-8")
    for font in FONTS:
        assert line_problems(chromium_page, svg, font) == [], f"in the font {font or 'of the file'}"


def test_line_check_catches_a_planted_crossing_and_spares_hidden_and_nearby_lines(chromium_page):
    arrow = ('<defs><marker id="99-arrow" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
             '<path d="M0,0 L8,4 L0,8 z"/></marker></defs>')
    # an earlier fault of imgs/05_head_split_merge.svg: a vertical arrow through a label
    crossing = PLANTED.format(arrow + '<text x="150" y="50" text-anchor="middle">each head = one batch entry</text>'
                              '<line x1="150" y1="10" x2="150" y2="90" stroke="#333" marker-end="url(#99-arrow)"/>')
    problems = line_problems(chromium_page, crossing)
    assert len(problems) == 1 and problems[0].startswith('<line> runs through the text "each head = one batch entry"')
    curve = PLANTED.format('<text x="100" y="50">label</text><path d="M 20 60 Q 110 30 200 60" '
                           'fill="none" stroke="black"/>')
    assert "<path> runs through the text \"label\"" in line_problems(chromium_page, curve)[0]
    # a line that stops short of a text, or passes beside it, is fine
    beside = PLANTED.format('<text x="150" y="50" text-anchor="middle">label</text>'
                            '<line x1="150" y1="60" x2="150" y2="95" stroke="black"/>'
                            '<line x1="10" y1="80" x2="290" y2="80" stroke="black"/>')
    assert line_problems(chromium_page, beside) == []
    # a connector that runs under an opaque box (the box painted after it) is hidden there
    hidden = PLANTED.format('<line x1="150" y1="5" x2="150" y2="95" stroke="grey" stroke-width="4"/>'
                            '<rect x="120" y="35" width="60" height="30" fill="white" stroke="black"/>'
                            '<text x="150" y="55" text-anchor="middle">A</text>')
    assert line_problems(chromium_page, hidden) == []
    # ... but not under a box without a fill
    outline = hidden.replace('fill="white"', 'fill="none"')
    assert len(line_problems(chromium_page, outline)) == 1


# ---- what the notebooks show -------------------------------------------------------------------
CALL = re.compile(r"""show_diagram\(\s*["']([^"']+)["']\s*\)""")


def _canonical(svg_text: str) -> str:
    return ET.canonicalize(svg_text, strip_text=True)


def _diagram_cells():
    for path in ALL_NOTEBOOKS:
        for i, cell in enumerate(load(path)["cells"]):
            if cell["cell_type"] == "code":
                for name in CALL.findall(source(cell)):
                    yield pytest.param(path, i, name, id=f"{rel(path)}-cell{i}-{name}")


DIAGRAM_CELLS = list(_diagram_cells())


@pytest.mark.parametrize(("path", "index", "name"), DIAGRAM_CELLS or
                         [pytest.param(None, None, None, marks=pytest.mark.skip("no show_diagram call yet"))])
def test_stored_diagram_equals_the_file_in_imgs(path, index, name):
    file = IMGS / f"{name.removesuffix('.svg')}.svg"
    assert file.is_file(), f"show_diagram({name!r}) but imgs/{file.name} does not exist"
    cell = load(path)["cells"][index]
    stored = ["".join(d) if isinstance(d, list) else d
              for out in cell.get("outputs", []) for d in [out.get("data", {}).get("image/svg+xml")]
              if d is not None]
    assert stored, f"cell {index} calls show_diagram({name!r}) but stores no image/svg+xml output: " \
                   f"re-execute {rel(path)}"
    assert _canonical(stored[-1]) == _canonical(file.read_text(encoding="utf-8")), \
        f"cell {index} shows an old version of imgs/{file.name}: re-execute {rel(path)}"


def test_show_diagram_output_equals_the_file():
    from helpers.diagrams import show_diagram

    for path in SVGS:
        shown = show_diagram(path.stem).data
        assert _canonical(shown) == _canonical(path.read_text(encoding="utf-8")), path.name
