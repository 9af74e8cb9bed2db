"""Seeding, device choice and the environment check (notebook 00)."""

from __future__ import annotations

import platform
import random
import sys

import torch

__all__ = ["environment_report", "get_device", "in_colab", "seed_everything"]


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python's, NumPy's and PyTorch's random generators (CPU and every GPU); returns a
    Generator. ``seed`` is an int in 0 .. 2**32 - 1 (NumPy's range); nothing is seeded otherwise."""
    from ._checks import got

    if isinstance(seed, bool) or not isinstance(seed, int):
        try:
            import numpy as np

            is_np_int = isinstance(seed, np.integer)
        except ImportError:  # pragma: no cover
            is_np_int = False
        if not is_np_int:
            raise TypeError(f"seed_everything: seed must be an int in 0 .. 2**32 - 1, got {got(seed)}")
        seed = int(seed)
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed_everything: seed must be an int in 0 .. 2**32 - 1, got {seed}")
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds CUDA
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # pragma: no cover - numpy ships with matplotlib
        pass
    return torch.Generator().manual_seed(seed)


def get_device() -> torch.device:
    """CUDA if a GPU is available (e.g. a Colab GPU runtime), else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def in_colab() -> bool:
    return "google.colab" in sys.modules


def environment_report() -> dict[str, str]:
    """Versions of what the tutorial needs, for the environment check in notebook 00."""
    import ipywidgets
    import matplotlib

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "matplotlib": matplotlib.__version__,
        "ipywidgets": ipywidgets.__version__,
        "device": str(get_device()),
        "threads": str(torch.get_num_threads()),
    }
