"""Staged move ordering finds the table, killer and counter moves by identity or equality."""

from __future__ import annotations

from collections import Counter

import chess

from engine.ordering import (
    STAGE_KILLER,
    STAGE_TT,
    MovePicker,
    ordered_moves,
    sort_by_history,
    staged_moves,
    take,
)
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


def test_the_history_sort_is_the_stable_sort_by_score_highest_first() -> None:
    """Ties keep their order, negative scores sort below unknown moves (0)."""
    moves = list(range(40))
    history: Counter[int] = Counter({m: (m * 7919) % 13 - 6 for m in moves if m % 5})
    expected = sorted(moves, key=lambda m: history.get(m, 0), reverse=True)
    sort_by_history(moves, history)
    assert moves == expected


def test_the_history_sort_takes_a_list_too_long_for_its_packed_index() -> None:
    moves = list(range(70_000))
    history: Counter[int] = Counter({69_999: 5, 3: -1})
    sort_by_history(moves, history)
    assert moves[0] == 69_999
    assert moves[-1] == 3
    assert sorted(moves) == list(range(70_000))


def test_a_restarted_picker_walks_a_new_node_in_full() -> None:
    """One picker per ply serves node after node: a restart forgets the last walk."""
    game = ChessGame(chess.Board())
    picker = MovePicker(game, exchange=True, interned=True)
    e4 = game.parse_move("e2e4")
    picker.start(e4, None, None, None, Counter())
    assert picker.next_move() is e4
    assert picker.stage == STAGE_TT
    picker.next_move()  # a walk left half done
    picker.start(None, None, None, None, Counter())
    walked = []
    while (move := picker.next_move()) is not None:
        walked.append(move)
    assert sorted(walked) == sorted(game.legal_moves())


def test_push_check_is_push_then_in_check() -> None:
    game = ChessGame(chess.Board("rnbqkbnr/ppp2ppp/8/3pp3/4P3/5Q2/PPPP1PPP/RNB1KBNR w KQkq - 0 3"))
    checks = []
    for move in game.legal_moves():
        gives = game.push_check(move)
        assert gives == game.in_check()
        game.pop()
        game.push(move)
        assert gives == game.in_check()
        game.pop()
        if gives:
            checks.append(game.format_move(move))
    assert sorted(checks) == ["f1b5", "f3f7"]
