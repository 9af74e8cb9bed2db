"""The runs shipped with the repository (helpers/data/pretrained/runs): the files are the ones the
manifest records, small, loadable as tensors only, and ``load_or_train`` loads one when the cache has
none, unless the retrain switch is off. That a retraining gives the same bits is checked in
tests/conclusions/test_retrained_shipped_runs.py (it trains)."""

from __future__ import annotations

import contextlib
import hashlib
import json

import pytest
import torch
from torch import nn

from helpers import cache
from helpers.cache import SHIPPED_MANIFEST, SHIPPED_RUNS, load_or_train, shipped_name, use_shipped
from tools.ship_runs import SHIPPED_NOTEBOOKS, same_run

MAX_BYTES = 2_000_000  # one run: a small model's weights and its history (the translator: twice, with its snapshot)
MAX_TOTAL = 13_000_000  # all of them


def test_every_shipped_file_is_the_recorded_one_and_small():
    manifest = json.loads(SHIPPED_MANIFEST.read_text())
    assert manifest, "no shipped runs"
    files = {p.name for p in SHIPPED_RUNS.glob("*.pt")}
    assert files == set(manifest), f"files not in the manifest: {sorted(files - set(manifest))}; " \
                                   f"in the manifest, no file: {sorted(set(manifest) - files)}"
    total = 0
    for name, entry in manifest.items():
        data = (SHIPPED_RUNS / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], f"{name}: not the file recorded"
        assert len(data) < MAX_BYTES, f"{name}: {len(data):,} bytes"
        assert entry["notebook"] in SHIPPED_NOTEBOOKS
        stored = torch.load(SHIPPED_RUNS / name, weights_only=True)
        assert set(stored) == {"state_dict", "history"}
        total += len(data)
    assert total < MAX_TOTAL, f"{total:,} bytes shipped"


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """An empty cache and a shipped-runs folder of our own; the switch on."""
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "SHIPPED_RUNS", tmp_path / "runs")
    monkeypatch.setattr(cache, "SHIPPED_MANIFEST", tmp_path / "runs" / "manifest.json")
    monkeypatch.setitem(cache._SHIPPED, "use", True)
    return tmp_path


def _fresh(seed=0):
    torch.manual_seed(seed)
    return nn.Linear(3, 2)


def _fit(model, calls):
    def fit():
        calls.append(1)
        with torch.no_grad():
            model.weight.add_(1.0)
        return {"loss": [0.5], "seconds": 1.0}
    return fit


def _ship(folder, monkeypatch, key):
    """Train once with the recording switch on, then list the file in the manifest."""
    monkeypatch.setenv("ATTENTION_TUTORIAL_SHIP_TO", str(folder / "runs"))
    (folder / "runs").mkdir()
    load_or_train("lin", (m := _fresh()), _fit(m, []), key, cache=False)
    monkeypatch.delenv("ATTENTION_TUTORIAL_SHIP_TO")
    name = shipped_name("lin", key, _fresh(), 1)
    data = (folder / "runs" / name).read_bytes()
    (folder / "runs" / "manifest.json").write_text(json.dumps(
        {name: {"sha256": hashlib.sha256(data).hexdigest(), "notebook": "x"}}))
    return folder / "runs" / name


def test_a_shipped_run_loads_instead_of_training(shipped, monkeypatch):
    path = _ship(shipped, monkeypatch, {"steps": 5})
    calls = []
    model, history = load_or_train("lin", (m := _fresh()), _fit(m, calls), {"steps": 5}, threads=1)
    assert calls == [] and history["shipped"] and history["cached"] and history["loss"] == [0.5]
    torch.testing.assert_close(model.weight, _fresh().weight + 1.0, rtol=0, atol=0)
    assert not list((shipped / "cache").glob("lin-*.pt")), "a shipped run is not copied to the cache"
    assert same_run(path, path) == ""


@pytest.mark.parametrize("change", ["key", "init", "threads", "switch off", "no cache", "bad sha"])
def test_otherwise_it_trains(change, shipped, monkeypatch):
    path = _ship(shipped, monkeypatch, {"steps": 5})
    key, seed, threads, use_cache = {"steps": 5}, 0, 1, True
    if change == "key":
        key = {"steps": 6}
    elif change == "init":
        seed = 1
    elif change == "threads":
        threads = 2
    elif change == "switch off":
        use_shipped(False)
    elif change == "no cache":
        use_cache = False
    else:
        path.write_bytes(path.read_bytes() + b"x")
    calls = []
    with pytest.warns(UserWarning, match="not the file its manifest records") if change == "bad sha" \
            else contextlib.nullcontext():
        _, history = load_or_train("lin", (m := _fresh(seed)), _fit(m, calls), key, cache=use_cache,
                                   threads=threads)
    assert calls == [1] and "shipped" not in history


def test_the_name_does_not_depend_on_the_device_or_kernels(monkeypatch):
    a = shipped_name("lin", {"steps": 5}, _fresh(), 1)
    monkeypatch.setattr(cache, "numerics", lambda: {"capability": "other"})
    assert shipped_name("lin", {"steps": 5}, _fresh(), 1) == a
    assert shipped_name("lin", {"steps": 5}, _fresh(1), 1) != a


def test_the_switch_takes_a_bool():
    with pytest.raises(TypeError, match="use must be True or False, got"):
        use_shipped("no")


def test_the_switch_also_retrains_notebook_12s_date_models(monkeypatch):
    from helpers import experiments

    def trained(*args, **kwargs):
        raise AssertionError("trained")
    monkeypatch.setattr(experiments, "load_or_train", trained)
    monkeypatch.setitem(cache._SHIPPED, "use", False)
    with pytest.raises(AssertionError, match="trained"):
        experiments.train_date_model("gpt", seed=0, device="cpu")
    monkeypatch.setitem(cache._SHIPPED, "use", True)
    assert experiments.train_date_model("gpt", seed=0, device="cpu")[1]["shipped"]
