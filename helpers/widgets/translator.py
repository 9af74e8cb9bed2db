"""Notebook 10: the date translator (type a date, see the translation and its cross-attention)."""

from __future__ import annotations

from ._shell import ViewWidget
from .cross_attention import cross_attention_view

__all__ = ["translator_view", "translator_widget"]


def translator_view(model, tokenizer, text: str, layer: int = 1, head="mean", max_len: int = 12):
    """Translate ``text`` with ``model`` and draw one decoder layer's cross-attention.

    Returns a Figure titled with the translation (flagged when it is not a valid date), or a
    message (a str) for input the model cannot read or that names no possible date
    (``helpers.data.check_date_text``).
    """
    from ..data import check_date_text, normalize_date_text
    from ..translator import cross_attention, translation_message

    message = check_date_text(text, tokenizer, model.pos.max_len)
    if message is not None:
        return message
    text = normalize_date_text(text)
    translation, src_labels, out_labels, weights = cross_attention(model, tokenizer, text, max_len)
    src_ticks = ["␣" if c == " " else c for c in src_labels]
    view = cross_attention_view(weights, layer, head, src_ticks, out_labels)
    if isinstance(view, str):
        return view
    view.axes[0].set_title(f"{translation_message(text, translation)}\ncross-attention, layer {layer}, "
                           f"{'mean of heads' if head == 'mean' else f'head {head}'}")
    view.axes[0].set_xlabel("source token")
    view.axes[0].set_ylabel("output token")
    return view


def translator_widget(model, tokenizer, text: str = "friday, 12 march 2021"):
    """Widget: a Text box for a date, Dropdowns for the layer and head."""
    import ipywidgets as widgets

    n_layers = len(model.decoder.layers)
    n_heads = model.decoder.layers[0].cross_attn.num_heads
    box = widgets.Text(value=text, description="date", continuous_update=False)
    layer = widgets.Dropdown(options=[(f"layer {i}", i) for i in range(n_layers)],
                             value=n_layers - 1, description="layer")
    head = widgets.Dropdown(options=[(f"head {h}", h) for h in range(n_heads)] + [("mean", "mean")],
                            value="mean", description="head")
    return ViewWidget(
        lambda text, layer, head: translator_view(model, tokenizer, text, layer, head),
        {"text": box, "layer": layer, "head": head}, rows=["text", ("layer", "head")],
        about="the trained translator: its translation of the date you type and its "
              "cross-attention")
