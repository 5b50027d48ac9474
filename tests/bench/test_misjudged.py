"""bench/misjudged.py: in the games a player lost, the first middlegame position where it
called itself level or better while its opponent claimed a clear win."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support.bench_scripts import import_bench_script

GAMES = """[Event "Brudno match"]
[White "Brudno"]
[Black "Stockfish"]
[Result "0-1"]

1. e4 {+0.20/10 0.250s} e5 {+0.10/12 0.300s} 2. Nf3 {+0.25/11 0.250s} Nc6 {+2.40/12 0.300s}
3. Bb5 {+0.30/11 0.500s} a6 {+2.60/12 0.300s} 4. Ba4 {-3.00/11 0.500s} 0-1

[Event "Brudno match"]
[White "Stockfish"]
[Black "Brudno"]
[Result "1/2-1/2"]

1. e4 {+3.00/10 0.250s} e5 {+0.10/12 0.300s} 1/2-1/2

[Event "Brudno match"]
[White "Stockfish"]
[Black "Brudno"]
[Result "1-0"]

1. e4 {+2.00/10 0.250s} e5 {-1.50/12 0.300s} 2. Nf3 {+2.50/10 0.250s} Nc6 {-0.40/12 0.300s}
1-0
"""


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return import_bench_script("misjudged")


def test_the_first_misjudged_position_of_each_lost_game(tool: ModuleType, tmp_path: Path) -> None:
    pgn = tmp_path / "match.pgn"
    pgn.write_text(GAMES)
    found = [(case.game, case.board.fen(), case.own) for case in tool.misjudged(pgn, "Brudno", 2.0)]
    assert found == [
        # Game 1: after 2...Nc6 (Stockfish +2.40) Brudno said +0.30 before 3. Bb5.
        (1, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", 0.3),
        # Game 2 is a draw; game 3's first claim met -1.50 (lost, not misjudged), the second
        # -0.40.
        (3, "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2", -0.4),
    ]
