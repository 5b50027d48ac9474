"""Connect Four solver on Pascal Pons' test sets: positions solved, mean nodes, mean time.

Commands (one result line per test set on stdout; progress on stderr)::

    # the end-game, middle-game and easy begin sets, every position (about 10 seconds)
    python bench/connect4_solver.py --sets L3_R1 L2_R1 L2_R2 L1_R1

    # the harder begin sets: every position of L1_R2 (about 5 minutes), and as many of
    # L1_R3 as 15 minutes allow (its positions take seconds to minutes each)
    python bench/connect4_solver.py --sets L1_R2
    python bench/connect4_solver.py --sets L1_R3 --time-limit 900

    # weak solving (outcome only), as Pons' tables also report it
    python bench/connect4_solver.py --sets L2_R2 --limit 100 --weak

The result line (one per set; wrapped here)::

    Test_L3_R1 end/easy solved=1000/1000 wrong=0 mean_nodes=51.3 mean_time_ms=0.0141
    knps=3629.4 total_s=0.3

Each position is solved from a cold solver (an empty transposition table, 8,388,617 slots
unless ``--tt-entries``), as Pons measures them, and its score compared with the set's;
``wrong`` counts disagreements (0 expected).  Nodes are negamax calls, Pons' "nb pos".
``--time-limit S`` stops a set once S seconds have gone (``solved`` then says how far it got:
the first positions of the set, in order); ``--max-nodes N`` skips positions that need more
than N nodes (counted as unsolved).  The sets are read from ``../shared/data/connect4/pons``
beside the repository (``--data`` to point elsewhere); see ``shared/data/SOURCES.md``.

Instructions per node do not depend on the machine's load, as knps does: run the same command
under ``valgrind --tool=cachegrind --cache-sim=no``, once with ``--limit N`` and once with
``--limit 0``, and divide the difference of the instructions by the nodes of the N positions
(mean_nodes times N).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from games.connect4.board import Connect4  # noqa: E402
from games.connect4.solver import (  # noqa: E402
    DEFAULT_TT_ENTRIES,
    Connect4Solver,
    SolveAbortedError,
)

DEFAULT_DATA = REPO.parent / "shared" / "data" / "connect4" / "pons"
SETS = {
    "L3_R1": "end/easy",
    "L2_R1": "middle/easy",
    "L2_R2": "middle/medium",
    "L1_R1": "begin/easy",
    "L1_R2": "begin/medium",
    "L1_R3": "begin/hard",
}


def set_name(text: str) -> str:
    short = text.removeprefix("Test_")
    if short not in SETS:
        raise argparse.ArgumentTypeError(f"unknown set {text!r} (known: {', '.join(SETS)})")
    return short


def load(path: Path) -> list[tuple[str, int]]:
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            moves, score = line.split()
            cases.append((moves, int(score)))
    return cases


def run_set(
    name: str,
    cases: list[tuple[str, int]],
    solver: Connect4Solver,
    *,
    weak: bool,
    time_limit: float | None,
) -> str:
    solved = wrong = nodes = 0
    seconds = 0.0
    started = time.perf_counter()
    for index, (moves, expected) in enumerate(cases, 1):
        if time_limit is not None and time.perf_counter() - started > time_limit:
            break
        position = Connect4.from_moves(moves)
        solver.reset()
        t0 = time.perf_counter()
        try:
            score = solver.score(position, weak=weak)
        except SolveAbortedError:
            continue
        seconds += time.perf_counter() - t0
        want = (expected > 0) - (expected < 0) if weak else expected
        solved += 1
        nodes += solver.nodes
        if score != want:
            wrong += 1
            print(f"{name}: {moves} solved {score}, expected {want}", file=sys.stderr)
        if index % 50 == 0:
            print(
                f"{name}: {index}/{len(cases)} ({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
            )
    mean_nodes = nodes / solved if solved else 0.0
    mean_ms = seconds * 1000.0 / solved if solved else 0.0
    knps = nodes / seconds / 1000.0 if seconds else 0.0
    mode = " weak" if weak else ""
    return (
        f"Test_{name} {SETS[name]}{mode} solved={solved}/{len(cases)} wrong={wrong} "
        f"mean_nodes={mean_nodes:.1f} mean_time_ms={mean_ms:.4f} knps={knps:.1f} "
        f"total_s={time.perf_counter() - started:.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--sets", nargs="+", type=set_name, default=["L3_R1", "L2_R1"], help="test sets"
    )
    parser.add_argument("--limit", type=int, help="the first N positions of each set")
    parser.add_argument("--weak", action="store_true", help="prove the outcome only")
    parser.add_argument("--time-limit", type=float, help="seconds per set at most")
    parser.add_argument("--max-nodes", type=int, help="skip positions needing more nodes")
    parser.add_argument(
        "--tt-entries", type=int, default=DEFAULT_TT_ENTRIES, help="transposition table slots"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="test-set directory")
    args = parser.parse_args(argv)
    solver = Connect4Solver(args.tt_entries)
    solver.limit(max_nodes=args.max_nodes)  # counted from each position's reset
    wrong_total = 0
    for name in args.sets:
        cases = load(args.data / f"Test_{name}")
        if args.limit is not None:
            cases = cases[: args.limit]
        line = run_set(
            name,
            cases,
            solver,
            weak=args.weak,
            time_limit=args.time_limit,
        )
        print(line, flush=True)
        wrong_total += int(line.split(" wrong=")[1].split()[0])
    return 1 if wrong_total else 0


if __name__ == "__main__":
    raise SystemExit(main())
