"""The same floating-point results on every x86-64 machine, for the test suite and for the runs that
store a notebook's outputs (`tasks.py execute`).

A notebook that trains a model stores numbers (losses, accuracies, which date a model gets wrong)
that nbval compares on every run. Training magnifies the last bit of a float: PyTorch picks its
vector kernels by what the processor offers (AVX2 or AVX-512) and MKL, its matrix library, picks
its own code path by processor model and vendor, so the same seed trained on an Intel machine with
AVX-512 and on another processor gives different models (measured on this project's machines:
notebook 13's GQA model ended with its largest attention logit at 2.4 on one and 16.5 on the
other). Three settings are meant to make every x86-64 processor with AVX2 compute the same bits:

- ``ATEN_CPU_CAPABILITY=avx2``: PyTorch's own kernels use AVX2, whatever more the CPU has;
- ``MKL_CBWR=COMPATIBLE``: MKL's "conditional numerical reproducibility" on its SSE2 path, the one
  branch documented to agree across processor vendors;
- ``ONEDNN_MAX_CPU_ISA=AVX2``: the same cap for oneDNN.

Checked on an AVX-512 machine: pinned, a model trains to the same bits as with MKL further
restricted to AVX2 (``MKL_ENABLE_INSTRUCTIONS=AVX2``, what an AVX2-only processor offers); the
agreement across vendors is what MKL documents for its COMPATIBLE branch.

The cost is speed where large matrix products dominate (MKL's SSE2 path); the small models of
notebooks 00-14 train about 1.4x slower. Notebook 15 trains nothing: what it prints depends only
on a pretrained model's forward passes, which agree far beyond the printed digits, so it runs with
the processor's native kernels (``NATIVE_NUMERICS``), at full speed.

The settings only take effect in a process that has not used torch yet: ``pin()`` runs in the
root conftest.py (before any test imports torch; the kernels nbval and the browser tests start
inherit the environment) and in `tools/nbtools.py execute`. A learner's own runs (JupyterLab,
Colab) are not pinned: they get the native speed, and numbers that differ from the stored ones in
the last digits where a model was trained.
"""

from __future__ import annotations

import os
import platform
import sys

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"}
NATIVE_NUMERICS = ("15_",)  # notebooks (and their solutions) run with the native kernels


def applies(machine: str | None = None) -> bool:
    """The pin is for x86-64 (on ARM these settings mean nothing)."""
    return (machine or platform.machine()).lower() in {"x86_64", "amd64"}


def pin(env: dict | None = None) -> dict:
    """Set the pinned values in ``env`` (default ``os.environ``) where they are not set already;
    returns ``env``. A value the caller set (e.g. ``MKL_CBWR=AUTO``) is kept."""
    env = os.environ if env is None else env
    if applies():
        for key, value in PINNED.items():
            env.setdefault(key, value)
    return env


def for_notebook(name: str, env: dict | None = None) -> dict:
    """The environment a notebook's kernel starts with: pinned, except ``NATIVE_NUMERICS``
    notebooks, which get the native kernels (the pinned values removed)."""
    env = dict(os.environ if env is None else env)
    if name.startswith(NATIVE_NUMERICS):
        for key, value in PINNED.items():
            if env.get(key) == value:
                del env[key]
        return env
    return pin(env)


def torch_loaded() -> bool:
    return "torch" in sys.modules


def pinned(env: dict | None = None) -> bool:
    """Whether ``env`` (default ``os.environ``) already has a value for every pinned setting (or
    the pin does not apply to this machine)."""
    env = os.environ if env is None else env
    return not applies() or all(key in env for key in PINNED)
