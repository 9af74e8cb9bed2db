"""Notebook 12's two date models come trained with the repository (helpers/data/pretrained): the
files are the ones recorded (sha256), hold the recipe the code trains with, load into the models
the code builds, and are what ``train_date_model`` returns unless asked to retrain. That the
recipe reproduces what they say is checked in tests/conclusions/test_nb12_gpt.py (it trains)."""

from __future__ import annotations

import hashlib
import warnings

import pytest
import torch

from helpers import experiments
from helpers.experiments import (
    DATE_RECIPE,
    SHIPPED_DATE_MODELS,
    SHIPPED_FOLDER,
    make_date_models,
    train_date_model,
)

MAX_BYTES = 1_000_000  # each file: the weights of about 0.2 M float32 parameters and a short history


@pytest.mark.parametrize("kind", list(SHIPPED_DATE_MODELS))
def test_the_shipped_file_is_the_recorded_one_and_small(kind):
    name, sha = SHIPPED_DATE_MODELS[kind]
    path = SHIPPED_FOLDER / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha, f"{path}: not the file recorded"
    assert path.stat().st_size < MAX_BYTES
    stored = torch.load(path, weights_only=True)
    assert stored["recipe"] == DATE_RECIPE and stored["model"] == kind and stored["seed"] == 0
    assert stored["threads"] == 1
    history = stored["history"]
    assert history["acc_step"] == list(range(DATE_RECIPE["eval_every"], DATE_RECIPE["steps"] + 1,
                                             DATE_RECIPE["eval_every"]))
    assert len(history["acc"]) == len(history["acc_step"])


@pytest.mark.parametrize("kind", list(SHIPPED_DATE_MODELS))
def test_train_date_model_loads_the_shipped_weights_unless_asked_to_retrain(kind, monkeypatch):
    encdec, gpt = make_date_models(0, device="cpu")
    expected = torch.load(SHIPPED_FOLDER / SHIPPED_DATE_MODELS[kind][0], weights_only=True)["state_dict"]
    monkeypatch.setattr(experiments, "load_or_train", _never_called)
    model, history = train_date_model(kind, seed=0, device="cpu")
    assert history["shipped"] and history["cached"]
    assert type(model) is type(encdec if kind == "encdec" else gpt)
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, expected[k], rtol=0, atol=0)
    with pytest.raises(AssertionError, match="would train"):
        train_date_model(kind, seed=0, device="cpu", retrain=True)
    with pytest.raises(AssertionError, match="would train"):
        train_date_model(kind, seed=1, device="cpu")  # only seed 0 is shipped


def test_a_file_that_is_not_the_recorded_one_is_not_loaded(monkeypatch, tmp_path):
    name, _ = SHIPPED_DATE_MODELS["gpt"]
    (tmp_path / name).write_bytes((SHIPPED_FOLDER / name).read_bytes() + b"changed")
    monkeypatch.setattr(experiments, "SHIPPED_FOLDER", tmp_path)
    monkeypatch.setattr(experiments, "load_or_train", _never_called)
    with warnings.catch_warnings(record=True) as caught, pytest.raises(AssertionError, match="would train"):
        warnings.simplefilter("always")
        train_date_model("gpt", seed=0, device="cpu")
    assert any("sha256" in str(w.message) for w in caught)


def test_retrain_must_be_a_bool():
    with pytest.raises(TypeError, match="retrain must be True or False"):
        train_date_model("gpt", retrain="yes")


def _never_called(*args, **kwargs):
    raise AssertionError("train_date_model would train here")


def test_smoothing_is_the_encoder_decoders_control_and_never_loads_the_shipped_file(monkeypatch):
    """``smoothing=0.0`` (notebook 12's label-smoothing control) trains: the shipped file was
    trained with 0.1; the decoder-only model has no smoothing to change."""
    seen = {}

    def record(name, model, train, key, **kwargs):
        seen.update(key)
        raise AssertionError("train_date_model would train here")

    monkeypatch.setattr(experiments, "load_or_train", record)
    with pytest.raises(AssertionError, match="would train"):
        train_date_model("encdec", seed=0, device="cpu", smoothing=0.0)
    assert seen["smoothing"] == 0.0
    with pytest.raises(ValueError, match="smoothing must be None or a number in"):
        train_date_model("gpt", smoothing=0.0)
    with pytest.raises(ValueError, match="smoothing must be None or a number in"):
        train_date_model("encdec", smoothing=1.5)


def test_the_default_smoothing_keeps_the_cache_key(monkeypatch):
    keys = []

    def record(name, model, train, key, **kwargs):
        keys.append(key)
        raise AssertionError("train_date_model would train here")

    monkeypatch.setattr(experiments, "load_or_train", record)
    with pytest.raises(AssertionError, match="would train"):
        train_date_model("encdec", seed=1, device="cpu")
    assert "smoothing" not in keys[0]  # the key of every earlier training, unchanged
