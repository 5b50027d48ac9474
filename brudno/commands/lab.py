"""``brudno lab``: run the classic algorithms side by side and print what each one cost.

Usage (scripts depend on this interface)::

    brudno lab --tree B:D [--order perfect|worst|random] [--seed S] [--chance C]
               [--algorithms minimax,negamax,alphabeta,...] [--csv] [--plot FILE.png]
    brudno lab --game NAME [--fen F] --depth D [--algorithms ...] [--csv] [--plot FILE.png]
    brudno lab --tree B:D --parallel P[,P...] [--algorithms pvsplit,ybwc,lazysmp] [--csv]

Each algorithm searches the same position (or synthetic tree, :mod:`engine.lab.trees`) to the same
depth with the same move order (``--iterative``: by iterative deepening, counting every
iteration, as an engine would run it); one row per algorithm gives the root value (the same in every
row: that is the point), nodes, leaves, root passes, wall time and the effective branching
factor ``leaves ** (1/depth)``.  Node and leaf counts follow :mod:`engine.lab.classic`'s
definitions and are exact and deterministic; only the time varies between runs.

``--csv`` prints a header (``algorithm,value,nodes,leaves,...``) and one row per algorithm and
depth instead of the table; ``--markdown`` prints a Markdown table (as in docs/lab.md).
``--sweep`` runs every depth from 1 to D; ``--plot`` implies it and draws nodes (or
``--plot-metric leaves``) against depth per algorithm on a log scale, with the full and the
minimal tree for reference on uniform trees.  Matplotlib is an optional extra
(``pip install 'brudno[lab]'``), imported only for ``--plot``.

``--parallel 1,2,4,...`` simulates P processors searching the tree with the parallel schemes
of :mod:`engine.lab.parallel` (``--algorithms`` then names schemes; default all): one row per
scheme and P with the parallel time in node steps, the nodes of all processors, speedup over
serial alpha-beta, search overhead and idle fraction (``--csv`` header
``scheme,processors,value,time,nodes,idle,serial_nodes,speedup,overhead,idle_fraction``);
``--plot`` draws speedup against P.

Progress goes to stderr while a run takes longer than a second (rewritten in place on a
terminal, a line every ten seconds otherwise); ``--quiet`` silences it.  Ctrl-C prints the
rows finished so far.
"""

from __future__ import annotations

import argparse
import csv
import enum
import importlib
import io
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TextIO

from brudno.argtypes import positive_int
from engine.game import Game, GameError
from engine.lab.chance import has_chance
from engine.lab.classic import (
    ALGORITHMS,
    CHANCE_ALGORITHMS,
    DEFAULT_WINDOW,
    DETERMINISTIC_ALGORITHMS,
    ClassicResult,
    MoveOrder,
    Value,
    search,
)
from engine.lab.parallel import SCHEMES, ParallelResult, simulate
from engine.lab.trees import (
    Order,
    TreeSpec,
    UniformTree,
    effective_branching_factor,
    knuth_moore_leaves,
)
from engine.score import report
from games.registry import GAMES, get_variant
from protocol.uci.formatting import score_text

__all__ = [
    "CSV_COLUMNS",
    "PARALLEL_CSV_COLUMNS",
    "GameSource",
    "LabError",
    "LabRow",
    "PlotMetric",
    "Source",
    "TreeSource",
    "configure",
    "csv_text",
    "markdown_lines",
    "parallel_csv_text",
    "parallel_lines",
    "parallel_markdown_lines",
    "parallel_plot",
    "plot",
    "processor_counts",
    "run",
    "run_lab",
    "run_parallel",
    "table_lines",
]

CSV_COLUMNS = (
    "algorithm",
    "value",
    "nodes",
    "leaves",
    "passes",
    "researches",
    "depth",
    "time_ms",
    "ebf",
    "best",
    "pv",
)
"""The ``--csv`` header, in order (the first four are the documented interface)."""

PARALLEL_CSV_COLUMNS = (
    "scheme",
    "processors",
    "value",
    "time",
    "nodes",
    "idle",
    "serial_nodes",
    "speedup",
    "overhead",
    "idle_fraction",
)
"""The ``--parallel --csv`` header, in order."""


class PlotMetric(enum.StrEnum):
    """What ``--plot`` draws against depth: a count of :class:`engine.lab.classic.ClassicResult`
    (the value is its attribute name)."""

    NODES = "nodes"
    LEAVES = "leaves"


class LabError(Exception):
    """A request the lab cannot run; the message says why (exit status 2)."""


# -- what is searched ------------------------------------------------------------------------
class Source(Protocol):
    """Something to search at a given depth: a synthetic tree or a game position."""

    @property
    def label(self) -> str: ...

    @property
    def chance(self) -> bool:
        """True when the positions have chance nodes (the expectiminimax family applies)."""
        ...

    @property
    def max_depth(self) -> int: ...

    def position(self, depth: int) -> Game[Any]:
        """A fresh position to search to ``depth`` (every run gets its own)."""
        ...

    def score(self, value: Value) -> str:
        """How a root value reads in this source's units ("" when the raw value is all)."""
        ...

    def references(self, depths: Sequence[int], metric: PlotMetric) -> dict[str, list[int]]:
        """Theoretical curves to draw beside the measured ones, by label."""
        ...


@dataclass(frozen=True)
class TreeSource:
    """A synthetic tree; a sweep builds the tree for each depth (orderings depend on it)."""

    spec: TreeSpec

    @property
    def label(self) -> str:
        return self.spec.label()

    @property
    def chance(self) -> bool:
        return self.spec.chance > 0

    @property
    def max_depth(self) -> int:
        return self.spec.depth

    def position(self, depth: int) -> Game[Any]:
        return self.spec.with_depth(depth).build()

    def score(self, value: Value) -> str:
        del value
        return ""

    def references(self, depths: Sequence[int], metric: PlotMetric) -> dict[str, list[int]]:
        spec = self.spec
        if spec.chance:
            return {}
        b = spec.branching
        if metric == PlotMetric.LEAVES:
            return {
                "full tree (b^d)": [b**d for d in depths],
                "minimal tree (Knuth-Moore)": [knuth_moore_leaves(b, d) for d in depths],
            }
        return {"full tree": [sum(b**k for k in range(d + 1)) for d in depths]}


@dataclass(frozen=True)
class GameSource:
    """A position of a registered game, searched at every requested depth."""

    variant: str
    fen: str | None
    depth: int
    chess960: bool = False

    def __post_init__(self) -> None:
        self.position(self.depth)  # fail early on a bad FEN

    @property
    def label(self) -> str:
        return f"{self.variant}, {self.position(0).fen()}"

    @property
    def chance(self) -> bool:
        return has_chance(self.position(0))

    @property
    def max_depth(self) -> int:
        return self.depth

    def position(self, depth: int) -> Game[Any]:
        del depth
        try:
            return get_variant(self.variant).new(self.fen, chess960=self.chess960)
        except GameError as exc:
            raise LabError(str(exc)) from None

    def references(self, depths: Sequence[int], metric: PlotMetric) -> dict[str, list[int]]:
        del depths, metric
        return {}

    def score(self, value: Value) -> str:
        if isinstance(value, int) and not self.chance:
            return score_text(report(value))
        return ""


# -- running ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LabRow:
    """One algorithm at one depth."""

    result: ClassicResult
    time_ms: float
    best: str
    pv: tuple[str, ...]
    score: str

    @property
    def ebf(self) -> float:
        return effective_branching_factor(self.result.leaves, self.result.depth)


class Progress:
    """Reports a long run on stderr; silent for runs under a second."""

    def __init__(self, stream: TextIO | None, clock: Callable[[], float] = time.monotonic):
        self._stream = stream
        self._clock = clock
        self._tty = stream is not None and stream.isatty()
        self._every = 0.5 if self._tty else 10.0
        self._label = ""
        self._started = 0.0
        self._last = 0.0
        self._shown = False

    def start(self, label: str) -> None:
        self._label = label
        self._started = self._last = self._clock()
        self._shown = False

    def poll(self, nodes: int) -> bool:
        """The search's poll callback: never stops the search, only reports."""
        stream = self._stream
        if stream is None:
            return False
        now = self._clock()
        if now - self._last >= self._every and now - self._started >= 1.0:
            self._last = now
            text = f"lab: {self._label}: {nodes:,} nodes, {now - self._started:.0f} s"
            if self._tty:
                stream.write(f"\r{text}\x1b[K")
            else:
                stream.write(text + "\n")
            stream.flush()
            self._shown = True
        return False

    def done(self) -> None:
        if self._stream is not None and self._shown and self._tty:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def run_lab(
    source: Source,
    algorithms: Sequence[str],
    depths: Sequence[int],
    *,
    order: MoveOrder = MoveOrder.TACTICAL,
    guess: int | None = None,
    window: int = DEFAULT_WINDOW,
    iterative: bool = False,
    progress: Progress | None = None,
    rows: list[LabRow] | None = None,
) -> list[LabRow]:
    """Search ``source`` with every algorithm at every depth (depth-major order).

    ``iterative``: reach each depth by iterative deepening, as an engine does (depths 1, 2,
    ... each guessing from the previous value, the MT table kept between iterations); the
    row then counts the work of all iterations.  Rows are appended to ``rows`` as they
    finish (so an interrupted run keeps them)."""
    check_algorithms(algorithms, chance=source.chance)
    out = [] if rows is None else rows
    poll = None if progress is None else progress.poll
    for depth in depths:
        for algorithm in algorithms:
            game = source.position(depth)
            if progress is not None:
                progress.start(f"{algorithm} depth {depth}")
            started = time.perf_counter()
            if iterative:
                result = _deepen(algorithm, game, depth, order=order, window=window, poll=poll)
            else:
                result = search(
                    algorithm, game, depth, order=order, guess=guess, window=window, poll=poll
                )
            elapsed = (time.perf_counter() - started) * 1000.0
            if progress is not None:
                progress.done()
            pv = _pv_text(game, result.pv)
            out.append(LabRow(result, elapsed, pv[0] if pv else "", pv, source.score(result.value)))
    return out


def _deepen(
    algorithm: str,
    game: Game[Any],
    depth: int,
    *,
    order: MoveOrder,
    window: int,
    poll: Callable[[int], bool] | None,
) -> ClassicResult:
    """Iterative deepening to ``depth``: the last iteration's result with every count summed
    over the iterations."""
    table: dict[tuple[int, int], list[Any]] = {}
    totals = [0, 0, 0, 0]
    guess: int | None = None
    result: ClassicResult | None = None
    for d in range(1, depth + 1):
        result = search(
            algorithm, game, d, order=order, guess=guess, window=window, tt=table, poll=poll
        )
        guess = result.value if isinstance(result.value, int) else None
        for i, count in enumerate((result.nodes, result.leaves, result.passes, result.researches)):
            totals[i] += count
    assert result is not None  # depth >= 1
    return replace(
        result,
        nodes=totals[0],
        leaves=totals[1],
        passes=totals[2],
        researches=totals[3],
        tt_entries=len(table),
    )


def check_algorithms(algorithms: Sequence[str], *, chance: bool) -> None:
    """Raise :class:`LabError` for unknown names or algorithms that do not fit the source."""
    if not algorithms:
        raise LabError("no algorithms given")
    unknown = [name for name in algorithms if name not in ALGORITHMS]
    if unknown:
        raise LabError(f"unknown algorithm {', '.join(unknown)} (known: {', '.join(ALGORITHMS)})")
    fitting = CHANCE_ALGORITHMS if chance else DETERMINISTIC_ALGORITHMS
    misfits = [name for name in algorithms if name not in fitting]
    if misfits:
        kind = "has chance nodes" if chance else "has no chance nodes"
        raise LabError(
            f"{', '.join(misfits)} cannot search this: it {kind} (use {', '.join(fitting)})"
        )


def _pv_text(game: Game[Any], moves: Sequence[Any]) -> tuple[str, ...]:
    texts = []
    for move in moves:
        texts.append(game.format_move(move))
        game.push(move)
    for _ in moves:
        game.pop()
    return tuple(texts)


# -- output ----------------------------------------------------------------------------------
def format_value(value: Value) -> str:
    """Integers as they are; an expectiminimax fraction as a decimal with 4 places."""
    if isinstance(value, int):
        return str(value)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.4f}"


def table_lines(rows: Sequence[LabRow], title: str) -> list[str]:
    """The human-readable table (a ``#`` title line, a header, one line per row)."""
    scores = any(row.score for row in rows)
    header = (
        f"{'algorithm':<15} {'depth':>5} {'value':>10} "
        + (f"{'score':>9} " if scores else "")
        + f"{'nodes':>12} {'leaves':>12} {'passes':>6} {'time_ms':>9} {'ebf':>6}  best"
    )
    lines = [f"# {title}", header]
    for row in rows:
        r = row.result
        lines.append(
            f"{r.algorithm:<15} {r.depth:>5} {format_value(r.value):>10} "
            + (f"{row.score:>9} " if scores else "")
            + f"{r.nodes:>12,} {r.leaves:>12,} {r.passes:>6} {row.time_ms:>9.0f} "
            f"{row.ebf:>6.2f}  {row.best}"
        )
    values = {row.result.value for row in rows if row.result.depth == rows[-1].result.depth}
    if len(values) > 1:
        lines.append("# WARNING: the algorithms disagree on the value")
    return lines


def markdown_lines(rows: Sequence[LabRow]) -> list[str]:
    """``--markdown``: a GitHub table (what docs/lab.md shows), thousands separated."""
    scores = any(row.score for row in rows)
    lines = [
        "| algorithm | value | nodes | leaves | passes | time (ms) | EBF | best | depth |"
        + (" score |" if scores else ""),
        "|---|--:|--:|--:|--:|--:|--:|---|--:|" + ("---|" if scores else ""),
    ]
    for row in rows:
        r = row.result
        lines.append(
            f"| {r.algorithm} | {format_value(r.value)} | {r.nodes:,} | {r.leaves:,} | "
            f"{r.passes} | {row.time_ms:,.0f} | {row.ebf:.2f} | {row.best} | {r.depth} |"
            + (f" {row.score} |" if scores else "")
        )
    return lines


def csv_text(rows: Sequence[LabRow]) -> str:
    """``--csv``: the header of :data:`CSV_COLUMNS`, then one row per algorithm and depth."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        r = row.result
        writer.writerow(
            [
                r.algorithm,
                format_value(r.value),
                r.nodes,
                r.leaves,
                r.passes,
                r.researches,
                r.depth,
                f"{row.time_ms:.1f}",
                f"{row.ebf:.4f}",
                row.best,
                " ".join(row.pv),
            ]
        )
    return buffer.getvalue()


def plot(
    rows: Sequence[LabRow],
    path: Path,
    *,
    title: str,
    metric: PlotMetric = PlotMetric.NODES,
    references: dict[str, list[int]] | None = None,
) -> None:
    """Draw ``metric`` against depth, one line per algorithm, log scale, into ``path``."""
    pyplot = _pyplot()
    depths = sorted({row.result.depth for row in rows})
    algorithms = list(dict.fromkeys(row.result.algorithm for row in rows))
    figure, axes = pyplot.subplots(figsize=(8, 5))
    for name in algorithms:
        points = sorted(
            (row.result.depth, getattr(row.result, metric))
            for row in rows
            if row.result.algorithm == name
        )
        axes.plot([d for d, _ in points], [v for _, v in points], marker="o", label=name)
    for (label, values), style in zip((references or {}).items(), ("--", ":"), strict=False):
        axes.plot(depths, values, linestyle=style, color="grey", linewidth=1.2, label=label)
    axes.set_yscale("log")
    axes.set_xlabel("depth (plies)")
    axes.set_ylabel(metric)
    axes.set_xticks(depths)
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def _pyplot() -> Any:
    """matplotlib's pyplot on the non-interactive backend, or a :class:`LabError`."""
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise LabError(
            "--plot needs matplotlib, an optional extra: python -m pip install 'brudno[lab]'"
        ) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


# -- the subcommand --------------------------------------------------------------------------


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
            _pyplot()  # fail before the work, not after it
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
            algorithms,
            depths,
            order=order,
            guess=args.guess,
            window=args.window,
            iterative=args.iterative,
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


# -- parallel search (--parallel) ------------------------------------------------------------
def run_parallel(
    tree: UniformTree, schemes: Sequence[str], processors: Sequence[int]
) -> list[ParallelResult]:
    """Every scheme on every processor count (scheme-major order)."""
    unknown = [name for name in schemes if name not in SCHEMES]
    if unknown or not schemes:
        raise LabError(
            f"unknown parallel scheme {', '.join(unknown) or '(none)'} "
            f"(known: {', '.join(SCHEMES)})"
        )
    return [simulate(scheme, tree, p) for scheme in schemes for p in processors]


def parallel_lines(results: Sequence[ParallelResult], title: str) -> list[str]:
    """The human-readable ``--parallel`` table."""
    serial = results[0].serial if results else 0
    lines = [
        f"# {title}; serial alpha-beta: {serial:,} nodes",
        f"{'scheme':<8} {'P':>4} {'value':>7} {'time':>9} {'nodes':>10} {'speedup':>8} "
        f"{'overhead':>9} {'idle':>6}",
    ]
    for r in results:
        lines.append(
            f"{r.scheme.value:<8} {r.processors:>4} {r.value:>7} {r.time:>9,} {r.nodes:>10,} "
            f"{r.speedup:>8.2f} {r.overhead:>9.3f} {r.idle_fraction:>6.3f}"
        )
    if len({r.value for r in results}) > 1:
        lines.append("# WARNING: the schemes disagree on the value")
    return lines


def parallel_markdown_lines(results: Sequence[ParallelResult]) -> list[str]:
    """``--parallel --markdown``: a GitHub table, as in docs/lab.md."""
    lines = [
        "| scheme | P | time | nodes | speedup | overhead | idle |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        lines.append(
            f"| {r.scheme.value} | {r.processors} | {r.time:,} | {r.nodes:,} | "
            f"{r.speedup:.2f} | {r.overhead:+.2f} | {r.idle_fraction:.2f} |"
        )
    return lines


def parallel_csv_text(results: Sequence[ParallelResult]) -> str:
    """``--parallel --csv``: :data:`PARALLEL_CSV_COLUMNS`, one row per scheme and P."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PARALLEL_CSV_COLUMNS)
    for r in results:
        writer.writerow(
            [
                r.scheme.value,
                r.processors,
                r.value,
                r.time,
                r.nodes,
                r.idle,
                r.serial,
                f"{r.speedup:.4f}",
                f"{r.overhead:.4f}",
                f"{r.idle_fraction:.4f}",
            ]
        )
    return buffer.getvalue()


def parallel_plot(results: Sequence[ParallelResult], path: Path, *, title: str) -> None:
    """Speedup against P per scheme, log-log, with the ideal ``speedup = P``."""
    pyplot = _pyplot()
    counts = sorted({r.processors for r in results})
    figure, axes = pyplot.subplots(figsize=(8, 5))
    for scheme in dict.fromkeys(r.scheme for r in results):
        points = sorted((r.processors, r.speedup) for r in results if r.scheme is scheme)
        axes.plot([p for p, _ in points], [s for _, s in points], marker="o", label=scheme.value)
    axes.plot(counts, counts, linestyle="--", color="grey", linewidth=1.2, label="ideal (P)")
    axes.set_xscale("log", base=2)
    axes.set_yscale("log", base=2)
    axes.set_xlabel("processors P")
    axes.set_ylabel("speedup (serial alpha-beta nodes / parallel time)")
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


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
            _pyplot()
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
