"""Build Connect Four's opening book with our own solver and write ``games/data/connect4_book.bin``.

    python scripts/build_connect4_book.py DEPTH [--root COLUMNS] [--output PATH]
    python scripts/build_connect4_book.py DEPTH --check [--output PATH]   # rebuild, compare
    python scripts/build_connect4_book.py DEPTH --count    # positions per ply, nothing solved
    python scripts/build_connect4_book.py DEPTH --estimate N [--seed 48] [--max-nodes M]

Every position reachable from the root (the empty board unless ``--root`` gives a column
string such as ``4453``) with at most DEPTH stones is solved exactly
(:mod:`games.connect4.book_builder`: the positions at DEPTH one by one, the shallower ones from
their children).  Nothing is random, so the same arguments write the same bytes, which is what
``--check`` proves of the file at ``--output``: exit status 0 when equal, 1 when not.  Progress
goes to stderr; the last line on stdout says the entries, the leaves, the solver's nodes and
how long it took.

Cost: the leaves (the positions at DEPTH) are the only ones solved, so a build costs their
count times a leaf's mean cost, and both depend on DEPTH: few and very hard leaves near the
empty board, many and easier ones deeper.  ``--estimate N`` solves N leaves drawn with
``random.Random(seed)``, each from a cold solver and within ``--max-nodes``, and projects the
build from their mean (a leaf that does not finish counts with its cap, so the projection is a
lower bound; a real build shares one table between leaves, which helps).  How deep a book the
solver of the day builds and how to go deeper: docs/playing.md, *Connect Four's opening
book*.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from games.connect4.board import Connect4  # noqa: E402
from games.connect4.book import SHIPPED_BOOK  # noqa: E402
from games.connect4.book_builder import build_book, position_of, positions_by_ply  # noqa: E402
from games.connect4.solver import Connect4Solver, SolveAbortedError  # noqa: E402

_PROGRESS_SECONDS = 10.0


def estimate(root: Connect4, depth: int, samples: int, *, seed: int, max_nodes: int) -> str:
    """Solve ``samples`` seeded leaves of the book within ``max_nodes`` each; project the
    build's nodes and seconds from their mean (see the module docstring)."""
    leaves = positions_by_ply(root, depth)[-1]
    keys = random.Random(seed).sample(sorted(leaves), min(samples, len(leaves)))
    solver = Connect4Solver()
    nodes = solved = 0
    started = time.perf_counter()
    for key in keys:
        solver.reset()
        solver.limit(max_nodes=max_nodes)
        try:
            solver.score(position_of(*leaves[key]))
            solved += 1
        except SolveAbortedError:
            pass
        nodes += solver.nodes
    seconds = time.perf_counter() - started
    mean = nodes / len(keys)
    rate = nodes / seconds if seconds else 0.0
    projected = len(leaves) * mean
    return (
        f"depth {depth}: {len(leaves)} leaves; {solved}/{len(keys)} sampled leaves solved within "
        f"{max_nodes} nodes, mean {mean:.0f} nodes, {rate / 1000:.1f} knps; projected build: "
        f"at least {projected:.3g} nodes, {projected / rate / 3600 if rate else 0.0:.3g} h"
    )


def write_or_check(data: bytes, output: Path, *, check: bool) -> int:
    """Write a built book to ``output``, or with ``check`` compare it with the file there:
    the exit status (0 written or equal, 1 different), with a line saying which."""
    if check:
        if not output.exists() or output.read_bytes() != data:
            print(f"{output} differs from the rebuilt book", file=sys.stderr)
            return 1
        print(f"{output} is this script's book")
        return 0
    output.write_bytes(data)
    print(f"wrote {output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("depth", type=int, help="the deepest ply (stone count) in the book")
    parser.add_argument("--root", default="", help="column string of the root (default: empty)")
    parser.add_argument("--output", type=Path, default=SHIPPED_BOOK, help="the book file")
    parser.add_argument(
        "--check", action="store_true", help="rebuild and compare with --output, write nothing"
    )
    parser.add_argument(
        "--count", action="store_true", help="print the folded positions per ply, solve nothing"
    )
    parser.add_argument("--estimate", type=int, metavar="N", help="project from N sampled leaves")
    parser.add_argument("--seed", type=int, default=48, help="--estimate's sample (default 48)")
    parser.add_argument(
        "--max-nodes", type=int, default=2_000_000, help="--estimate's cap per leaf"
    )
    args = parser.parse_args(argv)
    root = Connect4.from_moves(args.root)
    if args.count:
        counts = [len(level) for level in positions_by_ply(root, args.depth)]
        print(f"positions per ply from {root.ply}: {' '.join(map(str, counts))} ({sum(counts)})")
        return 0
    if args.estimate is not None:
        print(estimate(root, args.depth, args.estimate, seed=args.seed, max_nodes=args.max_nodes))
        return 0
    started = time.perf_counter()
    last = [started]

    def progress(done: int, total: int, nodes: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= _PROGRESS_SECONDS or done == total:
            last[0] = now
            print(f"leaves {done}/{total}, {nodes} nodes, {now - started:.0f} s", file=sys.stderr)

    book, stats = build_book(args.depth, root=root, on_leaf=progress)
    data = book.to_bytes()
    seconds = time.perf_counter() - started
    print(
        f"depth {args.depth} root '{args.root}': {stats.entries} entries, {stats.leaves} leaves "
        f"solved, {stats.nodes} nodes, {len(data)} bytes, {seconds:.1f} s"
    )
    return write_or_check(data, args.output, check=args.check)


if __name__ == "__main__":
    raise SystemExit(main())
