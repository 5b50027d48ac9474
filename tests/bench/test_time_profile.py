"""bench/time_profile.py: each player's time by block of moves, over its first moves, and its
clock at the end, from the move times in a match's PGN comments."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support.bench_scripts import import_bench_script

GAMES = """[Event "Brudno match"]
[White "fast"]
[Black "slow"]
[Result "1/2-1/2"]
[TimeControl "10+0.1"]

1. e4 {+0.20/10 0.250s} e5 {-0.10/12 1.500s} 2. Nf3 {+0.25/11 0.250s} Nc6 {book}
3. Bb5 {+0.30/11 0.500s} a6 {-0.20/12 2.000s} 1/2-1/2

[Event "Brudno match"]
[White "slow"]
[Black "fast"]
[Result "1-0"]
[TimeControl "40/60"]

1. e4 {1.000s} e5 {depth 9 3.000s} 1-0
"""


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return import_bench_script("time_profile")


def test_times_per_player(tool: ModuleType, tmp_path: Path) -> None:
    pgn = tmp_path / "match.pgn"
    pgn.write_text(GAMES)
    found = tool.profile(pgn, ["fast", "slow"], first=2)
    fast, slow = found["fast"], found["slow"]
    assert fast.depths == [10, 11, 11, 9]
    assert slow.depths == [12, 12]
    assert fast.blocks[0] == [0.25, 0.25, 0.5, 3.0]
    assert slow.blocks[0] == [1.5, 2.0, 1.0]  # the book move has no time
    # The first two timed moves of each game.
    assert fast.first == [pytest.approx(0.5), pytest.approx(3.0)]
    assert slow.first == [pytest.approx(3.5), pytest.approx(1.0)]
    # Only the game with one clock for the whole game: 10 s plus 0.1 s for each of three
    # moves (the book move's too), minus the time used.
    assert fast.left == [pytest.approx(10.3 - 1.0)]
    assert slow.left == [pytest.approx(10.3 - 3.5)]
