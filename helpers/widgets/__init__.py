"""Interactive widgets, one module per notebook or concept. Each widget is a ``ViewWidget`` (see
``_shell``): standard ipywidgets controls wired to a pure view function that computes or draws what
the widget shows, unit-tested in tests/ (nbval never moves a slider). Widgets sit on top of
everything else: they use the blocks and ``helpers.plots``, and nothing below imports them. Displayed, every widget also
carries a PNG of its first state and a text, shown where no kernel runs (GitHub, nbviewer).

- ``alignment`` (notebook 00): word alignments between languages;
- ``temperature`` (02): softmax temperature;
- ``masks`` (04): the mask explorer;
- ``heads`` (05): the head picker;
- ``positions`` (06): the positional-encoding explorer;
- ``gradients`` (07): post-LN vs pre-LN gradient norms;
- ``cross_attention`` (08): cross-attention by layer and head;
- ``translator`` (10): the date translator;
- ``online_softmax`` (11): the online softmax block by block;
- ``sampling`` (12): sampling from the tiny GPT;
- ``kv_cache`` (13): KV-cache memory against the context length for MHA, GQA and MQA;
- ``induction`` (14): one head's pattern on a repeated sequence and the loss at each position.
"""

from ._shell import LIVE_HINT, ViewWidget, figure_png, show_view
from .alignment import ALIGNMENTS, alignment_matrix, alignment_view, alignment_widget
from .cross_attention import cross_attention_view, cross_attention_widget
from .gradients import grad_norm_view, grad_norm_widget
from .heads import head_heatmap_figure, head_picker
from .induction import induction_view, induction_widget
from .kv_cache import follow_kv_heads, kv_cache_view, kv_cache_widget, kv_head_choices
from .masks import MASK_KINDS, build_mask, mask_explorer, mask_explorer_figure, mask_explorer_view
from .online_softmax import online_softmax_view, online_softmax_widget
from .positions import position_dimension_figure, position_explorer
from .sampling import (
    SamplingView,
    sampling_figure,
    sampling_view,
    sampling_widget,
    sampling_widget_view,
)
from .temperature import (
    parse_scores,
    softmax_with_temperature,
    temperature_view,
    temperature_widget,
)
from .translator import translator_view, translator_widget

__all__ = [
    "ALIGNMENTS",
    "SamplingView",
    "LIVE_HINT",
    "MASK_KINDS",
    "ViewWidget",
    "alignment_matrix",
    "alignment_view",
    "alignment_widget",
    "build_mask",
    "cross_attention_view",
    "cross_attention_widget",
    "figure_png",
    "follow_kv_heads",
    "grad_norm_view",
    "grad_norm_widget",
    "head_heatmap_figure",
    "head_picker",
    "induction_view",
    "induction_widget",
    "kv_cache_view",
    "kv_cache_widget",
    "kv_head_choices",
    "mask_explorer",
    "mask_explorer_figure",
    "mask_explorer_view",
    "online_softmax_view",
    "online_softmax_widget",
    "parse_scores",
    "position_dimension_figure",
    "position_explorer",
    "sampling_figure",
    "sampling_view",
    "sampling_widget",
    "sampling_widget_view",
    "show_view",
    "softmax_with_temperature",
    "temperature_view",
    "temperature_widget",
    "translator_view",
    "translator_widget",
]
