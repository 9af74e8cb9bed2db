"""Argument checks shared by the helpers: one place that turns bad input into a clear error.

Every message names the public function the learner called, the argument, what it got and what
it expected, e.g. ``causal_mask: n must be an int >= 1, got 2.5 (float)``. Long values are cut
(see ``short``), so a 10,000-character string never floods the screen.
"""

from __future__ import annotations

import math
import operator

import torch

_MAX_REPR = 60


def short(value) -> str:
    """``repr(value)``, cut to about 60 characters: ``'xxxx…' (10000 characters)``."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}, dtype {value.dtype}"
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    if len(text) <= _MAX_REPR:
        return text
    return f"{text[:_MAX_REPR - 5]}…{text[-4:]} ({len(text)} characters)"


def got(value) -> str:
    """What an argument was, for a message: ``2.5 (float)``, ``'abc' (str)``, ``None``."""
    if value is None or isinstance(value, torch.Tensor):
        return short(value)
    return f"{short(value)} ({type(value).__name__})"


def as_int(where: str, name: str, value, minimum: int | None = None) -> int:
    """``value`` as a Python int (Python, NumPy or 0-d integer tensor ints), else a clear error."""
    wanted = "an int" if minimum is None else f"an int >= {minimum}"
    if isinstance(value, bool) or (isinstance(value, torch.Tensor) and value.dtype == torch.bool):
        raise TypeError(f"{where}: {name} must be {wanted}, got {got(value)}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{where}: {name} must be {wanted}, got {got(value)}") from None
    if minimum is not None and number < minimum:
        raise ValueError(f"{where}: {name} must be {wanted}, got {number}")
    return number


def int_at_least(where: str, name: str, value, low: int) -> int:
    """``value`` if it is a plain int >= ``low``: TypeError for anything that is not an int (a bool
    neither), ValueError below ``low``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: {name} must be an int, got {type(value).__name__} {short(value)}")
    if value < low:
        raise ValueError(f"{where}: {name} must be >= {low}, got {value}")
    return value


def as_float(where: str, name: str, value, low: float | None = None, high: float | None = None,
             high_open: bool = False) -> float:
    """``value`` as a finite float in [low, high] (or [low, high) with ``high_open``)."""
    if low is not None and high is not None:
        wanted = f"a number in [{low:g}, {high:g}{')' if high_open else ']'}"
    elif low is not None:
        wanted = f"a number >= {low:g}"
    else:
        wanted = "a finite number"
    if isinstance(value, bool) or isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{where}: {name} must be {wanted}, got {got(value)}")
    try:
        number = float(value)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{where}: {name} must be {wanted}, got {got(value)}") from None
    too_high = high is not None and (number >= high if high_open else number > high)
    if not math.isfinite(number) or (low is not None and number < low) or too_high:
        raise ValueError(f"{where}: {name} must be {wanted}, got {number:g}")
    return number


def as_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be True or False, got {got(value)}")
    return value


def tensor(where: str, name: str, value, expected: str = "a torch.Tensor") -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{where}: {name} must be {expected}, got {got(value)}")
    return value


def floating(where: str, name: str, t: torch.Tensor) -> None:
    """Refuse integer/bool tensors where values are averaged (attention, layers)."""
    if not t.is_floating_point():
        raise TypeError(f"{where}: {name} must be a floating-point tensor (e.g. torch.float32), "
                        f"got dtype {t.dtype}")


def same_dtype_device(where: str, **tensors: torch.Tensor) -> None:
    """All the named tensors share one dtype and one device."""
    items = [(n, t) for n, t in tensors.items() if t is not None]
    first_name, first = items[0]
    for name, t in items[1:]:
        if t.device != first.device:
            raise ValueError(f"{where}: {name} is on device {t.device} but {first_name} is on "
                             f"{first.device}; move them to one device, e.g. {name}.to({first_name}.device)")
        if t.dtype != first.dtype:
            raise TypeError(f"{where}: {name} has dtype {t.dtype} but {first_name} has {first.dtype}; "
                            f"expected one dtype, e.g. {name}.to({first_name}.dtype)")


def module_input(where: str, name: str, x: torch.Tensor, module: torch.nn.Module) -> None:
    """``x`` has the dtype and device of ``module``'s parameters."""
    param = next(module.parameters(), None)
    if param is None:
        return
    if x.device != param.device:
        raise ValueError(f"{where}: {name} is on device {x.device} but the module's weights are on "
                         f"{param.device}; expected {name}.to({str(param.device)!r}) or module.to(...)")
    if x.dtype != param.dtype:
        raise TypeError(f"{where}: {name} has dtype {x.dtype} but the module's weights are "
                        f"{param.dtype}; expected {name}.to({param.dtype}) (or module.to({x.dtype}))")


def bool_mask(where: str, mask) -> None:
    """Masks are boolean tensors, True = may attend."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"{where}: mask must be a boolean tensor (True = may attend), got "
                        f"{mask.dtype if isinstance(mask, torch.Tensor) else type(mask).__name__}")


def mask_fits(where: str, mask: torch.Tensor, shape: torch.Size) -> None:
    """A mask must broadcast *to* the scores' shape (B, h, Lq, Lk), not merely with it."""
    try:
        fits = torch.broadcast_shapes(mask.shape, shape) == shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(f"{where}: mask of shape {tuple(mask.shape)} does not broadcast to the "
                         f"scores' shape {tuple(shape)} (B, h, Lq, Lk)")
