"""``Threads`` in MQTT jobs, on a worker with real search processes and a real Mosquitto: a
job's ``setoption name Threads`` is granted within the worker's ``max_threads``, the search
still plays, and no search helper process outlives its job.

Helpers are found in ``/proc`` (their command line runs ``multiprocessing.spawn``'s
``spawn_main``); only this test process's helpers count (see :func:`helper_pids`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import chess

from protocol.transports.mqtt.ask import Answer, AskClient, AskOptions
from tests.support.mosquitto_fixture import HANG_TIMEOUT, Mosquitto, ask_client, running_worker
from tests.support.tcp_helpers import ensure_warm, pid_alive

OWNER_KEY = "BRUDNO_TEST_HELPER_OWNER"
os.environ.setdefault(OWNER_KEY, str(os.getpid()))
OWNER_MARK = f"{OWNER_KEY}={os.environ[OWNER_KEY]}".encode()
"""Set at import (before any test starts the fork server), so every process this test process
starts, and every helper those start, inherits it: it identifies our helpers even once
orphaned (adopted by init, out of our process tree)."""

HELPERS_GONE_S = 10.0
"""How long a helper may take to exit once its job has ended."""

MOVES = ("e2e4", "c7c5")
DEPTH = 4


def helper_pids() -> set[int]:
    """Live search helper processes started on behalf of this test process."""
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if b"multiprocessing.spawn" not in cmdline or b"spawn_main" not in cmdline:
            continue
        if OWNER_MARK in environ.split(b"\0") and pid_alive(pid):
            found.add(pid)
    return found


async def helpers_back_to(before: set[int], what: str, seen: Iterable[int] = ()) -> None:
    """Poll until the helpers are exactly ``before`` again and none of ``seen`` runs (an
    exiting process may drop out of the scan before it has ended); fail after
    :data:`HELPERS_GONE_S`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HELPERS_GONE_S
    watched = set(seen) - before
    while (now := helper_pids()) != before or any(pid_alive(pid) for pid in watched):
        if loop.time() > deadline:
            alive = sorted((now - before) | {pid for pid in watched if pid_alive(pid)})
            raise AssertionError(
                f"search helpers still running {HELPERS_GONE_S} s after {what}: "
                f"{alive} (before: {sorted(before)})"
            )
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def watching_helpers(before: set[int]) -> AsyncIterator[set[int]]:
    """Every helper (beyond ``before``) seen alive while the block runs, polled."""
    seen: set[int] = set()

    async def watch() -> None:
        while True:
            seen.update(helper_pids() - before)
            await asyncio.sleep(0.02)

    watcher = asyncio.create_task(watch())
    try:
        yield seen
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def ask_with_threads(ask: AskClient, threads: int) -> Answer:
    """A chess job that sets ``Threads`` and searches (to a depth, not for a time: a loaded
    machine must not turn it into an unsearched move)."""
    job = (
        f"setoption name Threads value {threads}\n"
        f"position startpos moves {' '.join(MOVES)}\n"
        f"go depth {DEPTH}\n"
    )
    return await ask.ask(
        "chess", job, timeout=HANG_TIMEOUT, options=AskOptions(require_worker=True)
    )


def assert_played(answer: Answer) -> None:
    """Status ``done``, no error, a legal bestmove from a real search."""
    assert not answer.error, answer.lines
    assert answer.errors == (), answer.lines
    assert answer.bestmove is not None, answer.lines
    board = chess.Board()
    for move in MOVES:
        board.push_uci(move)
    assert chess.Move.from_uci(answer.bestmove) in board.legal_moves, answer.lines
    assert answer.lines[-1].startswith(f"bestmove {answer.bestmove}")
    assert any(line.startswith(f"info depth {DEPTH} ") for line in answer.lines), answer.lines


async def test_jobs_search_with_the_threads_they_are_granted(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    before = helper_pids()
    async with (
        running_worker(mosquitto, mqtt_prefix, max_threads=2, max_total_threads=2) as worker,
        ask_client(mosquitto, mqtt_prefix) as ask,
    ):
        # Threads 2, within the limit: granted without a word, one helper searches.
        async with watching_helpers(before) as seen:
            answer = await ask_with_threads(ask, 2)
        assert_played(answer)
        assert not [line for line in answer.lines if line.startswith("info string")]
        assert len(seen) == 1, seen
        await helpers_back_to(before, "the Threads 2 job ended", seen)
        assert worker.threads.used == 0

        # Threads 8: cut down to 2 (still one helper, not seven), and the job says so.
        async with watching_helpers(before) as seen:
            answer = await ask_with_threads(ask, 8)
        assert_played(answer)
        assert (
            "info string Threads 8 asked, 2 granted: this server allows at most 2 per session"
            in answer.lines
        )
        assert len(seen) == 1, seen
        await helpers_back_to(before, "the Threads 8 job ended", seen)
        assert worker.threads.used == 0

        # The next job, which asks for nothing, searches alone: Threads went back to 1.
        async with watching_helpers(before) as seen:
            answer = await ask.ask(
                "chess",
                f"position startpos moves {' '.join(MOVES)}\ngo depth {DEPTH}\n",
                timeout=HANG_TIMEOUT,
            )
        assert_played(answer)
        assert seen == set()
        assert worker.stats.searched == 3
    await helpers_back_to(before, "the worker stopped")
