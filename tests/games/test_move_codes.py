"""Move codes: the numbers a shared transposition table stores instead of move objects.

A helper process decodes a code that another process encoded, so a code must name the same
move everywhere: it is a property of the move, in range, and never shared by two moves.
"""

from __future__ import annotations

import random

import chess
import pytest

from engine.game import MOVE_CODE_LIMIT, MoveCodec
from games.chess_game.move_codes import from_chess, shared, to_chess
from games.registry import GAMES


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_every_legal_move_round_trips_through_a_code_of_its_own(variant: str) -> None:
    rng = random.Random(variant)
    for _ in range(20):
        game = GAMES[variant].new()
        assert isinstance(game, MoveCodec)
        for _ in range(60):
            moves = game.legal_moves()
            if not moves or game.is_terminal():
                break
            codes = [game.move_code(m) for m in moves]
            assert all(0 < c < MOVE_CODE_LIMIT for c in codes)
            assert len(set(codes)) == len(codes)
            assert [game.code_move(c) for c in codes] == moves
            game.push(rng.choice(moves))


def test_chess_codes_cover_promotions_castling_and_chess960() -> None:
    game = GAMES["chess"].new("4k3/1P6/8/8/8/8/8/R3K2R w KQ - 0 1")
    texts = {game.format_move(m) for m in game.legal_moves()}
    assert {"b7b8q", "b7b8n", "e1g1", "e1c1"} <= texts
    for move in game.legal_moves():
        assert game.code_move(game.move_code(move)) == move
    fischer = GAMES["chess"].new("4k3/8/8/8/8/8/8/RK6 w A - 0 1", chess960=True)
    castle = fischer.parse_move("b1a1")
    assert fischer.code_move(fischer.move_code(castle)) == castle


def test_a_grundy_code_names_its_split_in_any_position() -> None:
    game = GAMES["grundy"].new("500 w 1")
    codes = {game.move_code(m): m for m in game.legal_moves()}
    assert len(codes) == 249
    other = GAMES["grundy"].new("3/480/7 b 4")
    for code, move in codes.items():
        assert other.code_move(code) == move
    assert max(codes) < MOVE_CODE_LIMIT


def test_chess_decoding_is_independent_of_the_position() -> None:
    start = GAMES["chess"].new()
    e4 = start.parse_move("e2e4")
    elsewhere = GAMES["chess"].new("8/8/8/8/8/8/8/K6k w - - 0 1")
    assert to_chess(elsewhere.code_move(start.move_code(e4))) == chess.Move.from_uci("e2e4")


def test_chess_moves_cross_to_python_chess_and_back() -> None:
    board = chess.Board("r3k2r/1P6/8/8/8/8/6p1/R3K2R w KQkq - 0 1")
    moves = [*board.legal_moves, chess.Move.from_uci("g2h1n"), chess.Move.from_uci("e1c1")]
    for move in moves:
        code = from_chess(move)
        assert to_chess(code) == move
        assert code == move.from_square | move.to_square << 6 | (move.promotion or 0) << 12
        assert code is shared(code)
    for impossible in (chess.Move.null(), chess.Move.from_uci("N@e4")):
        with pytest.raises(ValueError, match="not a chess board move"):
            from_chess(impossible)
