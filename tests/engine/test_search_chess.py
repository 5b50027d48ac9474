"""The search on real chess: forced mates found at the right distance, and played out.

Positions come from ``shared/data/chess/mates/mate{N}.fen`` (side to move mates in N; see
SOURCES.md).  All mate-in-1 positions, every 8th mate-in-2 and a fixed sample of mate-in-3
are searched with ``go mate N`` (and a depth cap, so a regression fails instead of hanging).
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.game import ChanceGame, CheckingPush, CheckTest, Game, StaticExchange
from engine.limits import Limits
from engine.ordering import STAGE_LOSING, STAGE_NOISY, STAGE_QUIET, History, staged_moves
from engine.score import Cp, Mate
from engine.search import SearchConfig, Searcher
from games.registry import get_variant
from tests.support.paths import DATA

MATES = DATA / "chess" / "mates"

MATE3_SAMPLE = (0, 1, 2, 5, 6, 7, 11, 12, 13)
"""Mate-in-3 problems that a pure-Python search proves in well under a second each (the
others need tens of thousands to millions of nodes: quiet key moves behind sacrifices)."""


def mate_fens(n: int) -> list[str]:
    path = MATES / f"mate{n}.fen"
    if not path.is_file():
        pytest.fail(f"test data missing: {path}")
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def cases() -> list[Any]:
    out = [pytest.param(1, fen, id=f"mate1-{i}") for i, fen in enumerate(mate_fens(1))]
    out += [
        pytest.param(2, fen, id=f"mate2-{i}") for i, fen in enumerate(mate_fens(2)) if i % 8 == 0
    ]
    fens3 = mate_fens(3)
    out += [pytest.param(3, fens3[i], id=f"mate3-{i}") for i in MATE3_SAMPLE]
    return out


def chess(fen: str | None = None) -> Game[Any]:
    return get_variant("chess").new(fen)


@pytest.mark.parametrize(("n", "fen"), cases())
def test_finds_the_mate_and_its_pv_mates(n: int, fen: str) -> None:
    game = chess(fen)
    result = Searcher(4).search(game, Limits(mate=n, depth=2 * n + 1, nodes=400_000))
    assert result.score == Mate(n)
    assert game.fen() == fen or game.fen().split()[:4] == fen.split()[:4]  # untouched
    assert result.best is not None and result.pv[0] == result.best
    # Follow the PV: every move legal, and it ends in checkmate after 2N-1 plies.
    assert len(result.pv) == 2 * n - 1
    for text in result.pv:
        game.push(game.parse_move(text))
    assert not game.legal_moves()
    assert game.in_check() and game.terminal_value() == -1
    if n == 1:
        assert result.ponder is None  # nothing to ponder on after mate
    else:
        assert result.ponder == result.pv[1]


def test_mated_side_sees_its_fate() -> None:
    game = chess(mate_fens(2)[0])
    best = Searcher(4).search(game, Limits(mate=2, depth=5)).best
    assert best is not None
    game.push(game.parse_move(best))
    result = Searcher(4).search(game, Limits(depth=4))
    assert result.score == Mate(-1)


def test_checkmated_and_stalemated_roots_have_no_move() -> None:
    mated = chess("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    result = Searcher(1).search(mated, Limits(depth=3))
    assert (result.best, result.score) == (None, Mate(0))
    stalemate = chess("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    result = Searcher(1).search(stalemate, Limits(depth=3))
    assert (result.best, result.score) == (None, Cp(0))


def test_start_position_search_is_legal_and_deterministic() -> None:
    def run() -> tuple[int, tuple[str, ...], str | None]:
        game = chess()
        result = Searcher(8).search(game, Limits(depth=4))
        replay = chess()
        for text in result.pv:
            replay.push(replay.parse_move(text))
        return result.nodes, result.pv, result.ponder

    first = run()
    assert first == run()
    assert len(first[1]) >= 4 and first[2] == first[1][1]


def test_a_position_seen_once_before_is_still_played() -> None:
    """After Nf3 Nf6 Ng1 Ng8 the start position repeats: the search treats a repetition
    inside the tree as a draw, but the root itself must still get a move."""
    game = chess()
    for text in ("g1f3", "g8f6", "f3g1", "f6g8"):
        game.push(game.parse_move(text))
    result = Searcher(4).search(game, Limits(depth=3))
    assert result.best is not None and result.depth == 3


def test_losing_captures_are_tried_after_the_quiet_moves() -> None:
    """White's queen can take a pawn defended by a pawn (loses 850) or an undefended knight:
    with the exchange test the knight capture stays in the noisy stage and the pawn capture
    moves behind every quiet move; without it both keep the game's MVV-LVA order."""
    game = get_variant("chess").new("4k3/8/3p4/4p3/1n6/8/8/4QK2 w - - 0 1")
    take_pawn, take_knight = game.parse_move("e1e5"), game.parse_move("e1b4")
    stream = list(staged_moves(game, None, None, None, History(), exchange=True))
    assert sorted(m for m, _ in stream) == sorted(game.legal_moves())
    assert stream[0] == (take_knight, STAGE_NOISY)
    assert stream[-1] == (take_pawn, STAGE_LOSING)
    assert {stage for _, stage in stream[1:-1]} == {STAGE_QUIET}
    plain = [m for m, _ in staged_moves(game, None, None, None, History())]
    assert plain[:2] == [take_knight, take_pawn]


@pytest.mark.parametrize(
    ("variant", "capabilities"),
    [
        ("chess", {StaticExchange, CheckTest, CheckingPush}),
        ("tictactoe", set()),
        ("cfour", set()),
    ],
)
def test_capabilities_are_runtime_checkable_protocols(
    variant: str, capabilities: set[type]
) -> None:
    """What the search finds with one ``isinstance`` per search (engine.game)."""
    game = get_variant(variant).new()
    offered = {
        c for c in (StaticExchange, CheckTest, CheckingPush, ChanceGame) if isinstance(game, c)
    }
    assert offered == capabilities


def test_singular_extension_finds_the_only_move_at_depth_seven() -> None:
    """WAC.082: Bh7+ wins by a line of checks and only moves; singular extensions (on by
    default) search the only moves of that line a ply deeper (the other replies fail far
    below the table's score), and the search finds it at depth 7."""
    fen = "3rr1k1/pp3pp1/4b3/8/2P1B2R/6QP/P3q1P1/5R1K w - - 0 1"
    assert SearchConfig().singular
    result = Searcher(16).search(chess(fen), Limits(depth=7))
    assert str(result.best) == "e4h7"
