"""Diagrams from imgs/, shown as the output of a code cell.

A diagram is one SVG file in ``imgs/`` (its only source). ``show_diagram("03_qkv_projections")``
returns an ``IPython.display.SVG`` holding that file's text, so the notebook stores the SVG as a
cell output (``image/svg+xml``). Such an output renders in JupyterLab, on GitHub and on Colab,
offline; a markdown image by relative path, an attachment or an SVG data URI in markdown does not
render on Colab. nbval compares ``image/svg+xml`` byte for byte, so a stored diagram that differs from
its file fails the notebook's tests.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["IMGS", "diagram_names", "show_diagram"]

IMGS = Path(__file__).resolve().parent.parent / "imgs"


def diagram_names() -> list[str]:
    """The names of every diagram in imgs/ (file names without ``.svg``), sorted."""
    return sorted(p.stem for p in IMGS.glob("*.svg"))


def show_diagram(name: str):
    """Return the diagram ``imgs/<name>.svg`` as an SVG display object (end a cell with it)."""
    from IPython.display import SVG

    if not isinstance(name, str):
        raise TypeError(f"show_diagram: name must be a str such as '01_attention_matrix', got {type(name).__name__}")
    stem = name.removesuffix(".svg")
    known = diagram_names()
    if stem not in known:  # only the diagrams of imgs/: never a path to another file
        if "/" in name or "\\" in name:
            raise ValueError(f"show_diagram: name must be the name of a diagram in imgs/ (no folders or "
                             f"paths), such as '01_attention_matrix', got {name[:80]!r}")
        raise ValueError(f"show_diagram: no diagram named {name[:80]!r} in imgs/ (known: "
                         f"{', '.join(known) or 'none'})")
    return SVG(data=(IMGS / f"{stem}.svg").read_text(encoding="utf-8"))
