"""The hot modules run compiled, and never from a build older than their sources.

``pip install`` compiles the modules that ``setup.py`` lists with mypyc unless
``BRUDNO_PURE_PYTHON`` is set.  An editable install leaves the extensions beside the sources,
where Python prefers them to the ``.py``: an edit to a compiled module does nothing until the
next ``pip install -e .``.  These tests catch both ways of running other code than one thinks:
a build that silently stayed pure Python, and an extension older than its source.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import sys
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from tests.support.paths import REPO

PURE = os.environ.get("BRUDNO_PURE_PYTHON", "") not in ("", "0")


def _compiled_modules() -> list[str]:
    """``COMPILED_MODULES`` from ``setup.py`` (loaded as a module: its guard skips setup())."""
    spec = importlib.util.spec_from_file_location("brudno_setup", REPO / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    modules: list[str] = setup.COMPILED_MODULES
    return modules


COMPILED = _compiled_modules()


def test_the_compiled_modules_exist_and_include_the_hot_path() -> None:
    assert all((REPO / path).is_file() for path in COMPILED)
    for hot in ("engine/search.py", "games/chess_game/evaluation.py", "games/connect4/negamax.py"):
        assert hot in COMPILED


@pytest.mark.parametrize("path", COMPILED)
def test_module_runs_compiled_unless_the_install_said_pure(path: str) -> None:
    name = path.removesuffix(".py").replace("/", ".")
    origin = Path(importlib.import_module(name).__file__ or "")
    if PURE:
        assert origin.suffix == ".py", f"{name} runs from {origin} with BRUDNO_PURE_PYTHON set"
    else:
        assert origin.name.endswith(tuple(EXTENSION_SUFFIXES)), (
            f"{name} runs from {origin}, not compiled: reinstall (pip install -e .), or set "
            "BRUDNO_PURE_PYTHON=1 for both the install and the tests"
        )


@pytest.mark.parametrize("path", COMPILED)
def test_no_extension_is_older_than_its_source(path: str) -> None:
    """Each module's extension is a shim; the code of all of them is in one shared library
    (``<hash>__mypyc``) that a rebuild always renews, while an unchanged shim may be kept."""
    source = REPO / path
    shims = [source.with_name(source.stem + suffix) for suffix in EXTENSION_SUFFIXES]
    shared = [lib for suffix in EXTENSION_SUFFIXES for lib in REPO.glob(f"*__mypyc{suffix}")]
    for shim in (shim for shim in shims if shim.exists()):
        built = max(lib.stat().st_mtime for lib in [shim, *shared])
        assert built >= source.stat().st_mtime, (
            f"{shim.name} is older than {path} and shadows it: "
            "reinstall (pip install -e .) to rebuild it"
        )


def _third_party_imports(paths: list[str]) -> set[str]:
    """Top-level names of what the modules import outside the standard library and the
    project, following the project's own imports as mypy does when it type-checks them."""
    project = {"brudno", "engine", "games", "protocol"}
    seen: set[Path] = set()
    todo = [REPO / path for path in paths]
    found: set[str] = set()
    while todo:
        file = todo.pop()
        if file in seen or not file.exists():
            continue
        seen.add(file)
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module and not node.level
                else []
            )
            for name in names:
                top = name.split(".")[0]
                if top in project:
                    base = REPO.joinpath(*name.split("."))
                    todo += [base.with_suffix(".py"), base / "__init__.py"]
                elif top not in sys.stdlib_module_names:
                    found.add(top)
    return found


def test_the_build_environment_holds_what_the_compiled_modules_import() -> None:
    """mypyc type-checks before it compiles, in pip's isolated build environment, where the
    project's own dependencies are not installed yet: each library the compiled modules
    import must be a build requirement too (without python-chess there, the build failed on
    a fresh machine)."""
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["build-system"][
        "requires"
    ]
    names = {re.split(r"[<>=!~;\[ ]", requirement)[0] for requirement in requires}
    assert _third_party_imports(COMPILED) <= names
