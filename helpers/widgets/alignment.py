"""Notebook 00: word order between languages, as an alignment matrix per language pair."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["ALIGNMENTS", "alignment_matrix", "alignment_view", "alignment_widget"]

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
    from ..plots import attention_heatmap

    try:
        m, source, target = alignment_matrix(pair)
    except ValueError as err:
        return f"Cannot draw this: {err}"
    src_lang, tgt_lang = (s.strip() for s in pair.split("→"))
    fig = attention_heatmap(m, source, target, ax=ax, vmax=1.0,
                            xlabel=f"{src_lang} (source)", ylabel=f"{tgt_lang} (target)",
                            title=f"{pair}: which word each word translates",
                            colorbar_label="1 = translates")
    return fig


def alignment_widget(pair: str = "English → French"):
    """A Dropdown of language pairs and the alignment heatmap of the chosen one."""
    import ipywidgets as widgets

    choice = widgets.Dropdown(options=list(ALIGNMENTS), value=pair, description="pair")
    return ViewWidget(alignment_view, {"pair": choice},
                      about="word alignments between two languages, one language pair per choice")
