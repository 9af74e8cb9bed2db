"""Interactive widgets. Each widget is a thin ipywidgets shell around a pure function (tested in
tests/) that computes or draws what the widget shows: nbval never moves a slider.

Authors: add your widget below with a small edit; do not rewrite this file.
"""

from __future__ import annotations

# --- Notebook 00: word order between languages (alignment picker) ---------------------------
# Each entry: source words, target words, and (target index, source index) pairs saying which
# source word each target word translates. A target word with no pair comes from no single word.
ALIGNMENTS: dict[str, tuple[list[str], list[str], list[tuple[int, int]]]] = {
    "English → French": (
        ["the", "black", "cat", "sleeps"],
        ["le", "chat", "noir", "dort"],
        [(0, 0), (1, 2), (2, 1), (3, 3)],
    ),
    "English → German": (
        ["I", "have", "seen", "the", "film"],
        ["ich", "habe", "den", "Film", "gesehen"],
        [(0, 0), (1, 1), (2, 3), (3, 4), (4, 2)],
    ),
    "English → Japanese": (
        ["I", "eat", "an", "apple"],
        ["watashi-wa", "ringo-o", "taberu"],
        [(0, 0), (1, 3), (2, 1)],
    ),
}


def alignment_matrix(pair: str):
    """(matrix, source words, target words) for one of ``ALIGNMENTS``.

    ``matrix`` is (L_target, L_source) with a 1 where target word i translates source word j:
    the rows are what a translator "looks at" while writing each target word.
    """
    import torch

    if pair not in ALIGNMENTS:
        raise ValueError(f"unknown language pair {pair!r}; choose one of {sorted(ALIGNMENTS)}")
    source, target, links = ALIGNMENTS[pair]
    m = torch.zeros(len(target), len(source))  # (L_target, L_source)
    for i, j in links:
        m[i, j] = 1.0
    return m, source, target


def alignment_view(pair: str, ax=None):
    """What the alignment widget shows: a Figure, or a message (str) for a bad choice."""
    from .plots import attention_heatmap

    try:
        m, source, target = alignment_matrix(pair)
    except ValueError as err:
        return f"Cannot draw this: {err}"
    src_lang, tgt_lang = (s.strip() for s in pair.split("→"))
    return attention_heatmap(m, source, target, ax=ax, colorbar=False, vmax=1.0,
                             xlabel=f"{src_lang} (source)", ylabel=f"{tgt_lang} (target)",
                             title=f"{pair}: which word each word translates")


def _show_view(out, view) -> None:
    """Put a Figure or a message into an Output widget (figures are closed after display)."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    with out:
        out.clear_output(wait=True)
        if isinstance(view, str):
            print(view)
        else:
            display(view)
            plt.close(view)


def alignment_widget(pair: str = "English → French"):
    """A Dropdown of language pairs and the alignment heatmap of the chosen one."""
    import ipywidgets as widgets

    choice = widgets.Dropdown(options=list(ALIGNMENTS), value=pair, description="pair")
    out = widgets.Output()
    choice.observe(lambda change: _show_view(out, alignment_view(change["new"])), names="value")
    _show_view(out, alignment_view(choice.value))
    return widgets.VBox([choice, out])


# --- Notebook 02: softmax temperature -------------------------------------------------------
def parse_scores(text: str) -> list[float]:
    """Read scores typed as ``"2, 1, 0.5, -1"``; raise ValueError naming the entry that is wrong."""
    import math

    if not text.strip():
        raise ValueError("no scores given: type numbers separated by commas, e.g. 2, 1, 0.5, -1")
    scores = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"{part!r} is not a number: type numbers separated by commas, "
                             "e.g. 2, 1, 0.5, -1") from None
        if not math.isfinite(value):
            raise ValueError(f"scores must be finite numbers, got {part!r}")
        scores.append(value)
    if len(scores) > 12:
        raise ValueError(f"at most 12 scores fit in the chart, got {len(scores)}")
    return scores


def softmax_with_temperature(scores, temperature: float):
    """softmax(scores / temperature) of a 1-D list or tensor of scores; temperature must be > 0."""
    import math

    import torch

    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a number > 0, got {temperature!r}")
    s = torch.as_tensor(scores, dtype=torch.float32)
    if s.dim() != 1 or s.numel() == 0:
        raise ValueError(f"scores must be a non-empty 1-D list, got shape {tuple(s.shape)}")
    return torch.softmax(s / temperature, dim=-1)


def temperature_view(scores, temperature: float, labels=None, ax=None):
    """What the temperature widget shows: bars of softmax(scores / temperature), one per score.

    ``scores`` is a list/tensor or the text typed in the widget. Bad input (a temperature <= 0,
    text that is not numbers, ...) gives a message (str) instead of a Figure: never a traceback.
    ``labels`` name the bars when there is one per score; otherwise the bars are numbered.
    """
    from .plots import weight_bars

    try:
        if isinstance(scores, str):
            scores = parse_scores(scores)
        w = softmax_with_temperature(scores, temperature)
    except ValueError as err:
        return f"Cannot draw this: {err}"
    if labels is None or len(labels) != len(w):
        labels = [f"#{i + 1}" for i in range(len(w))]
    return weight_bars(w, labels, ax=ax, xlabel="key",
                       title=f"temperature {temperature:.2f}: largest weight {float(w.max()):.2f}")


def temperature_widget(scores, labels=None, temperature: float = 1.0):
    """A Text box of scores and a temperature slider (0.1 to 10, log scale) over the bars."""
    import ipywidgets as widgets

    text = widgets.Text(value=", ".join(f"{float(s):g}" for s in scores), description="scores")
    slider = widgets.FloatLogSlider(value=temperature, base=10, min=-1, max=1, step=0.05,
                                    description="temperature", readout_format=".2f")
    out = widgets.Output()

    def redraw(_=None):
        _show_view(out, temperature_view(text.value, slider.value, labels))

    text.observe(redraw, names="value")
    slider.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([text, slider]), out])


# --- Notebooks 03-06: mask explorer (04), head picker (05), position/dimension explorer (06) ---
# Imports are local to each function so that this section stays self-contained.

MASK_KINDS = ("none", "causal", "padding", "causal + padding")


def build_mask(kind: str, length: int, n_pad: int = 0):
    """(length, length) boolean mask, True = may attend, for one sequence whose last ``n_pad``
    tokens are padding. ``kind`` is one of MASK_KINDS."""
    import torch

    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}, got {kind!r}")
    if length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    if not 0 <= n_pad <= length:
        raise ValueError(f"n_pad must be between 0 and length={length}, got {n_pad}")
    mask = torch.ones(length, length, dtype=torch.bool)
    if "causal" in kind:
        mask = mask.tril()
    if "padding" in kind:
        mask[:, length - n_pad :] = False  # nobody attends to a padding key
    return mask


def mask_explorer_figure(kind: str, length: int = 6, n_pad: int = 2, seed: int = 0):
    """Two panels: the mask (1 = may attend) and the attention weights it produces for random
    queries and keys (seeded). Rows with nothing to attend to get all-zero weights."""
    import matplotlib.pyplot as plt
    import torch

    from .attention import scaled_dot_product_attention
    from .plots import attention_heatmap

    mask = build_mask(kind, length, n_pad)
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(length, 4, generator=g), torch.randn(length, 4, generator=g)  # (L, 4)
    _, weights = scaled_dot_product_attention(q, k, k, mask=mask)  # (L, L)
    labels = [f"t{i}" if i < length - n_pad or "padding" not in kind else "PAD" for i in range(length)]
    fig, (ax_m, ax_w) = plt.subplots(1, 2, figsize=(2.0 + 1.1 * length, 0.8 + 0.45 * length))
    attention_heatmap(mask.float(), labels, labels, ax=ax_m, title=f"mask: {kind} (1 = may attend)",
                      cmap="cividis", vmax=1.0, colorbar=False)
    attention_heatmap(weights, labels, labels, ax=ax_w, title="attention weights", vmax=1.0)
    fig.tight_layout()
    return fig


def mask_explorer(length: int = 6, n_pad: int = 2):
    """Widget: choose the mask kind, the sequence length and how many tokens are padding."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    def show(kind, length, n_pad):
        if n_pad > length:
            msg = f"n_pad={n_pad} is larger than the sequence length {length}: lower it."
            print(msg)
            return msg
        fig = mask_explorer_figure(kind, length, n_pad)
        plt.show()
        return fig

    return widgets.interactive(
        show,
        kind=widgets.Dropdown(options=MASK_KINDS, value="causal", description="mask"),
        length=widgets.IntSlider(value=length, min=1, max=10, description="length"),
        n_pad=widgets.IntSlider(value=n_pad, min=0, max=10, description="padding"),
    )


def head_heatmap_figure(weights, head, tokens=None):
    """Heatmap of one head's weights from ``weights`` (num_heads, Lq, Lk); ``head`` is an index
    or "mean" (the average over heads)."""
    import torch

    from .plots import attention_heatmap

    w = torch.as_tensor(weights).detach().cpu()
    if w.dim() != 3:
        raise ValueError(f"weights must have shape (num_heads, Lq, Lk), got {tuple(w.shape)}")
    if head == "mean":
        return attention_heatmap(w.mean(0), tokens, tokens, title=f"mean over {w.shape[0]} heads",
                                 vmax=1.0)
    if not isinstance(head, int) or not 0 <= head < w.shape[0]:
        raise ValueError(f"head must be an int in 0..{w.shape[0] - 1} or 'mean', got {head!r}")
    return attention_heatmap(w[head], tokens, tokens, title=f"head {head}", vmax=1.0)


def head_picker(weights, tokens=None):
    """Widget: pick a head (or their mean) and see its attention weights."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    n_heads = len(weights)
    options = [(f"head {h}", h) for h in range(n_heads)] + [("mean", "mean")]

    def show(head):
        fig = head_heatmap_figure(weights, head, tokens)
        plt.show()
        return fig

    return widgets.interactive(show, head=widgets.Dropdown(options=options, value=0, description="head"))


def position_dimension_figure(pe, position: int, dimension: int):
    """Three panels for a positional-encoding table ``pe`` (max_len, d_model): the table with the
    chosen position (row) and dimension (column) outlined; the chosen dimension along every
    position (a wave); the vector of the chosen position (bars)."""
    import matplotlib.pyplot as plt
    import torch

    pe = torch.as_tensor(pe).detach().cpu()
    max_len, d_model = pe.shape
    if not 0 <= position < max_len:
        raise ValueError(f"position must be in 0..{max_len - 1}, got {position}")
    if not 0 <= dimension < d_model:
        raise ValueError(f"dimension must be in 0..{d_model - 1}, got {dimension}")
    fig, (ax_t, ax_c, ax_r) = plt.subplots(1, 3, figsize=(12, 3.2))
    im = ax_t.imshow(pe.numpy(), cmap="viridis", aspect="auto", vmin=-1, vmax=1)
    ax_t.axhline(position, color="white", linewidth=1.5)
    ax_t.axvline(dimension, color="orange", linewidth=1.5)
    ax_t.set(xlabel="dimension", ylabel="position", title="PE table")
    fig.colorbar(im, ax=ax_t, fraction=0.046, pad=0.04)
    kind = "sin" if dimension % 2 == 0 else "cos"
    ax_c.plot(range(max_len), pe[:, dimension].numpy(), color="#31688e")
    ax_c.plot([position], [float(pe[position, dimension])], "o", color="orange")
    ax_c.set(xlabel="position", ylabel="value", ylim=(-1.1, 1.1),
             title=f"dimension {dimension} ({kind}) over positions")
    ax_r.bar(range(d_model), pe[position].numpy(), color="#35b779")
    ax_r.set(xlabel="dimension", ylabel="value", ylim=(-1.1, 1.1), title=f"vector of position {position}")
    fig.tight_layout()
    return fig


def position_explorer(pe):
    """Widget: sliders over position and dimension of a positional-encoding table (max_len, d)."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    max_len, d_model = pe.shape

    def show(position, dimension):
        fig = position_dimension_figure(pe, position, dimension)
        plt.show()
        return fig

    return widgets.interactive(
        show,
        position=widgets.IntSlider(value=0, min=0, max=max_len - 1, description="position"),
        dimension=widgets.IntSlider(value=0, min=0, max=d_model - 1, description="dimension"),
    )


# --- Notebook 07: post-LN vs pre-LN gradient norms, depth slider ----------------------------
def grad_norm_view(depth: int, ax=None):
    """Per-layer gradient norms at initialisation (``helpers.layers.layer_grad_norms``) of a
    post-LN and a pre-LN encoder of ``depth`` layers: a Figure, or a message for a bad depth."""
    from .layers import layer_grad_norms
    from .plots import grad_norm_lines

    if not isinstance(depth, int) or not 1 <= depth <= 24:
        return f"Cannot draw this: depth must be a whole number of layers in 1..24, got {depth!r}"
    series = {"post-LN": layer_grad_norms(depth, norm_first=False),
              "pre-LN": layer_grad_norms(depth, norm_first=True)}
    return grad_norm_lines(series, ax=ax, ylabel="‖∇ W2‖ (feed-forward)",
                           title=f"{depth}-layer encoder at initialisation")


def grad_norm_widget(depth: int = 6):
    """Widget: an IntSlider over the encoder depth and the post-LN / pre-LN gradient norms."""
    import ipywidgets as widgets

    slider = widgets.IntSlider(value=depth, min=1, max=16, description="layers",
                               continuous_update=False)
    out = widgets.Output()
    slider.observe(lambda change: _show_view(out, grad_norm_view(change["new"])), names="value")
    _show_view(out, grad_norm_view(slider.value))
    return widgets.VBox([slider, out])


# --- Notebook 08: cross-attention heatmap, layer and head picker ----------------------------
def cross_attention_view(weights, layer, head, src_tokens=None, tgt_tokens=None, ax=None):
    """Heatmap of cross-attention weights: ``weights`` is a list (one per decoder layer) of
    (num_heads, Lt, Ls) tensors; ``head`` is an index or "mean". Rows are target (decoder)
    positions, columns source (encoder) positions. A Figure, or a message for a bad choice."""
    import torch

    from .plots import attention_heatmap

    n_layers = len(weights)
    if not isinstance(layer, int) or not 0 <= layer < n_layers:
        return f"Cannot draw this: layer must be in 0..{n_layers - 1}, got {layer!r}"
    w = torch.as_tensor(weights[layer]).detach().cpu()
    if w.dim() != 3:
        return f"Cannot draw this: each layer's weights must be (num_heads, Lt, Ls), got {tuple(w.shape)}"
    if head == "mean":
        w2, name = w.mean(0), f"mean of {w.shape[0]} heads"
    elif isinstance(head, int) and 0 <= head < w.shape[0]:
        w2, name = w[head], f"head {head}"
    else:
        return f"Cannot draw this: head must be in 0..{w.shape[0] - 1} or 'mean', got {head!r}"
    lt, ls = w2.shape
    return attention_heatmap(w2, src_tokens, tgt_tokens, ax=ax, vmax=1.0,
                             xlabel=f"source position (encoder memory, Ls = {ls})",
                             ylabel=f"target position (decoder, Lt = {lt})",
                             title=f"cross-attention, layer {layer}, {name}")


def cross_attention_widget(weights, src_tokens=None, tgt_tokens=None):
    """Widget: Dropdowns for the decoder layer and the head (or their mean)."""
    import ipywidgets as widgets

    n_heads = len(weights[0])
    layer = widgets.Dropdown(options=[(f"layer {i}", i) for i in range(len(weights))], value=0,
                             description="layer")
    head = widgets.Dropdown(options=[(f"head {h}", h) for h in range(n_heads)] + [("mean", "mean")],
                            value="mean", description="head")
    out = widgets.Output()

    def redraw(_=None):
        _show_view(out, cross_attention_view(weights, layer.value, head.value, src_tokens,
                                             tgt_tokens))

    layer.observe(redraw, names="value")
    head.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([layer, head]), out])


# --- Notebook 10: the date translator (type a date -> translation + cross-attention) ---------
def translator_view(model, tokenizer, text: str, layer: int = 1, head="mean", max_len: int = 12):
    """Translate ``text`` with ``model`` and draw one decoder layer's cross-attention.

    Returns a Figure titled with the translation (flagged when it is not a valid date), or a
    message (a str) for input the model cannot read or that names no possible date
    (``helpers.data.check_date_text``).
    """
    from .data import check_date_text, normalize_date_text
    from .training import cross_attention, translation_message

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
    view.axes[0].set_xlabel("source character")
    view.axes[0].set_ylabel("output character")
    return view


def translator_widget(model, tokenizer, text: str = "friday, 12 march 2021"):
    """Widget: a Text box for a date in any format, Dropdowns for the layer and head."""
    import ipywidgets as widgets

    n_layers = len(model.decoder.layers)
    n_heads = model.decoder.layers[0].cross_attn.num_heads
    box = widgets.Text(value=text, description="date", continuous_update=False)
    layer = widgets.Dropdown(options=[(f"layer {i}", i) for i in range(n_layers)],
                             value=n_layers - 1, description="layer")
    head = widgets.Dropdown(options=[(f"head {h}", h) for h in range(n_heads)] + [("mean", "mean")],
                            value="mean", description="head")
    out = widgets.Output()

    def redraw(_=None):
        _show_view(out, translator_view(model, tokenizer, box.value, layer.value, head.value))

    for w in (box, layer, head):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([box, widgets.HBox([layer, head]), out])
