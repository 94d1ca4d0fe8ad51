"""The house's layers hold: every import between the project's files runs downwards, and none makes a circle.

Every ``import`` is read from the source (those inside functions and under ``TYPE_CHECKING`` included, since a lazy
import is still a dependency), so a new arrow upwards or a new circle fails here, naming the files. The layers are
docs/design.md's map: drivers, then core and the venue protocol, then the features, then the processes, then the
command line. A module named ``__main__`` is a ``python -m`` entry point, a command, and so sits in the command
line's layer wherever its folder is.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Each top-level package's layer, lowest first. Within a layer, packages may use each other (no circle); the
#: processes share only what lies below them.
LAYERS: dict[str, int] = {
    "drivers": 1,
    "detect": 1,
    "core": 2,
    "protocol": 2,
    "layouts": 3,
    "attendees": 3,
    "preprint": 3,
    "pretix_sync": 3,
    "webhooks": 3,
    "eventday": 3,
    "agent": 4,
    "intake": 4,
    "board": 4,
    "cli": 5,
}
PROCESSES = 4
COMMAND_LINE = 5


def modules() -> dict[str, Path]:
    """Every module of the project's packages by dotted name (a package by its own name)."""
    found = {}
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The project module an imported name lands in (the longest known prefix), None outside the project."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def _imported(module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from a import b``: b may be a module of package a, else a name in module a
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        for name in _imported(module, path):
            target = _resolve(name, known)
            if target is not None and target != module:
                graph[module].add(target)
    return graph


def layer(module: str) -> int:
    if module.rpartition(".")[2] == "__main__":
        return COMMAND_LINE
    return LAYERS[module.partition(".")[0]]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_every_package_the_project_installs_has_a_layer() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    installed = {pattern.rstrip("*") for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert installed == set(LAYERS)
    assert set(pyproject["tool"]["mypy"]["packages"]) == set(LAYERS)


def test_no_import_runs_upwards_or_between_processes() -> None:
    wrong = []
    for module, targets in sorted(import_graph().items()):
        for target in sorted(targets):
            here, there = layer(module), layer(target)
            sideways = here == there == PROCESSES and module.partition(".")[0] != target.partition(".")[0]
            if there > here or sideways:
                wrong.append(f"{module} (layer {here}) imports {target} (layer {there})")
    assert wrong == []


def test_no_import_circle() -> None:
    assert circles(import_graph()) == []


def test_the_check_sees_function_level_imports_and_circles() -> None:
    """The check itself: a lazy import upwards is an edge, and a circle through it is found."""
    graph = import_graph()
    assert "drivers.languages.brother_media" in graph["drivers.config"]  # imported inside a function there
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer("drivers.emulators.__main__") == COMMAND_LINE
