"""The layout of ``helpers`` (CONTRIBUTING.md, "Where things live"), enforced: every module imports
only modules of its own layer or of a layer below, and there is no import cycle.

Read from the source (every ``import`` statement, also those inside functions), so a lazy import
inside a function counts like one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parent.parent / "helpers"

# Layers, lowest first. A module may import from its own layer and the layers below it, never above.
LAYERS = {
    "base": ["_checks", "_inline", "_progress", "env", "cache", "claims", "diagrams"],
    "data": ["data"],
    "blocks": ["attention", "positional", "layers", "transformer", "decoding", "efficient",
               "sampling", "modern", "gpt", "induction", "llm"],
    "training": ["training", "translator", "experiments"],
    "figures": ["plots"],
    "interactive": ["widgets", "exercises"],
}
LEVEL = {top: i for i, (_, tops) in enumerate(LAYERS.items()) for top in tops}
# What may draw or show controls: only the figure and interactive layers, and these two, which
# draw nothing: _inline chooses matplotlib's inline backend in a kernel, env reports versions.
GUI = ("matplotlib", "ipywidgets")
GUI_ALLOWED = {"helpers._inline", "helpers.env"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(HELPERS.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Absolute names of everything ``path`` imports (helpers modules and third-party packages)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            if node.module is None:  # from . import x: x is a module of the package
                found |= {f"{prefix}.{alias.name}" for alias in node.names}
            else:
                found.add(prefix)
    return found


MODULES = {module_name(p): p for p in sorted(HELPERS.rglob("*.py"))}
GRAPH = {m: {i for i in imports_of(p) if i.startswith("helpers.") or i == "helpers"}
         for m, p in MODULES.items()}


def top(name: str) -> str:
    """helpers.data.dates -> data; helpers.plots -> plots."""
    return name.split(".")[1] if "." in name else ""


def test_every_module_has_a_layer():
    unplaced = sorted({top(m) for m in MODULES if m != "helpers"} - set(LEVEL))
    assert not unplaced, f"place these helpers modules in a layer of LAYERS: {unplaced}"


@pytest.mark.parametrize("module", [m for m in MODULES if m != "helpers"])
def test_imports_go_down_only(module):
    mine = LEVEL[top(module)]
    upward = sorted(i for i in GRAPH[module] if i != "helpers" and LEVEL[top(i)] > mine)
    assert not upward, (f"{module} (layer {list(LAYERS)[mine]}) imports from a layer above it: "
                        f"{upward}; move the code, or the import, down the layers")
    assert "helpers" not in GRAPH[module], f"{module} imports the package root: import the module it needs"


@pytest.mark.parametrize("module", [m for m in MODULES if LEVEL.get(top(m), 99) < LEVEL["plots"]
                                    and m not in GUI_ALLOWED])
def test_blocks_never_draw(module):
    drawing = sorted(i for i in imports_of(MODULES[module]) if i.split(".")[0] in GUI)
    assert not drawing, f"{module} imports {drawing}: figures go in helpers.plots, widgets in helpers.widgets"


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the directed graph ``edges`` (as a list that starts and ends at one node), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_cycle():
    def resolve(name: str) -> str | None:  # an import of a name inside a module -> that module
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        return name or None

    edges = {m: {r for i in deps if (r := resolve(i)) and r != m} for m, deps in GRAPH.items()}
    # a package's __init__ importing its own submodules is how packages work, not a cycle
    edges = {m: {d for d in ds if not d.startswith(m + ".")} for m, ds in edges.items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checks_can_fail(tmp_path):
    """The rules are not vacuous: an upward import and a cycle are found."""
    bad = tmp_path / "helpers"
    (bad / "plots").mkdir(parents=True)
    (bad / "__init__.py").write_text("")
    (bad / "attention.py").write_text("from .plots import x\nimport matplotlib.pyplot\n")
    (bad / "plots" / "__init__.py").write_text("from ..attention import y\n")
    global HELPERS
    saved = HELPERS
    try:
        HELPERS = bad
        deps = imports_of(bad / "attention.py")
        assert "helpers.plots" in deps and "matplotlib.pyplot" in deps
        assert "helpers.attention" in imports_of(bad / "plots" / "__init__.py")
    finally:
        HELPERS = saved
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
