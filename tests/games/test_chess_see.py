"""Static exchange evaluation against textbook positions and an exchange played on real boards."""

from __future__ import annotations

import chess
import pytest

from games.chess_game import from_fen
from games.chess_game.bitboard64 import Bitboards
from games.chess_game.move_codes import from_chess, to_chess
from games.chess_game.see import SEE_VALUES, see_ge
from tests.support.paths import DATA

THRESHOLDS = (-1000, -400, -221, -220, -219, -1, 0, 1, 99, 100, 101, 320, 500, 1000)


def _reply_gain(board: chess.Board, square: chess.Square) -> int:
    """What the side to move wins by recapturing on ``square`` (or 0 by not recapturing),
    cheapest capturer first, moving pieces on a real board so that x-rays appear by
    themselves.  Pins are ignored and a pawn reaching the last rank stays a pawn, as in the
    code under test."""
    attackers = board.attackers(board.turn, square)
    if not attackers:
        return 0
    frm = min(attackers, key=lambda sq: SEE_VALUES[board.piece_type_at(sq) or 0])
    victim = board.piece_type_at(square) or 0
    piece = board.piece_at(frm)
    after = board.copy(stack=False)
    after.remove_piece_at(frm)
    after.set_piece_at(square, piece)
    after.turn = not board.turn
    return max(0, SEE_VALUES[victim] - _reply_gain(after, square))


def reference_see(board: chess.Board, move: chess.Move) -> int:
    """The exchange value of ``move``: what it takes minus the best the opponent then wins."""
    to = move.to_square
    after = board.copy(stack=False)
    gain = SEE_VALUES[board.piece_type_at(to) or 0]
    if board.is_en_passant(move):
        gain = SEE_VALUES[chess.PAWN]
        after.remove_piece_at(to - 8 if board.turn else to + 8)
    piece = board.piece_at(move.from_square)
    assert piece is not None
    if move.promotion:
        gain += SEE_VALUES[move.promotion] - SEE_VALUES[chess.PAWN]
        piece = chess.Piece(move.promotion, board.turn)
    after.remove_piece_at(move.from_square)
    after.set_piece_at(to, piece)
    after.turn = not board.turn
    return gain - _reply_gain(after, to)


@pytest.mark.parametrize(
    ("fen", "uci", "value"),
    [
        # Chess Programming Wiki's two SEE examples.
        ("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5", 100),
        ("1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1", "d3e5", 100 - 320),
        # Queen takes a pawn defended by a pawn.
        ("4k3/8/3p4/4p3/8/8/8/4QK2 w - - 0 1", "e1e5", 100 - 950),
        # The king may take only an undefended piece.
        ("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1", "e1d2", 950),
        ("4k3/8/8/8/1b6/8/3q4/4K3 w - - 0 1", "e1d2", 950 - 20_000),
        # Rook behind rook: the x-ray wins the second exchange.
        ("4k3/3r4/8/8/8/3p4/3R4/3R1K2 w - - 0 1", "d2d3", 100),
        ("4k3/3r4/8/8/8/3p4/8/3R1K2 w - - 0 1", "d1d3", 100 - 500),
        # Doubled rooks on both sides: the second recapture loses the exchange back.
        ("3rk3/3r4/8/8/8/3p4/3R4/3R1K2 w - - 0 1", "d2d3", 100 - 500),
        # A bishop behind a pawn recaptures through it.
        ("4k3/3n4/8/4p3/3P4/2B5/8/4K3 w - - 0 1", "d4e5", 100),
        ("4k3/3n4/8/4p3/3P4/8/8/4K3 w - - 0 1", "d4e5", 0),
        # En passant and a capturing promotion.
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100),
        ("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8q", 500 + 950 - 100),
        # A quiet move into an attacked square loses the piece.
        ("4k3/8/8/3p4/8/8/8/2N1K3 w - - 0 1", "c1e2", 0),
        ("4k3/8/8/3p4/8/8/8/4KN2 w - - 0 1", "f1e3", 0),
        ("4k3/8/8/8/3p4/8/8/4KN2 w - - 0 1", "f1e3", -320),
    ],
)
def test_textbook_exchanges(fen: str, uci: str, value: int) -> None:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert reference_see(board, move) == value
    for threshold in (*THRESHOLDS, value - 1, value, value + 1):
        assert see_ge(Bitboards(board), from_chess(move), threshold) == (value >= threshold), (
            threshold
        )


def _suite_positions(limit: int) -> list[chess.Board]:
    boards = []
    path = DATA / "chess" / "suites" / "wacnew.epd"
    for line in path.read_text().splitlines()[:limit]:
        if line.strip():
            board, _ = chess.Board.from_epd(line)
            boards.append(board)
    return boards


def test_every_capture_of_win_at_chess_agrees_with_the_board_exchange() -> None:
    checked = 0
    for board in _suite_positions(300):
        game = from_fen(board.fen())
        for move in game.noisy_moves():
            value = reference_see(board, to_chess(move))
            for threshold in THRESHOLDS:
                assert game.see_ge(move, threshold) == (value >= threshold), (
                    board.fen(),
                    game.format_move(move),
                    value,
                    threshold,
                )
            checked += 1
    assert checked > 900


def test_castling_wins_nothing() -> None:
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    for uci in ("e1g1", "e1c1"):
        move = from_chess(chess.Move.from_uci(uci))
        assert see_ge(Bitboards(board), move, 0)
        assert not see_ge(Bitboards(board), move, 1)
    chess960 = chess.Board("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", chess960=True)
    castle = chess.Move.from_uci("e1g1")
    assert chess960.is_castling(castle)
    assert see_ge(Bitboards(chess960), from_chess(castle), 0)
    assert not see_ge(Bitboards(chess960), from_chess(castle), 1)
