"""One entry point for learners, teachers and CI. Needs only Python 3.10+ to start.

    python3 tasks.py lab                 # set up .venv (first time only) and open JupyterLab
    python3 tasks.py test [PYTEST ARGS]  # set up .venv, lint with ruff, run the whole test suite
    python3 tasks.py execute [NB ...]    # re-execute notebooks in place (all when none are given)
    python3 tasks.py sync [NB ...]       # rewrite badges and Colab cells from pyproject.toml
    python3 tasks.py bench               # the attention benchmark of notebook 11 (not a test)
    python3 tasks.py setup               # only create/update .venv

Set-up creates .venv next to this file and installs requirements.txt into it; it is re-run only
when requirements.txt changes.
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
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    pip = [PY, "-m", "pip", "install", "--disable-pip-version-check"]
    if run(*pip, "-q", "--upgrade", "pip") or run(*pip, "-r", "requirements.txt"):
        sys.exit("installing requirements.txt failed (see above)")
    STAMP.write_text(digest)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"lab", "test", "execute", "sync", "bench", "setup"}:
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    setup()
    if cmd == "setup":
        return 0
    if cmd == "lab":
        return run(BIN / "jupyter", "lab", "notebooks/00_start_here.ipynb", *rest)
    if cmd in {"execute", "sync"}:
        return run(PY, "tools/nbtools.py", cmd, *rest)
    if cmd == "bench":
        return run(PY, "benchmarks/attention_benchmark.py", *rest)
    # test
    lint = run(PY, "-m", "ruff", "check", ".")
    tests = run(PY, "-m", "pytest", *rest)
    return lint or tests


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
