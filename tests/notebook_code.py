"""The code a notebook defines, run in a test: a conclusions test checks the notebook's own model,
training loop and measurement, not a copy that could drift away from it.

``notebook_definitions("05_multi_head_attention", "TwoRelationModel", "train_two_relations")``
runs the notebook's import cell (its first code cell after the Colab cell), then only the top-level
statements of its code cells that define one of the given names (a ``def``, a ``class``, an
assignment or an import), in the notebook's order, and returns the namespace. Nothing else of the notebook runs:
no training, no figure. A name the notebook does not define is an error, so a renamed function
fails the test instead of silently testing nothing.
"""

from __future__ import annotations

import ast

from _repo import ROOT, load, source

__all__ = ["notebook_definitions"]


def _defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def notebook_definitions(notebook: str, *names: str) -> dict:
    """The namespace after the import cell and the definitions of ``names`` in notebooks/<notebook>.ipynb."""
    path = ROOT / "notebooks" / f"{notebook.removesuffix('.ipynb')}.ipynb"
    cells = [source(c) for c in load(path)["cells"] if c["cell_type"] == "code"]
    imports, body = cells[1], cells[2:]  # cells[0] is the Colab set-up cell
    namespace: dict = {"__name__": f"notebook_{path.stem}"}
    exec(compile(imports, f"{path.name} (imports)", "exec"), namespace)
    wanted = set(names)
    found = {n for node in ast.parse(imports).body for n in _defined_names(node)}
    for i, cell in enumerate(body):
        tree = ast.parse(cell)
        chosen = [node for node in tree.body if _defined_names(node) & wanted]
        if chosen:
            found |= {n for node in chosen for n in _defined_names(node)}
            module = ast.Module(body=chosen, type_ignores=[])
            exec(compile(module, f"{path.name} (code cell {i + 2})", "exec"), namespace)
    missing = wanted - found
    if missing:
        raise LookupError(f"{path.name} defines no {sorted(missing)}: was it renamed?")
    return namespace
