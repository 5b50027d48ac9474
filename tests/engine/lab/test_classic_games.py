"""The classic algorithms on real games, and the ClassicSearcher that plays with them.

Tic-tac-toe and chess come from the registry; chess positions from random playouts and from
the mate-in-2 test file.  Every property here is exact (values, node counts), so the tests use
depth and node limits only; clocks are fake where time matters.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from brudno.lab.runs import LabConfig, run_lab
from brudno.lab.sources import GameSource
from engine.control import SearchControl
from engine.game import Game
from engine.info import SearchInfo
from engine.lab.classic import (
    DETERMINISTIC_ALGORITHMS,
    UCI_ALGORITHMS,
    ClassicSearcher,
    MoveOrder,
    search,
)
from engine.limits import Limits
from engine.perft import count_tree
from engine.score import Cp, Mate, mate_in
from games.registry import get_variant
from tests.support.paths import DATA, REPO


def tictactoe(fen: str | None = None) -> Game[Any]:
    return get_variant("tictactoe").new(fen)


def chess(fen: str | None = None) -> Game[Any]:
    return get_variant("chess").new(fen)


def legal_texts(game: Game[Any]) -> set[str]:
    return {game.format_move(m) for m in game.legal_moves()}


def playout(game: Game[Any], plies: int, rng: random.Random) -> Game[Any]:
    """The position after up to ``plies`` random legal moves (fewer if the game ends)."""
    for _ in range(plies):
        moves = game.legal_moves()
        if not moves or game.is_terminal():
            break
        game.push(rng.choice(moves))
    return get_variant(game.variant).new(game.fen())  # a fresh history


# -- 6. tic-tac-toe from the empty board -------------------------------------------------
def test_minimax_visits_the_whole_tic_tac_toe_tree() -> None:
    """549,946 nodes (root included) and 255,168 finished games (SOURCES.md, section 7)."""
    board = tictactoe()
    result = search("minimax", board, 9)
    assert result.nodes == 549_946 == count_tree(tictactoe()).nodes
    assert result.leaves == 255_168
    assert result.horizon == 0  # every line ended the game: the value is exact
    assert result.value == 0  # a draw
    assert board.format_move(result.best) in {"P@a1", "P@c1", "P@a3", "P@c3", "P@b2"}


def test_the_tic_tac_toe_table_in_the_docs_is_current() -> None:
    """docs/lab.md records every algorithm's counts; they must be what the lab prints."""
    text = (REPO / "docs" / "lab.md").read_text(encoding="utf-8")
    section = text.split("<!-- lab:tictactoe -->", 1)[1].split("<!-- /lab:tictactoe -->", 1)[0]
    documented = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0] in DETERMINISTIC_ALGORITHMS:
            documented[cells[0]] = tuple(int(re.sub(r"[,\s]", "", c)) for c in cells[2:5])
    assert set(documented) == set(DETERMINISTIC_ALGORITHMS)
    fast = [a for a in DETERMINISTIC_ALGORITHMS if a not in ("minimax", "negamax")]
    rows = run_lab(GameSource("tictactoe", None, 9), LabConfig(tuple(fast), (9,)))
    for row in rows:
        r = row.result
        assert documented[r.algorithm] == (r.nodes, r.leaves, r.passes), r.algorithm
    assert documented["minimax"][:2] == documented["negamax"][:2] == (549_946, 255_168)


# -- 1. one value, on real positions ------------------------------------------------------
def tictactoe_cases() -> list[tuple[str, int]]:
    rng = random.Random(6)
    cases = []
    for _ in range(30):
        board = playout(tictactoe(), rng.randint(1, 6), rng)  # the empty board is tested above
        cases.append((board.fen(), rng.randint(1, 9)))
    return cases


@pytest.mark.parametrize(("fen", "depth"), tictactoe_cases())
def test_all_algorithms_agree_on_tic_tac_toe(fen: str, depth: int) -> None:
    for order in MoveOrder:
        values = {a: search(a, tictactoe(fen), depth, order=order).value for a in UCI_ALGORITHMS}
        assert len(set(values.values())) == 1, values


def chess_cases() -> list[tuple[str, int]]:
    rng = random.Random(2024)
    cases = [(playout(chess(), rng.randint(4, 30), rng).fen(), 2) for _ in range(8)]
    cases += [(playout(chess(), rng.randint(2, 4), rng).fen(), 3) for _ in range(2)]
    # Mates in two with few replies: depth 3 must find mate in 3 plies everywhere.
    cases += [
        ("5bk1/6p1/5PQ1/pp4Pp/2p4P/P2r4/1PK5/8 w - - 1 1", 3),
        ("8/8/p3p3/3b1pR1/1B3P1k/8/4r1PK/8 w - - 1 1", 3),
    ]
    return cases


@pytest.mark.parametrize(("fen", "depth"), chess_cases())
def test_all_algorithms_agree_on_chess(fen: str, depth: int) -> None:
    values = {a: search(a, chess(fen), depth).value for a in DETERMINISTIC_ALGORITHMS}
    assert len(set(values.values())) == 1, values


def test_mates_in_two_are_found_by_every_algorithm() -> None:
    mates = (DATA / "chess" / "mates" / "mate2.fen").read_text().split("\n")
    assert "5bk1/6p1/5PQ1/pp4Pp/2p4P/P2r4/1PK5/8 w - - 1 0" in mates  # from the test data
    for fen in ("5bk1/6p1/5PQ1/pp4Pp/2p4P/P2r4/1PK5/8 w - - 1 1",):
        for algorithm in ("alphabeta", "negascout", "mtdf", "sssstar", "dualstar"):
            board = chess(fen)
            result = search(algorithm, board, 3)
            assert result.value == mate_in(3)
            board.push(result.best)  # the first move of the mate, then every reply loses
            for reply in board.legal_moves():
                board.push(reply)
                assert search("alphabeta", board, 1).value == mate_in(1)
                board.pop()


def test_a_finished_game_is_a_leaf_at_the_root() -> None:
    over = tictactoe("PPP/pp1/3[PPpp] b - - 0 3")  # X has completed the top rank
    for algorithm in UCI_ALGORITHMS:
        result = search(algorithm, over, 4)
        assert (result.value, result.nodes, result.leaves, result.best) == (-mate_in(0), 1, 1, None)


# -- the ClassicSearcher -----------------------------------------------------------------
class FakeClock:
    """Advances one millisecond per reading; runs hooks at given readings."""

    def __init__(self, hooks: dict[int, Any] | None = None) -> None:
        self.reads = 0
        self.hooks = hooks or {}

    def __call__(self) -> float:
        self.reads += 1
        hook = self.hooks.get(self.reads)
        if hook is not None:
            hook()
        return self.reads / 1000.0


@pytest.mark.parametrize("algorithm", UCI_ALGORITHMS)
def test_searcher_plays_tic_tac_toe_perfectly(algorithm: str) -> None:
    """Iterative deepening until the tree is exhausted, then the solved value (a draw).

    From X's centre opening, so that minimax's nine full iterations stay quick."""
    infos: list[SearchInfo] = []
    board = tictactoe("3/1P1/3[PPPPpppp] b - - 0 1")
    fen = board.fen()
    result = ClassicSearcher(algorithm).search(board, Limits(infinite=True), on_info=infos.append)
    assert board.fen() == fen
    assert result.depth == 8  # no line goes deeper: iteration 8 saw no horizon, so it stopped
    assert result.score == Cp(0)
    assert result.best in {"P@a1", "P@c1", "P@a3", "P@c3"}  # O must take a corner
    lines = [i for i in infos if i.pv]
    assert [i.depth for i in lines] == list(range(1, 9))
    assert all(i.nodes > 0 for i in lines)
    assert [i.nodes for i in lines] == sorted(i.nodes for i in lines)
    assert result.nodes == lines[-1].nodes
    assert any(i.string and i.string.startswith(f"{algorithm} depth 8") for i in infos)


def test_searcher_finds_the_winning_move() -> None:
    """
    3  . . .
    2  O O .      X to move: c1 completes the first rank (and O threatens c2).
    1  X X .
       a b c
    """
    board = tictactoe("3/pp1/PP1[PPPpp] w - - 0 3")
    for algorithm in UCI_ALGORITHMS:
        result = ClassicSearcher(algorithm).search(board, Limits(depth=4))
        assert (result.best, result.score) == ("P@c1", Mate(1)), algorithm


def test_searcher_depth_and_node_limits() -> None:
    result = ClassicSearcher("negascout").search(chess(), Limits(depth=2))
    assert result.depth == 2
    assert result.best in legal_texts(chess())
    for algorithm in ("alphabeta", "mtdf"):
        limited = ClassicSearcher(algorithm).search(chess(), Limits(nodes=1500))
        assert limited.nodes == 1500  # exact: the search stops at the node that reaches it
        assert limited.best is not None


def test_searcher_returns_a_legal_move_when_stopped_at_once() -> None:
    result = ClassicSearcher("minimax").search(chess(), Limits(nodes=1))
    assert (result.nodes, result.depth, result.score) == (1, 0, None)
    assert result.best in legal_texts(chess())


def test_searcher_multipv_and_searchmoves() -> None:
    infos: list[SearchInfo] = []
    result = ClassicSearcher("alphabeta").search(
        chess(), Limits(depth=2), on_info=infos.append, multipv=3
    )
    last = [i for i in infos if i.pv and i.depth == 2]
    assert [i.multipv for i in last] == [1, 2, 3]
    assert len({i.pv[0] for i in last}) == 3
    scores = [i.score.value for i in last if isinstance(i.score, Cp)]
    assert scores == sorted(scores, reverse=True)
    assert result.lines == tuple(last)
    only = ClassicSearcher("mtdf").search(
        chess(), Limits(depth=2, searchmoves=("a2a3", "0000", "h2h4"))
    )
    assert only.best in {"a2a3", "h2h4"}


def test_searcher_mate_limit_stops_when_the_mate_is_proven() -> None:
    infos: list[SearchInfo] = []
    fen = "8/8/p3p3/3b1pR1/1B3P1k/8/4r1PK/8 w - - 1 1"
    result = ClassicSearcher("alphabeta").search(
        chess(fen), Limits(mate=2, depth=8), on_info=infos.append
    )
    assert result.score == Mate(2)
    assert result.depth == 3


def test_searcher_respects_the_clock() -> None:
    """Fake clock: one ms per reading, polled every 256 nodes, so the run is deterministic."""
    clock = FakeClock()
    result = ClassicSearcher("alphabeta", clock=clock).search(
        chess(), Limits(movetime=40), move_overhead_ms=0
    )
    assert 1 <= result.depth < 10
    assert result.time_ms <= 41  # the hard budget aborts the running iteration


def test_searcher_ignores_the_clock_while_pondering_until_ponderhit() -> None:
    limits = Limits(movetime=5, ponder=True, depth=3)
    clock = FakeClock()
    pondering = SearchControl(pondering=True, clock=clock)
    result = ClassicSearcher("minimax", clock=clock).search(
        chess(), limits, control=pondering, move_overhead_ms=0
    )
    assert result.depth == 3  # the clock never stopped it: the depth limit did

    clock = FakeClock()
    control = SearchControl(pondering=True, clock=clock)

    def on_info(info: SearchInfo) -> None:
        if info.depth == 1 and info.pv:
            control.ponderhit()  # the opponent played the expected move

    hit = ClassicSearcher("minimax", clock=clock).search(
        chess(), limits, control=control, on_info=on_info, move_overhead_ms=0
    )
    assert hit.depth == 2  # from the ponderhit on, the 5 ms budget cut iteration 3 short


def test_searcher_stops_on_request() -> None:
    """``stop`` during iteration 3 (sent here from the depth-2 report, as a GUI would from
    another thread): the move comes from the last completed iteration."""
    control = SearchControl()

    def on_info(info: SearchInfo) -> None:
        if info.depth == 2 and info.pv:
            control.stop()

    result = ClassicSearcher("minimax").search(
        chess(), Limits(infinite=True), control=control, on_info=on_info
    )
    assert result.depth == 2
    assert result.nodes < 1 + 20 + 400 + 8902  # iteration 3 was cut short
    assert result.best in legal_texts(chess())


def test_searcher_with_no_legal_move() -> None:
    mated = chess("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    result = ClassicSearcher("alphabeta").search(mated, Limits(depth=3))
    assert (result.best, result.score, result.nodes) == (None, Mate(0), 0)


def test_searcher_configuration() -> None:
    searcher = ClassicSearcher("mtdf", hash_mb=1)
    assert searcher.tt_capacity > 2000
    searcher.algorithm = "sssstar"
    with pytest.raises(ValueError, match="playable"):
        searcher.algorithm = "star1"
    with pytest.raises(ValueError, match="playable"):
        ClassicSearcher("pvs")
    with pytest.raises(ValueError, match="1 MiB"):
        searcher.resize_hash(0)
    searcher.clear()


def test_lab_runs_on_chess_and_agrees() -> None:
    rows = run_lab(GameSource("chess", None, 2), LabConfig(DETERMINISTIC_ALGORITHMS, (1, 2)))
    assert len(rows) == 2 * len(DETERMINISTIC_ALGORITHMS)
    for depth in (1, 2):
        assert len({r.result.value for r in rows if r.result.depth == depth}) == 1
    depth2 = {r.result.algorithm: r for r in rows if r.result.depth == 2}
    assert depth2["minimax"].result.nodes == 1 + 20 + 400
    assert depth2["alphabeta"].result.nodes < depth2["minimax"].result.nodes
    assert all(r.best in legal_texts(chess()) for r in rows)
