""".devcontainer/devcontainer.json (GitHub Codespaces, VS Code) is valid JSONC and sets the tutorial
up with the README's own command, with JupyterLab's port and the notebook extensions."""

from __future__ import annotations

import json
import re

import pytest
from _repo import ROOT

DEVCONTAINER = ROOT / ".devcontainer" / "devcontainer.json"


def strip_jsonc(text: str) -> str:
    """JSON with comments (`//`, `/* */`) outside strings removed; trailing commas are refused."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def readme_setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Set up and run.*?(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Set up and run' section"
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", section.group(0), re.S)
    return [line.split("#", 1)[0].strip() for b in blocks for line in b.splitlines()
            if line.split("#", 1)[0].strip()]


@pytest.fixture(scope="module")
def config() -> dict:
    return json.loads(strip_jsonc(DEVCONTAINER.read_text(encoding="utf-8")))


def test_strip_jsonc_keeps_strings():
    text = '// top\n{"url": "https://x.org/a//b", /* c */ "s": "a \\" // b"} // end'
    assert json.loads(strip_jsonc(text)) == {"url": "https://x.org/a//b", "s": 'a " // b'}


def test_sets_up_with_the_readme_command(config):
    command = config["postCreateCommand"]
    assert command in readme_setup_commands(), (
        f"postCreateCommand {command!r} is not a command of README's set-up section "
        f"{readme_setup_commands()}")
    assert command.startswith("python3 tasks.py ")


def test_python_is_one_the_tutorial_supports(config):
    m = re.search(r"python:(?:\d+-)?3\.(\d+)", config["image"])
    assert m and int(m.group(1)) >= 11, f"image {config['image']!r}: Python 3.11+ needed"


def test_forwards_jupyterlab_and_has_notebook_extensions(config):
    assert 8888 in config["forwardPorts"], "JupyterLab's default port must be forwarded"
    assert config["portsAttributes"]["8888"]["label"] == "JupyterLab"
    extensions = config["customizations"]["vscode"]["extensions"]
    assert {"ms-python.python", "ms-toolsai.jupyter"} <= set(extensions)
    interpreter = config["customizations"]["vscode"]["settings"]["python.defaultInterpreterPath"]
    assert interpreter.endswith("/.venv/bin/python"), "VS Code must use the venv tasks.py made"
