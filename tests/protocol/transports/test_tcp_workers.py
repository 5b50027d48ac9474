"""ProcessRunner: searches in a worker process, steered from the event loop."""

from __future__ import annotations

import asyncio
import os
import signal

import chess
import pytest

from engine.control import SearchControl
from engine.emergency import emergency_move
from engine.info import Bound, SearchInfo, ignore_info
from engine.limits import Limits
from engine.perft import divide
from engine.search import Searcher
from games.registry import get_variant
from protocol.uci.runner import run_search
from protocol.uci.session import EngineSession
from protocol.uci.workers import ProcessRunner, WorkerDiedError, WorkerError, WorkerJobError
from tests.support.tcp_helpers import ensure_warm, pid_alive, wait_until, worker_pids


def _explode(text: str) -> None:
    raise ValueError(text)


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str, *, droppable: bool = False) -> None:
        self.lines.append(line)


async def _search(
    runner: ProcessRunner,
    limits: Limits,
    control: SearchControl | None = None,
    fen: str | None = None,
) -> tuple[str | None, list[SearchInfo]]:
    infos: list[SearchInfo] = []
    result = await runner.search(
        get_variant("chess").new(fen),
        limits,
        control or SearchControl(),
        infos.append,
        multipv=1,
        move_overhead_ms=0,
    )
    return result.best, infos


async def _infinite_search(
    runner: ProcessRunner,
) -> tuple[SearchControl, asyncio.Task[tuple[str | None, list[SearchInfo]]]]:
    """Start ``go infinite`` from the start position; return once its worker is running."""
    control = SearchControl()
    search = asyncio.create_task(_search(runner, Limits(infinite=True), control))
    await wait_until(lambda: runner.pid is not None, "the worker started")
    return control, search


async def test_search_runs_in_one_reused_worker_and_reports_infos() -> None:
    await ensure_warm()
    runner = ProcessRunner(1)
    assert runner.pid is None  # lazily started
    try:
        best, infos = await _search(runner, Limits(depth=2))
        pid = runner.pid
        assert pid is not None and pid != os.getpid()
        assert chess.Move.from_uci(best or "") in chess.Board().legal_moves
        assert [i.depth for i in infos if i.pv] == [1, 2]  # in the order they were reported
        fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # back-rank mate in one
        best, _ = await _search(runner, Limits(depth=3), fen=fen)
        assert best == "a1a8"
        assert runner.pid == pid and runner.started == 1
    finally:
        await runner.close()
    await wait_until(lambda: not pid_alive(pid), "the worker is gone")


async def test_stop_and_ponderhit_reach_the_worker() -> None:
    await ensure_warm()
    runner = ProcessRunner(1)
    try:
        control, search = await _infinite_search(runner)
        await asyncio.sleep(0.2)
        control.stop()
        best, _ = await search  # an infinite search ends only because stop arrived
        assert chess.Move.from_uci(best or "") in chess.Board().legal_moves

        # Pondering ignores the clock: only the forwarded ponderhit lets movetime expire.
        control = SearchControl(pondering=True)
        search = asyncio.create_task(_search(runner, Limits(ponder=True, movetime=50), control))
        await asyncio.sleep(0.3)
        assert not search.done()
        control.ponderhit()
        best, _ = await search
        assert best is not None
    finally:
        await runner.close()


async def test_call_resize_clear_and_job_errors() -> None:
    await ensure_warm()
    runner = ProcessRunner(2)
    try:
        await runner.resize_hash(3)  # before the worker exists: only remembered
        assert runner.hash_mb == 3 and runner.pid is None
        counts = await runner.call(divide, get_variant("chess").new(), 3)
        assert sum(n for _, n in counts) == 8902
        pid = runner.pid
        await runner.resize_hash(1)
        await runner.clear()
        with pytest.raises(WorkerJobError, match="ValueError: broken on purpose"):
            await runner.call(_explode, "broken on purpose")
        assert runner.pid == pid  # a failing job does not cost the worker
    finally:
        await runner.close()
    with pytest.raises(WorkerError):
        await runner.call(divide, get_variant("chess").new(), 1)


async def test_a_dead_worker_fails_the_job_and_is_replaced() -> None:
    await ensure_warm()
    runner = ProcessRunner(1)
    try:
        _, search = await _infinite_search(runner)
        first = runner.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        with pytest.raises(WorkerDiedError):
            await search
        best, _ = await _search(runner, Limits(depth=1))
        assert best is not None
        assert runner.started == 2 and runner.pid not in (None, first)
    finally:
        await runner.close()


async def test_a_death_the_loop_has_not_read_yet_is_reported_not_answered_for() -> None:
    """On a loaded machine the watchdog's timer can fire after ``stop`` before the event loop
    has read the dead worker's pipe: the job must still fail as a death (which the session
    reports), not end as if the worker had merely been slow."""
    await ensure_warm()
    runner = ProcessRunner(1)
    try:
        control, search = await _infinite_search(runner)
        await asyncio.sleep(0.2)  # some iterations reported: the watchdog has a move to play
        worker = runner._worker
        assert worker is not None and worker.process.pid is not None
        # A frozen worker still takes the forwarded ``stop`` into its pipe...
        os.kill(worker.process.pid, signal.SIGSTOP)
        # ...and the loop stops watching the pipe, as if it had not got round to it yet.
        asyncio.get_running_loop().remove_reader(worker.conn.fileno())
        control.stop()
        # It dies within the watchdog's grace; joining blocks the loop, so the timer is due
        # (and the pipe at its end) when the loop runs again.
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.join(10)
        with pytest.raises(WorkerDiedError):
            await search
    finally:
        await runner.close()


async def test_session_still_answers_bestmove_when_its_worker_dies() -> None:
    """Every ``go`` gets one ``bestmove``, even when the process searching it is killed."""
    await ensure_warm()
    before = worker_pids()
    sink = ListSink()
    session = EngineSession(sink, runner_factory=ProcessRunner)
    await session.handle("position startpos moves e2e4")
    await session.handle("go infinite")
    await wait_until(lambda: worker_pids() - before, "the worker started")
    (pid,) = worker_pids() - before
    os.kill(pid, signal.SIGKILL)
    await session.handle("stop")
    await wait_until(lambda: any(s.startswith("bestmove") for s in sink.lines), "bestmove")
    best = next(s for s in sink.lines if s.startswith("bestmove")).split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(best) in board.legal_moves
    assert any("internal error in search" in s for s in sink.lines)
    sink.lines.clear()
    await session.handle("go depth 1")  # a fresh worker takes over
    await wait_until(lambda: any(s.startswith("bestmove") for s in sink.lines), "bestmove")
    await session.close()
    await wait_until(lambda: not (worker_pids() - before), "no worker left")


async def test_watchdog_plays_the_last_iteration_for_a_worker_that_misses_its_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A worker that gets no CPU past its deadline (here: frozen with SIGSTOP) does not
    delay ``bestmove``: the parent answers with the last completed iteration's move."""
    await ensure_warm()
    runner = ProcessRunner(1)
    infos: list[SearchInfo] = []
    try:
        search = asyncio.create_task(
            runner.search(
                get_variant("chess").new(),
                Limits(movetime=1000),
                SearchControl(),
                infos.append,
                multipv=1,
                move_overhead_ms=0,
            )
        )
        await wait_until(lambda: any(i.pv for i in infos), "the first iteration")
        pid = runner.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        try:
            with caplog.at_level("INFO", logger="protocol.uci.workers"):
                result = await search
        finally:
            os.kill(pid, signal.SIGCONT)
        assert "missed its deadline" in caplog.text
        completed = [i for i in infos if i.pv and i.multipv == 1 and i.bound is Bound.EXACT]
        assert result.best == completed[-1].pv[0] and result.depth == completed[-1].depth
        best, _ = await _search(runner, Limits(depth=1))  # the thawed worker serves on
        assert best is not None and runner.pid == pid and runner.started == 1
    finally:
        await runner.close()


async def test_watchdog_plays_an_emergency_move_when_no_iteration_completed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A worker frozen before its first iteration: the move still comes on time, it is the
    emergency move (the best one-ply guess, engine/emergency.py), and the client is told it
    was not searched."""
    await ensure_warm()
    runner = ProcessRunner(1)
    infos: list[SearchInfo] = []
    try:
        await _search(runner, Limits(depth=1))  # the worker exists
        pid = runner.pid
        assert pid is not None
        game = get_variant("chess").new()
        os.kill(pid, signal.SIGSTOP)
        try:
            with caplog.at_level("WARNING", logger="protocol.uci.workers"):
                result = await runner.search(
                    game,
                    Limits(movetime=100),
                    SearchControl(),
                    infos.append,
                    multipv=1,
                    move_overhead_ms=0,
                )
        finally:
            os.kill(pid, signal.SIGCONT)
        assert result.best == game.format_move(emergency_move(game))
        assert [i.string for i in infos] == [
            "warning: the search got no CPU time before it had to answer; "
            "playing an unsearched move"
        ]
        assert "completed no iteration in time" in caplog.text
        best, _ = await _search(runner, Limits(depth=2))
        assert best is not None and runner.pid == pid
    finally:
        await runner.close()


async def test_the_algorithm_option_reaches_the_worker() -> None:
    """The worker runs the same search as an in-process runner would: same move, same nodes."""
    await ensure_warm()
    runner = ProcessRunner(1)
    game = get_variant("chess").new()
    nodes = {}
    try:
        for algorithm in ("pvs", "alphabeta"):
            expected = run_search(
                Searcher(1),
                algorithm,
                game.copy(),
                Limits(depth=2),
                control=SearchControl(),
                on_info=ignore_info,
                multipv=1,
                move_overhead_ms=0,
            )
            got = await runner.search(
                game.copy(),
                Limits(depth=2),
                SearchControl(),
                ignore_info,
                multipv=1,
                move_overhead_ms=0,
                algorithm=algorithm,
            )
            assert (got.best, got.nodes) == (expected.best, expected.nodes)
            nodes[algorithm] = got.nodes
    finally:
        await runner.close()
    assert nodes["pvs"] != nodes["alphabeta"]


async def test_stop_is_answered_for_a_worker_that_cannot_answer() -> None:
    """``stop`` during ``go infinite`` with the worker frozen: the parent answers with the
    last completed iteration instead of waiting for the worker to get the CPU again."""
    await ensure_warm()
    runner = ProcessRunner(1)
    infos: list[SearchInfo] = []
    control = SearchControl()
    try:
        search = asyncio.create_task(
            runner.search(
                get_variant("chess").new(),
                Limits(infinite=True),
                control,
                infos.append,
                multipv=1,
                move_overhead_ms=0,
            )
        )
        await wait_until(lambda: any(i.pv for i in infos), "the first iteration")
        pid = runner.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        try:
            control.stop()
            result = await search
        finally:
            os.kill(pid, signal.SIGCONT)
        completed = [i for i in infos if i.pv and i.multipv == 1 and i.bound is Bound.EXACT]
        assert result.best == completed[-1].pv[0]
    finally:
        await runner.close()
