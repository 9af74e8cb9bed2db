"""The one shell every widget uses: controls above an ``Output`` that shows what a pure view
function returns for the controls' values (a Figure, or a message as a str).

The view functions hold all the logic and are unit-tested in tests/; the shell only wires the
controls to them. Displayed, a shell carries a static fallback in the same output: besides the live
widget view (shown by JupyterLab, Jupyter Notebook and Colab), its MIME bundle holds a PNG of the
widget's initial state and a text that says what the widget is, for renderers without a kernel
(GitHub, nbviewer, a static HTML page).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Sequence

import ipywidgets as widgets

__all__ = ["LIVE_HINT", "ViewWidget", "figure_png", "fit_labels", "show_view"]

LIVE_HINT = "run this cell with a live kernel to use its controls"


def figure_png(fig) -> bytes:
    """The PNG of a Figure as the notebook shows it (white background, tight bounding box)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def show_view(out: widgets.Output, view) -> None:
    """Put a Figure or a message into an Output widget (figures are closed after display, also
    when drawing them fails: then the message says why)."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    with out:
        out.clear_output(wait=True)
        if isinstance(view, str):
            print(view)
            return
        try:
            display(view)
        except (ValueError, TypeError, RuntimeError) as err:
            print(f"Cannot draw this: {err}")
        finally:
            plt.close(view)


def fit_labels(control: widgets.Widget) -> None:
    """Give a control's description the room it needs (ipywidgets' default cuts a label longer
    than about 10 characters to "temperat…")."""
    style = getattr(control, "style", None)
    if getattr(control, "description", "") and style is not None and hasattr(style, "description_width"):
        style.description_width = "initial"


class ViewWidget(widgets.VBox):
    """Standard ipywidgets controls above an Output showing ``view(**values)``.

    ``controls`` maps each keyword argument of ``view`` to the control that sets it; ``rows`` lays
    them out top to bottom (a name, or a tuple of names for one row; default: one row each).
    ``about`` names the widget in its static fallback. After every change, ``result`` holds what
    the view returned (a Figure or a message). A view that raises ValueError or TypeError for a
    combination of values shows its message instead; every control redraws again as soon as the
    values are valid. Labels keep their full text (``fit_labels``).
    """

    def __init__(self, view: Callable, controls: dict[str, widgets.Widget], about: str,
                 rows: Sequence[str | tuple[str, ...]] | None = None):
        out = widgets.Output()
        rows = list(controls) if rows is None else list(rows)
        placed = [n for row in rows for n in ((row,) if isinstance(row, str) else row)]
        if sorted(placed) != sorted(controls):
            raise ValueError(f"ViewWidget: rows must place every control once, got {rows} for "
                             f"{list(controls)}")
        children = [controls[row] if isinstance(row, str)
                    else widgets.HBox([controls[n] for n in row]) for row in rows]
        super().__init__(children=[*children, out])
        self.view, self.controls, self.out, self.about = view, dict(controls), out, about
        self.result = None
        for control in self.controls.values():
            fit_labels(control)
            control.observe(self.redraw, names="value")
        self.redraw()
        self.initial_png = figure_png(self.result) if not isinstance(self.result, str) else None
        self.initial_message = self.result if isinstance(self.result, str) else None

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def redraw(self, _change=None):
        try:
            self.result = self.view(**self.values())
        except (ValueError, TypeError) as err:  # a combination the view refuses: say why, keep going
            self.result = f"Cannot draw this: {err}"
        show_view(self.out, self.result)
        return self.result

    def fallback_text(self) -> str:
        text = f"Interactive widget: {self.about} ({LIVE_HINT}; the picture shows its first state)."
        if self.initial_message:
            text += f"\n{self.initial_message}"
        return text

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = self.fallback_text()
        if self.initial_png is not None:
            data["image/png"] = base64.b64encode(self.initial_png).decode("ascii")
        return data
