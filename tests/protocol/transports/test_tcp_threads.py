"""``Threads`` on the TCP server: what a session is granted (per session, over all sessions,
within the memory limit), that a granted search still plays, and that no search helper
process outlives its session.

Helpers are found in ``/proc``: a helper is a ``spawn`` child (its command line runs
``multiprocessing.spawn``'s ``spawn_main``).  Only this test process's helpers count (see
:func:`helper_pids`), so other test runs on the machine cannot disturb the counts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from pathlib import Path

import chess
import pytest

from tests.support.tcp_helpers import (
    TcpClient,
    env_without_token,
    pid_alive,
    running_server,
    serve_process,
    wait_until,
    worker_pids,
)

OWNER_KEY = "BRUDNO_TEST_HELPER_OWNER"
os.environ.setdefault(OWNER_KEY, str(os.getpid()))
OWNER_MARK = f"{OWNER_KEY}={os.environ[OWNER_KEY]}".encode()
"""Set at import (before any test starts the fork server), so every process this test process
starts, and every helper those start, inherits it: it identifies our helpers even once
orphaned (a helper whose worker died is adopted by init, out of our process tree)."""

HELPERS_GONE_S = 10.0
"""How long a helper may take to exit once its session has ended."""


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


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


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


def assert_legal(best: str, moves: tuple[str, ...] = ()) -> None:
    board = chess.Board()
    for move in moves:
        board.push_uci(move)
    assert chess.Move.from_uci(best) in board.legal_moves, (best, moves)


async def search(client: TcpClient, depth: int, moves: tuple[str, ...] = ()) -> str:
    """``go depth``: a legal bestmove from a search that reached the depth, with no error."""
    position = "position startpos" + (f" moves {' '.join(moves)}" if moves else "")
    await client.send(position, f"go depth {depth}")
    infos, best = await client.bestmove()
    assert not [line for line in infos if line.startswith("info string")], infos
    assert any(line.startswith(f"info depth {depth} ") for line in infos), infos
    assert_legal(best, moves)
    return best


async def test_a_request_beyond_max_threads_is_cut_down_on_a_real_serve(
    brudno: list[str],
) -> None:
    """``brudno serve --max-threads 2``: ``Threads 4`` is granted 2 (one helper), the search
    plays, and the helper is gone once the client drops its connection."""
    before = helper_pids()
    async with serve_process(
        brudno,
        "--max-threads",
        "2",
        "--max-total-threads",
        "4",
        env=env_without_token(**{OWNER_KEY: os.environ[OWNER_KEY]}),
    ) as server:
        client = await TcpClient.open(server.port)
        hello = await client.exchange("uci")
        assert "option name Threads type spin default 1 min 1 max 64" in hello
        assert await client.exchange("setoption name Threads value 4") == [
            "info string Threads 4 asked, 2 granted: this server allows at most 2 per session"
        ]
        await search(client, 4, ("e2e4",))
        helpers = helper_pids() - before
        assert len(helpers) == 1, helpers  # Threads 2: the main search and one helper
        # Asking for what is granted is granted without a word.
        assert await client.exchange("setoption name Threads value 2") == []
        await search(client, 3)
        assert helper_pids() - before == helpers  # the same helper, not a new one
        client.abort()
        await helpers_back_to(before, "the client's connection was reset", helpers)
        await server.wait_for_log(r"event=close session=\S+ reason=")
        assert await server.stop() == 0


async def test_the_total_is_shared_between_sessions() -> None:
    before = helper_pids()
    async with running_server(max_threads=3, max_total_threads=4) as server:
        a = await TcpClient.open(server.port)
        b = await TcpClient.open(server.port)
        assert server.threads.used == 2  # each session's main search counts from the start
        assert await a.exchange("setoption name Threads value 3") == []
        assert server.threads.used == 4
        assert await b.exchange("setoption name Threads value 2") == [
            "info string Threads 2 asked, 1 granted: "
            "this server's 4 threads are shared by its sessions and 3 are in use"
        ]
        assert server.threads.used == 4  # b keeps its main search: 3 + 1
        await search(b, 3)  # b still plays, on one thread
        await search(a, 3)
        a_helpers = helper_pids() - before
        assert len(a_helpers) == 2, a_helpers  # a's three threads; none of b's

        await a.send("quit")
        assert await a.read_to_end() == []
        await a.close()
        await wait_until(lambda: server.threads.used == 1, "a's threads are released")
        await helpers_back_to(before, "a quit", a_helpers)

        assert await b.exchange("setoption name Threads value 2") == []
        assert server.threads.used == 2
        await search(b, 3, ("d2d4",))
        b_helpers = helper_pids() - before
        assert len(b_helpers) == 1, b_helpers
        await b.send("quit")
        assert await b.read_to_end() == []
        await b.close()
        await wait_until(lambda: server.threads.used == 0, "b's threads are released")
        await helpers_back_to(before, "b quit", b_helpers)


@pytest.mark.parametrize("ending", ["quit", "reset", "reset while searching"])
async def test_no_helper_survives_its_session(ending: str) -> None:
    before = helper_pids()
    async with running_server(max_threads=2, max_total_threads=2) as server:
        client = await TcpClient.open(server.port)
        assert await client.exchange("setoption name Threads value 2") == []
        await search(client, 3)
        helpers = helper_pids() - before
        assert len(helpers) == 1, helpers
        (helper,) = helpers
        # The helper is the session's worker's child (the worker owns the shared table).
        assert parent_of(helper) in worker_pids()

        if ending == "quit":
            await client.send("quit")
            assert await client.read_to_end() == []
            await client.close()
        elif ending == "reset":
            client.abort()
        else:
            await client.send("position startpos", "go infinite")
            await client.read_until(lambda line: line.startswith("info depth 2 "))
            client.abort()
        await helpers_back_to(before, f"the session ended ({ending})", helpers)
        assert not pid_alive(helper)
        await wait_until(lambda: server.connections == 0, "the connection is closed")
        assert server.threads.used == 0
        assert server.memory.used_mb == 0


async def test_each_helper_is_charged_against_the_memory_limit() -> None:
    # Hash 16 + one 32 MiB helper = 48: Threads 3 would need two helpers, 80 MiB.
    async with running_server(max_memory_mb=48, max_threads=3, max_total_threads=3) as server:
        before = helper_pids()
        client = await TcpClient.open(server.port)
        await client.exchange()
        assert server.memory.used_mb == 16
        assert await client.exchange("setoption name Threads value 3") == [
            "info string Threads 3 asked, 2 granted: "
            "the server's memory limit (48 MiB) has room for no more"
        ]
        assert server.memory.used_mb == 48
        assert server.threads.used == 2
        await search(client, 3)
        helpers = helper_pids() - before
        assert len(helpers) == 1, helpers

        # The helper's memory is held: a second session's 16 MiB table no longer fits.
        other = await TcpClient.open(server.port)
        refusal = await other.read_to_end()
        assert len(refusal) == 1 and refusal[0].startswith("info string error: server memory")
        await other.close()

        # Back to one thread: the helper's 32 MiB are free again.
        assert await client.exchange("setoption name Threads value 1") == []
        assert server.memory.used_mb == 16
        assert server.threads.used == 1
        await helpers_back_to(before, "Threads went back to 1", helpers)
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
        await wait_until(lambda: server.memory.used_mb == 0, "memory is released")
        assert server.threads.used == 0
