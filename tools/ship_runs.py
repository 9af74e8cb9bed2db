"""Train the models the notebooks train under their stored settings, and write them to the shipped runs
(``helpers/data/pretrained/runs``, listed with their sha256 in ``manifest.json``).

    python3 tools/ship_runs.py            # every notebook of SHIPPED_NOTEBOOKS
    python3 tools/ship_runs.py --check    # retrain them in a temporary folder and compare, write nothing

Each notebook is executed (not saved) in a fresh kernel under the suite's pinned kernels
(``tools/numerics.py``), with an empty model cache and ``ATTENTION_TUTORIAL_SHIP_TO`` set, so that
``helpers.cache.load_or_train`` loads nothing from the shipped runs and writes every run it trains
under its ``shipped_name``. Pinned, a retraining on any x86-64 machine
with AVX2 gives the same bits: tests/conclusions/test_retrained_shipped_runs.py retrains them all and checks
that (``--check`` does the same by hand). Notebook 12's date models are shipped on their own
(``tools/ship_date_models.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.numerics import for_notebook, pin  # noqa: E402

# The notebooks whose first run would otherwise train for more than a few seconds; the order is
# the order they run in (a run two notebooks share is listed under the first).
SHIPPED_NOTEBOOKS = ("notebooks/10_training_a_translator.ipynb",
                     "notebooks/12_decoder_only_gpt.ipynb",
                     "notebooks/13_modern_attention.ipynb",
                     "notebooks/14_induction_heads.ipynb",
                     "solutions/10_training_a_translator_solutions.ipynb")
TIMING_KEYS = ("seconds", "time", "elapsed")  # history entries that depend on the machine's speed


def run_notebook(relpath: str, ship_to: Path, cache: Path) -> None:
    """Execute one notebook (not saved) so that every model it trains is written to ``ship_to``."""
    import nbformat
    from nbclient import NotebookClient

    path = ROOT / relpath
    nb = nbformat.read(path, as_version=4)
    env = for_notebook(path.name, pin(dict(os.environ)))
    env.update(ATTENTION_TUTORIAL_SHIP_TO=str(ship_to),
               ATTENTION_TUTORIAL_CACHE=str(cache), OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "2"))
    env.pop("MPLBACKEND", None)
    client = NotebookClient(nb, kernel_name="python3", timeout=900, record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=env)


def record(notebooks=SHIPPED_NOTEBOOKS, ship_to: Path | None = None) -> tuple[Path, dict]:
    """Run ``notebooks`` in order; returns (the folder the runs were written to, the manifest:
    ``{file name: {"sha256": ..., "notebook": the first notebook that trained it}}``)."""
    ship_to = Path(ship_to or tempfile.mkdtemp(prefix="shipped-runs-"))
    ship_to.mkdir(parents=True, exist_ok=True)
    manifest: dict = {}
    with tempfile.TemporaryDirectory(prefix="ship-cache-") as cache:
        for relpath in notebooks:
            print(f"running {relpath} ...", flush=True)
            run_notebook(relpath, ship_to, Path(cache))
            for f in sorted(ship_to.glob("*.pt")):
                if f.name not in manifest:
                    manifest[f.name] = {"sha256": hashlib.sha256(f.read_bytes()).hexdigest(),
                                        "notebook": relpath}
    return ship_to, manifest


def same_run(a: Path, b: Path) -> str:
    """'' if the two run files hold the same weights (bit for bit) and the same history (timings
    aside), else what differs."""
    import torch

    x, y = (torch.load(p, weights_only=True) for p in (a, b))
    if set(x["state_dict"]) != set(y["state_dict"]):
        return "not the same weight names"
    for k, v in x["state_dict"].items():
        if not torch.equal(v, y["state_dict"][k]):
            return f"weight {k!r} differs (largest difference {(v - y['state_dict'][k]).abs().max().item():.3g})"

    def plain(h):
        return {k: v for k, v in h.items() if k not in TIMING_KEYS}

    def equal(u, v):
        if isinstance(u, torch.Tensor) or isinstance(v, torch.Tensor):
            return isinstance(u, torch.Tensor) and isinstance(v, torch.Tensor) and torch.equal(u, v)
        if isinstance(u, dict) and isinstance(v, dict):
            return set(u) == set(v) and all(equal(u[k], v[k]) for k in u)
        if isinstance(u, list | tuple) and isinstance(v, list | tuple):
            return len(u) == len(v) and all(equal(p, q) for p, q in zip(u, v, strict=True))
        return u == v

    hx, hy = plain(x["history"]), plain(y["history"])
    bad = sorted(k for k in set(hx) | set(hy) if not equal(hx.get(k), hy.get(k)))
    return f"history entries {bad} differ" if bad else ""


def main(argv: list[str]) -> int:
    from helpers.cache import SHIPPED_MANIFEST, SHIPPED_RUNS

    if argv == ["--check"]:
        folder, manifest = record()
        shipped = json.loads(SHIPPED_MANIFEST.read_text())
        problems = [f"{name}: shipped but not trained again" for name in sorted(set(shipped) - set(manifest))]
        problems += [f"{name}: trained but not shipped" for name in sorted(set(manifest) - set(shipped))]
        problems += [f"{name}: {why}" for name in sorted(set(shipped) & set(manifest))
                     if (why := same_run(SHIPPED_RUNS / name, folder / name))]
        print("\n".join(problems) or f"all {len(shipped)} shipped runs retrained to the same bits")
        return 1 if problems else 0
    if argv:
        print(__doc__)
        return 2
    for old in SHIPPED_RUNS.glob("*.pt"):
        old.unlink()
    _, manifest = record(ship_to=SHIPPED_RUNS)
    SHIPPED_MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    total = sum((SHIPPED_RUNS / n).stat().st_size for n in manifest)
    print(f"{len(manifest)} runs, {total:,} bytes, in {SHIPPED_RUNS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
