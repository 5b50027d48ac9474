"""The dependency rules of DESIGN.md, checked on the source so the layering cannot rot.

* Dependencies point down only: brudno → protocol → games → engine.  engine imports none of
  the others; games imports only engine (and python-chess); protocol never imports brudno.
* No import circles anywhere, not even inside a package: the graph of our modules (every
  import, also those inside functions or ``if TYPE_CHECKING``) has no cycle.  ``from pkg
  import sub`` depends on ``pkg`` itself as well as on ``pkg.sub`` (it reads the package's
  namespace), so a submodule that imports its siblings through its own package, whose
  ``__init__`` imports that submodule, is a circle too.
* Only brudno/ parses command lines, installs signal handlers and prints to a terminal.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import REPO

PACKAGES = ("brudno", "protocol", "games", "engine")
"""Top to bottom: each may import only those after it."""

APPLICATION_ONLY = {"argparse", "signal"}
"""Modules only the application may import (command lines, signal handlers)."""


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(root: Path = REPO, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    return {
        module_name(path, root): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
    }


def imports(path: Path, root: Path = REPO) -> Iterator[tuple[str, list[str]]]:
    """Every import as (module, names imported from it); relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, [alias.name for alias in node.names]


def module_graph(root: Path = REPO, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Edges from each of our modules to each of ours it imports: ``from a import b`` is an
    edge to ``a`` (its namespace is read, so its ``__init__`` must have run) and, when
    ``a.b`` is a module, to ``a.b`` too."""
    known = sources(root, packages)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for target, names in imports(path, root):
            graph[name].update(f"{target}.{n}" for n in names if f"{target}.{n}" in known)
            if target in known:
                graph[name].add(target)
            elif target.split(".")[0] in packages:
                pytest.fail(f"{name} imports {target}, which is not one of our modules")
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing
    itself (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return found


def test_dependencies_point_down_only() -> None:
    offenders = []
    for name, targets in module_graph().items():
        level = PACKAGES.index(name.split(".")[0])
        offenders += [
            f"{name} -> {target}"
            for target in targets
            if PACKAGES.index(target.split(".")[0]) < level
        ]
    assert offenders == []


def test_games_import_only_the_engine_and_python_chess() -> None:
    # mypy_extensions and librt are the others: i64 types the compiled bitboard code (an int
    # when not compiled) and librt's vec holds its tables; they bring no chess of their own.
    allowed_third_party = {"chess", "librt", "mypy_extensions"}
    offenders = []
    for name, path in sources().items():
        if not name.startswith("games"):
            continue
        for target, _ in imports(path):
            top = target.split(".")[0]
            if top in PACKAGES or top in allowed_third_party or top == "__future__":
                continue
            if top not in _stdlib():
                offenders.append(f"{name} -> {target}")
    assert offenders == []


def _stdlib() -> frozenset[str]:
    import sys  # noqa: PLC0415 - only this check needs it

    return frozenset(sys.stdlib_module_names)


def test_no_import_circles_anywhere() -> None:
    assert cycles(module_graph()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    """The check above must be able to fail: a two-module circle and a self-import."""
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"d"}}
    assert sorted(cycles(graph)) == [["a", "b"], ["d"]]


def test_a_submodule_importing_through_its_own_package_is_a_circle(tmp_path: Path) -> None:
    """``pkg/__init__.py`` imports ``pkg.a``, which takes its sibling ``b`` from ``pkg``'s
    namespace: a circle through the package, though no module names another twice."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.a import A\n")
    (package / "a.py").write_text("from pkg import b\nA = b.B\n")
    (package / "b.py").write_text("B = 1\n")
    assert cycles(module_graph(tmp_path, ("pkg",))) == [["pkg", "pkg.a"]]
    (package / "a.py").write_text("from pkg.b import B as A\n")
    assert cycles(module_graph(tmp_path, ("pkg",))) == []


@pytest.mark.parametrize("package", ["protocol", "games", "engine"])
def test_only_the_application_parses_argv_installs_signals_or_prints(package: str) -> None:
    offenders = []
    for path in sorted((REPO / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = str(path.relative_to(REPO))
        for target, _ in imports(path):
            if target.split(".")[0] in APPLICATION_ONLY:
                offenders.append(f"{where} imports {target}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "print"
            ):
                offenders.append(f"{where}:{node.lineno} calls print")
    assert offenders == []


def test_no_module_shadows_python_chess() -> None:
    assert not [p for p in REPO.rglob("chess.py") if ".git" not in p.parts]
