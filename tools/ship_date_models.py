"""Train notebook 12's two date models at seed 0 and write the files shipped with the repository.

    python3 tools/ship_date_models.py [encdec] [gpt]

Each model is trained exactly as ``helpers.experiments.train_date_model(kind, seed=0,
retrain=True)`` trains it (``DATE_RECIPE``: 2,000 steps, one CPU thread), on the CPU, under the
suite's pinned floating-point kernels (``tools.numerics``, set before torch is imported), and saved
to ``helpers/data/pretrained/dates-<kind>-s0.pt`` with its history and recipe. The sha256 printed
goes into ``helpers.experiments.SHIPPED_DATE_MODELS``. Pinned, a retraining on any x86-64 machine
with AVX2 (``RETRAIN = True`` in the notebook, tests/conclusions/test_nb12_gpt.py) gives the same
bits; the pinned training is cached (``helpers.cache``), so a run after the test loads it.
"""

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.numerics import pin  # noqa: E402

pin()  # before torch is imported: the kernels the suite and `tasks.py execute` use

import torch  # noqa: E402

from helpers.experiments import DATE_RECIPE, SHIPPED_DATE_MODELS, SHIPPED_FOLDER, train_date_model  # noqa: E402


def ship(kind: str) -> str:
    model, history = train_date_model(kind, seed=0, device="cpu", retrain=True)
    history = {k: v for k, v in history.items() if k not in ("cached", "shipped")}
    path = SHIPPED_FOLDER / SHIPPED_DATE_MODELS[kind][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
                "history": history, "recipe": dict(DATE_RECIPE), "model": kind, "seed": 0,
                "torch": str(torch.__version__), "threads": 1}, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"{kind}: {path} {path.stat().st_size:,} bytes sha256 {digest}")
    return digest


if __name__ == "__main__":
    for kind in sys.argv[1:] or ("encdec", "gpt"):
        ship(kind)
