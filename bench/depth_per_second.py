"""Depth reached and nodes per second in a fixed time per position (the production search).

    python bench/depth_per_second.py [--movetime MS] [--game chess]

Searches each `brudno bench` position for MS milliseconds (default 1000) with a fresh
Searcher and prints one line per position (completed depth, nodes, nps), then a summary line.
Speeds depend on the machine and its load: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import time

from engine.limits import Limits
from engine.search import Searcher
from games.registry import get_variant
from protocol.uci.bench import bench_positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--movetime", type=int, default=1000, help="milliseconds per position")
    parser.add_argument("--game", default="chess")
    args = parser.parse_args()
    variant = get_variant(args.game)
    depths, total_nodes, total_ms = [], 0, 0.0
    for name, fen in bench_positions(args.game):
        started = time.perf_counter()
        result = Searcher(16).search(variant.new(fen), Limits(movetime=args.movetime))
        elapsed = (time.perf_counter() - started) * 1000
        depths.append(result.depth)
        total_nodes += result.nodes
        total_ms += elapsed
        print(
            f"{name}: depth {result.depth} nodes {result.nodes} "
            f"nps {round(result.nodes * 1000 / elapsed)} time {round(elapsed)} ms "
            f"bestmove {result.best}"
        )
    print(
        f"summary: movetime {args.movetime} ms, depth min {min(depths)} max {max(depths)}, "
        f"nps {round(total_nodes * 1000 / total_ms)}"
    )


if __name__ == "__main__":
    main()
