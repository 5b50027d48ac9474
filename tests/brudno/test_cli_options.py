"""The ``brudno`` command's own options: ``--log-level`` in any case, and a ``--help`` that
names every game of the registry."""

from __future__ import annotations

import subprocess

import pytest

from games.registry import GAMES


def run(brudno: list[str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*brudno, *arguments],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


@pytest.mark.parametrize("level", ["debug", "DEBUG", "Info", "warning", "error", "critical"])
def test_log_level_in_any_case(brudno: list[str], level: str) -> None:
    done = run(brudno, "--log-level", level, "perft", "1", "--game", "tictactoe")
    assert done.returncode == 0, done.stderr
    assert "Nodes searched: 9" in done.stdout


def test_log_level_debug_really_logs_at_debug(brudno: list[str]) -> None:
    """The lower-case name reaches :mod:`logging` as the level, not just past argparse."""
    done = subprocess.run(
        [*brudno, "--log-level", "debug"],
        input="uci\nquit\n",
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert " DEBUG " in done.stderr


def test_an_unknown_log_level_is_refused(brudno: list[str]) -> None:
    done = run(brudno, "--log-level", "loud", "perft", "1")
    assert done.returncode == 2
    assert "invalid choice: 'LOUD'" in done.stderr
    assert "DEBUG" in done.stderr  # the choices are listed


def test_help_names_every_game(brudno: list[str]) -> None:
    done = run(brudno, "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # argparse wraps the description anywhere
    assert len(GAMES) >= 4
    for name in GAMES:
        assert f"({name})" in text, name
    for title in ("chess", "Tic-tac-toe", "Connect Four", "Grundy's game"):
        assert title in text
