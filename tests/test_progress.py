"""The progress line of training (helpers._progress): shown in a notebook while a model trains,
blank when it ends, and the same stored output whether the model was trained or loaded from the
cache, so nbval's strict comparison holds for a notebook saved either way."""

from __future__ import annotations

import textwrap
from queue import Empty

import torch
from jupyter_client.manager import start_new_kernel

from helpers._progress import BLANK, line, progress
from helpers.cache import load_or_train
from helpers.training import train_loop

CELL = textwrap.dedent("""
    import torch
    from helpers.cache import load_or_train
    from helpers.training import train_loop
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    x, y = torch.randn(64, 4), torch.randn(64, 1)

    def train():
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = iter(lambda: (x, y), None)
        return train_loop(model, opt, batches, lambda b: ((model(b[0]) - b[1]) ** 2).mean(), steps=400,
                          peak_lr=0.1, warmup_steps=10, log_every=100)

    import helpers._progress as p
    p.MIN_INTERVAL_S = 0.0  # draw every step, so that the test sees updates however fast it trains
    model, history = load_or_train("progress-test", model, train, {"test": 1})
    print("cached" if history["cached"] else "trained")
""")


def _run(kc, code: str) -> list[dict]:
    """Execute ``code``; the iopub messages it caused, in order."""
    msg_id = kc.execute(code)
    messages = []
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=120)
        except Empty as err:
            raise AssertionError("the kernel stopped answering") from err
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return messages
        messages.append(msg)


def _stored(messages: list[dict]) -> list[tuple]:
    """What nbval compares: display_data, execute_result and stream outputs (updates are not outputs)."""
    return [(m["msg_type"], m["content"].get("data"), m["content"].get("text")) for m in messages
            if m["msg_type"] in ("display_data", "execute_result", "stream", "error")]


def test_a_notebook_shows_progress_while_training_and_stores_the_same_output_when_loading(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        trained, loaded = _run(kc, CELL), _run(kc, CELL)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    errors = [m["content"] for m in trained + loaded if m["msg_type"] == "error"]
    assert not errors, errors
    updates = [m["content"]["data"]["text/plain"] for m in trained if m["msg_type"] == "update_display_data"]
    assert any("step 200/400" in u and "loss" in u for u in updates), updates[:3]
    assert updates[-1] == BLANK["text/plain"]  # gone when training ends
    assert _stored(trained)[0] == ("display_data", BLANK, None)
    assert [s for s in _stored(trained) if s[0] != "stream"] == [s for s in _stored(loaded) if s[0] != "stream"]
    assert [s[2] for s in _stored(trained) if s[0] == "stream"] == ["trained\n"]
    assert [s[2] for s in _stored(loaded) if s[0] == "stream"] == ["cached\n"]
    assert not [m for m in loaded if m["msg_type"] == "update_display_data" and m["content"]["data"] != BLANK]


def test_outside_a_notebook_nothing_is_shown(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTENTION_TUTORIAL_CACHE", str(tmp_path))
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = iter(lambda: torch.ones(4, 2), None)
    load_or_train("quiet", model, lambda: train_loop(model, opt, batches, lambda b: model(b).pow(2).mean(),
                                                     steps=5, peak_lr=0.1, warmup_steps=1, log_every=5), {})
    assert capsys.readouterr() == ("", "")


def test_nested_progress_shares_the_outer_line():
    with progress("outer") as outer, progress("inner") as inner:
        assert inner is outer


def test_the_line_says_step_loss_and_time():
    assert line("translator", 1000, 2000, 0.43214, 12.4, width=10) == (
        "training translator  [#####.....]  step 1,000/2,000  loss 0.4321  12 s")
    assert line("m", 2000, 2000, 0.1, 0.0, width=4).startswith("training m  [####]  step 2,000/2,000")
