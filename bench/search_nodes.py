"""What a search heuristic does to the tree, in numbers that do not depend on the machine.

    python bench/search_nodes.py pvs pvs-no-nullmove pvs-countermove [--depth 7] [--wac 100]

For each ``Algorithm`` name (``pvs``, or one of :data:`engine.search.ABLATIONS`): the nodes a
fresh searcher needs to reach ``--depth`` on the ``brudno bench`` positions (fewer nodes to
the same depth is what a pruning or ordering change buys), and how many of the first
``--wac`` Win At Chess positions it solves within ``--nodes`` nodes each (what the pruning
may cost: tactics it no longer sees).  One line per name::

    pvs-no-nullmove bench-depth-7 156776 wac 84/100 at 20000 nodes

Node counts are deterministic, so this can run on a loaded machine (say ``nice -n 19``
beside a match) and still mean something.  It is a screen, not a verdict: a change is kept
only when a match (``brudno match --sprt``) says it gains; this tells which changes are worth
the machine time of one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import chess

from engine.limits import Limits
from engine.search import ABLATIONS, SearchConfig, Searcher
from games.registry import get_variant
from protocol.uci.bench import bench_positions

WAC = Path(__file__).resolve().parents[2] / "shared" / "data" / "chess" / "suites" / "wacnew.epd"


def config_of(name: str) -> SearchConfig:
    """The search configuration ``Algorithm name`` plays with."""
    return SearchConfig() if name == "pvs" else ABLATIONS[name]


def bench_nodes(config: SearchConfig, depth: int) -> int:
    """Nodes to ``depth`` summed over the bench positions, a fresh searcher for each."""
    variant = get_variant("chess")
    return sum(
        Searcher(16, config=config).search(variant.new(fen), Limits(depth=depth)).nodes
        for _, fen in bench_positions("chess")
    )


def wac_solved(config: SearchConfig, positions: list[str], nodes: int) -> int:
    """How many of the EPD ``positions`` the search solves within ``nodes`` nodes each."""
    variant = get_variant("chess")
    solved = 0
    for line in positions:
        board, operations = chess.Board.from_epd(line)
        best = operations.get("bm", [])
        result = Searcher(16, config=config).search(variant.new(board.fen()), Limits(nodes=nodes))
        solved += chess.Move.from_uci(str(result.best)) in best
    return solved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", choices=["pvs", *ABLATIONS], metavar="ALGORITHM")
    parser.add_argument("--depth", type=int, default=7, help="bench depth (default 7)")
    parser.add_argument("--wac", type=int, default=100, help="WAC positions (default 100)")
    parser.add_argument("--nodes", type=int, default=20000, help="nodes per WAC position")
    args = parser.parse_args()
    positions = [line for line in WAC.read_text().splitlines() if line.strip()][: args.wac]
    for name in args.names:
        config = config_of(name)
        nodes = bench_nodes(config, args.depth)
        solved = wac_solved(config, positions, args.nodes)
        print(
            f"{name} bench-depth-{args.depth} {nodes} wac {solved}/{len(positions)} "
            f"at {args.nodes} nodes",
            flush=True,
        )


if __name__ == "__main__":
    main()
