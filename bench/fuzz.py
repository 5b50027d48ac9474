"""Fuzz the real `brudno` process with random protocol lines; report crashes, hangs, latencies.

    python bench/fuzz.py                      # 100,000 lines, seed 1
    python bench/fuzz.py --lines 20000 --seed 7 --engine "brudno --log-level WARNING"

Lines mix what GUIs send (positions, bounded and infinite searches, options, stop, isready,
ponderhit) with bad and hostile input (unknown commands, malformed and 400-digit numbers,
random bytes, NUL and CR, mutated FENs, long lines).  Every line is classified with the
engine's own parser, so the script knows how many ``bestmove`` and ``readyok`` it is owed.

Checked and reported: processes that died (crashes), owed answers that did not come within
``--hang-s`` (hangs; the process is killed and replaced), tracebacks on stdout or stderr,
``go`` commands without exactly one ``bestmove``, and the latency of ``isready`` (send to
``readyok``) and of ``stop`` during a search (send to ``bestmove``), as p50/p99/max.  Every
``--batch`` lines the script sends an ``isready`` of its own at a random place (answered
at once, searching or not), waits for every ``readyok``, then sends a ``d``, whose board
comes only once the engine has run everything before it: so no more than a batch is in
flight, as with a client that reads its answers.  ``--no-settle`` floods instead, and counts
the ``go`` the engine refuses when its queue is full.  The last line is the summary.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import shlex
import statistics
import sys
import time
from dataclasses import dataclass, field

from protocol.uci import commands as cmd

FENS = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
)
MOVES = ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "zz", "e2e5", "0000", "e1g1")
QUEUE_FULL = "already wait for the search"
"""The engine's refusal when its command queue is full (a search that waits for ``stop``
while the script keeps sending)."""
WORDS = (
    "go",
    "position",
    "setoption",
    "name",
    "value",
    "stop",
    "isready",
    "depth",
    "moves",
    "fen",
    "startpos",
    "infinite",
    "ponder",
    "perft",
    "uci",
    "debug",
    "Hash",
    "MultiPV",
)


class LineMaker:
    """Random protocol lines; after ``go infinite``/``ponder`` a ``stop`` follows soon."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.stop_due: int | None = None

    def number(self) -> str:
        r = self.rng
        return r.choice(
            [
                str(r.randint(-5, 60)),
                "9" * r.choice((20, 400)),
                "abc",
                "",
                "1e3",
                "-" + "9" * 30,
                "٣",
            ]
        )

    def fen(self) -> str:
        fen = self.rng.choice(FENS)
        if self.rng.random() < 0.3:  # mutate: drop, duplicate or replace a character
            i = self.rng.randrange(len(fen))
            fen = fen[:i] + self.rng.choice(["", fen[i] * 2, "x", "9", "/"]) + fen[i + 1 :]
        return fen

    def go(self) -> str:
        r = self.rng
        kind = r.random()
        if kind < 0.3:
            return f"go depth {r.randint(1, 3)}"
        if kind < 0.5:
            return f"go nodes {r.randint(1, 2000)}"
        if kind < 0.65:
            return f"go movetime {r.randint(1, 40)}"
        if kind < 0.75:
            t = r.randint(50, 2000)
            return f"go wtime {t} btime {t} winc {r.randint(0, 20)} binc 0"
        if kind < 0.85:
            self.stop_due = r.randint(1, 15)
            return r.choice(["go infinite", "go ponder", "go infinite searchmoves e2e4 d2d4"])
        self.stop_due = r.randint(1, 15)  # a huge value may mean a search of days
        return f"go {r.choice(['movetime', 'depth', 'nodes', 'wtime', 'foo'])} {self.number()}"

    def line(self) -> str:
        r = self.rng
        if self.stop_due is not None:
            self.stop_due -= 1
            if self.stop_due <= 0:
                if r.random() < 0.3:  # a ponderhit first; the search then needs a stop still
                    self.stop_due = r.randint(1, 10)
                    return "ponderhit"
                self.stop_due = None
                return "stop"
        kind = r.random()
        if kind < 0.2:
            return self.go()
        if kind < 0.35:
            moves = " ".join(r.choice(MOVES) for _ in range(r.randint(0, 6)))
            base = "startpos" if r.random() < 0.5 else f"fen {self.fen()}"
            return f"position {base}" + (f" moves {moves}" if moves else "")
        if kind < 0.45:
            name = r.choice(
                [
                    "Hash",
                    "MultiPV",
                    "Move Overhead",
                    "UCI_Chess960",
                    "Clear Hash",
                    "Threads",
                    "Nope",
                    "UCI_ShowWDL",
                ]
            )
            return f"setoption name {name} value {self.number()}"
        if kind < 0.6:
            return r.choice(
                [
                    "isready",
                    "stop",
                    "ponderhit",
                    "ucinewgame",
                    "d",
                    "eval",
                    "uci",
                    "perft 2",
                    "go perft 1",
                    "debug on",
                    "debug off",
                    "",
                ]
            )
        if kind < 0.75:
            return " ".join(r.choice(WORDS) for _ in range(r.randint(1, 8)))
        if kind < 0.9:
            raw = bytes(r.randrange(256) for _ in range(r.randint(1, 60)))
            return raw.replace(b"\n", b" ").decode("latin-1")
        if kind < 0.995:
            return r.choice(["\x00", "\r", "go\rdepth 2", "isready\x00", " " * 50, "\t"])
        return "x" * r.choice((70_000, 1_000_000))  # longer than any command may be


def needs_stop(go: cmd.Go) -> bool:
    """A search that only ``stop`` ends: infinite, ponder, or (without errors) no limit."""
    limits = go.limits
    bounded = any(
        value is not None
        for value in (
            limits.movetime,
            limits.depth,
            limits.nodes,
            limits.mate,
            limits.wtime,
            limits.btime,
        )
    )
    return limits.waits_for_stop or (not bounded and not go.errors)


def shown(line: str) -> str:
    """A line as the engine quotes it in ``info string error: … (line)``."""
    return "".join(c if c.isprintable() else "?" for c in line.strip())


@dataclass
class Tally:
    lines: int = 0
    processes: int = 0
    crashes: int = 0
    hangs: int = 0
    refused: int = 0
    tracebacks: int = 0
    gos: int = 0
    bestmoves: int = 0
    isready_ms: list[float] = field(default_factory=list)
    stop_ms: list[float] = field(default_factory=list)


class EngineHangError(Exception):
    pass


class Engine:
    """One engine process and the answers it owes."""

    def __init__(self, proc: asyncio.subprocess.Process, tally: Tally, hang_s: float) -> None:
        self.proc = proc
        self.tally = tally
        self.hang_s = hang_s
        self.readies: list[float] = []  # send times of isready still owed a readyok
        self.owed_best = 0
        self.stop_sent: float | None = None
        self.idle = asyncio.Event()
        self.owed_fens = 0
        self.settled = asyncio.Event()
        self.gos_shown: collections.Counter[str] = collections.Counter()
        """Go lines sent, as the engine echoes them in errors (to recognise a refusal)."""
        self.recent: collections.deque[str] = collections.deque(maxlen=40)
        """The last lines each way, printed when the engine hangs."""

    async def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        now = time.perf_counter()
        parsed = cmd.parse_command(line[:100_000])
        if isinstance(parsed, cmd.IsReady):
            self.readies.append(now)
        elif isinstance(parsed, cmd.Display):
            self.owed_fens += 1
        elif isinstance(parsed, cmd.Go):
            self.gos_shown[shown(line)] += 1
            self.owed_best += 1
            self.tally.gos += 1
        elif isinstance(parsed, cmd.Stop) and self.owed_best and self.stop_sent is None:
            self.stop_sent = now
        self.recent.append("> " + line[:120])
        self.proc.stdin.write(line.encode("utf-8", "replace") + b"\n")
        await self.proc.stdin.drain()

    async def read(self) -> None:
        assert self.proc.stdout is not None
        while raw := await self.proc.stdout.readline():
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            now = time.perf_counter()
            self.recent.append("< " + line[:120])
            if "Traceback" in line or 'File "' in line:
                self.tally.tracebacks += 1
            if QUEUE_FULL in line and self.gos_shown[line.rsplit(" (", 1)[-1][:-1]] > 0:
                # A go refused because the engine's queue was full: no answer owed.
                self.gos_shown[line.rsplit(" (", 1)[-1][:-1]] -= 1
                self.owed_best -= 1
                self.tally.refused += 1
            if line.startswith("Fen: ") or (QUEUE_FULL in line and line.endswith(" (d)")):
                self.owed_fens -= 1
                if self.owed_fens <= 0:
                    self.settled.set()
            if line == "readyok" and self.readies:
                self.tally.isready_ms.append((now - self.readies.pop(0)) * 1000)
            elif line.startswith("bestmove"):
                self.tally.bestmoves += 1
                self.owed_best -= 1
                if self.stop_sent is not None:
                    self.tally.stop_ms.append((now - self.stop_sent) * 1000)
                    self.stop_sent = None
            if not self.readies:
                self.idle.set()

    async def drain(self) -> None:
        """Stop until every ``go`` sent has its ``bestmove`` (``quit`` would drop queued
        commands, and with them the answers this script counts)."""
        while self.owed_best > 0:
            owed = self.owed_best
            deadline = time.perf_counter() + self.hang_s
            while self.owed_best == owed:  # each stop must bring a bestmove in time
                if time.perf_counter() > deadline:
                    raise EngineHangError
                await self.send("stop")
                await self.sync()
                await asyncio.sleep(0.01)
        await self.sync()

    async def settle(self) -> None:
        """Wait until the engine has run every command sent so far: a ``d`` waits behind
        the search and the queue, so its ``Fen:`` line marks the end of what came before.
        This paces the script like a client that reads its answers (a flood would only
        fill the engine's queue, whose refusals are counted but test nothing else)."""
        self.settled.clear()
        await self.send("d")
        try:
            await asyncio.wait_for(self.settled.wait(), self.hang_s)
        except TimeoutError:
            raise EngineHangError from None

    async def sync(self) -> None:
        """Send an isready of our own and wait for every readyok owed so far."""
        self.idle.clear()
        await self.send("isready")
        try:
            await asyncio.wait_for(self.idle.wait(), self.hang_s)
        except TimeoutError:
            raise EngineHangError from None


async def run(args: argparse.Namespace) -> Tally:
    tally = Tally()
    maker = LineMaker(random.Random(args.seed))
    command = shlex.split(args.engine)
    while tally.lines < args.lines:
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=1 << 22,
        )
        tally.processes += 1
        engine = Engine(proc, tally, args.hang_s)
        reader = asyncio.create_task(engine.read())
        errors = asyncio.create_task(proc.stderr.read())  # type: ignore[union-attr]
        end = min(args.lines, tally.lines + args.per_process)
        try:
            while tally.lines < end:
                probe_after = maker.rng.randrange(args.batch)
                for i in range(args.batch):
                    line = maker.line()
                    parsed = cmd.parse_command(line[:100_000])
                    if not isinstance(parsed, cmd.Quit):
                        await engine.send(line)
                        tally.lines += 1
                    if isinstance(parsed, cmd.Go) and needs_stop(parsed) and not maker.stop_due:
                        maker.stop_due = maker.rng.randint(1, 15)  # e.g. a word salad "go ponder"
                    if i == probe_after:  # an isready in whatever state the engine is in
                        await engine.send("isready")
                await engine.sync()
                if maker.stop_due is not None:  # the search it would end must not wait for d
                    maker.stop_due = None
                    await engine.send("stop")
                if args.settle:
                    await engine.settle()
            maker.stop_due = None
            await engine.drain()
            await engine.send("quit")
            await asyncio.wait_for(proc.wait(), args.hang_s)
            if proc.returncode != 0:
                tally.crashes += 1
        except EngineHangError:
            tally.hangs += 1
            print(f"hang after line {tally.lines}; the last lines each way:", file=sys.stderr)
            print("\n".join(engine.recent), file=sys.stderr)
            proc.kill()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            tally.crashes += 1
            print(f"process died near line {tally.lines}", file=sys.stderr)
            proc.kill()
        await proc.wait()
        await reader
        stderr = await errors
        tally.tracebacks += stderr.count(b"Traceback")
        print(f"{tally.lines} lines, {tally.processes} processes, {tally.gos} go", file=sys.stderr)
    return tally


def percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    cuts = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values
    p50 = statistics.median(values)
    p99 = cuts[98] if len(values) > 1 else values[0]
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(values):.1f} ms (n={len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", default="brudno")
    parser.add_argument("--batch", type=int, default=50, help="lines between sync points")
    parser.add_argument(
        "--per-process",
        type=int,
        default=5000,
        help="lines before the process is told to quit and a new one starts",
    )
    parser.add_argument("--hang-s", type=float, default=20.0)
    parser.add_argument(
        "--no-settle",
        dest="settle",
        action="store_false",
        help="flood: do not wait for the engine to run each batch (fills its queue)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    tally = asyncio.run(run(args))
    missing = tally.gos - tally.refused - tally.bestmoves
    print(f"isready latency: {percentiles(tally.isready_ms)}")
    print(f"stop latency:    {percentiles(tally.stop_ms)}")
    print(
        f"fuzz: {tally.lines} lines, {tally.processes} processes, {tally.crashes} crashes, "
        f"{tally.hangs} hangs, {tally.tracebacks} tracebacks, {tally.gos} go, "
        f"{tally.bestmoves} bestmove ({tally.refused} refused, queue full; {missing} missing), "
        f"{time.perf_counter() - started:.0f} s"
    )
    return 0 if not (tally.crashes or tally.hangs or tally.tracebacks or missing) else 1


if __name__ == "__main__":
    raise SystemExit(main())
