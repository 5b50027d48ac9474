"""A legitimate client's latency while thousands of idle sockets flood both ports.

Command (starts `brudno serve` with a token and its HTTP port under ``prlimit
--nofile=4096``, the default connection caps, and measures):

    python bench/connection_flood.py --sockets 3000 --rounds 20

Phases: *quiet* (no flood), *flood*, then *after* (the flood closed). The flood: idle sockets
(they connect and never send a byte) are opened to the game port from 127.0.0.2 and to the HTTP
port from 127.0.0.3, ``--sockets`` to each, and kept opening anew (oldest closed by the client)
while the legitimate client, from 127.0.0.1, is measured. Per phase, ``--rounds`` times, medians
reported:

* ready — connect, ``auth``, ``isready`` until ``readyok``;
* go — on one open session, ``go movetime 100`` until ``bestmove``;
* healthz — ``GET /healthz`` on a fresh HTTP connection.

Also reported: the flood sockets the client managed to open (connect completed), and the
server's descriptors in use (``/proc/PID/fd``), the most seen while flooding.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import resource
import statistics
import sys
import time
from collections import deque
from collections.abc import Sequence

LISTENING = re.compile(rb"event=listening address=(\S+):(\d+)")
HTTP_LISTENING = re.compile(rb"event=http_listening address=(\S+):(\d+)")
TOKEN = "bench-flood-token"
HANG_S = 60.0
_DRAINING: set[asyncio.Task[bytes]] = set()
"""Tasks reading the servers' logs to their end (so a full pipe never blocks them)."""
BATCH = 200


async def start_server(limit: int) -> tuple[asyncio.subprocess.Process, int, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRUDNO_TOKEN")}
    env["BRUDNO_TOKEN"] = TOKEN
    proc = await asyncio.create_subprocess_exec(
        "prlimit", f"--nofile={limit}:{limit}", sys.executable, "-m", "brudno", "serve",
        "--port", "0", "--metrics-port", "0",
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stderr is not None
    game = http = 0
    while not (game and http):
        raw = await asyncio.wait_for(proc.stderr.readline(), HANG_S)
        if not raw:
            raise RuntimeError("brudno serve exited before listening")
        if match := LISTENING.search(raw):
            game = int(match[2])
        if match := HTTP_LISTENING.search(raw):
            http = int(match[2])
    _DRAINING.add(asyncio.create_task(proc.stderr.read()))
    return proc, game, http


async def _until(reader: asyncio.StreamReader, prefix: bytes) -> None:
    while True:
        line = await asyncio.wait_for(reader.readline(), HANG_S)
        if not line:
            raise ConnectionError("closed")
        if line.startswith(prefix):
            return


async def ready_round(port: int) -> float:
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"auth {TOKEN}\nisready\n".encode())
    await _until(reader, b"readyok")
    elapsed = time.perf_counter() - started
    writer.write(b"quit\n")
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await writer.wait_closed()
    return elapsed


async def healthz_round(port: int) -> float:
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    await _until(reader, b"HTTP/1.1 200")
    elapsed = time.perf_counter() - started
    writer.close()
    return elapsed


async def measure(game: int, http: int, rounds: int) -> dict[str, float]:
    ready = [await ready_round(game) for _ in range(rounds)]
    health = [await healthz_round(http) for _ in range(rounds)]
    reader, writer = await asyncio.open_connection("127.0.0.1", game)
    writer.write(f"auth {TOKEN}\ngo movetime 100\n".encode())  # starts the worker
    await _until(reader, b"bestmove")
    search = []
    for _ in range(rounds):
        started = time.perf_counter()
        writer.write(b"go movetime 100\n")
        await _until(reader, b"bestmove")
        search.append(time.perf_counter() - started)
    writer.write(b"quit\n")
    writer.close()
    ms = 1000.0
    return {
        "ready_ms": statistics.median(ready) * ms,
        "go_movetime_100_ms": statistics.median(search) * ms,
        "healthz_ms": statistics.median(health) * ms,
    }


class Flood:
    """Keeps ``per_port`` idle sockets open to each port, opening new ones all the time."""

    def __init__(self, game: int, http: int, per_port: int) -> None:
        self.targets = ((game, "127.0.0.2"), (http, "127.0.0.3"))
        self.per_port = per_port
        self.opened = 0
        self.held: deque[asyncio.StreamWriter] = deque()

    async def _one(self, port: int, source: str) -> None:
        with contextlib.suppress(OSError, TimeoutError):
            _, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), 10
            )
            self.opened += 1
            self.held.append(writer)

    async def fill(self) -> None:
        """Open ``per_port`` to each port (the initial flood)."""
        for port, source in self.targets:
            for start in range(0, self.per_port, BATCH):
                count = min(BATCH, self.per_port - start)
                await asyncio.gather(*(self._one(port, source) for _ in range(count)))

    async def churn(self) -> None:
        """Forever: open a batch to each port, close the oldest to stay at the level."""
        while True:
            for port, source in self.targets:
                await asyncio.gather(*(self._one(port, source) for _ in range(BATCH)))
            while len(self.held) > 2 * self.per_port:
                self.held.popleft().transport.abort()

    def close(self) -> None:
        while self.held:
            self.held.popleft().transport.abort()


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def main(args: argparse.Namespace) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * args.sockets + 1024
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    proc, game, http = await start_server(args.limit)
    try:
        quiet = await measure(game, http, args.rounds)
        flood = Flood(game, http, args.sockets)
        await flood.fill()
        most = descriptors(proc.pid)
        churning = asyncio.create_task(flood.churn())

        async def sample() -> None:
            nonlocal most
            while True:
                most = max(most, descriptors(proc.pid))
                await asyncio.sleep(0.05)

        sampling = asyncio.create_task(sample())
        flooded = await measure(game, http, args.rounds)
        churning.cancel()
        sampling.cancel()
        opened = flood.opened
        flood.close()
        alive = proc.returncode is None
        after = await measure(game, http, args.rounds)
    finally:
        proc.terminate()
        await proc.wait()
    print(f"limit={args.limit} sockets_per_port={args.sockets} rounds={args.rounds} (medians)")
    print(f"flood sockets_opened={opened} server_fds_max={most} server_alive={alive}")
    for name, figures in (("quiet", quiet), ("flood", flooded), ("after", after)):
        print(name, " ".join(f"{k}={v:.1f}" for k, v in figures.items()))
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=3000, help="idle sockets per port")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--limit", type=int, default=4096, help="the server's RLIMIT_NOFILE")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
