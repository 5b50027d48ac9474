"""Sessions on worker processes (as ``brudno serve`` and ``brudno mqtt`` run them): every
variant searches, the worker exists before the first ``go``, and perft/bench obey ``stop``."""

from __future__ import annotations

import asyncio

import pytest

from games.registry import GAMES, get_variant
from protocol.uci.session import EngineSession
from protocol.uci.workers import ProcessRunner
from tests.support.tcp_helpers import ensure_warm, wait_until, worker_pids


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str, *, droppable: bool = False) -> None:
        self.lines.append(line)


@pytest.mark.parametrize("variant", sorted(GAMES))
async def test_every_variant_searches_in_a_worker_process(variant: str) -> None:
    """Issue 12 (4): Grundy's game raised IndexError in every worker process."""
    await ensure_warm()
    sink = ListSink()
    session = EngineSession(sink, runner_factory=ProcessRunner)
    try:
        for line in (
            f"setoption name UCI_Variant value {variant}",
            "position startpos",
            "go depth 3",
        ):
            await session.handle(line)
        await wait_until(lambda: any(s.startswith("bestmove") for s in sink.lines), "bestmove")
    finally:
        await session.close()
    assert not any("error" in s for s in sink.lines), sink.lines
    (best,) = [s.split()[1] for s in sink.lines if s.startswith("bestmove")]
    game = get_variant(variant).new()
    assert game.format_move(game.parse_move(best)) == best  # legal in the start position


async def test_the_worker_starts_with_the_session_not_at_the_first_go() -> None:
    """Issue 12 (8): a worker started at the first ``go`` charged its start to that move."""
    await ensure_warm()
    runners: list[ProcessRunner] = []

    def factory(hash_mb: int) -> ProcessRunner:
        runners.append(ProcessRunner(hash_mb))
        return runners[-1]

    sink = ListSink()
    session = EngineSession(sink, runner_factory=factory)
    try:
        await session.handle("uci")
        await wait_until(lambda: runners[0].pid is not None, "the worker process")
        assert not any(s.startswith("bestmove") for s in sink.lines)
        await session.handle("go depth 1")
        await wait_until(lambda: any(s.startswith("bestmove") for s in sink.lines), "bestmove")
        assert runners[0].started == 1  # the same process searched
    finally:
        await session.close()


@pytest.mark.parametrize("job", ["perft 9", "bench 40"])
async def test_stop_ends_perft_and_bench_in_the_worker(job: str) -> None:
    """Issue 12 (2): perft 8 in a worker ran for hours after its client had gone."""
    await ensure_warm()
    sink = ListSink()
    session = EngineSession(sink, runner_factory=ProcessRunner)
    try:
        await session.handle(job)
        await session.handle("isready")
        assert sink.lines[-1] == "readyok"
        await session.handle("stop")
        await wait_until(lambda: any("stopped" in s for s in sink.lines), "the stopped job")
        await session.handle("go depth 1")
        await wait_until(lambda: any(s.startswith("bestmove") for s in sink.lines), "bestmove")
    finally:
        await session.close()


async def test_a_session_closed_while_its_worker_starts_leaves_nothing_behind() -> None:
    """``quit`` as the first line: the worker's start (begun at that line) is still under
    way when the session closes.  close() waits for it to be undone, so no task and no
    worker process outlive the session (this leaked two tasks into the TCP tests)."""
    await ensure_warm()
    for _ in range(3):
        tasks_before = len(asyncio.all_tasks())
        workers_before = worker_pids()
        session = EngineSession(ListSink(), runner_factory=ProcessRunner)
        assert not await session.handle("quit")
        assert len(asyncio.all_tasks()) == tasks_before
        await wait_until(
            lambda before=workers_before: not (worker_pids() - before), "the worker exited"
        )
