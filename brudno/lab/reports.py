"""The lab's rows as a reader gets them: a table, Markdown (docs/lab.md), CSV, or a plot
(matplotlib, an optional extra imported only to plot)."""

from __future__ import annotations

import csv
import importlib
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from brudno.lab.runs import LabRow
from brudno.lab.sources import LabError, PlotMetric
from engine.lab.classic import Value
from engine.lab.parallel import ParallelResult

__all__ = [
    "CSV_COLUMNS",
    "PARALLEL_CSV_COLUMNS",
    "csv_text",
    "format_value",
    "markdown_lines",
    "parallel_csv_text",
    "parallel_lines",
    "parallel_markdown_lines",
    "parallel_plot",
    "plot",
    "pyplot",
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
    plt = pyplot()
    depths = sorted({row.result.depth for row in rows})
    algorithms = list(dict.fromkeys(row.result.algorithm for row in rows))
    figure, axes = plt.subplots(figsize=(8, 5))
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
    plt.close(figure)


def pyplot() -> Any:
    """matplotlib's pyplot on the non-interactive backend, or a :class:`LabError`."""
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise LabError(
            "--plot needs matplotlib, an optional extra: python -m pip install 'brudno[lab]'"
        ) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


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
    plt = pyplot()
    counts = sorted({r.processors for r in results})
    figure, axes = plt.subplots(figsize=(8, 5))
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
    plt.close(figure)
