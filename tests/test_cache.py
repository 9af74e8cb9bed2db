"""helpers.cache.load_or_train: a trained model is kept on disk and loaded back bit for bit; any
change to what it was trained from trains again."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.cache import load_or_train, module_digest, module_settings, tensor_digest, train_once
from helpers.training import train_induction_model


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))


_CALLS: list = []  # what a training function that counts its calls appends to (a global)


@pytest.fixture(autouse=True)
def _no_calls_yet():
    _CALLS.clear()


def _fresh(seed=0):
    torch.manual_seed(seed)
    return nn.Linear(3, 2)


def _train(model, steps=5, calls=None):
    def fit():
        if calls is not None:
            calls.append(torch.get_num_threads())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            loss = model(torch.ones(4, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return {"loss": [loss.item()]}
    return fit


def test_second_call_loads_the_same_tensors_without_training():
    calls = []
    a, hist_a = load_or_train("lin", (m := _fresh()), _train(m, calls=calls), {"steps": 5})
    b, hist_b = load_or_train("lin", (m := _fresh()), _train(m, calls=calls), {"steps": 5})
    assert len(calls) == 1, "the second call must not train"
    assert (hist_a["cached"], hist_b["cached"]) == (False, True)
    assert hist_a["loss"] == hist_b["loss"]
    for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y)
    assert not b.training, "the model comes back in eval mode"


@pytest.mark.parametrize("change", ["key", "init", "name"])
def test_a_change_trains_again(change):
    calls = []
    load_or_train("lin", (m := _fresh()), _train(m, calls=calls), {"steps": 5})
    name = "other" if change == "name" else "lin"
    key = {"steps": 6} if change == "key" else {"steps": 5}
    m = _fresh(seed=1 if change == "init" else 0)
    _, hist = load_or_train(name, m, _train(m, calls=calls), key)
    assert hist["cached"] is False and len(calls) == 2


class Scaled(nn.Module):
    """A linear layer whose output is multiplied by a buffer that is not in its state_dict."""

    def __init__(self, scale: float, identity: bool = False):
        super().__init__()
        self.lin = _fresh()
        self.extra = nn.Identity() if identity else nn.Tanh()
        self.register_buffer("scale", torch.tensor(scale), persistent=False)

    def forward(self, x):
        return self.extra(self.lin(x)) * self.scale


@pytest.mark.parametrize("other", [Scaled(2.0), Scaled(1.0, identity=True)],
                         ids=["another non-persistent buffer", "another submodule, same weights"])
def test_models_with_the_same_weights_but_not_the_same_function_train_apart(other):
    """The key covers what a state_dict misses: structure and non-persistent buffers."""
    calls = []
    first = Scaled(1.0)
    assert first.state_dict().keys() == other.state_dict().keys()
    load_or_train("scaled", first, _train(first, calls=calls), {"steps": 5})
    _, hist = load_or_train("scaled", other, _train(other, calls=calls), {"steps": 5})
    assert hist["cached"] is False and len(calls) == 2
    again = Scaled(1.0)
    _, hist = load_or_train("scaled", again, _train(again, calls=calls), {"steps": 5})
    assert hist["cached"] is True and len(calls) == 2


class Heads(nn.Module):
    """Weights that do not depend on the number of heads (as in multi-head attention)."""

    def __init__(self, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(3, 2)
        self.num_heads = num_heads

    def forward(self, x):  # (B, 3) -> (B, 2): a softmax over each head's share of the outputs
        return self.lin(x).unflatten(-1, (self.num_heads, -1)).softmax(-1).flatten(-2)


def test_models_that_differ_only_in_a_setting_train_apart():
    """One head or two: the same weights and the same repr, another function."""
    one, two = Heads(1), Heads(2)
    assert repr(one) == repr(two) and all(torch.equal(a, b) for a, b in
                                          zip(one.state_dict().values(), two.state_dict().values(), strict=True))
    assert module_digest(one) != module_digest(two)
    calls = []
    load_or_train("heads", one, _train(one, calls=calls), {"steps": 5})
    _, hist = load_or_train("heads", two, _train(two, calls=calls), {"steps": 5})
    assert hist["cached"] is False and len(calls) == 2


def test_the_translator_with_one_head_is_not_the_translator_with_four():
    from helpers.translator import make_translator

    assert module_digest(make_translator(20, num_heads=1)) != module_digest(make_translator(20))
    assert module_digest(make_translator(20)) == module_digest(make_translator(20))


def test_a_modules_mode_is_not_a_setting():
    m = Heads(1)
    assert module_digest(m) == module_digest(Heads(1).eval())
    assert all("training" not in settings for _, _, settings in module_settings(m))


def test_no_cache_never_writes(tmp_path):
    m = _fresh()
    _, hist = load_or_train("lin", m, _train(m), {"steps": 5}, cache=False)
    assert hist["cached"] is False and not list(tmp_path.iterdir())


def test_threads_are_pinned_while_training_and_restored():
    before = torch.get_num_threads()
    calls = []
    m = _fresh()
    load_or_train("lin", m, _train(m, calls=calls), {"steps": 5}, threads=1)
    assert calls == [1] and torch.get_num_threads() == before


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_threads_are_refused(bad):
    m = _fresh()
    with pytest.raises(ValueError, match="threads must be None or an int >= 1"):
        load_or_train("lin", m, _train(m), {}, threads=bad)


def test_digest_sees_values_shapes_and_dtypes():
    x = torch.arange(6.0)
    assert tensor_digest(x) == tensor_digest(x.clone())
    assert tensor_digest(x) != tensor_digest(x + 1)
    assert tensor_digest(x) != tensor_digest(x.reshape(2, 3))
    assert tensor_digest(x) != tensor_digest(x.double())
    assert tensor_digest(torch.tensor(True)) != tensor_digest(torch.tensor(False))


def test_induction_model_from_the_cache_equals_a_fresh_training():
    kw = dict(num_layers=1, steps=6, eval_every=3, d_model=16)
    fresh, hist = train_induction_model(**kw)
    first, hist1 = train_induction_model(**kw, cache=True)
    again, hist2 = train_induction_model(**kw, cache=True)
    assert "cached" not in hist and (hist1["cached"], hist2["cached"]) == (False, True)
    assert hist1["repeated_half"] == hist2["repeated_half"] == hist["repeated_half"]
    for x, y in zip(fresh.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.equal(x, y)


def _fit_linear(model, data, steps, lr=0.1, calls=None):
    if calls is not None:
        calls.append(1)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = model(data).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"loss": [loss.item()]}


class Vocab:
    def __init__(self, words):
        self.itos = list(words)


@pytest.mark.parametrize(("change", "trains_again"), [
    ({}, False),
    ({"steps": 4}, True),
    ({"lr": 0.2}, True),
    ({"data": torch.zeros(4, 3)}, True),
    ({"vocab": Vocab("abd")}, True),
])
def test_train_once_is_keyed_by_every_argument(change, trains_again):
    # The counter is a global: a function is keyed by the values its closure holds (a list it
    # appends to would give every call a new key)
    calls = _CALLS
    base = {"data": torch.ones(4, 3), "steps": 3, "lr": 0.1, "vocab": Vocab("abc")}
    def fit(m, data, steps, lr, vocab):
        return _fit_linear(m, data, steps, lr, _CALLS)

    hist = train_once(fit, _fresh(), base["data"], base["steps"], lr=base["lr"], vocab=base["vocab"])
    assert hist["cached"] is False
    new = {**base, **change}
    model = _fresh()
    again = train_once(fit, model, new["data"], new["steps"], lr=new["lr"], vocab=new["vocab"])
    assert again["cached"] is (not trains_again) and len(calls) == 1 + trains_again
    if not trains_again:
        assert again["loss"] == hist["loss"] and not model.training


def test_train_once_equals_training_directly():
    direct = _fresh()
    hist = _fit_linear(direct, torch.ones(4, 3), 3)
    first, second = _fresh(), _fresh()
    train_once(_fit_linear, first, torch.ones(4, 3), 3)
    h2 = train_once(_fit_linear, second, torch.ones(4, 3), 3)
    assert h2["cached"] and h2["loss"] == hist["loss"]
    for x, y in zip(direct.state_dict().values(), second.state_dict().values(), strict=True):
        assert torch.equal(x, y)


# ---------------------------------------------------------------- caches that cannot be tricked


def _entry(folder, prefix):
    (path,) = [p for p in folder.iterdir() if p.name.startswith(prefix) and p.suffix == ".pt"]
    return path


@pytest.mark.parametrize("corrupt, why", [
    (lambda p: p.write_bytes(b""), "it is empty"),
    (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "truncated"),
    (lambda p: p.write_bytes(b"not a torch file at all" * 4), "truncated or was not written by torch.save"),
    (lambda p: torch.save({"weights": 1}, p), "no 'state_dict'"),
    (lambda p: torch.save({"state_dict": {"weight": torch.zeros(7)}, "history": {}}, p),
     "do not fit this model"),
])
def test_an_unusable_cache_file_is_reported_by_path_and_trained_again(tmp_path, corrupt, why):
    """An empty, truncated or foreign file once raised EOFError/UnpicklingError (advising
    weights_only=False) or KeyError, naming no file. Now: a warning with the path, and training."""
    calls = _CALLS

    def fit(model, steps):
        return _fit_linear(model, torch.ones(4, 3), steps, calls=_CALLS)

    first = train_once(fit, _fresh(), 3)
    path = _entry(tmp_path, "fit-")
    corrupt(path)
    with pytest.warns(UserWarning, match=rf"cache file {path} cannot be used \(.*{why}.*\): "
                                         r"training again") as info:
        again = train_once(fit, _fresh(), 3)
    assert "weights_only" not in str(info[0].message)
    assert again["cached"] is False and again["loss"] == first["loss"] and len(calls) == 2
    third = train_once(fit, _fresh(), 3)  # the entry was replaced: it loads
    assert third["cached"] is True and len(calls) == 2


def test_an_unwritable_cache_folder_trains_without_the_cache(tmp_path, monkeypatch):
    """FileExistsError / PermissionError from the cache folder once stopped training. (The
    folder is a regular file here: chmod cannot stop root, who runs the CI containers.)"""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(blocker))
    calls = []
    with pytest.warns(UserWarning, match=rf"cache folder {blocker} cannot be written .*: training "
                                         r"'_fit_linear' without the cache"):
        hist = train_once(_fit_linear, _fresh(), torch.ones(4, 3), 3, calls=calls)
    assert hist["cached"] is False and len(calls) == 1 and blocker.read_text() == "x"


def test_a_failed_write_is_reported_and_the_model_kept(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", refuse)
    model = _fresh()
    with pytest.warns(UserWarning, match=r"cannot be written \(No space left on device\): the model "
                                         r"is trained but not kept"):
        hist = train_once(_fit_linear, model, torch.ones(4, 3), 3)
    assert hist["cached"] is False and not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("name", ["../outside", "a/b", "/abs", "..\\x", "c:x", "", " lm", 3, None])
def test_entry_names_stay_inside_the_cache_folder(tmp_path, name):
    """load_or_train("../outside", ...) once wrote next to the cache folder, "a/b" into a
    sub-folder of it."""
    m = _fresh()
    with pytest.raises((ValueError, TypeError), match=r"load_or_train: name must be"):
        load_or_train(name, m, _train(m), {})
    assert not list(tmp_path.iterdir())


def test_names_that_files_can_hold_are_kept(tmp_path):
    m = _fresh()
    _, hist = load_or_train("gpt-RoPE + QK-norm", m, _train(m), {})  # notebook 13's names
    assert hist["cached"] is False and _entry(tmp_path, "gpt-RoPE + QK-norm-")


def test_train_once_makes_a_function_name_safe(tmp_path):
    def fit(model, steps):
        return _fit_linear(model, torch.ones(4, 3), steps)

    fit.__name__ = "../outside"
    train_once(fit, _fresh(), 3)
    train_once(lambda model, steps: _fit_linear(model, torch.ones(4, 3), steps), _fresh(), 3)
    names = sorted(p.name.split("-")[0] for p in tmp_path.iterdir() if p.suffix == ".pt")
    assert names == [".._outside", "_lambda_"]
    assert not list(tmp_path.parent.glob("outside*"))


@pytest.mark.parametrize("call, error, message", [
    (lambda: train_once(None, _fresh()), TypeError, r"train_once: train must be a training function"),
    (lambda: train_once(_fit_linear, None), TypeError, r"train_once: model must be an nn.Module"),
    (lambda: train_once(lambda m: None, _fresh()), TypeError,
     r"load_or_train: train\(\) must return the history as a dict, got None"),
])
def test_train_once_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------- issue 33: a function is keyed by what it computes


def _fit_steps(model, steps, lr=0.1):
    return _fit_linear(model, torch.ones(4, 3), steps)


def test_a_redefined_function_of_the_same_name_trains_again():
    """Issue 33: the key was the function's __qualname__, so a notebook cell that redefined `fit`
    and ran again got the old function's weights (cached: True)."""
    def fit(model, steps):
        return _fit_linear(model, torch.ones(4, 3), steps)

    first = train_once(fit, _fresh(), 3)

    def fit(model, steps):  # noqa: F811 - the learner edits the cell and runs it again
        return _fit_linear(model, 2 * torch.ones(4, 3), steps)

    second = train_once(fit, _fresh(), 3)
    assert first["cached"] is False and second["cached"] is False
    assert second["loss"] != first["loss"]
    assert train_once(fit, _fresh(), 3)["cached"] is True  # the same function again: loaded


def test_two_lambdas_and_two_closures_of_one_name_get_their_own_entries():
    one = train_once(lambda model, steps: _fit_linear(model, torch.ones(4, 3), steps), _fresh(), 3)
    two = train_once(lambda model, steps: _fit_linear(model, -torch.ones(4, 3), steps), _fresh(), 3)
    assert one["cached"] is False and two["cached"] is False

    def make(scale):
        def fit(model, steps):
            return _fit_linear(model, scale * torch.ones(4, 3), steps)
        return fit

    a, b = train_once(make(1.0), _fresh(), 3), train_once(make(3.0), _fresh(), 3)
    assert a["cached"] is False and b["cached"] is False and a["loss"] != b["loss"]
    assert train_once(make(3.0), _fresh(), 3) == {**b, "cached": True}


def test_a_function_can_be_keyed_by_an_explicit_version():
    def fit(model, steps):
        return _fit_linear(model, torch.ones(4, 3), steps)

    fit.cache_version = 1
    assert train_once(fit, _fresh(), 3)["cached"] is False
    fit.cache_version = 2
    assert train_once(fit, _fresh(), 3)["cached"] is False
    assert train_once(fit, _fresh(), 3)["cached"] is True


def test_a_history_with_numpy_arrays_loads_back():
    """Issue 33: such a history was saved, never loaded (weights_only), and every call trained
    again with a warning that called the file truncated."""
    np = pytest.importorskip("numpy")

    def fit(model, steps):
        hist = _fit_linear(model, torch.ones(4, 3), steps)
        return {**hist, "curve": np.arange(3.0), "best": np.float32(0.5), "nested": [np.ones(2, int)]}

    first = train_once(fit, _fresh(), 3)
    again = train_once(fit, _fresh(), 3)
    assert first["cached"] is False and again["cached"] is True
    assert isinstance(again["curve"], np.ndarray) and np.array_equal(again["curve"], first["curve"])
    assert again["best"] == np.float32(0.5) and again["best"].dtype == np.float32
    assert again["nested"][0].dtype == first["nested"][0].dtype


def test_a_history_the_cache_cannot_hold_is_refused_at_save(tmp_path):
    def fit(model, steps):
        return {**_fit_linear(model, torch.ones(4, 3), steps), "when": object()}

    with pytest.warns(UserWarning, match=r"is not written: history\['when'\] is a object: a cached "
                                         r"history holds numbers"):
        hist = train_once(fit, _fresh(), 3)
    assert hist["cached"] is False and not list(tmp_path.glob("*.pt"))


def test_a_file_holding_other_objects_is_not_called_truncated(tmp_path):
    from helpers.cache import _read_entry

    np = pytest.importorskip("numpy")
    path = tmp_path / "x.pt"
    torch.save({"state_dict": _fresh().state_dict(), "history": {"curve": np.arange(3)}}, path)
    stored, why = _read_entry(path, _fresh(), "cpu")
    assert stored is None and why.startswith("it holds an object that is not a tensor or a plain value")
