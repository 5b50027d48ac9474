"""``brudno epd``: run a test suite of positions (``bm`` / ``am`` in SAN) against an engine.

Usage (scripts depend on this interface)::

    brudno epd FILE [--movetime MS | --depth N | --nodes N] [--engine CMD]
               [--option NAME=VALUE ...] [--concurrency N] [--start N] [--count N] [--verbose]

A position is solved when the engine's ``bestmove`` is one of the ``bm`` moves (any of them:
corrected suites list alternatives) and none of the ``am`` moves ("avoid move").  Positions
with neither operation are skipped.  The engine (Brudno itself unless ``--engine`` names
another UCI engine) starts each position fresh (``ucinewgame``), analyses it under the limit
(``--movetime`` 1000 ms unless a limit is given; several limits mean whichever comes first),
and is judged on the move it plays, through python-chess's client.

Alongside the verdict each position records when the engine settled on its final answer: the
wall time of the last ``info`` line whose principal variation changed to a right move and
stayed right until ``bestmove`` ("found").  Tallying those times shows how many positions a
shorter time would have solved.

``--verbose`` prints one line per position (in suite order).  The last lines are always the
time used and ``solved S/T``.  Progress goes to stderr on a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine

from protocol.argtypes import positive_int
from protocol.match_players import STARTUP_TIMEOUT

__all__ = [
    "EpdError",
    "EpdPosition",
    "EpdResult",
    "SuiteLimit",
    "configure",
    "load_suite",
    "run",
    "run_suite",
]

DEFAULT_MOVETIME_MS = 1000
WATCHDOG_SLACK = 30.0
"""Seconds past ``--movetime`` after which an engine that has not answered stops the run."""


class EpdError(ValueError):
    """A suite that cannot be read, or an engine that cannot be run."""


@dataclass(frozen=True, slots=True)
class EpdPosition:
    board: chess.Board
    best: tuple[chess.Move, ...]
    avoid: tuple[chess.Move, ...]
    name: str
    line: int

    def judge(self, move: chess.Move | None) -> bool:
        if move is None:
            return False
        if self.best and move not in self.best:
            return False
        return move not in self.avoid

    def wanted(self) -> str:
        """``bm Qg6`` / ``am Rd6; bm Rb6 Rg5+`` in SAN, as the suite writes it."""
        parts = []
        if self.avoid:
            parts.append("am " + " ".join(self.board.san(m) for m in self.avoid))
        if self.best:
            parts.append("bm " + " ".join(self.board.san(m) for m in self.best))
        return "; ".join(parts)


def _moves(operand: object) -> tuple[chess.Move, ...]:
    if not isinstance(operand, list):
        return ()
    return tuple(m for m in operand if isinstance(m, chess.Move))


def load_suite(path: str | Path) -> tuple[list[EpdPosition], int]:
    """The positions with ``bm`` or ``am`` operations, and how many lines had neither."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EpdError(f"cannot read {path}: {exc}") from None
    positions = []
    skipped = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "%")):
            continue
        try:
            board, ops = chess.Board.from_epd(line)
        except ValueError as exc:
            raise EpdError(f"{path.name}:{number}: {exc}") from None
        best = ops.get("bm")
        avoid = ops.get("am")
        if not best and not avoid:
            skipped += 1
            continue
        moves_best = _moves(best)
        moves_avoid = _moves(avoid)
        name = ops.get("id")
        positions.append(
            EpdPosition(
                board,
                moves_best,
                moves_avoid,
                name if isinstance(name, str) else f"{path.name}:{number}",
                number,
            )
        )
    return positions, skipped


@dataclass(frozen=True, slots=True)
class SuiteLimit:
    movetime_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None

    def to_python_chess(self) -> chess.engine.Limit:
        return chess.engine.Limit(
            time=None if self.movetime_ms is None else self.movetime_ms / 1000.0,
            depth=self.depth,
            nodes=self.nodes,
        )

    def text(self) -> str:
        parts = []
        if self.movetime_ms is not None:
            parts.append(f"movetime {self.movetime_ms} ms")
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class EpdResult:
    position: EpdPosition
    move: chess.Move | None
    solved: bool
    elapsed: float
    found: float | None
    """Seconds after ``go`` when the main line last turned to a right move (solved only)."""
    depth: int | None
    score: chess.engine.Score | None

    def line(self, index: int, total: int) -> str:
        board = self.position.board
        played = board.san(self.move) if self.move is not None else "(none)"
        verdict = "ok  " if self.solved else "FAIL"
        extra = []
        if self.depth is not None:
            extra.append(f"depth {self.depth}")
        if self.score is not None:
            extra.append(f"score {self.score}")
        extra.append(f"{round(self.elapsed * 1000)} ms")
        if self.found is not None:
            extra.append(f"found at {round(self.found * 1000)} ms")
        width = len(str(total))
        return (
            f"{index:>{width}}/{total} {verdict} {self.position.name}: {played} "
            f"({self.position.wanted()}); {', '.join(extra)}"
        )


async def _start_engine(
    command: Sequence[str], options: Sequence[tuple[str, str]]
) -> tuple[asyncio.SubprocessTransport, chess.engine.UciProtocol]:
    try:
        transport, engine = await asyncio.wait_for(
            chess.engine.popen_uci(list(command), setpgrp=True), STARTUP_TIMEOUT
        )
    except (OSError, chess.engine.EngineError, TimeoutError) as exc:
        raise EpdError(f"cannot start {shlex.join(command)!r}: {exc}") from None
    try:
        await engine.configure(dict(options))
    except chess.engine.EngineError as exc:
        await _quit(transport, engine)
        raise EpdError(str(exc)) from None
    return transport, engine


async def _quit(transport: asyncio.SubprocessTransport, engine: chess.engine.UciProtocol) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(engine.quit(), 5.0)
    transport.close()


async def _solve(
    engine: chess.engine.UciProtocol, position: EpdPosition, limit: SuiteLimit
) -> EpdResult:
    started = time.monotonic()
    found: float | None = None
    depth: int | None = None
    score: chess.engine.Score | None = None
    with await engine.analysis(
        position.board,
        limit.to_python_chess(),
        game=object(),  # a new game per position: ucinewgame, an empty hash table
        info=chess.engine.INFO_BASIC | chess.engine.INFO_SCORE | chess.engine.INFO_PV,
    ) as analysis:
        async for info in analysis:
            pv = info.get("pv")
            if pv:
                right = position.judge(pv[0])
                if right and found is None:
                    found = time.monotonic() - started
                elif not right:
                    found = None
            if "depth" in info:
                depth = info["depth"]
            pov = info.get("score")
            if pov is not None:
                score = pov.relative
        best = await analysis.wait()
    elapsed = time.monotonic() - started
    solved = position.judge(best.move)
    if solved and found is None:
        found = elapsed  # no main line named it before bestmove
    return EpdResult(position, best.move, solved, elapsed, found if solved else None, depth, score)


async def run_suite(
    positions: Sequence[EpdPosition],
    command: Sequence[str],
    limit: SuiteLimit,
    *,
    options: Sequence[tuple[str, str]] = (),
    concurrency: int = 1,
    on_result: Callable[[int, EpdResult], None] | None = None,
) -> tuple[str, list[EpdResult]]:
    """Solve every position with ``concurrency`` engine processes.  Returns the engine's
    ``id name`` and the results in suite order.

    ``on_result(index, result)`` is called as each position finishes (any order)."""
    results: list[EpdResult | None] = [None] * len(positions)
    queue = iter(range(len(positions)))
    # Only a fixed move time says how long an answer may take; give it generous slack.
    watchdog = None if limit.movetime_ms is None else limit.movetime_ms / 1000.0 + WATCHDOG_SLACK
    names: list[str] = []

    async def worker() -> None:
        transport, engine = await _start_engine(command, options)
        names.append(engine.id.get("name", command[0]))
        try:
            for index in queue:
                name = positions[index].name
                try:
                    async with asyncio.timeout(watchdog):
                        result = await _solve(engine, positions[index], limit)
                except chess.engine.EngineError as exc:
                    raise EpdError(f"the engine failed on {name}: {exc}") from None
                except TimeoutError:
                    raise EpdError(f"no bestmove within {watchdog:g} s on {name}") from None
                results[index] = result
                if on_result is not None:
                    on_result(index, result)
        finally:
            await _quit(transport, engine)

    try:
        async with asyncio.TaskGroup() as group:
            for i in range(max(1, min(concurrency, len(positions)))):
                group.create_task(worker(), name=f"epd-worker-{i}")
    except* EpdError as errors:
        raise errors.exceptions[0] from None
    return names[0] if names else command[0], [r for r in results if r is not None]


# -- command line ----------------------------------------------------------------------------


def _option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="EPD suite with bm/am operations")
    parser.add_argument(
        "--movetime",
        type=positive_int,
        metavar="MS",
        help=f"time per position (default {DEFAULT_MOVETIME_MS} unless --depth/--nodes)",
    )
    parser.add_argument("--depth", type=positive_int, help="depth per position")
    parser.add_argument("--nodes", type=positive_int, help="nodes per position")
    parser.add_argument(
        "--engine", metavar="CMD", help="a UCI engine's command line (default: Brudno)"
    )
    parser.add_argument(
        "--option",
        type=_option,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="UCI option for the engine (repeatable)",
    )
    parser.add_argument("--concurrency", type=positive_int, default=1, help="engines at once")
    parser.add_argument("--start", type=positive_int, default=1, help="first position (1-based)")
    parser.add_argument("--count", type=positive_int, help="number of positions")
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per position")


def run(args: argparse.Namespace) -> int:
    try:
        positions, skipped = load_suite(args.file)
    except EpdError as exc:
        print(f"brudno epd: {exc}", file=sys.stderr)
        return 2
    positions = positions[args.start - 1 :]
    if args.count is not None:
        positions = positions[: args.count]
    if not positions:
        print("brudno epd: no positions with bm/am in range", file=sys.stderr)
        return 2
    movetime = args.movetime
    if movetime is None and args.depth is None and args.nodes is None:
        movetime = DEFAULT_MOVETIME_MS
    limit = SuiteLimit(movetime, args.depth, args.nodes)
    try:
        command = shlex.split(args.engine) if args.engine else [sys.executable, "-m", "protocol"]
    except ValueError as exc:
        print(f"brudno epd: --engine: {exc}", file=sys.stderr)
        return 2
    total = len(positions)
    pending: dict[int, EpdResult] = {}
    printed = 0
    solved = 0
    finished = 0
    live = sys.stderr.isatty()

    def on_result(index: int, result: EpdResult) -> None:
        nonlocal printed, solved, finished
        finished += 1
        solved += result.solved
        pending[index] = result
        if args.verbose:
            while printed in pending:
                print(pending.pop(printed).line(printed + 1, total), flush=True)
                printed += 1
        if live:
            print(f"\r[{finished}/{total}] solved {solved}", end="", file=sys.stderr, flush=True)

    started = time.monotonic()
    try:
        name, results = asyncio.run(
            run_suite(
                positions,
                command,
                limit,
                options=args.option,
                concurrency=args.concurrency,
                on_result=on_result,
            )
        )
    except EpdError as exc:
        print(f"\nbrudno epd: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nbrudno epd: interrupted after {finished} positions", file=sys.stderr)
        return 130
    wall = time.monotonic() - started
    if live:
        print(file=sys.stderr)
    searching = sum(r.elapsed for r in results)
    note = f" ({skipped} lines without bm/am skipped)" if skipped else ""
    print(f"Suite: {Path(args.file).name}, {total} positions{note}; {limit.text()}")
    print(f"Engine: {name} ({shlex.join(command)})")
    found = sorted(r.found for r in results if r.found is not None)
    if found:
        horizon = movetime / 1000.0 if movetime is not None else found[-1]
        cuts = [c for c in (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0) if c < horizon]
        print(
            "Solved by time: "
            + ", ".join(f"{sum(1 for t in found if t <= c)} by {c:g} s" for c in cuts)
            + (", " if cuts else "")
            + f"{len(found)} in all"
        )
    print(f"Time used: {wall:.1f} s (searching {searching:.1f} s)")
    print(f"solved {sum(r.solved for r in results)}/{total}")
    return 0
