"""The bitboard check test agrees with python-chess playing the move, on every legal move."""

from __future__ import annotations

import chess

from games.chess_game import from_fen
from games.chess_game.bitboard64 import Bitboards
from games.chess_game.checks import gives_check
from games.chess_game.move_codes import from_chess
from tests.support.paths import DATA


def _boards() -> list[chess.Board]:
    boards = [
        # Discovered check by a pawn capturing en passant, promotions with check, castling
        # with check, a capture that opens a line.
        chess.Board("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1"),
        chess.Board("8/8/8/k2pP2R/8/8/8/7K w - d6 0 1"),
        chess.Board("2k5/4P3/8/8/8/8/8/4K3 w - - 0 1"),
        chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"),
        chess.Board("5k2/8/8/8/8/8/8/4K2R w K - 0 1"),
        chess.Board("4k3/8/8/4n3/8/8/8/4RK2 w - - 0 1"),
        chess.Board("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", chess960=True),
    ]
    for line in (DATA / "chess" / "suites" / "wacnew.epd").read_text().splitlines():
        if line.strip():
            boards.append(chess.Board.from_epd(line)[0])
    return boards


def test_agrees_with_playing_the_move() -> None:
    checks = 0
    total = 0
    for board in _boards():
        for move in board.legal_moves:
            expected = board.gives_check(move)
            assert gives_check(Bitboards(board), from_chess(move)) == expected, (
                board.fen(),
                move.uci(),
            )
            checks += expected
            total += 1
    assert total > 10_000
    assert checks > 500


def test_adapter_exposes_it() -> None:
    game = from_fen("4k3/8/8/4n3/8/8/8/4RK2 w - - 0 1")
    assert game.gives_check(game.parse_move("e1e5")) is True  # takes the blocker
    assert game.gives_check(game.parse_move("e1e2")) is False  # the knight still blocks
    discovered = from_fen("4k3/8/8/4N3/8/8/8/4RK2 w - - 0 1")
    assert discovered.gives_check(discovered.parse_move("e5c6"))


def test_the_cached_table_agrees_with_playing_the_move() -> None:
    """The adapter answers from per-position check squares; moves are asked in an order
    that interleaves positions, so a stale table would show."""
    boards = _boards()
    games = [from_fen(board.fen(), board.chess960) for board in boards]
    total = 0
    for board, game in zip(boards, games, strict=True):
        for move in board.legal_moves:
            code = from_chess(move)
            assert game.gives_check(code) == board.gives_check(move), (board.fen(), move.uci())
            total += 1
            if total % 7 == 0:  # push and pop in between: the key changes and comes back
                game.push(code)
                game.pop()
    assert total > 10_000
