"""Grundy's game: the Grundy values against the literature, the same values recomputed through
the adapter's own move generation, the engine's search on the 7-match start, notation and
make/unmake.

Reference values: OEIS A002188, "Sprague-Grundy values for Grundy's game" (also Berlekamp,
Conway and Guy, *Winning Ways*, vol. 1, p. 96), for heaps of 0..30 matches.
"""

from __future__ import annotations

import pickle

import pytest

from engine.game import Game, GameError, IllegalMoveError, InvalidPositionError
from engine.limits import Limits
from engine.perft import perft
from engine.score import Mate
from engine.search import Searcher
from games import grundy
from games.grundy import (
    MAX_MATCHES,
    START_FEN,
    Grundy,
    from_fen,
    grundy_value,
    grundy_values,
    nim_sum,
)
from games.registry import GAMES, get_variant

A002188 = (
    0, 0, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 3, 2, 1,
    3, 2, 4, 3, 0, 4, 3, 0, 4, 3, 0, 4, 1, 2, 3,
)  # fmt: skip
"""G(0)..G(30), copied from OEIS A002188."""


def mex(values: set[int]) -> int:
    m = 0
    while m in values:
        m += 1
    return m


def position_value(game: Grundy, memo: dict[tuple[int, ...], int]) -> int:
    """The Sprague-Grundy value of a whole position, by the mex rule over the adapter's own
    moves (push/pop), memoised on the multiset of heaps that can still be split (by the rules
    heaps of 1 and 2 never move), not on the adapter's key."""
    heaps = tuple(sorted(heap for heap in game.heaps if heap >= 3))
    known = memo.get(heaps)
    if known is not None:
        return known
    children = set()
    for move in game.legal_moves():
        game.push(move)
        children.add(position_value(game, memo))
        game.pop()
    value = mex(children)
    memo[heaps] = value
    return value


def test_grundy_values_match_the_literature() -> None:
    assert grundy_values(30) == A002188
    assert [grundy_value(n) for n in range(31)] == list(A002188)


def test_the_adapters_game_tree_gives_the_same_values() -> None:
    """Grundy values of single heaps computed from the adapter's positions and moves alone."""
    memo: dict[tuple[int, ...], int] = {}
    values = tuple(position_value(Grundy((n,)), memo) for n in range(1, 31))
    assert values == A002188[1:]


def test_nim_sum_decides_the_winner_of_sums() -> None:
    """A sum of heaps is lost for the side to move exactly when the XOR of values is 0."""
    memo: dict[tuple[int, ...], int] = {}
    for heaps in [(5, 3, 1), (7, 4), (6, 6), (10, 3, 2), (8, 7, 5), (12, 5)]:
        game = Grundy(heaps)
        assert (position_value(game, memo) == 0) == (nim_sum(heaps) == 0) == (game.nim_sum == 0)


def test_engine_solves_the_seven_match_start() -> None:
    """The second player wins from 7: every first move loses.  The side to move is mated in two
    of its moves (7 → 4+3, 4 → 3+1, 3 → 2+1, 3 → 2+1, and it has no move left)."""
    game = get_variant("grundy").new()
    assert isinstance(game, Grundy)
    result = Searcher(4).search(game, Limits(depth=12))
    assert result.score == Mate(-2)
    assert result.best in {"7=3+4", "7=2+5", "7=1+6"}
    assert game.fen() == START_FEN  # the search undid its moves


@pytest.mark.parametrize("heap", range(3, 23))
def test_engine_search_agrees_with_grundy_theory(heap: int) -> None:
    """The search proves a win (a positive mate) exactly for heaps with a non-zero value, and
    then its move leaves a zero nim-sum, as every winning move must."""
    game = Grundy((heap,))
    result = Searcher(4).search(game, Limits(depth=heap))
    assert isinstance(result.score, Mate)
    assert (result.score.moves > 0) == (A002188[heap] != 0)
    assert result.best is not None
    move = game.parse_move(result.best)
    if A002188[heap]:
        game.push(move)
        assert game.nim_sum == 0


# -- rules and notation ----------------------------------------------------------------------
def test_registered_with_its_start_position() -> None:
    assert "grundy" in GAMES
    assert GAMES["grundy"].start_fen == "7 w 1"
    assert isinstance(get_variant("grundy").new(), Game)


def test_moves_of_the_start_position() -> None:
    game = Grundy()
    assert [game.format_move(m) for m in game.legal_moves()] == ["7=3+4", "7=2+5", "7=1+6"]
    assert game.noisy_moves() == []
    assert game.quiet_moves() == game.legal_moves()
    assert not game.is_noisy(game.legal_moves()[0])


def reference_perft(heaps: tuple[int, ...], depth: int) -> int:
    """Independent count: heaps as a sorted tuple, splits enumerated directly."""
    if depth == 0:
        return 1
    total = 0
    for heap in set(heaps):
        rest = list(heaps)
        rest.remove(heap)
        for a in range(1, (heap + 1) // 2):
            total += reference_perft(tuple(sorted((*rest, a, heap - a))), depth - 1)
    return total


@pytest.mark.parametrize(("fen", "depth"), [("7", 4), ("12/5", 4), ("20", 3), ("9/9/4 b 3", 3)])
def test_perft_matches_an_independent_count(fen: str, depth: int) -> None:
    game = from_fen(fen)
    assert perft(game, depth) == reference_perft(tuple(sorted(game.heaps)), depth)


def test_terminal_rules() -> None:
    game = from_fen("2/1/1/2 b 4")
    assert game.legal_moves() == []
    assert game.is_terminal()
    assert game.terminal_value() == -1
    live = from_fen("3/2")
    assert not live.is_terminal()
    assert live.terminal_value() == 0
    live.push(live.parse_move("3=1+2"))
    assert live.is_terminal() and live.terminal_value() == -1


@pytest.mark.parametrize(
    ("text", "move"),
    [("7=3+4", (7, 3)), ("7=4+3", (7, 3)), ("7-3", (7, 3)), ("7-4", (7, 3)), ("7=1+6", (7, 1))],
)
def test_parse_move_forms(text: str, move: tuple[int, int]) -> None:
    assert Grundy().parse_move(text) == move


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("8=5+3", "no heap of 8"),
        ("6=3+3", "must differ"),
        ("7=2+4", "is not 7"),
        ("7-7", "at least one match"),
        ("7-0", "at least one match"),
        ("7", "not a Grundy's game move"),
        ("P@d1", "not a Grundy's game move"),
    ],
)
def test_parse_move_errors(text: str, complaint: str) -> None:
    with pytest.raises(IllegalMoveError, match=complaint):
        from_fen("7/6").parse_move(text)


@pytest.mark.parametrize(
    ("fen", "expected"),
    [("7", "7 w 1"), ("3/4 b 2", "4/3 b 2"), ("1/5/2/5 w 7", "5/5/2/1 w 7"), ("10 b", "10 b 1")],
)
def test_fen_round_trip(fen: str, expected: str) -> None:
    game = from_fen(fen)
    assert game.fen() == expected
    assert from_fen(game.fen()).fen() == expected


@pytest.mark.parametrize(
    ("fen", "complaint"),
    [
        ("", "heap sizes separated by '/'"),
        ("7 w 1 x", "heap sizes separated by '/'"),
        ("7/", "expected heap sizes"),
        ("a/3", "expected heap sizes"),
        ("0/3", "at least one match"),
        ("7 x", "'w' or 'b'"),
        ("7 w 0", "fullmove"),
        (f"{MAX_MATCHES}/1", f"at most {MAX_MATCHES} matches"),
    ],
)
def test_fen_errors(fen: str, complaint: str) -> None:
    with pytest.raises(InvalidPositionError, match=complaint):
        from_fen(fen)


def test_side_ply_and_display() -> None:
    game = from_fen("5/3 b 4")
    assert (game.side, game.ply) == (1, 7)
    game.push(game.parse_move("5=1+4"))
    assert (game.side, game.ply) == (0, 8)
    assert game.fen() == "4/3/1 w 5"
    assert game.display().splitlines() == ["  4  ||||", "  3  |||", "  1  |", "Fen: 4/3/1 w 5"]


def test_push_pop_restores_and_keys_ignore_order_side_and_dead_heaps() -> None:
    game = from_fen("9/6/2 w 1")
    before = (game.fen(), game.key(), game.nim_sum)
    for move in game.legal_moves():
        game.push(move)
        game.pop()
        assert (game.fen(), game.key(), game.nim_sum) == before
    with pytest.raises(IndexError):
        Grundy().pop()
    assert from_fen("6/9 b 3").key() == game.key()
    assert from_fen("9/6/1/1/2").key() == game.key()
    assert from_fen("9/5/2").key() != game.key()


def test_keys_along_a_game_never_repeat() -> None:
    game = Grundy((20,))
    seen = {game.key()}
    while game.legal_moves():
        game.push(game.legal_moves()[-1])  # split one match off the smallest live heap
        assert game.key() not in seen
        seen.add(game.key())
    assert game.ply == 18  # 20 → 19+1 → 18+1+1 → ... → 3+1... → 2+1+...: eighteen splits


def test_evaluation_is_the_nim_sum_feature() -> None:
    won = from_fen("5/3/1")  # G = 2 ^ 1 ^ 0 = 3
    lost = from_fen("7")
    assert won.features() == {"grundy": 1}
    assert lost.features() == {"grundy": -1}
    for game in (won, lost):
        assert game.evaluate() == game.evaluator.evaluate(game.features())
    assert won.evaluate() == 100


def test_no_null_move_and_copy_is_independent() -> None:
    game = Grundy()
    assert not game.can_null_move() and not game.in_check()
    with pytest.raises(GameError):
        game.push_null()
    clone = game.copy()
    clone.push((7, 1))
    assert game.fen() == "7 w 1" and clone.fen() == "6/1 b 1"
    assert clone.moves_played == ((7, 1),)


def test_grundy_values_argument_check() -> None:
    with pytest.raises(ValueError, match="negative"):
        grundy_values(-1)


def test_a_position_unpickled_where_the_value_cache_is_empty_plays_on() -> None:
    """Issue 12 (4): worker processes start with an empty module cache of Grundy values, and
    every search there raised IndexError in ``push``.  A position carries its own table."""
    position = pickle.dumps(grundy.Grundy((40, 7)))
    cached = grundy._VALUES[:]
    del grundy._VALUES[3:]  # as in a freshly started worker process
    try:
        game = pickle.loads(position)
        plies = 0
        while moves := game.legal_moves():
            game.push(moves[-1])  # the most uneven split: the longest game
            plies += 1
        assert plies == len(game.heaps) - 2  # every move adds one heap
        assert max(game.heaps) <= 2
        assert game.nim_sum == 0
    finally:
        grundy._VALUES[:] = cached
