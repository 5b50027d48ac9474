"""bench/level_quality.py's sorting of blunders: which positions let the opponent win material
or mate in one move (a piece thrown away) and which do not (a tactic deeper than one move)."""

from __future__ import annotations

from types import ModuleType

import chess
import pytest

from tests.support.bench_scripts import import_bench_script


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return import_bench_script("level_quality")


@pytest.mark.parametrize(
    ("fen", "expected"),
    [
        # 2...e5 3.Nf3: nothing to take, no mate.
        ("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2", False),
        # White's queen on d4 stands where the e5 pawn takes it.
        ("rnbqkbnr/pppp1ppp/8/4p3/3QP3/8/PPP2PPP/RNB1KBNR b KQkq - 0 3", True),
        # The fool's mate: Qh5 mates at once.
        ("rnbqkbnr/ppppp2p/5p2/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3", True),
        # A knight on e5 where the d6 pawn takes it.
        ("rnbqkb1r/ppp2ppp/3p4/4N3/4P3/8/PPPP1PPP/RNBQKB1R b KQkq - 0 4", True),
        # A pawn attacked and defended: taking it wins nothing outright.
        ("rnbqkbnr/ppp2ppp/3p4/4p3/3PP3/8/PPP2PPP/RNBQKBNR b KQkq - 0 3", False),
    ],
)
def test_loses_in_one(tool: ModuleType, fen: str, expected: bool) -> None:
    board = chess.Board(fen)
    assert tool.loses_in_one(board) is expected
    assert board.fen() == fen  # the position is left as it was


def test_tally_reports_the_one_move_share_of_blunders(tool: ModuleType) -> None:
    tally = tool.Tally(losses=[0, 50, 400, 350, 1000], one_move=1)
    line = tally.line("Brudno level 0", "Brudno level 1")
    assert "moves=5" in line
    assert "blunders=60.0%" in line
    assert "one_move=33%" in line
    assert "one_move=0%" in tool.Tally(losses=[10]).line("a", "b")
