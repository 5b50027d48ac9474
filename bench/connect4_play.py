"""How often Connect Four's play hook answers from a proof, on Pascal Pons' test sets.

Commands (one result line per set on stdout)::

    python bench/connect4_play.py --sets L2_R2 L1_R2 --limit 50 --node-budget 100000
    python bench/connect4_play.py --sets L1_R2 --limit 20 --verify   # and check every move

Each position is given to the hook (``games.connect4.play.Connect4Player``, no book) as
``go infinite`` with ``--node-budget`` nodes, never a clock, so the counts do not depend on the
machine's load.  The result line counts the answers by source: ``exact`` (the exact score and
its best drops), ``bound`` (the budget ran out after at least a draw was proven, and the drops
keeping it were found), ``declined`` (left to the heuristic search).  Before the bound step
the hook answered only the ``exact`` ones.  ``--verify`` weakly solves the position after each
answered move and counts the moves that give the outcome away (0 expected).  The sets are read
from ``../shared/data/connect4/pons`` beside the repository (``--data`` to point elsewhere).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.control import SearchControl  # noqa: E402
from engine.info import SearchInfo  # noqa: E402
from engine.limits import Limits  # noqa: E402
from games.connect4.board import Connect4  # noqa: E402
from games.connect4.play import Connect4Player  # noqa: E402
from games.connect4.solver import Connect4Solver  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "connect4" / "pons"
SETS = ("L3_R1", "L2_R1", "L2_R2", "L1_R1", "L1_R2", "L1_R3")


def load(path: Path) -> list[tuple[str, int]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(moves, int(score)) for moves, score in (line.split() for line in lines if line)]


def run_set(name: str, cases: list[tuple[str, int]], *, node_budget: int, verify: bool) -> str:
    player = Connect4Player(lambda: None, node_budget=node_budget)
    sources: Counter[str] = Counter()
    given_away = 0
    started = time.perf_counter()
    for moves, expected in cases:
        position = Connect4.from_moves(moves)
        notes: list[SearchInfo] = []
        result = player(
            position.copy(),
            Limits(infinite=True),
            SearchControl(),
            notes.append,
            move_overhead_ms=0,
        )
        if result is None:
            sources["declined"] += 1
            continue
        source = next(n.string for n in notes if n.string is not None).split(":")[0]
        sources[source] += 1
        if verify and result.best is not None and _kept(position, result.best) < _sign(expected):
            given_away += 1
            print(f"{name}: {moves} gave the outcome away with {result.best}", file=sys.stderr)
    verified = f" given_away={given_away}" if verify else ""
    return (
        f"Test_{name} positions={len(cases)} node_budget={node_budget} "
        f"exact={sources['exact']} bound={sources['bound']} declined={sources['declined']}"
        f"{verified} total_s={time.perf_counter() - started:.1f}"
    )


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _kept(position: Connect4, move: str) -> int:
    """The outcome (1, 0, -1) the mover keeps by playing ``move``, by a weak solve."""
    child = position.copy()
    child.push(position.parse_move(move))
    if child.is_terminal():
        return 1 if child.winner is not None else 0
    return -Connect4Solver().score(child, weak=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=["L2_R2", "L1_R2"])
    parser.add_argument("--limit", type=int, default=50, help="the first N positions of a set")
    parser.add_argument("--node-budget", type=int, default=100_000, help="the hook's budget")
    parser.add_argument("--verify", action="store_true", help="check every answered move")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="test-set directory")
    args = parser.parse_args(argv)
    for name in args.sets:
        cases = load(args.data / f"Test_{name}")[: args.limit]
        line = run_set(name, cases, node_budget=args.node_budget, verify=args.verify)
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
