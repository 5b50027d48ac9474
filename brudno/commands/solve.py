"""``brudno solve``: the exact game-theoretic value of a position, its best moves, and the cost.

Usage (scripts depend on this interface)::

    brudno solve [--game cfour|grundy] [--json] [--analyze] [--weak] [--max-nodes N]
                 [--book FILE | --no-book] [--pv-nodes N]
                 [--progress-interval SECONDS] [--quiet] POSITION...
    brudno solve [--game ...] [--json] ... -        # positions from stdin, one per line

Connect Four (``--game cfour``, the default; POSITION a column string such as ``4453`` or a
FEN) scores in the literature's convention (``22 - s`` for a win with one's ``s``-th stone, 0 a
draw, negative a loss), from the shipped opening book where it knows the position, else by
the solver; Grundy's game (``--game grundy``) is solved by its Sprague-Grundy
values.  Output: ``key  value`` lines, or one JSON object per line (``--json``); progress on
stderr.  Exit status: 0 solved (and as expected), 1 an expected score did not match, 2 bad
input, 3 not solved within ``--max-nodes``, 130 interrupted.  Details: docs/playing.md,
*Connect Four* and *Grundy's game*.
"""

from __future__ import annotations

import argparse
import enum
import json
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from brudno.argtypes import positive_int
from brudno.progress import add_progress_arguments, progress_for
from engine.game import GameError, InvalidPositionError
from games.connect4.board import COLUMN_ORDER, Connect4, column_string
from games.connect4.board import START_FEN as CFOUR_START_FEN
from games.connect4.book import BookFormatError, Connect4Book
from games.connect4.play import Source, pv_text, shipped_book, solve_with_book
from games.connect4.solver import Connect4Solver, Solution, SolveAbortedError
from games.grundy import Grundy, grundy_value

__all__ = [
    "SOLVABLE_GAMES",
    "CfourOptions",
    "ExitStatus",
    "SolveReport",
    "configure",
    "run",
    "solve_cfour",
    "solve_grundy",
]

SOLVABLE_GAMES = ("cfour", "grundy")


class ExitStatus(enum.IntEnum):
    """The exit statuses, in rising order of what went wrong: a run over many positions
    exits with the worst that happened to any of them (``max``)."""

    OK = 0
    MISMATCH = 1
    """Some expected score (a test-set line's) differs from the solver's."""
    BAD_INPUT = 2
    NOT_SOLVED = 3
    """A position was not solved within ``--max-nodes``."""
    INTERRUPTED = 130


_CHECKED_LINE = re.compile(r"([1-7]*)\s+(-?[0-9]+)")
"""A test-set line: a column string and the expected score."""
_DIGITS = re.compile(r"[0-9]+")


@dataclass(slots=True)
class SolveReport:
    """One solved position, ready to print as text or JSON."""

    game: str
    position: str
    fen: str
    score: int
    outcome: str
    best_moves: list[str]
    nodes: int
    time_ms: float
    mate: int | None = None
    pv: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    """Game-specific fields (columns, nim-sum, per-column scores, the expected score)."""

    @property
    def expected(self) -> int | None:
        value = self.extra.get("expected")
        return value if isinstance(value, int) else None

    @property
    def matches(self) -> bool:
        """False only when an expected score was given and differs."""
        return self.expected is None or self.expected == self.score

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "game": self.game,
            "position": self.position,
            "fen": self.fen,
            "score": self.score,
            "outcome": self.outcome,
            "mate": self.mate,
            "best_moves": self.best_moves,
            "pv": self.pv,
            "nodes": self.nodes,
            "time_ms": round(self.time_ms, 3),
        }
        data.update(self.extra)
        return data

    def lines(self) -> list[str]:
        out = [f"position   {self.position}", f"fen        {self.fen}"]
        verdict = {"win": "the side to move wins", "loss": "the side to move loses"}.get(
            self.outcome, "draw"
        )
        mate = ""
        if self.mate is not None:
            mate = f", mate in {self.mate}" if self.mate > 0 else f", mated in {-self.mate}"
        out.append(f"score      {self.score} ({verdict}{mate})")
        columns = self.extra.get("best_columns")
        best = " ".join(self.best_moves) or "-"
        if columns:
            best = f"{' '.join(str(c) for c in columns)}  ({best})"
        out.append(f"best       {best}")
        if self.pv:
            pv_columns = self.extra.get("pv_columns")
            text = " ".join(self.pv)
            out.append(f"pv         {pv_columns}  ({text})" if pv_columns else f"pv         {text}")
        if "nim_sum" in self.extra:
            out.append(f"nim-sum    {self.extra['nim_sum']}")
        column_scores = self.extra.get("column_scores")
        if column_scores:
            cells = [f"{col}:{score:+d}" for col, score in column_scores.items()]
            out.append(f"columns    {'  '.join(cells)}")
        if self.expected is not None:
            out.append(f"expected   {self.expected} ({'ok' if self.matches else 'MISMATCH'})")
        out.append(f"nodes      {self.nodes}")
        out.append(f"time       {self.time_ms:.1f} ms")
        return out


# -- Connect Four ------------------------------------------------------------------------------
def parse_cfour(text: str) -> Connect4:
    """A column string, ``startpos``/empty, or a FEN; InvalidPositionError otherwise.

    Digits alone are always meant as a column string (a FEN has ranks separated by ``/``), so
    a digit outside 1..7 is reported as the column it is, not as a malformed FEN: ``48``
    says that its second move, column 8, is off the board."""
    stripped = text.strip()
    if stripped in ("", "startpos"):
        return Connect4.from_fen(CFOUR_START_FEN)
    if _DIGITS.fullmatch(stripped):
        for move, digit in enumerate(stripped, 1):
            if digit not in "1234567":
                raise InvalidPositionError(
                    f"no column {digit}: columns are 1..7 (move {move} of the column "
                    f"string {stripped})"
                )
    return Connect4.from_text(stripped)


@dataclass(frozen=True, slots=True)
class CfourOptions:
    """How ``brudno solve`` solves a Connect Four position: ``weak`` (win, draw or loss
    only), ``analyze`` (every column's score too), ``pv_nodes`` (the budget for the line)."""

    weak: bool = False
    analyze: bool = False
    pv_nodes: int | None = None


def solve_cfour(
    position: Connect4,
    solver: Connect4Solver,
    *,
    label: str,
    options: CfourOptions = CfourOptions(),
    book: Connect4Book | None = None,
) -> SolveReport:
    """Solve one position, the ``book``'s scores first where it has them (SolveAbortedError
    when the solver's budget runs out)."""
    weak, analyze, pv_nodes = options.weak, options.analyze, options.pv_nodes
    if position.is_terminal():
        raise GameError(f"the game is over, there is nothing to solve ({label})")
    started = time.perf_counter()
    first_node = solver.nodes
    known = None if book is None else book.outcome(position)
    book_scores = None if book is None else book.move_scores(position)
    if weak:
        score = solver.score(position, weak=True) if known is None else known
        if book_scores is None:
            best = _weak_best_moves(position, solver, score)
        else:
            best = tuple(col for col, value in book_scores.items() if _sign(value) >= score)
        solution = Solution(score, position.ply, best, best[:1], 0, 0.0)
        from_book = known is not None
    else:
        answer = solve_with_book(position, solver, book, pv_nodes=pv_nodes)
        solution = answer.solution
        from_book = answer.source is Source.BOOK
    extra: dict[str, Any] = {
        "best_columns": [col + 1 for col in solution.best_moves],
        "pv_columns": column_string(solution.pv),
    }
    if analyze:
        scores = solver.move_scores(position, weak=weak) if book_scores is None else book_scores
        if weak and book_scores is not None:
            scores = {col: _sign(value) for col, value in scores.items()}
        extra["column_scores"] = {str(col + 1): scores[col] for col in sorted(scores)}
    if weak:
        extra["weak"] = True
    extra["book"] = from_book
    best_text = [pv_text(position, [col])[0] for col in solution.best_moves]
    return SolveReport(
        game="cfour",
        position=label,
        fen=position.fen(),
        score=solution.score,
        outcome=solution.outcome,
        best_moves=best_text,
        nodes=solver.nodes - first_node,
        time_ms=(time.perf_counter() - started) * 1000.0,
        mate=None if weak else solution.mate,
        pv=list(pv_text(position, solution.pv)),
        extra=extra,
    )


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _weak_best_moves(position: Connect4, solver: Connect4Solver, outcome: int) -> tuple[int, ...]:
    """The columns that keep a weakly solved outcome: every column when the position is
    lost, else those whose child is at most ``-outcome`` (a probe each)."""
    best: list[int] = []
    for col in COLUMN_ORDER:
        cell = position.drop_cell(col)
        if cell is None:
            continue
        if outcome < 0:
            best.append(col)
            continue
        child = position.copy()
        child.push(cell)
        if child.is_terminal():
            value = 1 if child.winner is not None else 0
        else:
            value = -solver.score(child, weak=True)
        if value >= outcome:
            best.append(col)
    return tuple(best)


# -- Grundy's game -----------------------------------------------------------------------------
def solve_grundy(position: Grundy, *, label: str) -> SolveReport:
    """Win or loss by the nim-sum of the heaps' Grundy values; the best moves are those to a
    zero nim-sum when winning, every move when losing (all lose against best play)."""
    started = time.perf_counter()
    moves = position.legal_moves()
    nim = position.nim_sum
    best: list[str] = []
    for move in moves:
        heap, smaller = move
        after = nim ^ grundy_value(heap) ^ grundy_value(smaller) ^ grundy_value(heap - smaller)
        if nim == 0 or after == 0:
            best.append(position.format_move(move))
    outcome = "win" if nim else "loss"
    return SolveReport(
        game="grundy",
        position=label,
        fen=position.fen(),
        score=1 if nim else -1,
        outcome=outcome,
        best_moves=best,
        nodes=len(moves),
        time_ms=(time.perf_counter() - started) * 1000.0,
        extra={"nim_sum": nim},
    )


# -- the command -------------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "position",
        nargs="*",
        metavar="POSITION",
        help="column string (4453), FEN (quoted or not), 'startpos', or '-' for stdin lines",
    )
    parser.add_argument(
        "--game", default="cfour", choices=SOLVABLE_GAMES, help="game (UCI_Variant name)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per position")
    parser.add_argument("--weak", action="store_true", help="cfour: outcome only (1, 0, -1)")
    parser.add_argument(
        "--analyze", action="store_true", help="cfour: also the exact score of every column"
    )
    parser.add_argument(
        "--max-nodes", type=positive_int, help="cfour: give up after this many nodes"
    )
    books = parser.add_mutually_exclusive_group()
    books.add_argument("--book", type=Path, help="cfour: this book file instead of the shipped one")
    books.add_argument(
        "--no-book", action="store_true", help="cfour: prove every score with the solver"
    )
    parser.add_argument(
        "--pv-nodes",
        type=positive_int,
        default=200_000,
        help="cfour: nodes spent extending the PV past the best move (default 200000)",
    )
    add_progress_arguments(parser)


def _positions(args: argparse.Namespace, stdin: TextIO) -> Iterator[tuple[str, int | None]]:
    """(position text, expected score) pairs from the arguments or stdin."""
    if args.position == ["-"]:
        for raw in stdin:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            checked = _CHECKED_LINE.fullmatch(line)
            if checked is not None and args.game == "cfour":
                yield checked.group(1), int(checked.group(2))
            else:
                yield line, None
        return
    yield " ".join(args.position), None


def _book(args: argparse.Namespace) -> Connect4Book | None:
    """The book ``brudno solve`` consults: ``--book``'s, none, or the shipped one (OSError or
    BookFormatError for a file that cannot be used)."""
    if args.game != "cfour" or args.no_book:
        return None
    if args.book is not None:
        return Connect4Book.load(args.book)
    return shipped_book()


def _solve(
    args: argparse.Namespace,
    solver: Connect4Solver,
    book: Connect4Book | None,
    text: str,
    label: str,
) -> SolveReport:
    """Solve one position of ``--game`` (Connect Four within ``--max-nodes`` more nodes, the
    shipped book first unless ``--no-book``)."""
    if args.game == "cfour":
        solver.limit(max_nodes=None if args.max_nodes is None else solver.nodes + args.max_nodes)
        return solve_cfour(
            parse_cfour(text),
            solver,
            label=label,
            options=CfourOptions(weak=args.weak, analyze=args.analyze, pv_nodes=args.pv_nodes),
            book=book,
        )
    return solve_grundy(Grundy.from_fen(text), label=label)


def run(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    if not args.position:
        print(
            "brudno solve: give a position (a column string such as 4453, a FEN, or - for stdin)",
            file=sys.stderr,
        )
        return ExitStatus.BAD_INPUT
    try:
        book = _book(args)
    except (OSError, BookFormatError) as exc:
        print(f"brudno solve: cannot use the book: {exc}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
    solver = Connect4Solver()
    progress = progress_for(args, "solve", None if args.position == ["-"] else 1)
    solver.report_progress(progress.update)
    status = ExitStatus.OK
    first = True
    nodes = 0  # of every position so far, Grundy's moves counted as nodes
    try:
        for text, expected in _positions(args, stdin):
            label = text if text else "startpos"
            try:
                report = _solve(args, solver, book, text, label)
            except GameError as exc:
                progress.finished(False)
                progress.write(f"brudno solve: {exc}", sys.stderr)
                status = max(status, ExitStatus.BAD_INPUT)
                continue
            except SolveAbortedError as exc:
                progress.finished(False, solver.nodes)
                progress.write(f"brudno solve: not solved ({exc}): {label}", sys.stderr)
                status = max(status, ExitStatus.NOT_SOLVED)
                continue
            nodes = solver.nodes if args.game == "cfour" else nodes + report.nodes
            progress.finished(True, nodes)
            if expected is not None:
                report.extra["expected"] = expected
                if not report.matches:
                    status = max(status, ExitStatus.MISMATCH)
            if args.json:
                progress.write(json.dumps(report.to_json()), out)
            else:
                if not first:
                    progress.write("", out)
                progress.write("\n".join(report.lines()), out)
            first = False
    except KeyboardInterrupt:
        return ExitStatus.INTERRUPTED
    finally:
        progress.close()
        solver.report_progress(None)
    return status
