"""A notebook saved from JupyterLab stays clean: the Jupyter server that `python3 tasks.py lab`
starts reads the config `tasks.py` writes into the environment (``write_server_config``), whose
pre-save hook (tools/nbtools.py ``clean_on_save``) strips what tests/test_notebook_hygiene.py
forbids. Here a real Jupyter server is started with that config, a notebook carrying what
JupyterLab writes (``language_info.version``, widget state, cell timings) is saved through the
server's REST contents API, as JupyterLab saves, and the saved file is checked by the hygiene tests.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import test_notebook_hygiene as hygiene
from _repo import ROOT, nbtools


def _load_tasks():
    spec = importlib.util.spec_from_file_location("tasks_for_lab_save", ROOT / "tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tasks = _load_tasks()
TOKEN = "test-lab-save-token"

# What JupyterLab sends when it saves a notebook that was opened and run (measured in a browser):
# the kernel's language_info with its patch version, widget state, per-cell timings.
DIRTY = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11.2", "mimetype": "text/x-python"},
        "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                  "version_minor": 0}},
    },
    "cells": [
        {"cell_type": "markdown", "id": "a1", "metadata": {}, "source": "# 99 · A saved notebook"},
        {"cell_type": "code", "id": "b2", "execution_count": 1, "source": "print(1)",
         "metadata": {"execution": {"iopub.execute_input": "2026-12-06T03:00:00.000Z"}, "scrolled": True},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"},
                     {"output_type": "display_data", "metadata": {},
                      "data": {"text/plain": "view", "application/vnd.jupyter.widget-view+json":
                               {"model_id": "5f3c0ffee", "version_major": 2, "version_minor": 0}}}]},
    ],
}


def _hygiene_checks(path) -> None:
    hygiene.load.cache_clear()
    hygiene.test_metadata_is_clean(path)
    hygiene.test_widget_model_ids_are_normalized(path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(port: int, method: str, path: str, body: dict | None = None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"token {TOKEN}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.loads(response.read() or b"null")


@pytest.fixture
def server(tmp_path):
    """A Jupyter server on 127.0.0.1 (token auth) whose config is what tasks.py writes."""
    prefix, root = tmp_path / "env", tmp_path / "root"
    root.mkdir()
    config = tasks.write_server_config(prefix)
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(config.parent), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    cmd = [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
           f"--ServerApp.root_dir={root}", "--allow-root"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the Jupyter server exited ({proc.returncode}):\n{proc.stdout.read()}")
            try:
                _request(port, "GET", "/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail("the Jupyter server did not answer within 120 s")
                time.sleep(0.3)
        yield port, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_notebook_saved_through_the_server_passes_the_hygiene_checks(server, tmp_path):
    port, root = server
    saved = _request(port, "PUT", "/api/contents/saved.ipynb",
                     {"type": "notebook", "format": "json", "content": copy.deepcopy(DIRTY)})
    assert saved["name"] == "saved.ipynb"
    path = root / "saved.ipynb"
    _hygiene_checks(path)
    nb = json.loads(path.read_text())
    assert nb["metadata"]["language_info"]["name"] == "python"  # the rest of the metadata is kept
    assert "".join(nb["cells"][1]["outputs"][0]["text"]) == "1\n"
    # Control: the same notebook written without the hook fails the same checks, also with only
    # the language_info.version that JupyterLab's autosave wrote into a notebook opened and run.
    unhooked = tmp_path / "unhooked.ipynb"
    unhooked.write_text(json.dumps(DIRTY))
    with pytest.raises(AssertionError, match="metadata.widgets"):
        _hygiene_checks(unhooked)
    only_version = copy.deepcopy(DIRTY)
    del only_version["metadata"]["widgets"]
    unhooked.write_text(json.dumps(only_version))
    with pytest.raises(AssertionError, match="language_info.version"):
        _hygiene_checks(unhooked)


def test_the_hook_cleans_only_notebooks():
    model = {"type": "file", "format": "text", "content": "language_info"}
    nbtools.clean_on_save(model=model, path="x.txt", contents_manager=None)
    assert model["content"] == "language_info"
    model = {"type": "notebook", "format": "json", "content": copy.deepcopy(DIRTY)}
    nbtools.clean_on_save(model=model, path="x.ipynb", contents_manager=None)
    assert "version" not in model["content"]["metadata"]["language_info"]
    assert "widgets" not in model["content"]["metadata"]
    assert "execution" not in model["content"]["cells"][1]["metadata"]


def test_setup_and_lab_write_the_server_config(tmp_path):
    path = tasks.write_server_config(tmp_path)
    assert path == tmp_path / "etc" / "jupyter" / "jupyter_server_config.py"
    text = path.read_text()
    assert "c.ContentsManager.pre_save_hook = _nbtools.clean_on_save" in text
    assert repr(str(ROOT / "tools" / "nbtools.py")) in text
    source = (ROOT / "tasks.py").read_text()
    assert "write_server_config(VENV)" in source.split("def setup()")[1].split("def lab_args")[0]
    lab = source.split('if cmd == "lab":')[1].split("return run(")[0]
    assert "write_server_config(VENV)" in lab


def test_a_print_flushed_in_pieces_is_saved_as_one_output():
    nb = {"metadata": {}, "cells": [{"cell_type": "code", "metadata": {}, "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["a\n", "b"]},
        {"output_type": "stream", "name": "stdout", "text": "\n"},
        {"output_type": "stream", "name": "stderr", "text": "w\n"},
        {"output_type": "display_data", "data": {"text/plain": ""}, "metadata": {}},
        {"output_type": "stream", "name": "stdout", "text": "c\n"}]}]}
    nbtools.clean(nb)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in nb["cells"][0]["outputs"]] == [
        ("stream", "stdout", "a\nb\n"), ("stream", "stderr", "w\n"), ("display_data", None, None),
        ("stream", "stdout", "c\n")]
