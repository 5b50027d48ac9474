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
time used and ``solved S/T``.  Progress goes to stderr (:class:`SuiteProgress`): a bar on a
terminal, else a line every ``--progress-interval`` seconds (5; ``--quiet`` for none) with the
positions done, solved so far, the engine's nodes, nodes/s and the time elapsed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TextIO

import chess
import chess.engine
from tqdm import tqdm

from brudno.arena.players import STARTUP_TIMEOUT
from brudno.argtypes import positive_int

__all__ = [
    "EpdError",
    "EpdPosition",
    "EpdResult",
    "SuiteLimit",
    "SuiteProgress",
    "add_progress_arguments",
    "configure",
    "load_suite",
    "progress_for",
    "run",
    "run_suite",
]

DEFAULT_MOVETIME_MS = 1000
WATCHDOG_SLACK = 30.0
"""Seconds past ``--movetime`` after which an engine that has not answered stops the run."""


PROGRESS_INTERVAL = 5.0
"""Seconds between two progress lines when stderr is not a terminal (a log file, CI)."""
BAR_REFRESH = 0.5
"""Seconds between two redraws of a terminal's progress bar between positions."""


class EpdError(ValueError):
    """A suite that cannot be read, or an engine that cannot be run."""


class SuiteProgress:
    """How far a run over positions has got, on stderr: positions done (of how many, when
    known), solved so far, nodes, nodes per second and the time elapsed.

    ``brudno epd`` (without ``--verbose``) and ``brudno solve`` on an early position print
    nothing else for minutes, which looks like a hang.  On a terminal this is a tqdm bar
    redrawn in place and wiped at the end; anywhere else (a log file, CI, a pipe) a plain
    line every ``interval`` seconds, because in-place redraws would make a log one endless
    line, and runs shorter than the interval write nothing, so scripts keep a quiet stderr.
    ``stream=None`` silences it.  Used from one thread.
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        stream: TextIO | None,
        interval: float = PROGRESS_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.solved = 0
        self.nodes = 0
        self._stream = stream
        self._interval = interval
        self._clock = clock
        self._started = self._last = clock()
        self._bar: tqdm[NoReturn] | None = None
        if stream is not None and stream.isatty():
            self._bar = tqdm(
                total=total,
                desc=label,
                unit="pos",
                file=stream,
                leave=False,
                dynamic_ncols=True,
                mininterval=BAR_REFRESH,
            )

    def update(self, nodes: int) -> None:
        """The run's node count so far (called often: it only looks at the clock)."""
        self.nodes = nodes
        self._show(self._clock())

    def finished(self, solved: bool, nodes: int | None = None) -> None:
        """One more position is done (``solved`` or not); ``nodes``: the run's count now."""
        self.done += 1
        self.solved += solved
        if nodes is not None:
            self.nodes = nodes
        now = self._clock()
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(now), refresh=False)
            self._bar.update(1)  # tqdm redraws when its own interval allows
        else:
            self._show(now)

    def write(self, text: str, file: TextIO) -> None:
        """Print a line to ``file`` without tearing the bar (both may be the terminal)."""
        if self._bar is not None:
            tqdm.write(text, file=file)
            file.flush()
        else:
            print(text, file=file, flush=True)

    def close(self) -> None:
        """Remove the bar (the results follow); a log keeps its lines.  Silent afterwards."""
        self._stream = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def line(self, now: float | None = None) -> str:
        """``epd: 12/300 positions, solved 10, 1,234,567 nodes, 45,678 nodes/s, 27.0 s``."""
        now = self._clock() if now is None else now
        done = self.done if self.total is None else f"{self.done}/{self.total}"
        return f"{self.label}: {done} positions, {self._counts(now)}, {now - self._started:.1f} s"

    def _counts(self, now: float) -> str:
        elapsed = now - self._started
        nps = round(self.nodes / elapsed) if elapsed > 0 else 0
        return f"solved {self.solved}, {self.nodes:,} nodes, {nps:,} nodes/s"

    def _show(self, now: float) -> None:
        if self._stream is None:
            return
        if self._bar is not None:
            if now - self._last >= BAR_REFRESH:
                self._last = now
                self._bar.set_postfix_str(self._counts(now))
            return
        if now - self._last >= self._interval:
            self._last = now
            self._stream.write(self.line(now) + "\n")
            self._stream.flush()


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
    nodes: int = 0
    """The engine's last reported node count for the position (0 if it reported none)."""

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
    engine: chess.engine.UciProtocol,
    position: EpdPosition,
    limit: SuiteLimit,
    on_nodes: Callable[[int], None] | None = None,
) -> EpdResult:
    """Analyse one position; ``on_nodes`` hears each node count the engine reports."""
    started = time.monotonic()
    found: float | None = None
    depth: int | None = None
    score: chess.engine.Score | None = None
    nodes = 0
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
            if "nodes" in info:
                nodes = info["nodes"]
                if on_nodes is not None:
                    on_nodes(nodes)
            pov = info.get("score")
            if pov is not None:
                score = pov.relative
        best = await analysis.wait()
    elapsed = time.monotonic() - started
    solved = position.judge(best.move)
    if solved and found is None:
        found = elapsed  # no main line named it before bestmove
    return EpdResult(
        position, best.move, solved, elapsed, found if solved else None, depth, score, nodes
    )


async def run_suite(
    positions: Sequence[EpdPosition],
    command: Sequence[str],
    limit: SuiteLimit,
    *,
    options: Sequence[tuple[str, str]] = (),
    concurrency: int = 1,
    on_result: Callable[[int, EpdResult], None] | None = None,
    on_nodes: Callable[[int, int], None] | None = None,
) -> tuple[str, list[EpdResult]]:
    """Solve every position with ``concurrency`` engine processes.  Returns the engine's
    ``id name`` and the results in suite order.

    ``on_result(index, result)`` is called as each position finishes (any order);
    ``on_nodes(index, nodes)`` whenever the engine reports its node count on a position."""
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
                        result = await _solve(
                            engine,
                            positions[index],
                            limit,
                            None if on_nodes is None else functools.partial(on_nodes, index),
                        )
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


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def add_progress_arguments(parser: argparse.ArgumentParser) -> None:
    """``--progress-interval`` and ``--quiet``, alike for every command that shows a
    :class:`SuiteProgress` (``args.progress_interval``, ``args.quiet``)."""
    parser.add_argument(
        "--progress-interval",
        type=_seconds,
        default=PROGRESS_INTERVAL,
        metavar="SECONDS",
        help="seconds between progress lines on stderr when it is not a terminal "
        f"(default {PROGRESS_INTERVAL:g}; 0: at every update)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")


def progress_for(args: argparse.Namespace, label: str, total: int | None) -> SuiteProgress:
    """The :class:`SuiteProgress` that :func:`add_progress_arguments`' options ask for."""
    return SuiteProgress(
        label,
        total,
        stream=None if args.quiet else sys.stderr,
        interval=args.progress_interval,
    )


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
    add_progress_arguments(parser)


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
        command = shlex.split(args.engine) if args.engine else [sys.executable, "-m", "brudno"]
    except ValueError as exc:
        print(f"brudno epd: --engine: {exc}", file=sys.stderr)
        return 2
    total = len(positions)
    pending: dict[int, EpdResult] = {}
    printed = 0
    progress = progress_for(args, "epd", total)
    finished_nodes = 0  # of the positions done
    running_nodes: dict[int, int] = {}  # so far, of each position being searched

    def on_nodes(index: int, nodes: int) -> None:
        running_nodes[index] = nodes
        progress.update(finished_nodes + sum(running_nodes.values()))

    def on_result(index: int, result: EpdResult) -> None:
        nonlocal printed, finished_nodes
        running_nodes.pop(index, None)
        finished_nodes += result.nodes
        progress.finished(result.solved, finished_nodes + sum(running_nodes.values()))
        pending[index] = result
        if args.verbose:
            while printed in pending:
                progress.write(pending.pop(printed).line(printed + 1, total), sys.stdout)
                printed += 1

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
                on_nodes=on_nodes,
            )
        )
    except EpdError as exc:
        progress.close()
        print(f"brudno epd: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        progress.close()
        print(f"brudno epd: interrupted after {progress.done} positions", file=sys.stderr)
        return 130
    finally:
        progress.close()
    wall = time.monotonic() - started
    seconds = sum(r.elapsed for r in results)
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
    print(f"Time used: {wall:.1f} s (searching {seconds:.1f} s)")
    print(f"solved {sum(r.solved for r in results)}/{total}")
    return 0
