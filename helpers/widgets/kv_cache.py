"""Notebook 13: KV-cache memory against the context length for MHA, GQA and MQA (and a window).

Grouped-query attention needs a number of kv heads that divides the number of query heads. The
widget never offers another: its "kv heads" slider holds only the divisors of the heads, and when
the heads change, the kv heads follow (``kv_head_choices``, ``follow_kv_heads``: pure functions,
unit-tested). ``kv_cache_view`` itself, called with settings that do not fit, returns a message.
"""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["follow_kv_heads", "kv_cache_view", "kv_cache_widget", "kv_head_choices"]


def _positive_int(func: str, name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{func}: {name} must be an int >= 1, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{func}: {name} must be an int >= 1, got {value!r}")


def kv_head_choices(num_heads: int) -> list[int]:
    """The numbers of kv heads grouped-query attention allows for ``num_heads`` query heads: the
    divisors of ``num_heads``, smallest first (1 is multi-query, ``num_heads`` multi-head)."""
    _positive_int("kv_head_choices", "num_heads", num_heads)
    return [k for k in range(1, num_heads + 1) if num_heads % k == 0]


def follow_kv_heads(num_heads: int, wanted: int) -> int:
    """The kv heads the widget shows for ``num_heads`` query heads when the learner last chose
    ``wanted``: ``wanted`` itself if it divides ``num_heads``, else the nearest divisor (the smaller
    of two equally near). So heads 32 -> 35 -> 32 with 8 kv heads chosen gives 8 -> 7 -> 8."""
    _positive_int("follow_kv_heads", "wanted", wanted)
    return min(kv_head_choices(num_heads), key=lambda k: (abs(k - wanted), k))


def kv_cache_view(num_layers: int, num_heads: int, head_dim: int, num_kv_heads: int, max_context: int,
                  batch_size: int = 1, dtype: str = "float16", window: int = 0, ax=None):
    """What the widget shows: the cache size of MHA, GQA and MQA (and GQA with a sliding window
    when ``window`` > 0) for contexts up to ``max_context``. Bad settings (kv heads that do not
    divide the heads, a size < 1, an unknown dtype) give a message (str) instead of a Figure."""
    from ..modern import KV_DTYPES, kv_cache_bytes, kv_cache_curves
    from ..plots import kv_cache_plot

    try:
        curves = kv_cache_curves(num_layers, num_heads, head_dim, num_kv_heads, max_context, batch_size,
                                 dtype, window)
    except (ValueError, TypeError) as err:
        message = f"Cannot draw this: {err}"
        if "multiple of num_kv_heads" in str(err):
            message += f" (kv heads that fit {num_heads} heads: {', '.join(map(str, kv_head_choices(num_heads)))})"
        return message
    full = kv_cache_bytes(num_layers, num_heads, head_dim, max_context, batch_size, KV_DTYPES[dtype])
    title = (f"{num_layers} layers, {num_heads} heads of {head_dim}, batch {batch_size}, {dtype}\n"
             f"MHA at L = {max_context:,} holds {full / 2**30:.2f} GiB")
    return kv_cache_plot(curves, ax=ax, title=title)


class _KVCacheWidget(ViewWidget):
    """``ViewWidget`` whose kv-heads slider offers only the divisors of the heads: before each
    draw, the slider's choices and value follow the heads (``follow_kv_heads`` from the kv heads
    the learner last chose), so every draw gets settings that fit and draws once."""

    def __init__(self, wanted_kv: int, *args, **kwargs):
        self._wanted_kv, self._following = wanted_kv, False
        super().__init__(*args, **kwargs)

    def redraw(self, _change=None):
        if self._following:  # the slider moved because the heads did: one draw comes after
            return self.result
        kv = self.controls["num_kv_heads"]
        if _change is not None and _change.get("owner") is kv:
            self._wanted_kv = kv.value  # the learner's own choice
        heads = self.controls["num_heads"].value
        choices = kv_head_choices(heads)
        if list(kv.options) != choices or kv.value not in choices:
            self._following = True
            try:
                kv.options = choices
                kv.value = follow_kv_heads(heads, self._wanted_kv)
            finally:
                self._following = False
        return super().redraw(_change)


def kv_cache_widget(num_layers: int = 32, num_heads: int = 32, head_dim: int = 128, num_kv_heads: int = 8,
                    max_context: int = 32768, batch_size: int = 1, dtype: str = "float16", window: int = 4096):
    """Sliders for the model's shape, the context and the batch; a menu for the dtype. The kv-heads
    slider offers the divisors of the heads only and follows them (``follow_kv_heads``)."""
    import ipywidgets as widgets

    for name, value in (("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
        _positive_int("kv_cache_widget", name, value)

    def slider(value, low, high, description, step=1):
        return widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                                 continuous_update=False)

    controls = {
        "num_layers": slider(num_layers, 1, 128, "layers"),
        "num_heads": slider(num_heads, 1, 128, "heads"),
        "num_kv_heads": widgets.SelectionSlider(options=kv_head_choices(num_heads),
                                                value=follow_kv_heads(num_heads, num_kv_heads),
                                                description="kv heads", continuous_update=False),
        "head_dim": slider(head_dim, 16, 256, "head dim", 16),
        "max_context": slider(max_context, 1024, 131072, "context", 1024),
        "batch_size": slider(batch_size, 1, 64, "batch"),
        "window": slider(window, 0, 32768, "window", 512),
        "dtype": widgets.Dropdown(options=["float32", "bfloat16", "float16", "int8"], value=dtype,
                                  description="dtype"),
    }
    return _KVCacheWidget(num_kv_heads, kv_cache_view, controls,
                          rows=[("num_layers", "num_heads", "num_kv_heads"), ("head_dim", "dtype", "batch_size"),
                                ("max_context", "window")],
                          about="KV-cache memory against the context length for MHA, GQA and MQA")
