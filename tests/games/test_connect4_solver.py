"""The exact Connect Four solver against Pascal Pons' test sets, its best moves and PVs against
its own per-column scores, the score conversions and its limits (the UCI hook that plays with
it: ``test_connect4_play.py``).

CI solves every position of the end-game set (Test_L3_R1) and of the easy middle-game set
(Test_L2_R1), and a fixed stride sample of the medium middle-game set (Test_L2_R2) and of the
easy begin set (Test_L1_R1); whole sets, and the harder begin sets, go to
``bench/connect4_solver.py``.  Set format and provenance: ``shared/data/SOURCES.md`` section 6.
"""

from __future__ import annotations

import importlib.util
import itertools
import time
from types import ModuleType

import pytest

from engine.score import Cp, Mate, mate_in, mated_in, report
from games.connect4 import negamax, solver
from games.connect4.board import Connect4
from games.connect4.negamax import Negamax, bound_entry, prime_at_least
from games.connect4.solver import (
    Connect4Solver,
    SolveAbortedError,
    engine_score,
    mate_moves,
    win_score,
)
from tests.support.paths import REPO
from tests.support.pons import pons_cases


def solve_all(cases: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """(moves, expected, solved) for every case that disagrees, each from a cold solver."""
    solver = Connect4Solver()
    wrong = []
    for moves, expected in cases:
        solver.reset()
        score = solver.score(Connect4.from_moves(moves))
        if score != expected:
            wrong.append((moves, expected, score))
    return wrong


# -- the test sets ----------------------------------------------------------------------------
def test_issue_examples() -> None:
    """Pons' notation page: 4455 scores 18 (win with the 4th stone), 44455554221 scores -15."""
    solver = Connect4Solver()
    assert solver.score(Connect4.from_moves("4455")) == 18
    assert solver.score(Connect4.from_moves("44455554221")) == -15


def test_end_game_set_every_position() -> None:
    assert solve_all(pons_cases("Test_L3_R1")) == []


@pytest.mark.slow
def test_middle_game_easy_set_every_position() -> None:
    assert solve_all(pons_cases("Test_L2_R1")) == []


def test_middle_game_medium_set_sample() -> None:
    """Every 200th position from the 100th (5 of 1000; 5,000 to 60,000 nodes each)."""
    assert solve_all(pons_cases("Test_L2_R2", step=200, start=100)) == []


def test_begin_easy_set_sample() -> None:
    """Every 100th position (10 of 1000)."""
    assert solve_all(pons_cases("Test_L1_R1", step=100)) == []


def test_weak_solving_gives_the_sign() -> None:
    solver = Connect4Solver()
    for moves, expected in pons_cases("Test_L2_R1", step=25):
        solver.reset()
        assert solver.score(Connect4.from_moves(moves), weak=True) == (expected > 0) - (
            expected < 0
        )


def test_a_small_table_still_solves_exactly() -> None:
    """A table of 67 slots is overwritten over and over: proofs are lost, never corrupted."""
    solver = Connect4Solver(tt_entries=64)
    assert solver.table_entries == 67
    for moves, expected in pons_cases("Test_L2_R1", step=100):
        assert solver.score(Connect4.from_moves(moves)) == expected


def test_the_table_keeps_the_newest_result_of_a_slot() -> None:
    """Keys ``k`` and ``k + size`` share a slot: storing the second replaces the first, which
    then reads as absent (never as the other's bound); another slot's entry stays."""
    search = Negamax(10, lambda: None)
    size = search.entries
    assert size == prime_at_least(10) == 11
    key = 0b1011_0000_0001
    first, second = bound_entry(-3, False), bound_entry(5, True)
    search.store(key, first)
    search.store(key + 1, bound_entry(0, True))
    assert (search.probe(key), search.filled) == (first, 2)
    search.store(key + size, second)
    assert (search.probe(key), search.probe(key + size), search.filled) == (0, second, 2)
    assert search.probe(key + 1) == bound_entry(0, True)
    search.clear()
    assert (search.probe(key + size), search.filled) == (0, 0)


def test_clearing_the_table_forgets_every_entry_across_generations() -> None:
    """A clear moves to the next generation (every 63rd, a real zeroing): no older entry
    is read back, whatever generation wrote it, and the used slots count from zero."""
    search = Negamax(101, lambda: None)
    for round_ in range(130):
        assert search.filled == 0
        assert all(search.probe(key) == 0 for key in range(round_ - 1, round_ + 40))
        for key in range(round_, round_ + 40):
            search.store(key, bound_entry(round_ % 21, True))
        assert search.filled == 40
        assert search.probe(round_ + 39) == bound_entry(round_ % 21, True)
        search.clear()


def test_table_sizes_are_primes() -> None:
    """``key % size`` with a power of two would index by the left columns only."""
    assert [prime_at_least(n) for n in (0, 2, 64, 1 << 19, 1 << 23)] == [
        2,
        2,
        67,
        524_309,
        8_388_617,
    ]
    assert Connect4Solver().table_entries == 8_388_617


def test_table_survives_between_calls_and_reset_clears_it() -> None:
    moves, expected = pons_cases("Test_L2_R1")[3]
    solver = Connect4Solver()
    assert solver.score(Connect4.from_moves(moves)) == expected
    cold = solver.nodes
    assert solver.table_size > 0
    assert solver.score(Connect4.from_moves(moves)) == expected
    assert solver.nodes - cold < cold  # the second solve reuses the proofs
    solver.reset()
    assert (solver.nodes, solver.table_size) == (0, 0)


# -- best moves and principal variations ---------------------------------------------------------
@pytest.mark.parametrize("index", range(0, 1000, 100))
def test_best_moves_are_exactly_the_columns_that_keep_the_score(index: int) -> None:
    moves, expected = pons_cases("Test_L2_R1")[index]
    position = Connect4.from_moves(moves)
    solver = Connect4Solver()
    solution = solver.solve_position(position)
    assert solution.score == expected
    column_scores = solver.move_scores(position)
    assert max(column_scores.values()) == expected
    assert sorted(solution.best_moves) == sorted(
        col for col, score in column_scores.items() if score == expected
    )


@pytest.mark.parametrize("index", range(0, 1000, 100))
def test_pv_plays_out_the_proven_result(index: int) -> None:
    """The PV is legal and ends the game as the score says: a win with the winner's
    ``22 - |score|``-th stone after ``2·mate - 1`` plies, a loss after ``2·|mate|`` plies, or a
    full board for a draw."""
    moves, expected = pons_cases("Test_L3_R1")[index]
    position = Connect4.from_moves(moves)
    solution = Connect4Solver().solve_position(position)
    board = position.copy()
    for col in solution.pv:
        cell = board.drop_cell(col)
        assert cell is not None
        assert cell in board.legal_moves()
        board.push(cell)
    assert board.is_terminal()
    mate = solution.mate
    if expected == 0:
        assert mate is None
        assert board.winner is None and board.ply == 42
    elif expected > 0:
        assert mate is not None and len(solution.pv) == 2 * mate - 1
        assert board.winner == position.side
    else:
        assert mate is not None and len(solution.pv) == -2 * mate
        assert board.winner == 1 - position.side
    assert solution.stones == position.ply
    assert solution.outcome == ("win" if expected > 0 else "loss" if expected < 0 else "draw")


def test_pv_budget_truncates_only_the_pv() -> None:
    moves, expected = pons_cases("Test_L2_R1")[7]
    solution = Connect4Solver().solve_position(Connect4.from_moves(moves), pv_nodes=1)
    assert solution.score == expected
    assert 1 <= len(solution.pv) <= 2


def test_an_immediate_win_is_found_without_search() -> None:
    """X to move wins on b1 or f1 with its 4th stone: score 22 - 4 = 18.

    2  . . O O O . .
    1  . . X X X . .
       a b c d e f g
    """
    position = Connect4.from_moves("334455")
    solver = Connect4Solver()
    solution = solver.solve_position(position)
    assert solution.score == win_score(6) == 18
    assert solution.best_moves == (1, 5)
    assert solution.mate == 1
    assert solution.pv == (1,)


# -- score conversions ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("score", "stones", "mate"),
    [
        (18, 4, 2),  # 4455: the first player wins with its 4th stone, has played 2
        (-15, 11, -1),  # 44455554221: the first player (6 stones) wins with its 7th
        (1, 41, 1),  # the last stone wins
        (-1, 40, -1),  # the opponent's last stone wins
        (0, 20, None),
    ],
)
def test_mate_distances(score: int, stones: int, mate: int | None) -> None:
    assert mate_moves(score, stones) == mate
    if mate is None:
        assert engine_score(score, stones) == 0
        assert report(engine_score(score, stones)) == Cp(0)
    elif mate > 0:
        assert engine_score(score, stones) == mate_in(2 * mate - 1)
        assert report(engine_score(score, stones)) == Mate(mate)
    else:
        assert engine_score(score, stones) == mated_in(-2 * mate)
        assert report(engine_score(score, stones)) == Mate(mate)


def test_finished_games_cannot_be_solved() -> None:
    with pytest.raises(ValueError, match="game is over"):
        Connect4Solver().score(Connect4.from_moves("1212121"))


# -- limits -----------------------------------------------------------------------------------
def test_node_budget_aborts_and_the_solver_recovers() -> None:
    moves, expected = pons_cases("Test_L2_R1")[10]  # about 3,200 nodes from cold
    position = Connect4.from_moves(moves)
    solver = Connect4Solver()
    solver.limit(max_nodes=1000)
    with pytest.raises(SolveAbortedError, match="node budget"):
        solver.score(position)
    assert 1000 <= solver.nodes < 1000 + 1024
    solver.limit()
    assert solver.score(position) == expected


def test_time_budget_aborts() -> None:
    """A deadline already past stops the solve at the first check (1,024 nodes)."""
    moves, _ = pons_cases("Test_L1_R3")[0]
    solver = Connect4Solver()
    solver.limit(deadline=time.monotonic() - 1.0)
    with pytest.raises(SolveAbortedError, match="time budget"):
        solver.score(Connect4.from_moves(moves))
    assert solver.nodes == 1024


def test_progress_is_reported_every_check_interval() -> None:
    moves, _ = pons_cases("Test_L2_R2")[0]
    solver = Connect4Solver()
    seen: list[int] = []
    solver.report_progress(seen.append)
    solver.score(Connect4.from_moves(moves))
    # Every null-window probe counts its own 1,024 nodes from where it starts.
    assert len(seen) >= 2
    assert seen[0] >= 1024 and seen[-1] <= solver.nodes
    assert all(later - earlier >= 1024 for earlier, later in itertools.pairwise(seen))


def test_stop_flag_aborts() -> None:
    moves, _ = pons_cases("Test_L2_R2")[0]
    solver = Connect4Solver()
    solver.limit(stopped=lambda: True)
    with pytest.raises(SolveAbortedError, match="stopped"):
        solver.score(Connect4.from_moves(moves))


def test_probes_narrow_to_the_score() -> None:
    moves, expected = pons_cases("Test_L2_R1")[1]
    score, steps = Connect4Solver().probes(Connect4.from_moves(moves))
    assert score == expected
    assert steps[-1][0] == expected
    lows = [low for low, _ in steps]
    highs = [high for _, high in steps]
    assert lows == sorted(lows) and highs == sorted(highs, reverse=True)


# -- compiled and pure Python -------------------------------------------------------------------
def _pure_negamax() -> ModuleType:
    """``games/connect4/negamax.py`` loaded from its source, as plain Python, even where the
    installed module is mypyc's extension."""
    spec = importlib.util.spec_from_file_location(
        "negamax_pure_source", REPO / "games" / "connect4" / "negamax.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "index"), [("Test_L2_R2", 0), ("Test_L1_R1", 0), ("Test_L1_R2", 0), ("Test_L1_R3", 0)]
)
def test_compiled_and_pure_search_the_same_tree(
    name: str, index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The installed search (compiled unless BRUDNO_PURE_PYTHON) and the source run as
    plain Python visit the same nodes: the same count, and the same table word for word,
    at a node budget of 30,000 (the harder positions stop there, the easier ones finish with
    the same score)."""
    moves, expected = pons_cases(name)[index]
    position = Connect4.from_moves(moves)
    pure = _pure_negamax()
    assert pure.__file__.endswith(".py")
    outcomes = []
    for search_class in (negamax.Negamax, pure.Negamax):
        monkeypatch.setattr(solver, "Negamax", search_class)
        probe = Connect4Solver(tt_entries=50_000)
        probe.limit(max_nodes=30_000)
        try:
            score: int | None = probe.score(position)
        except SolveAbortedError:
            score = None
        table = probe._search.table
        outcomes.append(
            (score, probe.nodes, probe.table_size, [table[i] for i in range(len(table))])
        )
    compiled, plain = outcomes
    assert compiled[:3] == plain[:3]
    assert compiled[3] == plain[3]
    assert compiled[0] in (None, expected)
    assert compiled[2] > 1000
