"""The adapter's move lists equal python-chess's, move for move and in the same order.

Order matters, not just the set: the search's node counts (the bench signature) depend on the
order moves are tried in, so the lists are compared whole, on random walks from the perft
suites (standard and Chess960: en passant and castling cases) and from Win At Chess (pins and
checks), through every mask the adapter uses.
"""

from __future__ import annotations

import random

import chess
import pytest

from games.chess_game.adapter import ChessGame
from games.chess_game.bitboard64 import Bitboards, signed, unsigned
from games.chess_game.move_codes import MOVES, encode, from_chess, promotions, to_chess
from games.chess_game.movegen import legal_moves_not_in_check, pinned_pieces
from tests.support.paths import DATA

CHESS_DATA = DATA / "chess"


def _chess(moves: list[int]) -> list[chess.Move]:
    """The adapter's moves as python-chess's, to compare with its lists."""
    return [to_chess(move) for move in moves]


def _start_positions() -> list[chess.Board]:
    boards = []
    for line in (CHESS_DATA / "perft" / "perft.epd").read_text(encoding="utf-8").splitlines():
        if line.strip():
            boards.append(chess.Board(line.split(";")[0].strip()))
    perft960 = (CHESS_DATA / "perft" / "chess960.perft").read_text(encoding="utf-8")
    for line in perft960.splitlines()[:400]:
        if line.startswith("epd "):
            boards.append(chess.Board(line[4:].strip() + " 0 1", chess960=True))
    for line in (CHESS_DATA / "suites" / "wacnew.epd").read_text(encoding="utf-8").splitlines():
        if line.strip():
            boards.append(chess.Board.from_epd(line)[0])  # tactics: pins and checks
    return boards


def _walk(board: chess.Board, rng: random.Random, plies: int) -> chess.Board:
    walked = board.copy()
    for _ in range(plies):
        moves = list(walked.legal_moves)
        if not moves:
            break
        walked.push(rng.choice(moves))
    return walked


def _masks(board: chess.Board) -> list[tuple[int, int]]:
    """The adapter's masks (all, captures, promotions, quiet moves) and two arbitrary ones."""
    us = board.turn
    theirs = board.occupied_co[not us]
    promoting = board.pawns & board.occupied_co[us] & (chess.BB_RANK_7 if us else chess.BB_RANK_2)
    return [
        (chess.BB_ALL, chess.BB_ALL),
        (chess.BB_ALL, theirs),
        (promoting, chess.BB_ALL & ~board.occupied),
        (chess.BB_ALL & ~promoting, chess.BB_ALL & ~theirs),
        (board.kings | board.pawns, chess.BB_ALL),
        (chess.BB_ALL, chess.BB_LIGHT_SQUARES),
    ]


@pytest.fixture(scope="module")
def positions() -> list[chess.Board]:
    rng = random.Random(20261122)
    boards = []
    for start in _start_positions():
        boards.append(start)
        boards.extend(_walk(start, rng, rng.randrange(1, 60)) for _ in range(3))
    return boards


def test_lists_equal_python_chess_in_order(positions: list[chess.Board]) -> None:
    compared = pinned = checked = 0
    for board in positions:
        game = ChessGame(board)
        assert _chess(game.legal_moves()) == list(board.generate_legal_moves()), board.fen()
        for from_mask, to_mask in _masks(board):
            expected = list(board.generate_legal_moves(from_mask, to_mask))
            moves = _chess(game._legal(signed(from_mask), signed(to_mask)))
            assert moves == expected, (board.fen(), from_mask, to_mask)
            compared += 1
        king = board.king(board.turn)
        assert king is not None
        pinned_bb = unsigned(pinned_pieces(Bitboards(board), king))
        assert pinned_bb == board._slider_blockers(king), board.fen()
        pinned += bool(board._slider_blockers(king))
        checked += board.is_check()
    # The walks must reach the cases the generator treats specially.
    assert compared > 8000
    assert pinned > 150
    assert checked > 100


def test_pinned_pieces_move_only_along_the_pin() -> None:
    # Pinned to the e1 king: the e4 knight (by the e8 rook: no moves), the c3 bishop (by the
    # a5 bishop: along the diagonal only), the c1 rook (by the a1 rook: along the rank only).
    board = chess.Board("4r2k/8/8/b7/4N3/2B5/8/r1R1K3 w - - 0 1")
    king = board.king(chess.WHITE)
    assert king is not None
    moves = _chess(
        legal_moves_not_in_check(
            Bitboards(board), king, signed(board._slider_blockers(king)), -1, -1
        )
    )
    assert moves == list(board.generate_legal_moves())
    assert not [m for m in moves if m.from_square == chess.E4]
    assert {m.uci() for m in moves if m.from_square == chess.C3} == {"c3b4", "c3a5", "c3d2"}
    assert {m.uci() for m in moves if m.from_square == chess.C1} == {"c1b1", "c1a1", "c1d1"}


def test_en_passant_that_uncovers_a_rank_attack_is_left_out() -> None:
    board = chess.Board("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1")
    game = ChessGame(board)
    assert encode(chess.E5, chess.D6, 0) not in game.legal_moves()
    assert (
        encode(chess.E5, chess.D6, 0)
        in ChessGame(chess.Board("8/8/8/3pP3/8/8/K7/7k w - d6 0 1")).legal_moves()
    )


def test_generated_moves_are_the_shared_objects() -> None:
    game = ChessGame(chess.Board())
    moves = game.legal_moves()
    assert all(m is MOVES[m & 63][(m >> 6) & 63] for m in moves)
    board = chess.Board("8/1P6/8/8/8/8/k7/4K3 w - - 0 1")
    uci = [to_chess(m).uci() for m in promotions(chess.B7, chess.B8)]
    assert uci == ["b7b8q", "b7b8r", "b7b8b", "b7b8n"]
    assert ChessGame(board).noisy_moves()[0] is promotions(chess.B7, chess.B8)[0]


@pytest.mark.parametrize(
    ("fen", "evasion"),
    [
        ("8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1", "e4d3"),  # en passant takes the checking pawn
        ("4k3/8/8/8/1b6/8/8/r3K2R w K - 0 1", "e1f2"),  # double check: only the king moves
        ("4r1k1/8/8/8/8/8/2B5/4K3 w - - 0 1", "c2e4"),  # a block
    ],
)
def test_evasions_equal_python_chess_in_order(fen: str, evasion: str) -> None:
    board = chess.Board(fen)
    assert board.is_check()
    moves = _chess(ChessGame(board).legal_moves())
    assert moves == list(board.generate_legal_moves())
    assert chess.Move.from_uci(evasion) in moves


@pytest.mark.parametrize(
    ("fen", "chess960"),
    [
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", False),  # castling both ways
        ("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", False),  # en passant
        ("8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1", False),  # en passant out of check
        ("r1k1r3/8/8/8/8/8/8/R1K1R3 w AEae - 0 1", True),  # Chess960 castling, king takes rook
        ("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1", False),  # promotions
    ],
)
def test_every_move_handed_out_is_the_shared_object(fen: str, chess960: bool) -> None:
    # The search compares moves by identity (ChessGame.moves_interned): every move the
    # adapter returns, decodes or parses must be the one shared object for it.
    board = chess.Board(fen, chess960=chess960)
    game = ChessGame(board)
    moves = game.legal_moves()
    assert _chess(moves) == list(board.generate_legal_moves())
    for move in moves:
        shared = from_chess(to_chess(move))
        assert move is shared, to_chess(move).uci()
        assert game.code_move(game.move_code(move)) is shared
        assert game.parse_move(game.format_move(move)) is shared
    for move in game.noisy_moves() + game.quiet_moves():
        assert any(move is m for m in moves), to_chess(move).uci()
    assert ChessGame.moves_interned
