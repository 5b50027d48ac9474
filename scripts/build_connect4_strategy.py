"""Build Connect Four's strategy book with our own solver; write games/data/connect4_book.bin.

    python scripts/build_connect4_strategy.py [--jobs J] [--leaf-nodes N] [--output PATH]
    python scripts/build_connect4_strategy.py --check [--jobs J]    # rebuild, compare
    python scripts/build_connect4_strategy.py --root 4453 [--root ...] --output PATH

The shipped book's roots are the empty board (the first player's strategy: it wins) and the
position after each first drop but the centre's (the second player's strategy there: it wins
or draws against the first player's mistake), mirror images folded.  ``--root`` gives other
roots as column strings; the side to move at a root is the strategy's player.  How a strategy
is built and why: :mod:`games.connect4.strategy`; its size and cost: docs/playing.md,
*Connect Four's opening book*.  The build is deterministic, so ``--check`` proves the file at
``--output`` is this script's (exit status 0 when equal, 1 when not).  Progress goes to
stderr; the last lines on stdout give the entries, the positions, the solver's nodes and the
time it took.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "scripts"))

from build_connect4_book import write_or_check  # noqa: E402

from games.connect4.board import COLUMN_ORDER, Connect4  # noqa: E402
from games.connect4.book import SHIPPED_BOOK  # noqa: E402
from games.connect4.strategy import (  # noqa: E402
    DEFAULT_LEAF_NODES,
    BuildPlan,
    StrategyStats,
    build_strategy,
)

CENTRE = COLUMN_ORDER[0]
SHIPPED_ROOTS = ("", *(str(col + 1) for col in sorted(COLUMN_ORDER) if col != CENTRE))
"""The empty board, then each first drop but the centre's (as 1-based column strings)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--root",
        action="append",
        help="a root as a column string (repeatable; default: the shipped book's roots)",
    )
    parser.add_argument("--output", type=Path, default=SHIPPED_BOOK, help="the book file")
    parser.add_argument(
        "--check", action="store_true", help="rebuild and compare with --output, write nothing"
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--leaf-nodes",
        type=int,
        default=DEFAULT_LEAF_NODES,
        help=f"the leaf test's node budget (default {DEFAULT_LEAF_NODES})",
    )
    parser.add_argument(
        "--split-plies", type=int, default=2, help="plies explored before sharing out the work"
    )
    parser.add_argument("--tt-entries", type=int, default=1 << 25, help="each solver's table slots")
    args = parser.parse_args(argv)
    roots = [Connect4.from_moves(text) for text in (args.root or SHIPPED_ROOTS)]
    plan = BuildPlan(args.leaf_nodes, args.jobs, args.split_plies, args.tt_entries)
    started = time.perf_counter()

    def progress(done: int, total: int, stats: StrategyStats) -> None:
        print(
            f"tasks {done}/{total}: {stats.inner} positions held, {stats.leaves} left to the "
            f"board, {stats.lost} lost, {stats.nodes} nodes, {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )

    book, stats = build_strategy(roots, plan, progress)
    data = book.to_bytes()
    seconds = time.perf_counter() - started
    print(
        f"strategy from {len(roots)} roots, leaf test {args.leaf_nodes} nodes: {len(book)} "
        f"entries (deepest {book.depth} stones), {stats.inner} positions held, {stats.leaves} "
        f"left to the board, {stats.lost} lost, {stats.nodes} solver nodes, {len(data)} bytes, "
        f"{seconds:.1f} s with {args.jobs} jobs"
    )
    return write_or_check(data, args.output, check=args.check)


if __name__ == "__main__":
    raise SystemExit(main())
