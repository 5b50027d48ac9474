"""The evaluation's known draws (a bare king holding rook pawns, with or without the wrong
bishop): an exact 0 on both evaluation routes, silent on near misses, and never wrong where
the Syzygy tables in ``../shared/data/syzygy/regular`` know the answer."""

from __future__ import annotations

import random

import chess
import chess.syzygy
import pytest

from games.chess_game import ChessGame
from games.chess_game.evaluation import known_draw
from tests.support.paths import DATA

REGULAR = DATA / "syzygy" / "regular"


def feature_sum(game: ChessGame) -> int:
    return game.evaluator.evaluate(game.features())


def symmetric_versions(fen: str) -> list[chess.Board]:
    """The position, its colour mirror and its left-right reflection (the rook file and the
    bishop's square colour change together, so a rule must hold on all of them)."""
    board = chess.Board(fen)
    return [board, board.mirror(), board.transform(chess.flip_horizontal)]


@pytest.mark.parametrize(
    "fen",
    [
        "1K5k/7P/8/8/8/3B4/8/8 b - - 0 1",
        "3K3k/7P/8/8/4B3/8/8/8 w - - 0 1",
        "8/8/3b4/8/7p/7k/8/7K w - - 0 1",
        "8/8/8/8/6k1/7p/5b1K/8 w - - 0 1",
        "7k/8/6KP/7P/8/8/8/8 b - - 0 1",
        "8/8/8/8/8/6k1/7P/7K w - - 0 1",
    ],
    ids=["kbpk-king-in-corner", "kbpk-king-beside", "black-pawn", "king-off-the-file", "kppk",
         "kpk-king-in-front"],
)  # fmt: skip
def test_rook_pawns_held_by_the_bare_king_are_an_exact_draw(fen: str) -> None:
    """Positions Brudno scored +6.6 against Stockfish 2000 and Syzygy calls drawn."""
    for board in symmetric_versions(fen):
        game = ChessGame(board)
        assert known_draw(board), board.fen()
        assert game.evaluate() == game.evaluate_uncached() == feature_sum(game) == 0, board.fen()


@pytest.mark.parametrize(
    "fen",
    [
        "k7/8/P7/8/8/8/8/K6B w - - 0 1",
        "k7/8/PP6/8/8/8/8/K5B1 w - - 0 1",
        "8/8/8/8/8/8/k6P/6K1 w - - 0 1",
        "6k1/8/5KP1/8/8/8/8/8 w - - 0 1",
        "7k/8/6KP/8/8/8/8/N7 w - - 0 1",
        "8/8/6K1/7P/8/8/8/5k2 w - - 0 1",
    ],
    ids=["right-bishop", "two-files", "king-too-far", "knight-pawn", "with-a-knight",
         "king-behind"],
)  # fmt: skip
def test_near_misses_of_the_draw_rule_keep_their_material(fen: str) -> None:
    for board in symmetric_versions(fen):
        game = ChessGame(board)
        assert not known_draw(board), board.fen()
        sign = 1 if len(board.pieces(chess.PAWN, board.turn)) else -1
        assert sign * game.evaluate() > 100, board.fen()
        assert game.evaluate() == feature_sum(game), board.fen()


def random_judged_positions(count: int, seed: int) -> list[chess.Board]:
    """``count`` legal positions where the rule fires, white the stronger side with h-pawns:
    one or two pawns, or one with a bishop, kings anywhere (the black king on the g or
    h file, the only place the rule can fire), either side to move."""
    rng = random.Random(seed)
    found: list[chess.Board] = []
    while len(found) < count:
        board = chess.Board(None)
        board.turn = rng.choice(chess.COLORS)
        men = [chess.Piece(chess.KING, chess.WHITE), chess.Piece(chess.KING, chess.BLACK)]
        if rng.random() < 0.5:  # four men at most: the tables' reach
            men.append(chess.Piece(chess.BISHOP, chess.WHITE))
            pawns = rng.sample(range(1, 7), 1)
        else:
            pawns = rng.sample(range(1, 7), rng.choice((1, 2)))
        for rank in pawns:
            board.set_piece_at(chess.square(7, rank), chess.Piece(chess.PAWN, chess.WHITE))
        for piece in men:
            free = [
                square
                for square in chess.SQUARES
                if board.piece_at(square) is None
                and (piece.color == chess.WHITE or chess.square_file(square) >= 6)
            ]
            board.set_piece_at(rng.choice(free), piece)
        if board.is_valid() and known_draw(board):
            found.append(board)
    return found


def test_the_rule_never_calls_a_tablebase_win_a_draw() -> None:
    """Syzygy's verdict on 3,000 positions the rule judges (a rule of thumb from Stockfish,
    checked here against the exact tables: a cursed win, lost to the 50-move rule, is a draw
    too)."""
    positions = random_judged_positions(3000, seed=16)
    assert sum(1 for b in positions if b.pieces(chess.BISHOP, chess.WHITE)) > 500
    assert sum(1 for b in positions if len(b.pieces(chess.PAWN, chess.WHITE)) == 2) > 500
    with chess.syzygy.open_tablebase(str(REGULAR)) as tables:
        wins = [board.fen() for board in positions if abs(tables.probe_wdl(board)) == 2]
    assert wins == []
