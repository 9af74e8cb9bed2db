"""Notebook 10: the date translator (type a date, choose the reading order, see the translation
and its cross-attention)."""

from __future__ import annotations

import textwrap

from ._shell import ViewWidget
from .cross_attention import cross_attention_view

__all__ = ["ORDER_CHOICES", "translator_view", "translator_widget"]

ORDER_CHOICES = [("day first (dmy)", "dmy"), ("month first (mdy)", "mdy")]


def translator_view(model, tokenizer, text: str, layer: int = 1, head="mean", order: str = "dmy",
                    max_len: int = 12):
    """Translate ``text`` read with ``order`` ("dmy" or "mdy") and draw one decoder layer's
    cross-attention.

    Returns a Figure titled with the translation and, when the order decided it (a date in
    numbers whose day and month are both 12 or less), which reading was used; a wrong date is
    never shown as the translation: an output that is not a real date, or that differs from the
    date the rules read in the text, is flagged instead. Returns a message (a str) for text the
    translator refuses (``helpers.data.check_date_text``: a missing day, month or year, an
    impossible date, a word it does not read, ...) or a bad choice of order, layer or head.
    """
    from ..data import check_date_text, normalize_date_text
    from ..translator import cross_attention, reading_note, rules_reading, translation_message

    if not isinstance(text, str):
        return f"Type a date as text, for example: 12 march 2021 (got {type(text).__name__})"
    if order not in [value for _, value in ORDER_CHOICES]:
        return f"Cannot read this: order must be 'dmy' (day first) or 'mdy' (month first), got {order!r}"
    message = check_date_text(text, tokenizer, model.pos.max_len, order)
    if message is not None:
        return message
    text = normalize_date_text(text)
    translation, src_labels, out_labels, weights = cross_attention(model, tokenizer, text, max_len,
                                                                   order=order)
    src_ticks = ["␣" if c == " " else c for c in src_labels]
    view = cross_attention_view(weights, layer, head, src_ticks, out_labels)
    if isinstance(view, str):
        return view
    lines = [translation_message(text, translation, rules_reading(text, order))]
    note = reading_note(text, order)
    if note is not None:
        lines.append(note)
    # The title holds the answer and the order's note, one line each on a figure at least 6.4
    # inches wide; which attention is drawn is said by the axis label.
    view.set_figwidth(max(view.get_figwidth(), 6.4))
    chars = int(0.95 * view.get_figwidth() * 72 / (0.55 * _TITLE_PT))  # characters per line
    ax = view.axes[0]
    ax.set_title("\n".join(textwrap.fill(line, chars) for line in lines), fontsize=_TITLE_PT)
    which = "mean of heads" if head == "mean" else f"head {head}"
    ax.set_xlabel("source token (the order token first)")
    ax.set_ylabel(f"output token\n(cross-attention, layer {layer}, {which})")
    return view


_TITLE_PT = 9


def translator_widget(model, tokenizer, text: str = "friday, 12 march 2021", order: str = "dmy"):
    """Widget: a Text box for a date, Dropdowns for the reading order, the layer and the head."""
    import ipywidgets as widgets

    n_layers = len(model.decoder.layers)
    n_heads = model.decoder.layers[0].cross_attn.num_heads
    box = widgets.Text(value=text, description="date", continuous_update=False)
    reading = widgets.Dropdown(options=ORDER_CHOICES, value=order, description="order")
    layer = widgets.Dropdown(options=[(f"layer {i}", i) for i in range(n_layers)],
                             value=n_layers - 1, description="layer")
    head = widgets.Dropdown(options=[(f"head {h}", h) for h in range(n_heads)] + [("mean", "mean")],
                            value="mean", description="head")
    return ViewWidget(
        lambda text, order, layer, head: translator_view(model, tokenizer, text, layer, head, order),
        {"text": box, "order": reading, "layer": layer, "head": head},
        rows=["text", ("order", "layer", "head")],
        about="the trained translator: its translation of the date you type, read day first or "
              "month first as you choose, and its cross-attention")
