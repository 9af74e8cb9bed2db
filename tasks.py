"""One entry point for learners, teachers and CI. Needs only Python 3.11+ to start.

    python3 tasks.py lab [LAB ARGS]      # set up .venv (first time only) and open JupyterLab
    python3 tasks.py test [PYTEST ARGS]  # set up .venv, lint with ruff, run the whole test suite
    python3 tasks.py execute [NB ...]    # re-execute notebooks in place (all when none are given)
    python3 tasks.py sync [NB ...]       # rewrite badges and Colab cells from pyproject.toml
    python3 tasks.py bench               # the attention benchmark of notebook 11 (not a test)
    python3 tasks.py setup               # only create/update .venv

Set-up creates .venv next to this file and installs requirements.txt into it; it is re-run only
when requirements.txt changes. Extra arguments go to JupyterLab (lab) or pytest (test).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".requirements.sha256"


def run(*cmd, **kw) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kw)


def setup() -> None:
    digest = hashlib.sha256((ROOT / "requirements.txt").read_bytes()).hexdigest()
    if PY.exists() and STAMP.exists() and STAMP.read_text() == digest:
        return
    if not PY.exists():
        try:
            import ensurepip  # noqa: F401  (Debian/Ubuntu ship it separately)
        except ImportError:
            sys.exit("this Python cannot create virtual environments with pip: install its venv "
                     "module (Debian/Ubuntu: sudo apt-get install python3-venv), then run again")
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    pip = [PY, "-m", "pip", "install", "--disable-pip-version-check"]
    if run(*pip, "-q", "--upgrade", "pip") or run(*pip, "-r", "requirements.txt"):
        sys.exit("installing requirements.txt failed (see above)")
    STAMP.write_text(digest)


def lab_args(rest: list[str]) -> list[str]:
    start = ROOT / "notebooks" / "00_start_here.ipynb"
    args = [start.relative_to(ROOT).as_posix()] if start.exists() else []
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in rest:
        args.append("--allow-root")  # JupyterLab refuses root without it (containers, CI)
    return args + rest


def looks_like_path(arg: str) -> bool:
    return not arg.startswith("-") and ("/" in arg or os.sep in arg or arg.endswith((".ipynb", ".py")))


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - this runs under whatever python3 the user has
        print(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}")
        return 2
    if not argv or argv[0] not in {"lab", "test", "execute", "sync", "bench", "setup"}:
        print(__doc__)
        return 2
    cmd = argv[0]
    # Paths given relative to where the user stands still work (commands run from the repo root).
    rest = [str(Path(a).resolve()) if looks_like_path(a) and Path(a).exists() else a
            for a in argv[1:]]
    setup()
    if cmd == "setup":
        return 0
    if cmd == "lab":
        return run(BIN / "jupyter", "lab", *lab_args(rest))
    if cmd in {"execute", "sync"}:
        return run(PY, "tools/nbtools.py", cmd, *rest)
    if cmd == "bench":
        return run(PY, "benchmarks/attention_benchmark.py", *rest)
    # test: lint, then the suite; fail if either fails (pytest exits 5 when it collected nothing)
    lint = run(PY, "-m", "ruff", "check", ".")
    tests = run(PY, "-m", "pytest", *rest)
    if lint:
        print("ruff check failed (see above)", flush=True)
    return tests or lint


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
