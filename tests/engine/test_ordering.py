"""Staged move ordering finds the table, killer and counter moves by identity or equality."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.native_game import NativeGame, ProtocolGame, native
from engine.ordering import (
    HISTORY_MAX,
    STAGE_KILLER,
    STAGE_TT,
    History,
    MovePicker,
    ordered_moves,
    sort_by_history,
    staged_moves,
    take,
)
from games.chess_game.adapter import ChessGame
from games.chess_game.move_codes import CODE_LIMIT
from games.registry import get_variant


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
    staged = list(staged_moves(game, tt_move, killer, None, History()))
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
    staged = list(staged_moves(game, tt_move, killer, None, History(), interned=True))
    moves = [move for move, _ in staged]
    assert sorted(moves) == sorted(generated)
    assert all(any(m is g for g in generated) for m in moves)
    assert staged[0] == (tt_move, STAGE_TT)
    assert staged[1] == (killer, STAGE_KILLER)
    assert ordered_moves(game, tt_move)[0] is tt_move


def chess_numbers() -> NativeGame:
    """A game that numbers its moves: chess, where a move (an int) is its own index."""
    return ChessGame(chess.Board())


def history_numbers() -> NativeGame:
    """A game that numbers none (behind :class:`ProtocolGame`): the history numbers them."""
    game = native(get_variant("tictactoe").new())
    assert isinstance(game, ProtocolGame)
    return game


Numbering = Callable[[], NativeGame]

NUMBERING = pytest.mark.parametrize("numbering", [chess_numbers, history_numbers])
"""Both ways a history finds a move's index."""


def scored(game: NativeGame, scores: dict[int, int]) -> History:
    """A history with these scores (each given to a move never scored: exactly its bonus)."""
    history = History()
    for move, score in scores.items():
        history.update(game, move, score)
    return history


@NUMBERING
def test_the_history_sort_is_the_stable_sort_by_score_highest_first(numbering: Numbering) -> None:
    """Ties keep their order, negative scores sort below unknown moves (0)."""
    game = numbering()
    moves = list(range(1, 41))
    scores = {m: (m * 7919) % 13 - 6 for m in moves if m % 5}
    history = scored(game, scores)
    expected = sorted(moves, key=lambda m: scores.get(m, 0), reverse=True)
    sort_by_history(moves, history, game)
    assert moves == expected


def test_the_history_sort_takes_a_list_too_long_for_its_packed_index() -> None:
    game = history_numbers()
    moves = list(range(70_000))
    history = scored(game, {69_999: 5, 3: -1})
    sort_by_history(moves, history, game)
    assert moves[0] == 69_999
    assert moves[-1] == 3
    assert sorted(moves) == list(range(70_000))


def counter_update(counter: Counter[Hashable], move: Hashable, bonus: int) -> None:
    """The history update as it was on a ``Counter`` (before :class:`History`)."""
    h = counter.get(move, 0)
    size = abs(bonus)
    counter[move] = h + bonus - h * size // HISTORY_MAX


def counter_age(counter: Counter[Hashable]) -> None:
    """The halving as it was on a ``Counter``: ``value // 2``, zeros deleted."""
    for move, value in list(counter.items()):
        halved = value // 2
        if halved:
            counter[move] = halved
        else:
            del counter[move]


BONUSES = st.sampled_from([d * d for d in range(1, 64)] + [4096])
STEPS = st.lists(
    st.one_of(
        st.tuples(st.integers(1, 40), BONUSES, st.booleans()),
        st.just(None),  # an ageing
    ),
    max_size=200,
)


@NUMBERING
@given(steps=STEPS)
def test_the_history_scores_as_the_counter_did(
    numbering: Numbering, steps: list[tuple[int, int, bool] | None]
) -> None:
    """Bonuses, maluses and halvings (rounding down: -1 stays) give the scores the
    ``Counter`` gave, move for move, within the bounds."""
    game = numbering()
    history, counter = History(), Counter[Hashable]()
    history.reserve(game.history_size())
    for step in steps:
        if step is None:
            history.age()
            counter_age(counter)
        else:
            move, bonus, malus = step
            history.update(game, move, -bonus if malus else bonus)
            counter_update(counter, move, -bonus if malus else bonus)
        for move in range(1, 41):
            assert history.score(game, move) == counter.get(move, 0)
            assert -HISTORY_MAX <= history.score(game, move) <= HISTORY_MAX


def test_a_chess_history_is_allocated_before_the_search_and_never_grows() -> None:
    game = chess_numbers()
    assert game.history_size() == CODE_LIMIT
    history = History()
    history.reserve(game.history_size())
    moves, indices = set(), set()
    for board in (chess.Board(), chess.Board("8/1P4k1/8/8/8/8/6Kp/8 w - - 0 1")):  # promotions
        position = ChessGame(board)
        for move in position.legal_moves():
            index = position.history_index(move)
            assert 0 <= index < CODE_LIMIT
            moves.add(move)
            indices.add(index)
            history.update(position, move, 100)
    assert len(indices) == len(moves) > 20
    assert len(history.scores) == CODE_LIMIT


def test_a_history_numbers_only_the_moves_it_scores() -> None:
    """Reading a move a game without numbers never scored adds nothing; scoring beyond the
    reserved table grows it."""
    game = history_numbers()
    history = History()
    assert game.history_size() == 0
    assert game.history_index((3, 1)) == -1
    assert history.score(game, (3, 1)) == 0
    assert history.numbers == {}
    history.update(game, (3, 1), -9)
    history.update(game, "b2", 16)
    assert history.numbers == {(3, 1): 0, "b2": 1}
    assert (history.score(game, (3, 1)), history.score(game, "b2")) == (-9, 16)
    small = History()
    small.reserve(4)
    small.update(chess_numbers(), 1000, 25)
    assert small.score(chess_numbers(), 1000) == 25
    assert len(small.scores) >= 1001


def test_a_restarted_picker_walks_a_new_node_in_full() -> None:
    """One picker per ply serves node after node: a restart forgets the last walk."""
    game = ChessGame(chess.Board())
    picker = MovePicker(game, exchange=True, interned=True)
    e4 = game.parse_move("e2e4")
    picker.start(e4, None, None, None, History())
    assert picker.next_move() is e4
    assert picker.stage == STAGE_TT
    picker.next_move()  # a walk left half done
    picker.start(None, None, None, None, History())
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
