"""A replacement weights table reaches chess positions: the registry's ``evaluator=`` keyword,
copies, and the pickle trip to search worker processes (the ``EvalFile`` option's plumbing)."""

from __future__ import annotations

import pickle

import chess
import pytest

from engine.eval import LinearEvaluator
from games.chess_game import ChessGame, default_evaluator, from_fen
from games.registry import get_variant

EXTRA_KNIGHT = "4k3/pppp4/8/8/8/8/PPPP4/1N2K3 w - - 0 1"
"""
. . . . k . . .
p p p p . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
P P P P . . . .
. N . . K . . .      white is a knight up; everything else is symmetric
"""


def knight_heavy(extra: int = 500) -> LinearEvaluator:
    """The shipped table with the knight's material raised by ``extra`` in both phases."""
    weights = dict(default_evaluator().weights)
    weights["material.mg.N"] += extra
    weights["material.eg.N"] += extra
    return LinearEvaluator(weights)


def test_the_registry_builds_positions_with_a_given_table() -> None:
    chess_variant = get_variant("chess")
    heavy = knight_heavy()
    shipped = chess_variant.new(EXTRA_KNIGHT)
    game = chess_variant.new(EXTRA_KNIGHT, evaluator=heavy)
    assert game.evaluator is heavy
    assert shipped.evaluator is default_evaluator()
    # Both phases moved by the same 500, so the tapered sum moves by exactly 500.
    assert game.evaluate() - shipped.evaluate() == 500
    # The fast route agrees with the plain weighted sum of the features.
    assert game.evaluate() == heavy.evaluate(game.features())


def test_the_table_follows_moves_and_copies() -> None:
    heavy = knight_heavy()
    game = get_variant("chess").new(EXTRA_KNIGHT, evaluator=heavy)
    game.push(game.parse_move("b1c3"))
    twin = game.copy()
    assert twin.evaluator is heavy
    assert twin.evaluate() == heavy.evaluate(twin.features())
    # Black to move, a knight down under the heavy table.
    assert twin.evaluate() < -700


def test_chess960_positions_take_a_table_too() -> None:
    heavy = knight_heavy()
    fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
    game = get_variant("chess").new(fen, chess960=True, evaluator=heavy)
    assert isinstance(game, ChessGame)
    assert game.chess960 and game.evaluator is heavy
    assert game.format_move(game.parse_move("g1f2")) == "g1f2"


@pytest.mark.parametrize("name", ["tictactoe", "cfour", "grundy"])
def test_games_without_a_replaceable_table_refuse_one(name: str) -> None:
    variant = get_variant(name)
    assert variant.weights is None
    with pytest.raises(ValueError, match=f"{name} has no weights table to replace"):
        variant.new(evaluator=knight_heavy())
    variant.new(evaluator=None)  # None still means "the game's own evaluation"


def test_chess_declares_its_shipped_table() -> None:
    weights = get_variant("chess").weights
    assert weights is not None
    assert weights.shipped() is default_evaluator()
    # 786, 8 threat weights, 4 king-race, king danger; mobility by count: 132 for 8 linear;
    # Stockfish's threats: 36 for the 8 first ones
    assert len(weights.shipped().weights) == 951
    assert weights.shipped().weights["material.mg.N"] == 320


def test_the_table_survives_the_pickle_trip_to_a_worker() -> None:
    heavy = knight_heavy()
    game = get_variant("chess").new(EXTRA_KNIGHT, evaluator=heavy)
    game.push(game.parse_move("b1c3"))
    back = pickle.loads(pickle.dumps(game))
    assert isinstance(back, ChessGame)
    assert back.fen() == game.fen()
    assert back.evaluator.weights == heavy.weights
    assert back.evaluate() == game.evaluate()
    back.pop()  # the moves came along: the knight is back on b1
    assert back.fen() == EXTRA_KNIGHT


def test_the_shipped_table_stays_shared_after_pickling() -> None:
    game = get_variant("chess").new(EXTRA_KNIGHT)
    assert pickle.loads(pickle.dumps(game)).evaluator is default_evaluator()


def test_equal_tables_unpickle_to_one_evaluator_so_caches_persist() -> None:
    """A worker receives a fresh copy of the table with every ``go``; equal copies fold into
    one evaluator (and so one set of precomputed tables and caches), a different table does
    not."""
    heavy = knight_heavy()
    first = pickle.loads(pickle.dumps(get_variant("chess").new(EXTRA_KNIGHT, evaluator=heavy)))
    again = pickle.loads(pickle.dumps(get_variant("chess").new(evaluator=knight_heavy())))
    assert again.evaluator is first.evaluator
    other = knight_heavy(100)
    third = pickle.loads(pickle.dumps(get_variant("chess").new(EXTRA_KNIGHT, evaluator=other)))
    assert third.evaluator is not first.evaluator
    assert third.evaluator.weights == other.weights
    assert third.evaluate() == first.evaluate() - 400


def test_each_table_keeps_its_own_precomputed_tables() -> None:
    """Games built from one evaluator share its tables and their caches, whichever other
    evaluator was used in between; a change to the weights builds them anew."""
    heavy, light = knight_heavy(), knight_heavy(100)
    first = from_fen(EXTRA_KNIGHT, evaluator=heavy)
    other = from_fen(EXTRA_KNIGHT, evaluator=light)
    again = from_fen(chess.STARTING_FEN, evaluator=heavy)
    assert again._tables is first._tables
    assert other._tables is not first._tables
    heavy.weights["material.mg.N"] += 100
    changed = from_fen(EXTRA_KNIGHT, evaluator=heavy)
    assert changed._tables is not first._tables
    fresh = from_fen(EXTRA_KNIGHT, evaluator=LinearEvaluator(heavy.weights))
    assert changed.evaluate() == fresh.evaluate() != first.evaluate()


def test_a_pickled_table_carries_its_weights_only() -> None:
    heavy = knight_heavy()
    game = get_variant("chess").new(EXTRA_KNIGHT, evaluator=heavy)
    game.evaluate()  # fills the evaluation cache of the tables heavy keeps
    assert len(pickle.dumps(heavy)) < 2 * len(pickle.dumps(heavy.weights))
