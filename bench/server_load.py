"""Load benchmark for `brudno serve`: throughput and latency with 1, 2, 8, 32 sessions.

Command (starts its own server on a free port, prints one line per session count, then a
Markdown table for the issue note):

    python bench/server_load.py --table

Against a running server instead: ``python bench/server_load.py --connect HOST:PORT``
(token from ``--token`` or BRUDNO_TOKEN).

What monitoring costs (issue 17): ``python bench/server_load.py --table --monitoring both``
runs every session count twice, against a server without ``--metrics-port`` (``off``) and
against one with it while this script keeps the status page's live feed open (``/events``,
read like a browser would) and scrapes ``/metrics`` every second (``on``), and prints both
(``monitoring=off|on`` on each line, a column in the table).  ``--monitoring on`` measures
only the second.

Per session count N, three phases, each with N sessions working at once:

* throughput — every session searches ``go nodes K`` back to back for ``--seconds``;
  searches/s = completed searches / wall time;
* latency — every session searches ``go movetime T`` back to back while probing ``isready``
  every ``--probe-ms`` (slower with many sessions, so that all probes together stay under
  ``--probe-rate`` per second: the probes measure the load, they must not become it — this
  one client process has to read every reply): isready latency is send → ``readyok``,
  overshoot is
  arrival of ``bestmove`` - (send of ``go`` + T), negative when early (Move Overhead);
  ``unsearched`` counts moves the server had to play before the search completed even one
  iteration (it announces them with ``info string warning``): the sign of overload;
* stop — every session starts ``go infinite`` and sends ``stop`` after a random pause;
  stop latency is send of ``stop`` → ``bestmove``.

Latencies are measured by this client, which shares the machine with the server and its
workers; they include the client's own scheduling delays, so they are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiohttp

POSITIONS = (
    "startpos",
    "fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "fen r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
    "fen r1bq1rk1/pp1nbppp/2p1pn2/3p2B1/2PP4/2NBPN2/PP3PPP/R2QK2R w KQ - 0 8",
    "fen 8/5pk1/6p1/3R4/5P2/6PK/r7/8 w - - 0 40",
)
LISTENING = re.compile(rb"event=listening address=(\S+):(\d+)")
HTTP_LISTENING = re.compile(rb"event=http_listening address=(\S+):(\d+)")
HANG_S = 120.0
SCRAPE_EVERY_S = 1.0


class Session:
    """One UCI session over TCP; a reader task routes ``readyok`` and ``bestmove``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ready: deque[asyncio.Future[float]] = deque()
        self._best: asyncio.Future[float] | None = None
        self.unsearched = 0
        """``bestmove``s the server had to play without a completed iteration (overload)."""
        self._task = asyncio.create_task(self._route())

    @classmethod
    async def open(cls, host: str, port: int, token: str | None) -> Session:
        reader, writer = await asyncio.open_connection(host, port)
        session = cls(reader, writer)
        if token:
            session.send(f"auth {token}")
        await session.isready()
        return session

    def send(self, *lines: str) -> None:
        self._writer.write("".join(line + "\n" for line in lines).encode())

    async def _route(self) -> None:
        while line := await self._reader.readline():
            now = time.perf_counter()
            if line == b"readyok\n":
                self._ready.popleft().set_result(now)
            elif line.startswith(b"bestmove") and self._best is not None:
                self._best.set_result(now)
                self._best = None
            elif line.startswith(b"info string warning: the search got no CPU"):
                self.unsearched += 1
            elif line.startswith(b"info string error"):
                print(f"server: {line.decode().strip()}", file=sys.stderr)
        for future in (*self._ready, self._best):
            if future is not None and not future.done():
                future.set_exception(ConnectionError("server closed the connection"))

    async def isready(self) -> float:
        """Round trip of one ``isready`` in milliseconds."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._ready.append(future)
        sent = time.perf_counter()
        self.send("isready")
        return (await asyncio.wait_for(future, HANG_S) - sent) * 1000.0

    def go(self, *lines: str) -> asyncio.Future[float]:
        """Send lines ending with a ``go``; the future resolves at ``bestmove`` arrival."""
        self._best = asyncio.get_running_loop().create_future()
        self.send(*lines)
        return self._best

    async def close(self) -> None:
        self.send("quit")
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.drain()
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError, asyncio.TimeoutError):
            await asyncio.wait_for(self._task, HANG_S)


@dataclass
class Result:
    sessions: int
    monitoring: str = "off"
    searches: int = 0
    seconds: float = 0.0
    isready_ms: list[float] = field(default_factory=list)
    overshoot_ms: list[float] = field(default_factory=list)
    stop_ms: list[float] = field(default_factory=list)
    unsearched: int = 0

    @property
    def rate(self) -> float:
        return self.searches / self.seconds if self.seconds else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); the maximum for p close to 100 and few values."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(p / 100.0 * len(ordered) + 0.5)))
    return ordered[rank - 1]


async def throughput(sessions: list[Session], nodes: int, seconds: float, result: Result) -> None:
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()

    async def loop(index: int, session: Session) -> int:
        done = 0
        while time.perf_counter() < deadline:
            position = POSITIONS[(index + done) % len(POSITIONS)]
            await asyncio.wait_for(session.go(f"position {position}", f"go nodes {nodes}"), HANG_S)
            done += 1
        return done

    counts = await asyncio.gather(*(loop(i, s) for i, s in enumerate(sessions)))
    result.searches = sum(counts)
    result.seconds = time.perf_counter() - started


async def latency(
    sessions: list[Session], movetime: int, rounds: int, probe_ms: float, result: Result
) -> None:
    async def loop(index: int, session: Session) -> None:
        rng = random.Random(index)
        for number in range(rounds):
            position = POSITIONS[(index + number) % len(POSITIONS)]
            sent = time.perf_counter()
            best = session.go(f"position {position}", f"go movetime {movetime}")
            while not best.done():
                await asyncio.sleep(rng.uniform(0.5, 1.5) * probe_ms / 1000.0)
                if not best.done():
                    result.isready_ms.append(await session.isready())
            arrived = await best
            result.overshoot_ms.append((arrived - sent) * 1000.0 - movetime)

    await asyncio.gather(*(loop(i, s) for i, s in enumerate(sessions)))


async def stopping(sessions: list[Session], rounds: int, result: Result) -> None:
    async def loop(index: int, session: Session) -> None:
        rng = random.Random(1000 + index)
        for number in range(rounds):
            position = POSITIONS[(index + number) % len(POSITIONS)]
            best = session.go(f"position {position}", "go infinite")
            await asyncio.sleep(rng.uniform(0.1, 0.4))
            sent = time.perf_counter()
            session.send("stop")
            result.stop_ms.append((await asyncio.wait_for(best, HANG_S) - sent) * 1000.0)

    await asyncio.gather(*(loop(i, s) for i, s in enumerate(sessions)))


async def measure(
    host: str, port: int, token: str | None, count: int, args: argparse.Namespace
) -> Result:
    sessions = await asyncio.gather(*(Session.open(host, port, token) for _ in range(count)))
    try:
        # Warm up: the first search of a session starts its worker process.
        await asyncio.gather(*(s.go("position startpos", "go nodes 100") for s in sessions))
        result = Result(count)
        await throughput(sessions, args.nodes, args.seconds, result)
        rounds = max(args.min_rounds, args.samples // count)
        probe_ms = max(args.probe_ms, 1000.0 * count / args.probe_rate)
        await latency(sessions, args.movetime, rounds, probe_ms, result)
        await stopping(sessions, max(2, rounds // 2), result)
        result.unsearched = sum(s.unsearched for s in sessions)
        return result
    finally:
        await asyncio.gather(*(s.close() for s in sessions))


def line(result: Result, args: argparse.Namespace) -> str:
    def ms(values: list[float], p: float) -> str:
        return f"{percentile(values, p):.1f}"

    return (
        f"monitoring={result.monitoring} "
        f"sessions={result.sessions} nodes={args.nodes} searches={result.searches} "
        f"searches_per_s={result.rate:.2f} "
        f"isready_p50_ms={ms(result.isready_ms, 50)} isready_p99_ms={ms(result.isready_ms, 99)} "
        f"isready_n={len(result.isready_ms)} movetime_ms={args.movetime} "
        f"overshoot_p50_ms={ms(result.overshoot_ms, 50)} "
        f"overshoot_p99_ms={ms(result.overshoot_ms, 99)} overshoot_n={len(result.overshoot_ms)} "
        f"unsearched_moves={result.unsearched} "
        f"stop_p50_ms={ms(result.stop_ms, 50)} stop_p99_ms={ms(result.stop_ms, 99)} "
        f"stop_n={len(result.stop_ms)}"
    )


def table(results: list[Result], args: argparse.Namespace) -> str:
    rows = [
        f"| monitoring | sessions | searches/s (go nodes {args.nodes}) | isready p50 / p99 (ms) | "
        f"bestmove overshoot p50 / p99 (ms, go movetime {args.movetime}) | "
        "unsearched moves | stop → bestmove p50 / p99 (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rows.append(
            f"| {r.monitoring} | {r.sessions} | {r.rate:.2f} | "
            f"{percentile(r.isready_ms, 50):.1f} / "
            f"{percentile(r.isready_ms, 99):.1f} | {percentile(r.overshoot_ms, 50):.1f} / "
            f"{percentile(r.overshoot_ms, 99):.1f} | {r.unsearched} / {len(r.overshoot_ms)} | "
            f"{percentile(r.stop_ms, 50):.1f} / "
            f"{percentile(r.stop_ms, 99):.1f} |"
        )
    return "\n".join(rows)


async def start_server(
    max_sessions: int, monitoring: bool
) -> tuple[asyncio.subprocess.Process, int, int | None]:
    """A server with room for this run's sessions plus those of the previous count, which
    may still be closing when the next count starts; with ``monitoring``, its HTTP port too
    (the game port, the HTTP port or ``None``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRUDNO_TOKEN")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "brudno",
        "serve",
        "--port",
        "0",
        "--max-sessions",
        str(max_sessions),
        "--max-memory-mb",
        str(16 * max_sessions),
        *(["--metrics-port", "0"] if monitoring else []),
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    assert proc.stderr is not None
    port: int | None = None
    while True:
        raw = await asyncio.wait_for(proc.stderr.readline(), HANG_S)
        if not raw:
            raise RuntimeError("brudno serve exited before listening")
        if match := LISTENING.search(raw):
            port = int(match[2])
            if not monitoring:
                return proc, port, None
        if (match := HTTP_LISTENING.search(raw)) and port is not None:
            return proc, port, int(match[2])


@dataclass
class Onlooker:
    """What the monitoring side did meanwhile: page samples received, scrapes made."""

    samples: int = 0
    scrapes: int = 0


async def watch_page(base: str, seen: Onlooker) -> None:
    """Keep the status page's live feed open and read every sample, as a browser does."""
    timeout = aiohttp.ClientTimeout(total=None, sock_read=HANG_S)
    async with (
        aiohttp.ClientSession(timeout=timeout) as client,
        client.get(f"{base}/events") as events,
    ):
        async for line in events.content:
            if line.startswith(b"data: "):
                seen.samples += 1


async def scrape(base: str, seen: Onlooker) -> None:
    """``GET /metrics`` every :data:`SCRAPE_EVERY_S`, as Prometheus would."""
    async with aiohttp.ClientSession() as client:
        while True:
            async with client.get(f"{base}/metrics") as response:
                await response.read()
                seen.scrapes += 1
            await asyncio.sleep(SCRAPE_EVERY_S)


async def run_mode(args: argparse.Namespace, monitoring: bool) -> list[Result]:
    """Every session count against a fresh server, with or without the onlookers."""
    proc, port, http_port = await start_server(2 * max(args.sessions) + 1, monitoring)
    assert proc.stderr is not None
    drain = asyncio.create_task(proc.stderr.read())  # keep its log pipe flowing
    seen = Onlooker()
    onlookers: list[asyncio.Task[None]] = []
    if http_port is not None:
        base = f"http://127.0.0.1:{http_port}"
        onlookers = [
            asyncio.create_task(watch_page(base, seen)),
            asyncio.create_task(scrape(base, seen)),
        ]
    results = []
    try:
        for count in args.sessions:
            result = await measure("127.0.0.1", port, None, count, args)
            result.monitoring = "on" if monitoring else "off"
            results.append(result)
            extra = f" page_samples={seen.samples} scrapes={seen.scrapes}" if monitoring else ""
            print(line(result, args) + extra, flush=True)
    finally:
        for task in onlookers:
            task.cancel()
        for task in onlookers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        proc.terminate()
        await proc.wait()
        await drain
    return results


async def main(args: argparse.Namespace) -> int:
    print(
        f"# cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f} python={sys.version.split()[0]}",
        flush=True,
    )
    results = []
    if args.connect:
        host, _, port_text = args.connect.rpartition(":")
        host, port = host.strip("[]"), int(port_text)
        token = args.token or os.environ.get("BRUDNO_TOKEN")
        for count in args.sessions:
            result = await measure(host, port, token, count, args)
            results.append(result)
            print(line(result, args), flush=True)
    else:
        modes = {"off": [False], "on": [True], "both": [False, True]}[args.monitoring]
        for monitoring in modes:
            results += await run_mode(args, monitoring)
    if args.table:
        print()
        print(table(results, args))
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 2, 8, 32])
    parser.add_argument("--nodes", type=int, default=2000, help="nodes per throughput search")
    parser.add_argument("--seconds", type=float, default=6.0, help="throughput phase length")
    parser.add_argument("--movetime", type=int, default=300, help="T of the latency phase (ms)")
    parser.add_argument(
        "--samples",
        type=int,
        default=24,
        help="movetime searches per session count (at least --min-rounds per session)",
    )
    parser.add_argument("--min-rounds", type=int, default=4)
    parser.add_argument(
        "--probe-ms", type=float, default=50.0, help="isready probe interval per session (at least)"
    )
    parser.add_argument(
        "--probe-rate",
        type=float,
        default=160.0,
        help="isready probes per second, all sessions together (at most)",
    )
    parser.add_argument(
        "--monitoring",
        choices=("off", "on", "both"),
        default="off",
        help="on: the server runs --metrics-port while the live page is open and /metrics is "
        "scraped every second; both: each session count off, then on (default %(default)s)",
    )
    parser.add_argument("--connect", metavar="HOST:PORT", help="use a running server")
    parser.add_argument("--token", help="its token (default: $BRUDNO_TOKEN)")
    parser.add_argument("--table", action="store_true", help="also print a Markdown table")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
