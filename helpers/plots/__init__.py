"""Every figure of the tutorial, in one style (``use_tutorial_style``; see ``style``), one module
per idea, all importable from here (``from helpers.plots import attention_heatmap``):

- ``style``: the style (100 dpi, text of 8 pt or more, white background), shared tick labels;
- ``weights``: attention weights as heatmaps (masked cells hatched, shared colour scales) and bars;
- ``training``: gradient norms per layer (07), loss and accuracy curves, the warm-up schedule (10);
- ``efficient``: cost against length, the online softmax block by block (11);
- ``gpt``: accuracy against steps, loss against the language's entropy, the quality–diversity trade-off (12);
- ``modern``: KV-cache size, bytes per decoding step, loss against length and along a stream, largest logits (13);
- ``induction``: loss of the two halves, loss per position, head scores and in-context learning
  during training, OV circuits, composition scores, path ablations, sinks (14);
- ``llm``: losses side by side, the loss along a repeated sequence, the logit lens (15).

Figures sit on top of the blocks: they take tensors and histories, and no block imports them.
"""

from .efficient import cost_plot, online_softmax_figure
from .gpt import accuracy_curves_plot, loss_vs_entropy_plot, quality_diversity_plot
from .induction import (
    composition_plot,
    icl_score_plot,
    loss_curves_plot,
    ov_circuits_plot,
    path_ablation_plot,
    per_position_plot,
    previous_token_by_position_plot,
    scores_over_training_plot,
    sink_plot,
)
from .llm import logit_lens_plot, loss_bars, token_loss_plot
from .modern import (
    UNITS,
    decode_bytes_plot,
    extrapolation_plot,
    kv_cache_plot,
    logit_curves_plot,
    loss_by_position_plot,
)
from .style import MASK_STYLE, MIN_FONT_PT, STYLE, use_tutorial_style
from .training import grad_norm_lines, lr_schedule_plot, training_curves
from .weights import attention_heatmap, attention_heatmaps, cross_attention_grid, weight_bars

__all__ = [
    "MASK_STYLE",
    "MIN_FONT_PT",
    "STYLE",
    "UNITS",
    "accuracy_curves_plot",
    "attention_heatmap",
    "attention_heatmaps",
    "composition_plot",
    "cost_plot",
    "cross_attention_grid",
    "decode_bytes_plot",
    "extrapolation_plot",
    "grad_norm_lines",
    "icl_score_plot",
    "kv_cache_plot",
    "logit_lens_plot",
    "loss_bars",
    "token_loss_plot",
    "logit_curves_plot",
    "loss_by_position_plot",
    "loss_curves_plot",
    "loss_vs_entropy_plot",
    "lr_schedule_plot",
    "online_softmax_figure",
    "ov_circuits_plot",
    "path_ablation_plot",
    "per_position_plot",
    "previous_token_by_position_plot",
    "quality_diversity_plot",
    "scores_over_training_plot",
    "sink_plot",
    "training_curves",
    "use_tutorial_style",
    "weight_bars",
]
