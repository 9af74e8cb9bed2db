"""The trained runs shipped with the repository (helpers/data/pretrained/runs) are what the notebooks'
recipes give: every notebook that uses them is run again as ``tools/ship_runs.py`` runs it (pinned
kernels, an empty cache, nothing loaded from the shipped runs), which
also re-checks every claim the notebook makes under its stored settings on the retrained models, and
each run it trains must be the shipped file's weights, bit for bit, with the same history (timings
aside). A notebook that trains a run nobody shipped, or no longer trains a shipped one, fails too:
its first run would train again."""

from __future__ import annotations

import json

import pytest

from helpers.cache import SHIPPED_MANIFEST, SHIPPED_RUNS
from tools.ship_runs import record, same_run

SHIPPED = json.loads(SHIPPED_MANIFEST.read_text())
pytestmark = pytest.mark.timeout(1800)  # the notebooks retrain: minutes


@pytest.fixture(scope="module")
def retrained(tmp_path_factory):
    return record(ship_to=tmp_path_factory.mktemp("retrained"))  # (folder, manifest)


def test_the_notebooks_train_exactly_the_shipped_runs(retrained):
    _, manifest = retrained
    assert sorted(manifest) == sorted(SHIPPED), (
        f"trained but not shipped: {sorted(set(manifest) - set(SHIPPED))}; "
        f"shipped but not trained: {sorted(set(SHIPPED) - set(manifest))} (python3 tools/ship_runs.py)")


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_retraining_gives_the_shipped_bits(name, retrained):
    folder, _ = retrained
    assert (folder / name).exists(), f"{name} ({SHIPPED[name]['notebook']}) was not trained again"
    why = same_run(SHIPPED_RUNS / name, folder / name)
    assert not why, f"{name} ({SHIPPED[name]['notebook']}): retrained, {why}"
