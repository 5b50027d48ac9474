"""``Threads`` > 1 tables in shared memory on a real ``brudno serve`` (issue 44).

The server's shared memory directory is a test directory (``BRUDNO_SHM_DIR``), and
``BRUDNO_SHM_MAX_MB`` stands for a small ``/dev/shm`` (Docker's default is 64 MiB):

* a table that does not fit is refused with one ``info string error:`` before anything is
  allocated, the session searches on with Threads 1, and its threads and its helpers'
  memory go back to the server's budgets;
* a worker killed mid-search (SIGKILL: nothing of it cleans up) leaves no block behind once
  the next search starts, and that search gets its table;
* if the table no longer fits then, each search says so and runs with one thread, until
  there is room again;
* what the workers of a killed server left is swept before the next one listens.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import chess

from engine.shm import SHM_DIR_ENV, SHM_MAX_ENV, SharedWords, ShmPlace, block_owner
from tests.support.processes import alive, descendants
from tests.support.tcp_helpers import TcpClient, env_without_token, serve_process, wait_until

MIB = 1 << 20


def blocks(directory: Path) -> dict[Path, int]:
    """The blocks in ``directory`` and their sizes."""
    return {path: path.stat().st_size for path in directory.iterdir()}


async def legal_bestmove(client: TcpClient, go: str) -> list[str]:
    await client.send(go)
    infos, best = await client.bestmove()
    assert chess.Move.from_uci(best) in chess.Board().legal_moves
    return infos


async def test_a_table_too_big_for_shared_memory_is_refused_and_the_session_searches_on(
    brudno: list[str], tmp_path: Path
) -> None:
    env = env_without_token(**{SHM_DIR_ENV: str(tmp_path), SHM_MAX_ENV: "8"})
    # Memory 60 MiB: Hash 16 + a helper's 32 MiB, then 16 + 4 + 32 once the first
    # session's helper is given back (still holding it, the second session would not fit).
    async with serve_process(
        brudno,
        "--max-threads",
        "2",
        "--max-total-threads",
        "3",
        "--max-memory-mb",
        "60",
        env=env,
    ) as server:
        client = await TcpClient.open(server.port)
        assert await client.exchange("setoption name Hash value 16") == []
        line = "setoption name Threads value 2"
        assert await client.exchange(line) == [
            "info string error: Threads 2: a shared table of 16 MiB does not fit in shared "
            f"memory (8 MiB free); searching with Threads 1 ({line})"
        ]
        assert blocks(tmp_path) == {}
        await legal_bestmove(client, "go depth 3")

        # Its thread and its helper's memory went back to the server: another session gets
        # Threads 2 within the total of 3 and the 60 MiB, and its 4 MiB table fits in the 8.
        other = await TcpClient.open(server.port)
        assert await other.exchange("setoption name Hash value 4", line) == []
        shared = blocks(tmp_path)
        assert max(shared.values()) <= 4 * MIB
        (owner,) = {block_owner(path.name) for path in shared}
        assert owner in descendants(server.proc.pid)
        await legal_bestmove(other, "go depth 3")

        # A Hash the shared memory cannot hold: refused the same way, Threads 1 again.
        resize = "setoption name Hash value 12"
        assert await other.exchange(resize) == [
            "info string error: Threads 2: a shared table of 12 MiB does not fit in shared "
            f"memory (8 MiB free); searching with Threads 1 ({resize})"
        ]
        assert blocks(tmp_path) == {}
        await legal_bestmove(other, "go depth 3")
        for session in (client, other):
            await session.send("quit")
            assert await session.read_to_end() == []
            await session.close()
        assert await server.stop() == 0


async def test_a_worker_killed_mid_search_leaves_no_block_behind(
    brudno: list[str], tmp_path: Path
) -> None:
    env = env_without_token(**{SHM_DIR_ENV: str(tmp_path)})
    async with serve_process(brudno, "--max-threads", "2", env=env) as server:
        client = await TcpClient.open(server.port)
        setup = ("setoption name Hash value 8", "setoption name Threads value 2")
        assert await client.exchange(*setup) == []
        await client.send("go infinite")  # cannot end before the kill
        await client.read_until(lambda s: s.startswith("info depth"))
        first = blocks(tmp_path)
        assert len(first) == 2  # the table and the helpers' scoreboard
        (worker,) = {block_owner(path.name) for path in first}
        assert worker is not None and worker in descendants(server.proc.pid)

        os.kill(worker, signal.SIGKILL)
        await client.send("stop")
        infos, _ = await client.bestmove()
        assert any(s.startswith("info string error:") for s in infos), infos

        # The next search starts a new worker, which gets a table of its own again.
        await legal_bestmove(client, "go depth 4")
        await server.wait_for_log(r"event=shm_swept blocks=2 ")
        assert not any(path.exists() for path in first)
        second = blocks(tmp_path)
        assert len(second) == 2
        (successor,) = {block_owner(path.name) for path in second}
        assert successor is not None and successor != worker and alive(successor)
        # What the memory budget charges for the table, its Hash, is what it holds.
        assert sum(second.values()) <= 8 * MIB + 4096

        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
        assert await server.stop() == 0
    assert blocks(tmp_path) == {}  # a worker that exits unlinks its own


async def kill_worker_mid_search(client: TcpClient, directory: Path) -> set[Path]:
    """Kill -9 the worker of ``client`` during ``go infinite``; its blocks, once it is gone."""
    await client.send("go infinite")
    await client.read_until(lambda s: s.startswith("info depth"))
    left = set(blocks(directory))
    (worker,) = {block_owner(path.name) for path in left}
    assert worker is not None
    os.kill(worker, signal.SIGKILL)
    await client.send("stop")
    await client.bestmove()
    await wait_until(lambda: not alive(worker), "the killed worker is gone")
    return left


async def test_a_restarted_worker_whose_table_no_longer_fits_says_so_at_each_search(
    brudno: list[str], tmp_path: Path
) -> None:
    env = env_without_token(**{SHM_DIR_ENV: str(tmp_path), SHM_MAX_ENV: "8"})
    async with serve_process(brudno, "--max-threads", "2", env=env) as server:
        client = await TcpClient.open(server.port)
        setup = ("setoption name Hash value 4", "setoption name Threads value 2")
        assert await client.exchange(*setup) == []
        left = await kill_worker_mid_search(client, tmp_path)
        # While the worker is down, something else takes 6 of the 8 MiB (this process's
        # block; making it sweeps the dead worker's).
        squatter = SharedWords(words=6 * MIB // 8, place=ShmPlace(tmp_path, 8 * MIB))
        assert not any(path.exists() for path in left)
        short = (
            "info string error: Threads 2: a shared table of 4 MiB does not fit in shared "
            "memory (2 MiB free); this search runs with Threads 1"
        )
        for _ in range(2):
            infos = await legal_bestmove(client, "go depth 3")
            assert infos[0] == short, infos
            assert set(blocks(tmp_path)) == {Path(squatter.name)}
        # Room again: the next search gets its helpers back, without a word.
        squatter.close()
        infos = await legal_bestmove(client, "go depth 3")
        assert not any(s.startswith("info string") for s in infos), infos
        assert len(blocks(tmp_path)) == 2
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
        assert await server.stop() == 0


LEAVE_A_BLOCK = """
import sys
from pathlib import Path
from engine.shm import SharedWords, ShmPlace
block = SharedWords(words=1024, place=ShmPlace(Path(sys.argv[1])))
print(block.name, flush=True)
sys.stdin.read()
"""
"""A process that makes a block and waits to be killed (a worker of a killed server)."""


async def test_serve_sweeps_what_dead_processes_left_before_it_listens(
    brudno: list[str], tmp_path: Path
) -> None:
    owner = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        LEAVE_A_BLOCK,
        str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert owner.stdout is not None
    left = Path((await owner.stdout.readline()).decode().strip())
    owner.kill()
    await owner.wait()
    assert left.exists()
    env = env_without_token(**{SHM_DIR_ENV: str(tmp_path)})
    async with serve_process(brudno, env=env) as server:
        assert not left.exists()
        await server.wait_for_log(rf"event=shm_swept blocks=1 names={left.name}")
        assert await server.stop() == 0
