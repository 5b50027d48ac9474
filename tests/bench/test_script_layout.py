"""Every script in bench/ and scripts/ defines all of its code before its ``__main__`` guard.

A definition after the guard exists when another script imports the module, but not when the
script itself runs: ``match_stockfish.py`` once failed that way at its first match, while the
tests that import it passed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO

SCRIPTS = sorted([*(REPO / "bench").glob("*.py"), *(REPO / "scripts").glob("*.py")])


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    left = node.test.left
    return isinstance(left, ast.Name) and left.id == "__name__"


def test_the_scripts_are_found() -> None:
    assert len(SCRIPTS) >= 20


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_the_main_guard_is_the_last_statement(script: Path) -> None:
    body = ast.parse(script.read_text(), filename=str(script)).body
    guards = [index for index, node in enumerate(body) if _is_main_guard(node)]
    assert guards in ([], [len(body) - 1]), f"{script.name}: code after its __main__ guard"
