"""The pinned floating-point settings (tools/numerics.py): the suite and `tasks.py execute` compute
the same bits on every x86-64 machine, notebook 15 keeps the native kernels, and the model cache
keeps a model trained with other kernels apart."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from _repo import ROOT

from helpers import cache
from tools import numerics

X86 = numerics.applies()


def test_pin_fills_what_is_unset_and_keeps_what_the_caller_chose(monkeypatch):
    monkeypatch.setattr(numerics, "applies", lambda machine=None: True)
    env = numerics.pin({"MKL_CBWR": "AUTO", "PATH": "/bin"})
    assert env == {"MKL_CBWR": "AUTO", "PATH": "/bin", "ATEN_CPU_CAPABILITY": "avx2",
                   "ONEDNN_MAX_CPU_ISA": "AVX2"}


def test_nothing_is_pinned_off_x86():
    assert not numerics.applies("aarch64") and not numerics.applies("arm64")
    assert numerics.applies("x86_64") and numerics.applies("AMD64")


def test_notebook_15_gets_the_native_kernels_the_others_the_pinned_ones(monkeypatch):
    monkeypatch.setattr(numerics, "applies", lambda machine=None: True)
    pinned = numerics.pin({"HOME": "/root"})
    native = numerics.for_notebook("15_a_real_language_model.ipynb", pinned)
    assert native == {"HOME": "/root"}
    assert numerics.for_notebook("15_a_real_language_model_solutions.ipynb", pinned) == native
    assert numerics.for_notebook("10_training_a_translator.ipynb", native) == pinned
    # a value the caller chose stays, even for notebook 15
    assert numerics.for_notebook("15_x.ipynb", {"MKL_CBWR": "AUTO"}) == {"MKL_CBWR": "AUTO"}


@pytest.mark.skipif(not X86, reason="the pin applies to x86-64 only")
def test_this_test_process_runs_pinned():
    """conftest.py pinned the environment before torch was imported, so it took effect."""
    for key, value in numerics.PINNED.items():
        assert os.environ[key] == value, key
    assert torch.backends.cpu.get_cpu_capability() == "AVX2"


@pytest.mark.skipif(not X86, reason="the pin applies to x86-64 only")
def test_the_pin_only_works_before_torch_starts():
    """Set after torch has picked its kernels, the capability stays what the processor offers:
    that is why the pin lives in conftest.py and in the process that starts the kernels."""
    code = ("import os, torch; torch.ones(2) + 1; os.environ['ATEN_CPU_CAPABILITY'] = 'default'; "
            "print(torch.backends.cpu.get_cpu_capability())")
    env = numerics.pin(dict(os.environ))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "AVX2"


def test_the_cache_key_records_the_numerics(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))

    def train_one(model):
        model.weight.data.add_(1.0)
        return {"loss": [0.0]}

    def fresh():
        torch.manual_seed(0)
        return torch.nn.Linear(2, 2)

    cache.load_or_train("pin-key", (m := fresh()), lambda: train_one(m), {"k": 1})
    monkeypatch.setenv("MKL_CBWR", "AUTO")  # another MKL code path: another model
    m2 = fresh()
    _, history = cache.load_or_train("pin-key", m2, lambda: train_one(m2), {"k": 1})
    assert history["cached"] is False
    assert len(list(tmp_path.glob("pin-key-*.pt"))) == 2
    assert set(cache.numerics()) == {"capability", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA"}


@pytest.mark.skipif(not X86, reason="the pin applies to x86-64 only")
def test_a_native_notebook_does_not_leave_the_worker_unpinned(monkeypatch):
    """The root conftest unpins the environment while notebook 15's kernel starts, and pins it
    again for the next test, whatever it is (a browser test starting JupyterLab, a unit test)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest_numerics", ROOT / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    class Item:
        def __init__(self, nodeid):
            self.nodeid, self.fspath = nodeid, ROOT / nodeid.split("::")[0]

    for key, value in numerics.PINNED.items():
        monkeypatch.setenv(key, value)
    conftest.pytest_runtest_setup(Item("notebooks/15_a_real_language_model.ipynb::Cell 0"))
    assert not any(key in os.environ for key in numerics.PINNED)
    conftest.pytest_runtest_setup(Item("tests/test_cache.py::test_x"))
    assert all(os.environ.get(k) == v for k, v in numerics.PINNED.items())
    conftest.pytest_runtest_setup(Item("notebooks/10_training_a_translator.ipynb::Cell 3"))
    assert all(os.environ.get(k) == v for k, v in numerics.PINNED.items())
