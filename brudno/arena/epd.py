"""EPD test suites: positions with ``bm`` / ``am`` operations (in SAN), and a runner that asks
an engine for its move on each and judges it.

A position is solved when the engine's ``bestmove`` is one of the ``bm`` moves (any of them:
corrected suites list alternatives) and none of the ``am`` moves ("avoid move").  Positions
with neither operation are skipped.  The engine starts each position fresh (``ucinewgame``),
analyses it under the limit (several limits mean whichever comes first), and is judged on the
move it plays, through python-chess's client.

Alongside the verdict each position records when the engine settled on its final answer: the
wall time of the last ``info`` line whose principal variation changed to a right move and
stayed right until ``bestmove`` ("found").  Tallying those times shows how many positions a
shorter time would have solved.  The command line and its report are
:mod:`brudno.commands.epd`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine

from brudno.arena.players import STARTUP_TIMEOUT

__all__ = [
    "EpdError",
    "EpdPosition",
    "EpdResult",
    "SuiteConfig",
    "SuiteLimit",
    "load_suite",
    "run_suite",
]

WATCHDOG_SLACK = 30.0
"""Seconds past the move time after which an engine that has not answered stops the run."""


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
    nodes: int = 0
    """The engine's last reported node count for the position (0 if it reported none)."""


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


@dataclass(frozen=True, slots=True)
class SuiteConfig:
    """How a suite is run: the engine's command line, the limit per position, the UCI
    options set before the first position, and how many engine processes run at once."""

    command: Sequence[str]
    limit: SuiteLimit
    options: Sequence[tuple[str, str]] = ()
    concurrency: int = 1


async def run_suite(
    positions: Sequence[EpdPosition],
    config: SuiteConfig,
    *,
    on_result: Callable[[int, EpdResult], None] | None = None,
    on_nodes: Callable[[int, int], None] | None = None,
) -> tuple[str, list[EpdResult]]:
    """Solve every position with ``config.concurrency`` engine processes.  Returns the
    engine's ``id name`` and the results in suite order.

    ``on_result(index, result)`` is called as each position finishes (any order);
    ``on_nodes(index, nodes)`` whenever the engine reports its node count on a position."""
    command, limit = config.command, config.limit
    results: list[EpdResult | None] = [None] * len(positions)
    queue = iter(range(len(positions)))
    # Only a fixed move time says how long an answer may take; give it generous slack.
    watchdog = None if limit.movetime_ms is None else limit.movetime_ms / 1000.0 + WATCHDOG_SLACK
    names: list[str] = []

    async def worker() -> None:
        transport, engine = await _start_engine(command, config.options)
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
            for i in range(max(1, min(config.concurrency, len(positions)))):
                group.create_task(worker(), name=f"epd-worker-{i}")
    except* EpdError as errors:
        raise errors.exceptions[0] from None
    return names[0] if names else command[0], [r for r in results if r is not None]
