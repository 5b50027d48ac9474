"""The real `brudno` process driven by python-chess's UCI client, as GUIs and bots drive it.

python-chess is strict: it refuses to configure options an engine did not declare, checks
that `bestmove` is legal, and manages Ponder/MultiPV/UCI_Chess960 itself.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import chess
import chess.engine
import pytest

REQUIRED_OPTIONS = {
    "Hash": "spin",
    "Threads": "spin",
    "MultiPV": "spin",
    "Ponder": "check",
    "Move Overhead": "spin",
    "Clear Hash": "button",
    "UCI_Variant": "combo",
    "UCI_Chess960": "check",
    "UCI_ShowWDL": "check",
}


@pytest.fixture
def engine(brudno: list[str]) -> Iterator[chess.engine.SimpleEngine]:
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as eng:
        yield eng


def test_identifies_itself_and_declares_its_options(engine: chess.engine.SimpleEngine) -> None:
    assert engine.id["name"].startswith("Brudno")
    assert engine.id["author"]
    for name, kind in REQUIRED_OPTIONS.items():
        assert engine.options[name].type == kind, name
    assert engine.options["Hash"].default == 16
    assert "chess" in engine.options["UCI_Variant"].var
    assert "tictactoe" in engine.options["UCI_Variant"].var


def test_plays_legal_moves_through_a_short_game(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    engine.configure({"Hash": 8})
    for _ in range(12):
        result = engine.play(board, chess.engine.Limit(depth=2))
        assert result.move is not None
        assert result.move in board.legal_moves
        board.push(result.move)


def test_takes_a_hanging_queen(engine: chess.engine.SimpleEngine) -> None:
    """
    . . . . k . . .
    . . . . . . . .
    . . . . . . . .
    . . . q . . . .      black queen on d5, undefended
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . Q K . . .      white queen on d1 takes it
    """
    board = chess.Board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1")
    result = engine.play(board, chess.engine.Limit(depth=3))
    assert result.move == chess.Move.from_uci("d1d5")


def test_analyse_with_multipv_returns_distinct_sorted_lines(
    engine: chess.engine.SimpleEngine,
) -> None:
    board = chess.Board()
    infos = engine.analyse(board, chess.engine.Limit(depth=3), multipv=3)
    assert len(infos) == 3
    first_moves = [info["pv"][0] for info in infos]
    assert len(set(first_moves)) == 3
    assert all(move in board.legal_moves for move in first_moves)
    scores = [info["score"].relative.score(mate_score=100_000) for info in infos]
    assert scores == sorted(scores, reverse=True)
    assert [info["multipv"] for info in infos] == [1, 2, 3]
    for info in infos:
        assert info["depth"] == 3
        assert info["nodes"] > 0


def test_finds_mate_in_two_with_the_right_distance(engine: chess.engine.SimpleEngine) -> None:
    # First position of shared/data/chess/mates/mate2.fen (white mates in 2).
    board = chess.Board("8/1p3Qb1/p5pk/P1p1p1p1/1P2P1P1/2P1N2n/5P1P/4qB1K w - - 1 1")
    info = engine.analyse(board, chess.engine.Limit(depth=5))
    assert info["score"].relative == chess.engine.Mate(2)


def test_ponder_then_ponderhit_delivers_a_move(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    first = engine.play(board, chess.engine.Limit(depth=3), ponder=True)
    assert first.move in board.legal_moves
    assert first.ponder is not None
    board.push(first.move)
    assert first.ponder in board.legal_moves
    board.push(first.ponder)
    # python-chess sends ponderhit if the position matches the ponder search, else stop+go.
    second = engine.play(board, chess.engine.Limit(depth=3), ponder=True)
    assert second.move in board.legal_moves


def test_infinite_analysis_stops_on_request_and_answers_isready(
    engine: chess.engine.SimpleEngine,
) -> None:
    board = chess.Board()
    with engine.analysis(board) as analysis:
        seen = 0
        for info in analysis:
            if "depth" in info and "pv" in info:
                seen += 1
                engine.ping()  # isready while searching: answered during the search
            if seen >= 2:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves


def test_stop_from_another_thread_ends_a_long_search(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    with engine.analysis(board, chess.engine.Limit(depth=60)) as analysis:
        analysis.get()  # the first info line proves the search is running
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves


def test_chess960_castling_is_king_takes_rook(engine: chess.engine.SimpleEngine) -> None:
    """King b1, rook a1: castling long puts the king on c1 and is written b1a1."""
    board = chess.Board("4k3/8/8/8/8/8/8/RK6 w A - 0 1", chess960=True)
    assert board.has_chess960_castling_rights()
    result = engine.analyse(board, chess.engine.Limit(depth=1), multipv=20)
    moves = {info["pv"][0] for info in result}
    castle = board.parse_uci("b1a1")
    assert castle in moves


def test_searchmoves_restricts_the_root(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    only = [chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h3")]
    result = engine.play(board, chess.engine.Limit(depth=3), root_moves=only)
    assert result.move in only


def test_no_legal_moves_gives_null_bestmove(brudno: list[str]) -> None:
    # python-chess refuses to search a finished game, so speak UCI directly.
    out = subprocess.run(
        brudno,
        input="position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\ngo depth 3\nquit\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert "bestmove 0000" in out


def test_show_wdl_adds_win_draw_loss_per_mille(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    plain = engine.analyse(board, chess.engine.Limit(depth=2))
    assert "wdl" not in plain
    engine.configure({"UCI_ShowWDL": True, "Clear Hash": None})
    info = engine.analyse(board, chess.engine.Limit(depth=2))
    wdl = info["wdl"].relative
    assert wdl.wins + wdl.draws + wdl.losses == 1000
    assert wdl.wins >= wdl.losses  # White is not worse in the start position
