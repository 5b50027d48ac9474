"""Staged move ordering finds the table, killer and counter moves by identity or equality."""

from __future__ import annotations

from collections import Counter

import chess

from engine.ordering import STAGE_KILLER, STAGE_TT, ordered_moves, staged_moves, take
from games.chess_game.adapter import ChessGame


def test_take_removes_the_identical_move() -> None:
    a, b, c = chess.Move(12, 28), chess.Move(6, 21), chess.Move(1, 18)
    moves = [a, b, c]
    assert take(moves, b, interned=True)
    assert moves == [a, c]
    assert not take(moves, b, interned=True)
    assert moves == [a, c]


def test_take_finds_an_equal_move_only_when_moves_are_not_interned() -> None:
    a, b = chess.Move(12, 28), chess.Move(6, 21)
    equal_to_b = chess.Move(6, 21)
    moves = [a, b]
    assert not take(moves, equal_to_b, interned=True)
    assert moves == [a, b]
    assert take(moves, equal_to_b, interned=False)
    assert moves == [a]
    assert moves[0] is a


def test_equal_table_move_is_not_yielded_twice_for_a_game_without_interned_moves() -> None:
    # Ints above 256 are equal without being identical: the generic path must still find them.
    game = ChessGame(chess.Board())
    tt_move = int(str(game.parse_move("g1f3")))  # a fresh object equal to the generated one
    killer = int(str(game.parse_move("e2e4")))
    assert tt_move is not game.parse_move("g1f3")
    staged = list(staged_moves(game, tt_move, killer, None, Counter()))
    moves = [move for move, _ in staged]
    assert len(moves) == 20
    assert len(set(moves)) == 20
    assert staged[0] == (tt_move, STAGE_TT)
    assert staged[1] == (killer, STAGE_KILLER)


def test_interned_game_yields_each_move_once_with_its_own_objects() -> None:
    game = ChessGame(chess.Board())
    generated = game.legal_moves()
    tt_move = game.parse_move("g1f3")
    killer = game.parse_move("e2e4")
    staged = list(staged_moves(game, tt_move, killer, None, Counter(), interned=True))
    moves = [move for move, _ in staged]
    assert sorted(moves) == sorted(generated)
    assert all(any(m is g for g in generated) for m in moves)
    assert staged[0] == (tt_move, STAGE_TT)
    assert staged[1] == (killer, STAGE_KILLER)
    assert ordered_moves(game, tt_move)[0] is tt_move
