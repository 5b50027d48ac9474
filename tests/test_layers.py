"""The dependency rules of DESIGN.md, checked on the source so the layering cannot rot.

engine imports neither games nor protocol; games imports only engine (and python-chess);
nothing imports protocol except protocol.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "engine": {"games", "protocol"},
    "games": {"protocol"},
}


def imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_respects_the_layering(package: str) -> None:
    files = sorted((REPO / package).rglob("*.py"))
    assert files, f"no sources found for {package}"
    offenders = {
        str(f.relative_to(REPO)): sorted(imported_top_levels(f) & FORBIDDEN[package])
        for f in files
        if imported_top_levels(f) & FORBIDDEN[package]
    }
    assert offenders == {}


def test_no_module_shadows_python_chess() -> None:
    assert not list(REPO.glob("*/chess.py"))
