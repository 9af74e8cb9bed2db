"""Notebook 02: softmax temperature, bars of softmax(scores / temperature)."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["parse_scores", "softmax_with_temperature", "temperature_view", "temperature_widget"]

MAX_SCORES = 12  # bars that fit in the chart


def parse_scores(text: str) -> list[float]:
    """Read scores typed as ``"2, 1, 0.5, -1"``; raise ValueError naming the entry that is wrong."""
    import math

    if not isinstance(text, str):
        raise TypeError(f"scores text must be a str such as '2, 1, 0.5', got {type(text).__name__}")
    if not text.strip():
        raise ValueError("no scores given: type numbers separated by commas, e.g. 2, 1, 0.5, -1")
    scores = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        try:
            value = float(part)
        except ValueError:
            shown = part if len(part) <= 20 else part[:19] + "…"
            raise ValueError(f"{shown!r} is not a number: type numbers separated by commas, "
                             "e.g. 2, 1, 0.5, -1") from None
        if not math.isfinite(value):
            raise ValueError(f"scores must be finite numbers, got {part!r}")
        scores.append(value)
    if len(scores) > MAX_SCORES:
        raise ValueError(f"at most {MAX_SCORES} scores fit in the chart, got {len(scores)}")
    return scores


def softmax_with_temperature(scores, temperature: float):
    """softmax(scores / temperature) of a 1-D list or tensor of scores; temperature must be > 0.

    Computed stably (the largest score is subtracted first, in float64), so huge but finite
    scores such as 1e39 give weights, never NaN. Returns float32 weights.
    """
    import math

    import torch

    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a number > 0, got {temperature!r}")
    if scores is None or isinstance(scores, (str, bytes)):
        raise ValueError(f"scores must be a list or 1-D tensor of numbers, got "
                         f"{type(scores).__name__}")
    try:
        s = scores.detach() if isinstance(scores, torch.Tensor) \
            else torch.as_tensor(scores, dtype=torch.float64)  # not float32: 1e39 stays finite
        s = s.to("cpu", torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"scores must be a list or 1-D tensor of numbers, got "
                         f"{type(scores).__name__}") from None
    if s.dim() != 1 or s.numel() == 0:
        raise ValueError(f"scores must be a non-empty 1-D list, got shape {tuple(s.shape)}")
    if not torch.isfinite(s).all():
        raise ValueError("scores must be finite numbers, got inf or nan")
    z = (s - s.max()) / temperature  # <= 0, the largest is 0: exp never overflows
    return torch.softmax(z, dim=-1).to(torch.float32)


def temperature_view(scores, temperature: float, labels=None, ax=None):
    """What the temperature widget shows: bars of softmax(scores / temperature), one per score.

    ``scores`` is a list/tensor or the text typed in the widget. Bad input (a temperature <= 0,
    text that is not numbers, no scores at all, ...) gives a message (str) instead of a Figure:
    never a traceback. ``labels`` name the bars when there is one per score; otherwise the bars
    are numbered.
    """
    from ..plots import weight_bars

    try:
        if isinstance(scores, str):
            scores = parse_scores(scores)
        w = softmax_with_temperature(scores, temperature)
    except (ValueError, TypeError) as err:
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
                                    description="temperature", readout_format=".2f",
                                    style={"description_width": "initial"})  # the label's own width: never cut
    return ViewWidget(lambda scores, temperature: temperature_view(scores, temperature, labels),
                      {"scores": text, "temperature": slider}, rows=[("scores", "temperature")],
                      about="softmax weights of the scores at a temperature you choose")
