"""bench/time_use.py: each player's time over its first moves and its clock at the end, from
the move times in a match's PGN comments."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support.bench_scripts import import_bench_script

GAME = """[Event "Brudno match"]
[White "fast"]
[Black "slow"]
[Result "1/2-1/2"]
[TimeControl "10+0.1"]

1. e4 {+0.20/10 0.250s} e5 {-0.10/12 1.500s} 2. Nf3 {+0.25/11 0.250s} Nc6 {book}
3. Bb5 {+0.30/11 0.500s} a6 {-0.20/12 2.000s} 1/2-1/2

[Event "untimed"]
[White "fast"]
[Black "slow"]
[Result "1-0"]

1. e4 {1.000s} e5 {9.000s} 1-0
"""


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return import_bench_script("time_use")


@pytest.mark.parametrize(
    ("comment", "seconds"),
    [("+0.14/13 0.507s", 0.507), ("-M3/12 12s", 12.0), ("book", 0.0), ("", 0.0)],
)
def test_move_seconds(tool: ModuleType, comment: str, seconds: float) -> None:
    assert tool.move_seconds(comment) == seconds


def test_clock_use_per_player(tool: ModuleType, tmp_path: Path) -> None:
    pgn = tmp_path / "match.pgn"
    pgn.write_text(GAME)
    use = tool.read_clock_use([pgn], first=2)
    assert set(use) == {"fast", "slow"}
    # The untimed game is skipped: one game each.
    assert use["fast"].first_moves == [pytest.approx(0.5)]
    assert use["slow"].first_moves == [pytest.approx(1.5)]
    # 10 s plus 0.1 s for each of three moves, minus the time used.
    assert use["fast"].left_at_end == [pytest.approx(10.3 - 1.0)]
    assert use["slow"].left_at_end == [pytest.approx(10.3 - 3.5)]
