"""``brudno epd``: run a test suite of positions (``bm`` / ``am`` in SAN) against an engine.

Usage (scripts depend on this interface)::

    brudno epd FILE [--movetime MS | --depth N | --nodes N] [--engine CMD]
               [--option NAME=VALUE ...] [--concurrency N] [--start N] [--count N] [--verbose]

The engine is Brudno itself unless ``--engine`` names another UCI engine; the limit is
``--movetime`` 1000 ms unless one is given.  What counts as solved, and the "found" time, are
:mod:`brudno.arena.epd`'s.

``--verbose`` prints one line per position (in suite order).  The last lines are always the
time used and ``solved S/T``.  Progress goes to stderr (:class:`brudno.progress.SuiteProgress`):
a bar on a terminal, else a line every ``--progress-interval`` seconds (5; ``--quiet`` for
none) with the positions done, solved so far, the engine's nodes, nodes/s and the time elapsed.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from brudno.arena.epd import (
    EpdError,
    EpdPosition,
    EpdResult,
    SuiteConfig,
    SuiteLimit,
    load_suite,
    run_suite,
)
from brudno.argtypes import name_value, positive_int
from brudno.progress import add_progress_arguments, progress_for

__all__ = ["DEFAULT_MOVETIME_MS", "configure", "run"]

DEFAULT_MOVETIME_MS = 1000

_SOLVED_BY_CUTS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
"""The times (seconds) at which the summary counts the positions solved so far."""


@dataclass(frozen=True, slots=True)
class _SuiteRun:
    """What the summary reports about a run besides its results."""

    total: int
    skipped: int
    limit: SuiteLimit
    name: str
    command: list[str]


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
        type=name_value,
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


def result_line(result: EpdResult, index: int, total: int) -> str:
    """``--verbose``'s line for the ``index``-th position of ``total``."""
    board = result.position.board
    played = board.san(result.move) if result.move is not None else "(none)"
    verdict = "ok  " if result.solved else "FAIL"
    extra = []
    if result.depth is not None:
        extra.append(f"depth {result.depth}")
    if result.score is not None:
        extra.append(f"score {result.score}")
    extra.append(f"{round(result.elapsed * 1000)} ms")
    if result.found is not None:
        extra.append(f"found at {round(result.found * 1000)} ms")
    width = len(str(total))
    return (
        f"{index:>{width}}/{total} {verdict} {result.position.name}: {played} "
        f"({result.position.wanted()}); {', '.join(extra)}"
    )


def _select(positions: list[EpdPosition], args: argparse.Namespace) -> list[EpdPosition]:
    """The positions ``--start`` and ``--count`` select."""
    positions = positions[args.start - 1 :]
    if args.count is not None:
        positions = positions[: args.count]
    return positions


def _print_summary(
    args: argparse.Namespace, run: _SuiteRun, results: list[EpdResult], wall: float
) -> None:
    """The lines after the positions: the suite, the engine, solved by time, time and score."""
    total = run.total
    seconds = sum(r.elapsed for r in results)
    note = f" ({run.skipped} lines without bm/am skipped)" if run.skipped else ""
    print(f"Suite: {Path(args.file).name}, {total} positions{note}; {run.limit.text()}")
    print(f"Engine: {run.name} ({shlex.join(run.command)})")
    found = sorted(r.found for r in results if r.found is not None)
    if found:
        movetime = run.limit.movetime_ms
        horizon = movetime / 1000.0 if movetime is not None else found[-1]
        cuts = [c for c in _SOLVED_BY_CUTS_S if c < horizon]
        print(
            "Solved by time: "
            + ", ".join(f"{sum(1 for t in found if t <= c)} by {c:g} s" for c in cuts)
            + (", " if cuts else "")
            + f"{len(found)} in all"
        )
    print(f"Time used: {wall:.1f} s (searching {seconds:.1f} s)")
    print(f"solved {sum(r.solved for r in results)}/{total}")


def run(args: argparse.Namespace) -> int:
    try:
        positions, skipped = load_suite(args.file)
    except EpdError as exc:
        print(f"brudno epd: {exc}", file=sys.stderr)
        return 2
    positions = _select(positions, args)
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
                progress.write(result_line(pending.pop(printed), printed + 1, total), sys.stdout)
                printed += 1

    started = time.monotonic()
    try:
        name, results = asyncio.run(
            run_suite(
                positions,
                SuiteConfig(command, limit, options=args.option, concurrency=args.concurrency),
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
    _print_summary(args, _SuiteRun(total, skipped, limit, name, command), results, wall)
    return 0
