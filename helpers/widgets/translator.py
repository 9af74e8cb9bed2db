"""Notebook 10: the date translator (type a date, see the translation and its cross-attention)."""

from __future__ import annotations

from ._shell import ViewWidget
from .cross_attention import cross_attention_view

__all__ = ["translator_view", "translator_widget"]


def translator_view(model, tokenizer, text: str, layer: int = 1, head="mean", max_len: int = 12):
    """Translate ``text`` with ``model`` and draw one decoder layer's cross-attention.

    Returns a Figure titled with the translation, or a friendly message (a str) for input the
    model cannot read: empty text, unknown characters, or text longer than its positions allow.
    """
    from ..training import cross_attention

    text = text.strip().lower() if isinstance(text, str) else text
    if not isinstance(text, str) or not text:
        return "Type a date, for example: 12 march 2021"
    unknown = tokenizer.unknown(text)
    if unknown:
        return (f"Cannot read {', '.join(map(repr, unknown))}: the model only knows the characters "
                f"{''.join(tokenizer.itos[3:])!r}. Try e.g. 'tuesday, 12 march 2021' or '12.03.2021'.")
    if len(text) > model.pos.max_len:
        return f"That is {len(text)} characters; this model reads at most {model.pos.max_len}."
    translation, src_labels, out_labels, weights = cross_attention(model, tokenizer, text, max_len)
    src_ticks = ["␣" if c == " " else c for c in src_labels]
    view = cross_attention_view(weights, layer, head, src_ticks, out_labels)
    if isinstance(view, str):
        return view
    view.axes[0].set_title(f"{text!r} → {translation}\ncross-attention, layer {layer}, "
                           f"{'mean of heads' if head == 'mean' else f'head {head}'}")
    view.axes[0].set_xlabel("source character")
    view.axes[0].set_ylabel("output character")
    return view


def translator_widget(model, tokenizer, text: str = "tuesday, 12 march 2021"):
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
