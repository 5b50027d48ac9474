"""Lazy SMP: the parallel searcher with real helper processes sharing a table.

No test here asserts on speed (that is bench/threads.py); they assert what must hold however
the processes are scheduled: legal moves and right values for every game, node counts that
include the helpers, helpers that survive nothing they should not, a killed helper that costs
the search nothing but itself.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator

import chess
import pytest

from engine.control import SearchControl
from engine.info import SearchInfo
from engine.limits import Limits
from engine.score import Mate, Reported
from engine.search import Searcher
from engine.smp.helper import HELPER_NICENESS, SKIP_PHASE, SKIP_SIZE, helper_limits, skips
from engine.smp.searcher import ParallelSearcher
from games.registry import GAMES
from tests.support.processes import alive, wait_until

HOPELESS_DEPTH = 40
"""A depth no helper-less middlegame search reaches while helpers run: stops a broken test."""
MIDDLEGAME = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


@pytest.fixture
def searcher() -> Iterator[ParallelSearcher]:
    parallel = ParallelSearcher(8, threads=3)
    yield parallel
    parallel.close()


def outcome(score: Reported | None) -> int:
    """+1 a win, 0 a draw (or an even score), -1 a loss, for the side to move."""
    assert score is not None
    if isinstance(score, Mate):
        return 1 if score.moves > 0 else -1
    return (score.value > 0) - (score.value < 0)


def test_helpers_start_once_and_are_kept_across_searches(searcher: ParallelSearcher) -> None:
    pids = searcher.helper_pids
    assert len(pids) == 2 and all(alive(p) for p in pids)
    for _ in range(3):
        result = searcher.search(GAMES["chess"].new(MIDDLEGAME), Limits(depth=4))
        assert result.best is not None
    assert searcher.helper_pids == pids


def test_helpers_yield_the_cpu_to_the_main_search(searcher: ParallelSearcher) -> None:
    """With more processes than cores the main search (clock, move) must keep its pace."""
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    for pid in searcher.helper_pids:
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, mine + HELPER_NICENESS)


@pytest.mark.parametrize(
    ("variant", "fen", "depth", "value"),
    [
        ("tictactoe", None, 9, 0),  # solved: a draw with best play
        ("grundy", "7 w 1", 8, -1),  # Grundy value 0: the first player loses
        ("cfour", None, 6, None),  # too deep to solve here: any legal move
        ("chess", "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 4, 1),  # back-rank mate: Ra8#
    ],
)
def test_every_game_gets_a_legal_move_and_the_sequential_value(
    searcher: ParallelSearcher, variant: str, fen: str | None, depth: int, value: int | None
) -> None:
    game = GAMES[variant].new(fen)
    result = searcher.search(game, Limits(depth=depth))
    assert result.best is not None
    assert game.parse_move(result.best) in game.legal_moves()
    sequential = Searcher(8).search(GAMES[variant].new(fen), Limits(depth=depth))
    if value is not None:
        assert (outcome(result.score), outcome(sequential.score)) == (value, value)


def test_reported_nodes_count_the_helpers(searcher: ParallelSearcher) -> None:
    """An infinite search, stopped only once the helpers have counted nodes: however slowly
    the helpers are scheduled, the test never races them against a clock."""
    pool = searcher._pool
    assert pool is not None
    infos: list[SearchInfo] = []
    control = SearchControl()

    def stop_once_helpers_searched(info: SearchInfo) -> None:
        infos.append(info)
        if info.pv and (pool.nodes(pool._job) > 0 or info.depth >= HOPELESS_DEPTH):
            control.stop()

    result = searcher.search(
        GAMES["chess"].new(MIDDLEGAME),
        Limits(infinite=True),
        control=control,
        on_info=stop_once_helpers_searched,
    )
    main_nodes = [i for i in infos if i.pv]
    assert main_nodes
    helpers = pool.nodes(pool._job)
    assert helpers > 0
    assert result.nodes >= helpers
    assert main_nodes[-1].nps == main_nodes[-1].nodes * 1000 // max(1, main_nodes[-1].time_ms)


def test_a_killed_helper_costs_only_itself(searcher: ParallelSearcher) -> None:
    victim = searcher.helper_pids[0]
    game = GAMES["chess"].new(MIDDLEGAME)
    infos: list[SearchInfo] = []

    def kill_on_first_line(info: SearchInfo) -> None:
        infos.append(info)
        if len(infos) == 1:
            os.kill(victim, signal.SIGKILL)

    result = searcher.search(game, Limits(movetime=800), on_info=kill_on_first_line)
    assert result.best is not None and game.parse_move(result.best) in game.legal_moves()
    assert wait_until(lambda: not alive(victim))  # the kernel ends it when it next runs
    again = searcher.search(GAMES["chess"].new(MIDDLEGAME), Limits(depth=4))
    assert again.best is not None
    pool = searcher._pool
    assert pool is not None and pool.restarts == 1
    assert victim not in searcher.helper_pids and len(searcher.helper_pids) == 2


def test_a_helper_whose_pipe_breaks_on_the_send_is_replaced_for_that_search(
    searcher: ParallelSearcher,
) -> None:
    """A helper killed just before a search may still look alive when the search starts and only
    fail the send (the kernel reaps in its own time): it is replaced then, not a search later.
    Stopped, with our end of its pipe shut for writing, a helper is in exactly that state."""
    pool = searcher._pool
    assert pool is not None
    victim = pool._helpers[0]
    pid = victim.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    with socket.socket(fileno=os.dup(victim.conn.fileno())) as end:
        end.shutdown(socket.SHUT_WR)
    result = searcher.search(GAMES["chess"].new(MIDDLEGAME), Limits(depth=4))
    assert result.best is not None
    assert pool.restarts == 1
    assert pid not in searcher.helper_pids and len(searcher.helper_pids) == 2
    assert not alive(pid)  # the stopped one is killed, not left behind


def test_closing_ends_every_helper() -> None:
    parallel = ParallelSearcher(4, threads=4)
    pids = parallel.helper_pids
    parallel.search(GAMES["chess"].new(), Limits(depth=3))
    parallel.close()
    assert len(pids) == 3
    assert not any(alive(pid) for pid in pids)


def test_threads_change_starts_and_ends_helpers_and_one_thread_is_the_plain_search() -> None:
    parallel = ParallelSearcher(4, threads=2)
    try:
        first = parallel.helper_pids
        parallel.set_threads(3)
        assert len(parallel.helper_pids) == 2 and not any(alive(p) for p in first)
        parallel.set_threads(1)
        assert parallel.helper_pids == [] and not parallel.tt.is_shared
        # With one thread it is the sequential search, node for node.
        ours = parallel.search(GAMES["chess"].new(MIDDLEGAME), Limits(depth=5))
        plain = Searcher(4).search(GAMES["chess"].new(MIDDLEGAME), Limits(depth=5))
        assert (ours.nodes, ours.best) == (plain.nodes, plain.best)
    finally:
        parallel.close()


def test_hash_resize_and_clear_reach_the_helpers(searcher: ParallelSearcher) -> None:
    searcher.search(GAMES["chess"].new(MIDDLEGAME), Limits(depth=4))
    searcher.resize_hash(2)
    assert searcher.tt.size_mb == 2
    searcher.clear()
    result = searcher.search(GAMES["chess"].new(MIDDLEGAME), Limits(depth=4))
    assert result.best is not None
    assert len(searcher.helper_pids) == 2


def test_switching_games_does_not_hand_a_helper_foreign_moves(searcher: ParallelSearcher) -> None:
    for variant in ("chess", "cfour", "tictactoe", "grundy", "chess"):
        game = GAMES[variant].new()
        result = searcher.search(game, Limits(movetime=300))
        assert result.best is not None and game.parse_move(result.best) in game.legal_moves()
    pool = searcher._pool
    assert pool is not None and pool.restarts == 0  # no helper crashed on a foreign move


def test_stop_ends_the_helpers_searches_too(searcher: ParallelSearcher) -> None:
    """After the main search returns, the helpers stop counting within a poll interval."""
    searcher.search(GAMES["chess"].new(MIDDLEGAME), Limits(movetime=500))
    pool = searcher._pool
    assert pool is not None
    assert pool.wait_idle(timeout=30.0)  # generous: only a hang fails
    job = pool._job
    counted = pool.nodes(job)
    time.sleep(0.2)
    assert pool.nodes(job) == counted


def test_helpers_search_without_clock_or_node_limit_but_keep_depth_and_root_moves() -> None:
    limits = Limits(wtime=1000, btime=1000, nodes=5, depth=7, mate=3, searchmoves=("e2e4",))
    helper = helper_limits(limits)
    assert (helper.wtime, helper.nodes, helper.movetime) == (None, None, None)
    assert (helper.depth, helper.mate, helper.searchmoves, helper.infinite) == (
        7,
        3,
        ("e2e4",),
        True,
    )


def test_helpers_skip_depths_in_stockfishs_pattern() -> None:
    assert len(SKIP_SIZE) == len(SKIP_PHASE) == 20
    # Helper 0 skips every other depth; helper 2 (size 2, phase 0) two on, two off.
    assert [skips(0, 0, d) for d in range(1, 7)] == [True, False, True, False, True, False]
    assert [skips(2, 0, d) for d in range(1, 9)] == [
        False,
        True,
        True,
        False,
        False,
        True,
        True,
        False,
    ]


def test_a_skipping_search_reports_only_the_depths_it_searched() -> None:
    infos: list[SearchInfo] = []
    Searcher(4).search(
        GAMES["chess"].new(MIDDLEGAME),
        Limits(depth=6),
        on_info=infos.append,
        skip_depth=lambda depth: depth % 2 == 0,
    )
    depths = sorted({i.depth for i in infos if i.pv})
    assert depths == [1, 3, 5, 6]  # never the first, never the last allowed


def test_every_line_reported_with_helpers_is_playable(searcher: ParallelSearcher) -> None:
    """A helper's line is formatted in the helper's process and may be the one played: each
    line reported through the parallel searcher is checked by python-chess, move by move."""
    board = chess.Board()
    for _ in range(12):
        infos: list[SearchInfo] = []
        result = searcher.search(
            GAMES["chess"].new(board.fen()), Limits(movetime=150), on_info=infos.append
        )
        for line in [i.pv for i in infos if i.pv] + [result.pv]:
            replay = board.copy()
            for text in line:
                move = chess.Move.from_uci(text)
                assert move in replay.legal_moves, (board.fen(), line)
                replay.push(move)
        assert result.best is not None
        board.push_uci(result.best)
        if board.is_game_over():
            break
