"""Notebook 13: KV-cache memory against the context length for MHA, GQA and MQA (and a window)."""

from __future__ import annotations

from ._shell import ViewWidget

__all__ = ["kv_cache_view", "kv_cache_widget"]


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
        return f"Cannot draw this: {err}"
    full = kv_cache_bytes(num_layers, num_heads, head_dim, max_context, batch_size, KV_DTYPES[dtype])
    title = (f"{num_layers} layers, {num_heads} heads of {head_dim}, batch {batch_size}, {dtype}\n"
             f"MHA at L = {max_context:,} holds {full / 2**30:.2f} GiB")
    return kv_cache_plot(curves, ax=ax, title=title)


def kv_cache_widget(num_layers: int = 32, num_heads: int = 32, head_dim: int = 128, num_kv_heads: int = 8,
                    max_context: int = 32768, batch_size: int = 1, dtype: str = "float16", window: int = 4096):
    """Sliders for the model's shape, the context and the batch; a menu for the dtype."""
    import ipywidgets as widgets

    def slider(value, low, high, description, step=1):
        return widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                                 continuous_update=False)

    controls = {
        "num_layers": slider(num_layers, 1, 128, "layers"),
        "num_heads": slider(num_heads, 1, 128, "heads"),
        "num_kv_heads": slider(num_kv_heads, 1, 128, "kv heads"),
        "head_dim": slider(head_dim, 16, 256, "head dim", 16),
        "max_context": slider(max_context, 1024, 131072, "context", 1024),
        "batch_size": slider(batch_size, 1, 64, "batch"),
        "window": slider(window, 0, 32768, "window", 512),
        "dtype": widgets.Dropdown(options=["float32", "bfloat16", "float16", "int8"], value=dtype,
                                  description="dtype"),
    }
    return ViewWidget(kv_cache_view, controls,
                      rows=[("num_layers", "num_heads", "num_kv_heads"), ("head_dim", "dtype", "batch_size"),
                            ("max_context", "window")],
                      about="KV-cache memory against the context length for MHA, GQA and MQA")
