"""requirements.txt (local set-up) and environment.yml (Binder) describe the same environment."""

from __future__ import annotations

import re
import tomllib

import pytest
import yaml
from _repo import ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse(lines) -> tuple[dict[str, str], list[str]]:
    """Split pip requirement lines into {name: version} pins and everything else (options, -e)."""
    pins, other = {}, []
    for raw in lines:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        m = PIN.match(line)
        if m:
            assert normalize(m.group(1)) not in pins, f"{m.group(1)} is pinned twice"
            pins[normalize(m.group(1))] = m.group(2)
        else:
            other.append(line)
    return pins, other


def requirements():
    return parse((ROOT / "requirements.txt").read_text().splitlines())


def environment() -> dict:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert isinstance(env, dict), "environment.yml must be a mapping"
    return env


def conda_and_pip(env):
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pips = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pips) == 1, "environment.yml needs exactly one pip: section"
    return conda, parse(pips[0])


def test_requirements_pin_every_package_exactly():
    pins, other = requirements()
    assert other == ["-e ."], f"requirements.txt: unpinned lines {other} (only `-e .` may be)"
    for needed in ("torch", "jupyterlab", "ipywidgets", "matplotlib", "seaborn", "nbval",
                   "pytest", "ruff", "nbclient", "nbformat", "ipykernel", "pyyaml"):
        assert needed in pins, f"requirements.txt does not pin {needed}"
    assert pins["torch"] == "2.13.0"
    major, minor = (int(x) for x in pins["nbval"].split(".")[:2])
    assert (major, minor) >= (0, 11), "nbval < 0.11 does not work with pytest >= 8.1"


def test_environment_yml_is_valid_and_names_python_and_pip():
    env = environment()
    assert env.get("name") and env.get("channels"), "environment.yml needs name and channels"
    conda, _ = conda_and_pip(env)
    assert "pip" in conda
    python = [d for d in conda if re.match(r"python\s*=", d)]
    assert python == ["python=3.11"], f"Binder must use the tested Python 3.11, got {python}"
    extra = [d for d in conda if d not in {"pip", "python=3.11"}]
    assert not extra, f"conda packages {extra} are not in requirements.txt: install them with pip"


def test_same_pins_in_requirements_and_environment():
    req, _ = requirements()
    _, (env, _) = conda_and_pip(environment())
    missing = {k: v for k, v in req.items() if env.get(k) != v}
    extra = {k: v for k, v in env.items() if req.get(k) != v}
    assert not missing and not extra, (
        f"pins differ: requirements.txt has {missing} that environment.yml lacks or pins "
        f"differently; environment.yml has {extra} that requirements.txt lacks or pins differently"
    )


def test_binder_torch_is_cpu_only_and_helpers_are_installed():
    _, (pins, other) = conda_and_pip(environment())
    assert f"--extra-index-url {CPU_INDEX}" in other, (
        "environment.yml must take torch from PyTorch's CPU index (PyPI's Linux wheel is CUDA)"
    )
    assert not any(o.startswith("--index-url") for o in other), (
        "--index-url would replace PyPI, which PyTorch's CPU index does not mirror in full"
    )
    # pip picks the highest matching version across indexes: 2.13.0+cpu > 2.13.0, so an
    # unpinned-local "==2.13.0" selects the CPU wheel (PEP 440: local labels ignored by ==).
    assert "+" not in pins["torch"]
    assert "-e ." in other, "environment.yml must install the helpers package (-e .)"


def test_helpers_package_metadata():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (ROOT / project["readme"]).is_file(), "pyproject's readme must exist or pip install fails"
    names = {normalize(re.split(r"[<>=!~ ]", d)[0]) for d in project["dependencies"]}
    req, _ = requirements()
    assert names <= set(req), f"helpers depends on {names - set(req)}, not pinned in requirements"


@pytest.mark.parametrize(
    ("lines", "pins", "other"),
    [
        (["torch==2.13.0", "# c", "", "-e ."], {"torch": "2.13.0"}, ["-e ."]),
        (["Py_YAML==6.0  # why"], {"py-yaml": "6.0"}, []),
        (["numpy>=2"], {}, ["numpy>=2"]),
    ],
)
def test_parse(lines, pins, other):
    assert parse(lines) == (pins, other)
