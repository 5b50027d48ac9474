"""Lazy SMP on this machine: nodes/s, time to a fixed depth and stop latency by ``Threads``.

    python bench/threads.py [--threads 1 2 4] [--movetime MS] [--depth D] [--stops N] [--json]

For each ``Threads`` value, one :class:`~engine.smp.searcher.ParallelSearcher` (helpers started
once, as in a game) searches every chess ``brudno bench`` position

* for ``--movetime`` ms (default 4000): total nodes/s over all processes, as ``info nps``;
* to ``--depth`` (default 7) with a cleared table: the wall time until the main search has
  completed that depth (what Lazy SMP buys: the helpers fill the shared table ahead of it);

then measures ``--stops`` times (default 10) how long an infinite search takes to return after
``stop`` (the latency a GUI sees, helpers included).  The summary gives each figure against
``Threads 1``.  Speeds depend on the machine and its load: run it alone, on a quiet machine,
and report the load average (printed at the start and the end).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from typing import Any

from engine.control import SearchControl
from engine.limits import Limits
from engine.smp.searcher import ParallelSearcher
from games.registry import get_variant
from protocol.uci.bench import bench_positions


def measure(threads: int, movetime: int, depth: int, stops: int, hash_mb: int) -> dict[str, Any]:
    variant = get_variant("chess")
    searcher = ParallelSearcher(hash_mb, threads)
    try:
        nodes = elapsed = 0.0
        to_depth = []
        for name, fen in bench_positions("chess"):
            searcher.clear()
            started = time.perf_counter()
            result = searcher.search(variant.new(fen), Limits(movetime=movetime))
            spent = time.perf_counter() - started
            nodes += result.nodes
            elapsed += spent
            searcher.clear()
            started = time.perf_counter()
            deep = searcher.search(variant.new(fen), Limits(depth=depth))
            to_depth.append(time.perf_counter() - started)
            print(
                f"  Threads {threads} {name}: {result.nodes * 1000 // int(spent * 1000)} nps "
                f"(depth {result.depth}), depth {depth} in {to_depth[-1]:.2f} s ({deep.best})",
                flush=True,
            )
        latencies = []
        for _ in range(stops):
            control = SearchControl()
            stopped_at: list[float] = []

            def stop(control: SearchControl = control, at: list[float] = stopped_at) -> None:
                at.append(time.perf_counter())
                control.stop()

            timer = threading.Timer(1.0, stop)
            timer.start()
            searcher.search(variant.new(), Limits(infinite=True), control=control)
            latencies.append(time.perf_counter() - stopped_at[0])
        return {
            "threads": threads,
            "nps": round(nodes / elapsed),
            "time_to_depth_s": round(sum(to_depth), 3),
            "stop_latency_ms_median": round(statistics.median(latencies) * 1000, 1),
            "stop_latency_ms_max": round(max(latencies) * 1000, 1),
        }
    finally:
        searcher.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--movetime", type=int, default=4000, help="ms per position")
    parser.add_argument("--depth", type=int, default=7)
    parser.add_argument("--stops", type=int, default=10)
    parser.add_argument("--hash", type=int, default=64, help="MiB")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, load average at start {os.getloadavg()}", flush=True)
    rows = [measure(t, args.movetime, args.depth, args.stops, args.hash) for t in args.threads]
    base = rows[0]
    for row in rows:
        row["nps_speedup"] = round(row["nps"] / base["nps"], 2)
        row["depth_speedup"] = round(base["time_to_depth_s"] / row["time_to_depth_s"], 2)
    print(f"load average at end {os.getloadavg()}")
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("Threads  nodes/s  x      depth time  x      stop median  stop max")
    for r in rows:
        print(
            f"{r['threads']:>7}  {r['nps']:>7}  {r['nps_speedup']:<5}  "
            f"{r['time_to_depth_s']:>8.2f} s  {r['depth_speedup']:<5}  "
            f"{r['stop_latency_ms_median']:>8} ms  {r['stop_latency_ms_max']:>5} ms"
        )


if __name__ == "__main__":
    main()
