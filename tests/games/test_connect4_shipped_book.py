"""The shipped Connect Four book (``games/data/connect4_book.bin``, a strategy book built by
``scripts/build_connect4_strategy.py``) and what it makes of Brudno's play.

- It is there, and it holds the facts of the opening: the empty board a win whose book move
  is the centre, the first drops but the centre's as the second player's win or draw.
- A seeded sample of its entries agrees with a fresh solver (entries with few stones take the
  solver minutes each, so the sample is of those with at least ``SAMPLE_STONES``).
- Self-play from the empty board (the issue's "done when"): Brudno as the first player, with
  the shipped book and the leaf budget the book was built for, against seeded random drops,
  plays only winning moves: each one to a position the book holds as lost for the opponent,
  or, past the book, one a fresh solver proves lost for the opponent; and it wins.
"""

from __future__ import annotations

import random

import pytest

from engine.control import SearchControl
from engine.info import SearchInfo
from engine.limits import Limits
from games.connect4.board import Connect4
from games.connect4.book import SHIPPED_BOOK, BookKind, Connect4Book
from games.connect4.book_builder import position_of
from games.connect4.play import Connect4Player, shipped_book
from games.connect4.solver import Connect4Solver
from games.connect4.strategy import DEFAULT_LEAF_NODES

SAMPLE_STONES = 12


@pytest.fixture(scope="module")
def book() -> Connect4Book:
    assert SHIPPED_BOOK.exists(), "the Connect Four book does not ship"
    loaded = shipped_book()
    assert loaded is not None and loaded.kind is BookKind.OUTCOME
    return loaded


def test_the_book_holds_the_openings_facts(book: Connect4Book) -> None:
    start = Connect4()
    assert book.outcome(start) == 1
    assert book.strategy_moves(start) == (3,)  # the centre, the only winning first drop
    for first, outcome in (("1", 1), ("2", 1), ("3", 0), ("5", 0), ("6", 1), ("7", 1)):
        position = Connect4.from_moves(first)
        assert book.outcome(position) == outcome, first  # the second player's view
        assert book.strategy_moves(position), first


def _decode(key: int) -> tuple[int, int]:
    """(current, mask) of the position with Pons' key ``current + mask``: a column with ``k``
    stones adds ``2**k - 1 + its mover's stones`` (below ``2**(k+1) - 1``)."""
    current = mask = 0
    for col in range(7):
        part = (key >> (col * 7)) & 0x7F
        stones = (part + 1).bit_length() - 1
        column_mask = (1 << stones) - 1
        current |= (part - column_mask) << (col * 7)
        mask |= column_mask << (col * 7)
    return current, mask


def test_a_sample_of_entries_is_the_solvers_outcome(book: Connect4Book) -> None:
    entries = [
        (key, value) for key, value in book.items() if _decode(key)[1].bit_count() >= SAMPLE_STONES
    ]
    assert len(entries) > 100
    solver = Connect4Solver()
    for key, value in random.Random(48).sample(entries, 40):
        position = position_of(*_decode(key))
        solver.reset()
        assert solver.score(position, weak=True) == value, position.fen()


def test_decoding_a_key_gives_the_position_back() -> None:
    position = Connect4.from_moves("4453317")
    key = position.current + position.mask
    assert _decode(key) == (position.current, position.mask)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_self_play_from_the_empty_board_plays_only_winning_moves(
    book: Connect4Book, seed: int
) -> None:
    player = Connect4Player(lambda: book, node_budget=DEFAULT_LEAF_NODES)
    solver = Connect4Solver()
    game = Connect4()
    rng = random.Random(seed)
    sources: list[str] = []
    while not game.is_terminal():
        if game.side == 1:
            game.push(rng.choice(game.legal_moves()))
            continue
        notes: list[SearchInfo] = []
        result = player(
            game.copy(), Limits(infinite=True), SearchControl(), notes.append, move_overhead_ms=0
        )
        assert result is not None and result.best is not None, game.fen()
        sources.append(next(n.string for n in notes if n.string is not None).split(":")[0])
        game.push(game.parse_move(result.best))
        if game.is_terminal():
            break
        held = book.outcome(game)
        if held is not None:
            assert held == -1, game.fen()
        else:
            solver.reset()
            assert solver.score(game, weak=True) == -1, game.fen()
    assert game.winner == 0
    assert sources[0] == "strategy"
