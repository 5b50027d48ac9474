"""Alpha-beta's branching factor on random uniform trees against Pearl's R(b).

Commands (one result line per branching factor and depth on stdout)::

    # the figures in docs/lab.md (about two minutes on one core)
    python bench/lab_pearl.py --branching 2 3 4 5 --max-leaves 300000 --seeds 40

    # a quick look
    python bench/lab_pearl.py --branching 2 --seeds 10

The result line::

    b=3 d=11 mean_leaves=14716.8 growth=2.229 pearl=2.148 error=+3.8% naive=2.393 seeds=20

Pearl (1982) proved that on uniform trees with independent, continuous leaf values alpha-beta
examines about ``c * R(b)**d`` leaves, ``R(b) = x/(1-x)`` with ``x**b + x - 1 = 0``.  The
constant ``c`` depends on the parity of ``d``, so ``growth`` compares depths two apart:
``sqrt(N(d) / N(d-2))`` of the mean leaf counts over ``--seeds`` seeded trees
(:mod:`engine.lab.trees`, random order).  ``naive`` is ``N(d) ** (1/d)``, the lab's EBF column,
which approaches R(b) much more slowly.  Leaf counts are exact and deterministic; there is no
timing here.  Needs the package installed (``python -m pip install -e .``).
"""

from __future__ import annotations

import argparse

from engine.lab.classic import search
from engine.lab.trees import Order, UniformTree, pearl_branching_factor


def mean_leaves(branching: int, depth: int, seeds: int) -> float:
    total = 0
    for seed in range(seeds):
        tree = UniformTree(branching, depth, Order.RANDOM, seed)
        total += search("alphabeta", tree, depth).leaves
    return total / seeds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--branching", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--seeds", type=int, default=20, help="trees per (b, d)")
    parser.add_argument(
        "--max-leaves", type=int, default=100_000, help="skip depths whose full tree is larger"
    )
    args = parser.parse_args()
    for b in args.branching:
        pearl = pearl_branching_factor(b)
        means: dict[int, float] = {}
        depth = 1
        while b**depth <= args.max_leaves:
            means[depth] = mean_leaves(b, depth, args.seeds)
            if depth >= 3:
                growth = (means[depth] / means[depth - 2]) ** 0.5
                naive = means[depth] ** (1 / depth)
                print(
                    f"b={b} d={depth} mean_leaves={means[depth]:.1f} growth={growth:.3f} "
                    f"pearl={pearl:.3f} error={(growth / pearl - 1) * 100:+.1f}% "
                    f"naive={naive:.3f} seeds={args.seeds}",
                    flush=True,
                )
            depth += 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
