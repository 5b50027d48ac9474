"""The option table is the one declaration: the real engine's ``uci`` listing is generated
from it (names, types, defaults, ranges, order), every name is an :class:`OptionName`, and
the session reaches games' files (books, tablebases) only through ``Variant`` capabilities."""

from __future__ import annotations

import ast
import subprocess

from games.registry import GAMES
from protocol.uci.engine import declared_elo_scale, option_table
from protocol.uci.formatting import option_line
from protocol.uci.options import Button, OptionName
from tests.support.paths import REPO


def test_the_uci_listing_of_the_real_engine_is_the_table(brudno: list[str]) -> None:
    table = option_table(list(GAMES), declared_elo_scale())
    done = subprocess.run(
        [*brudno, "uci"],
        check=True,
        input="uci\nquit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    listed = [line for line in done.stdout.splitlines() if line.startswith("option ")]
    assert listed == [option_line(declared.spec) for declared in table]


def test_every_option_is_named_by_the_enum_once() -> None:
    names = [declared.spec.name for declared in option_table(list(GAMES), declared_elo_scale())]
    assert all(isinstance(name, OptionName) for name in names)
    assert sorted(names) == sorted(OptionName)


def test_options_that_act_declare_their_handler() -> None:
    handled = {
        declared.spec.name
        for declared in option_table(list(GAMES), declared_elo_scale())
        if declared.on_change is not None
    }
    assert OptionName.CLEAR_HASH in handled
    assert {OptionName.HASH, OptionName.THREADS, OptionName.EVAL_FILE} <= handled
    buttons = [
        d for d in option_table(list(GAMES), declared_elo_scale()) if isinstance(d.spec, Button)
    ]
    assert all(d.on_change is not None for d in buttons)


def test_the_protocol_reaches_games_only_through_the_registry_and_variants() -> None:
    """Books and tablebases are ``Variant`` capabilities: no protocol module imports a game."""
    offenders = []
    for path in sorted((REPO / "protocol").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("games.") and name not in ("games.registry", "games.variant"):
                    offenders.append(f"{path.relative_to(REPO)}: {name}")
    assert offenders == []
