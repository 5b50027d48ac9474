"""``brudno lab``: run the classic algorithms side by side and print what each one cost.

Usage (scripts depend on this interface)::

    brudno lab --tree B:D [--order perfect|worst|random] [--seed S] [--chance C]
               [--algorithms minimax,negamax,alphabeta,...] [--csv] [--plot FILE.png]
    brudno lab --game NAME [--fen F] --depth D [--algorithms ...] [--csv] [--plot FILE.png]
    brudno lab --tree B:D --parallel P[,P...] [--algorithms pvsplit,ybwc,lazysmp] [--csv]

Each algorithm searches the same position (or synthetic tree) to the same depth with the same
move order; one row per algorithm gives the root value (the same in every row), nodes, leaves,
root passes, wall time and the effective branching factor.  Counts are exact and
deterministic; only the time varies.  ``--csv``, ``--markdown``, ``--sweep`` and ``--plot``
choose the output; ``--parallel`` simulates P processors with the parallel schemes.  The
library is :mod:`brudno.lab`; every option and column: docs/lab.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from brudno.argtypes import positive_int
from brudno.lab.reports import (
    csv_text,
    markdown_lines,
    parallel_csv_text,
    parallel_lines,
    parallel_markdown_lines,
    parallel_plot,
    plot,
    pyplot,
    table_lines,
)
from brudno.lab.runs import LabConfig, LabRow, Progress, check_algorithms, run_lab, run_parallel
from brudno.lab.sources import GameSource, LabError, PlotMetric, Source, TreeSource
from engine.lab.classic import (
    ALGORITHMS,
    CHANCE_ALGORITHMS,
    DEFAULT_WINDOW,
    DETERMINISTIC_ALGORITHMS,
    MoveOrder,
)
from engine.lab.parallel import SCHEMES
from engine.lab.trees import Order, TreeSpec, UniformTree
from games.registry import GAMES

__all__ = ["build_source", "configure", "processor_counts", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--tree", metavar="B:D", help="a synthetic uniform tree: branching B, depth D"
    )
    source.add_argument("--game", choices=sorted(GAMES), help="a game (UCI_Variant name)")
    parser.add_argument("--fen", help="with --game: the position (default: the start)")
    parser.add_argument("--chess960", action="store_true", help="with --game chess: X-FEN")
    parser.add_argument("--depth", type=positive_int, help="with --game: plies to search")
    parser.add_argument(
        "--order",
        choices=[o.value for o in Order],
        help="with --tree: move ordering (default random: independent leaf values)",
    )
    parser.add_argument("--seed", type=int, help="with --tree: the tree's seed (default 0)")
    parser.add_argument(
        "--chance",
        type=positive_int,
        metavar="C",
        help="with --tree: interleave chance nodes of C outcomes (expectiminimax family)",
    )
    parser.add_argument(
        "--algorithms",
        help="comma-separated, from: " + ",".join(ALGORITHMS) + " (default: all that fit)",
    )
    parser.add_argument(
        "--move-order",
        choices=[o.value for o in MoveOrder],
        default=MoveOrder.TACTICAL.value,
        help="games: legal_moves() order, or tactical moves first (default)",
    )
    parser.add_argument(
        "--guess", type=int, help="first guess of mtdf / aspiration (default: static eval)"
    )
    parser.add_argument(
        "--window",
        type=positive_int,
        default=DEFAULT_WINDOW,
        help=f"aspiration half-window (default {DEFAULT_WINDOW})",
    )
    parser.add_argument(
        "--iterative",
        action="store_true",
        help="reach the depth by iterative deepening (guesses from the previous depth, the MT "
        "table kept); counts cover every iteration",
    )
    parser.add_argument("--sweep", action="store_true", help="run every depth from 1 to D")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV on stdout instead of a table")
    output.add_argument("--markdown", action="store_true", help="a Markdown table instead")
    parser.add_argument("--plot", metavar="FILE.png", type=Path, help="plot against depth")
    parser.add_argument(
        "--plot-metric",
        choices=[metric.value for metric in PlotMetric],
        default=PlotMetric.NODES.value,
        help="what to plot",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--parallel",
        metavar="P[,P...]",
        type=processor_counts,
        help="with --tree: simulate P processors with the parallel schemes ("
        + ",".join(SCHEMES)
        + "), e.g. 1,2,4,8",
    )


def processor_counts(text: str) -> list[int]:
    """``--parallel``: one processor count or a comma-separated list, each at least 1."""
    counts = [positive_int(part.strip()) for part in text.split(",") if part.strip()]
    if not counts:
        raise argparse.ArgumentTypeError(f"no processor count: {text!r}")
    return list(dict.fromkeys(counts))


def build_source(args: argparse.Namespace) -> Source:
    """The tree or game position the arguments name; :class:`LabError` when inconsistent."""
    if args.tree is not None:
        if args.depth is not None:
            raise LabError("--depth goes with --game; a tree's depth is the D of --tree B:D")
        if args.fen is not None:
            raise LabError("--fen goes with --game")
        try:
            spec = TreeSpec.parse(
                args.tree,
                Order(args.order or Order.RANDOM.value),
                0 if args.seed is None else args.seed,
                args.chance or 0,
            )
            spec.build()  # refuses worst/perfect trees whose values would not fit
        except ValueError as exc:
            raise LabError(str(exc)) from None
        return TreeSource(spec)
    for flag, given in (("--order", args.order), ("--seed", args.seed), ("--chance", args.chance)):
        if given is not None:
            raise LabError(f"{flag} goes with --tree")
    if args.depth is None:
        raise LabError("--game needs --depth D")
    return GameSource(args.game, args.fen, args.depth, args.chess960)


def _algorithms(args: argparse.Namespace, source: Source) -> list[str]:
    """``--algorithms``, or every algorithm that fits the source."""
    if args.algorithms is None:
        return list(CHANCE_ALGORITHMS if source.chance else DETERMINISTIC_ALGORITHMS)
    return [name.strip() for name in args.algorithms.split(",") if name.strip()]


def _title(source: Source, order: MoveOrder, iterative: bool) -> str:
    """The table's and the plot's title: the source, then how it was searched."""
    title = source.label
    if not isinstance(source, TreeSource):
        title += f"; move order {order.value}"
    if iterative:
        title += "; iterative deepening"
    if not isinstance(source, TreeSource):
        title += f"; depth {source.max_depth}"
    return title


def run(args: argparse.Namespace) -> int:
    if args.parallel is not None:
        return _run_parallel(args)
    try:
        source = build_source(args)
        algorithms = _algorithms(args, source)
        check_algorithms(algorithms, chance=source.chance)
        if args.iterative and args.guess is not None:
            raise LabError("--guess and --iterative exclude each other (iterations guess)")
        if args.plot is not None:
            pyplot()  # fail before the work, not after it
    except LabError as exc:
        print(f"brudno lab: {exc}", file=sys.stderr)
        return 2
    sweep = args.sweep or args.plot is not None
    depths = list(range(1, source.max_depth + 1)) if sweep else [source.max_depth]
    order = MoveOrder(args.move_order)
    title = _title(source, order, args.iterative)
    progress = Progress(None if args.quiet else sys.stderr)
    rows: list[LabRow] = []
    status = 0
    try:
        run_lab(
            source,
            LabConfig(
                tuple(algorithms),
                tuple(depths),
                order=order,
                guess=args.guess,
                window=args.window,
                iterative=args.iterative,
            ),
            progress=progress,
            rows=rows,
        )
    except KeyboardInterrupt:
        progress.done()
        print("brudno lab: interrupted; the rows finished so far follow", file=sys.stderr)
        status = 130
    if args.csv:
        sys.stdout.write(csv_text(rows))
    elif args.markdown and rows:
        print("\n".join(markdown_lines(rows)))
    elif rows:
        print("\n".join(table_lines(rows, title)))
    if args.plot is not None and rows and status == 0:
        try:
            plot(
                rows,
                args.plot,
                title=title,
                metric=PlotMetric(args.plot_metric),
                references=source.references(depths, PlotMetric(args.plot_metric)),
            )
        except (LabError, OSError) as exc:
            print(f"brudno lab: {exc}", file=sys.stderr)
            return 2
        print(f"brudno lab: plot written to {args.plot}", file=sys.stderr)
    return status


def _parallel_tree(args: argparse.Namespace) -> TreeSource:
    """The tree of a ``--parallel`` run; :class:`LabError` for what the simulation lacks."""
    if args.tree is None:
        raise LabError("--parallel goes with --tree (synthetic uniform trees only)")
    if args.chance:
        raise LabError("--parallel searches trees without chance nodes")
    for flag, given in (("--iterative", args.iterative), ("--sweep", args.sweep)):
        if given:
            raise LabError(f"{flag} does not go with --parallel")
    if args.guess is not None:
        raise LabError("--guess does not go with --parallel")
    source = build_source(args)
    assert isinstance(source, TreeSource)
    return source


def _run_parallel(args: argparse.Namespace) -> int:
    """``--parallel``: the schemes of :mod:`engine.lab.parallel` on every processor count."""
    try:
        source = _parallel_tree(args)
        if args.plot is not None:
            pyplot()
        tree = source.position(source.max_depth)
        assert isinstance(tree, UniformTree)
        schemes = list(SCHEMES) if args.algorithms is None else _algorithms(args, source)
        results = run_parallel(tree, schemes, args.parallel)
    except LabError as exc:
        print(f"brudno lab: {exc}", file=sys.stderr)
        return 2
    title = f"{source.label}; parallel, simulated processors"
    if args.csv:
        sys.stdout.write(parallel_csv_text(results))
    elif args.markdown:
        print("\n".join(parallel_markdown_lines(results)))
    else:
        print("\n".join(parallel_lines(results, title)))
    if args.plot is not None:
        try:
            parallel_plot(results, args.plot, title=title)
        except OSError as exc:
            print(f"brudno lab: {exc}", file=sys.stderr)
            return 2
        print(f"brudno lab: plot written to {args.plot}", file=sys.stderr)
    return 0
