"""How Brudno plays Connect Four: the book, then the exact solver, then (by declining) the
normal search.

:class:`Connect4Player` is the ``cfour`` variant's :class:`games.variant.ExactSolver` hook
(:data:`solve_for_uci` with the shipped book).  It sits below the protocol layer, so every
transport (stdio, TCP, MQTT jobs) gets the same answer.  In order:

1. the book knows every child of the position: play a best one (centre first among equals);
   or, in a strategy book (:mod:`games.connect4.strategy`), the book holds the position and a
   child that keeps its outcome: play that drop;
2. otherwise the solver proves the position within the move's budget, the book's score of the
   position (when it has one) saving the narrowing; a proven score is final, and the best
   moves keep it (in a lost position: the ones that delay the loss longest);
3. the budget runs out after the narrowing proved at least a draw (its first probe asks
   exactly that): a quarter more of the budget finds the drops that keep the bound, so a won
   position is not given away even when its exact score is out of reach;
4. otherwise: decline, and the caller's heuristic search fills in.

``Skill Level`` never reaches this hook (the runner weakens the normal search instead).
Why this order, and how strong it makes the play: docs/playing.md, *Connect Four*.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from engine.control import SearchControl
from engine.game import Game
from engine.info import Bound as InfoBound
from engine.info import InfoCallback, SearchInfo, SearchResult
from engine.limits import Limits
from engine.score import report
from engine.timeman import allocate
from games.connect4.board import CELLS, Connect4
from games.connect4.book import SHIPPED_BOOK, Connect4Book
from games.connect4.solver import (
    Connect4Solver,
    Solution,
    SolveAbortedError,
    engine_score,
    win_score,
)

__all__ = [
    "UCI_NODE_BUDGET",
    "Answer",
    "Connect4Player",
    "Source",
    "book_line",
    "keep_bound",
    "pv_text",
    "shipped_book",
    "solve_for_uci",
    "solve_with_book",
    "strategy_answer",
]

UCI_NODE_BUDGET: Final = 400_000
"""Nodes the hook spends before handing over to the normal search when no clock bounds it
(``go infinite``, ``go mate``, a bare ``go``): end-game and most middle-game positions solve
well within it, in seconds."""

_UCI_TT_ENTRIES: Final = 1 << 19
"""A fresh, smaller table per ``go``: memory is returned when the move is played, and many
sessions in one server do not each hold a full-size table."""


@cache
def shipped_book() -> Connect4Book | None:
    """The book shipped with the package (read once), None when this install has none."""
    if not SHIPPED_BOOK.exists():
        return None
    return Connect4Book.load(SHIPPED_BOOK)


def book_line(book: Connect4Book, position: Connect4) -> list[int]:
    """Columns where both sides play the book's first best move, as long as the book knows
    every child (empty when it does not know the position's)."""
    board = position.copy()
    line: list[int] = []
    while not board.is_terminal():
        best = book.best_moves(board)
        if best is None:
            break
        line.append(best[0])
        cell = board.drop_cell(best[0])
        assert cell is not None
        board.push(cell)
    return line


class Source(enum.Enum):
    """Where a proven score came from (the ``info string`` prefix)."""

    BOOK = "book"
    """The book: the position's score, or every child's."""
    SOLVER = "exact"
    """A proof by the solver."""
    BOUND = "bound"
    """The solver proved a lower bound of at least a draw, and the drops that keep it, but not
    the exact score before its budget ran out."""
    STRATEGY = "strategy"
    """A strategy book: the position's outcome, and the drops to children that keep it (a win
    is a lower bound on the score, a draw exact)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A proven position: the solver's :class:`Solution` and where its score came from."""

    solution: Solution
    source: Source


def solve_with_book(
    position: Connect4,
    solver: Connect4Solver,
    book: Connect4Book | None,
    *,
    pv_nodes: int | None = None,
    on_probe: Callable[[tuple[int, int]], None] | None = None,
) -> Answer:
    """:meth:`Connect4Solver.solve_position` that asks the book first.

    When the book knows every child, the answer is the book's alone (no solver node; the PV
    follows the book as far as it knows every child).  When it knows the position only (its
    deepest ply), the solver skips the narrowing and only probes the drops for the best ones.
    Otherwise the solver proves the position, calling ``on_probe((lower, upper))`` after each
    null-window probe.  The solver's limits apply (SolveAbortedError).
    """
    started = time.perf_counter()
    first_node = solver.nodes
    stones = position.ply
    known = None
    if book is not None:
        scores = book.move_scores(position)
        if scores is not None:
            score = max(scores.values())
            best = tuple(col for col in scores if scores[col] == score)  # centre first
            after = position.copy()
            cell = after.drop_cell(best[0])
            assert cell is not None
            after.push(cell)
            pv = (best[0], *book_line(book, after))
            elapsed = (time.perf_counter() - started) * 1000.0
            return Answer(Solution(score, stones, best, pv, 0, elapsed), Source.BOOK)
        known = book.score(position)
    current, mask = position.current, position.mask
    # The steps of solve_position, with a per-probe callback and a score the book may know.
    score = solver.root_score(current, mask, stones, False, on_probe) if known is None else known
    best = solver.best_moves(current, mask, stones, score)
    pv = solver.principal_variation(current, mask, stones, score, best[0], pv_nodes=pv_nodes)
    solution = Solution(
        score=score,
        stones=stones,
        best_moves=best,
        pv=pv,
        nodes=solver.nodes - first_node,
        time_ms=(time.perf_counter() - started) * 1000.0,
    )
    return Answer(solution, Source.SOLVER if known is None else Source.BOOK)


def strategy_answer(position: Connect4, book: Connect4Book) -> Answer | None:
    """The book's strategy move (:meth:`Connect4Book.strategy_moves`) as an answer whose score
    is the outcome's least score (1 for a win, 0 for a draw); None when the book has none."""
    started = time.perf_counter()
    keep = book.strategy_moves(position)
    outcome = book.outcome(position)
    if not keep or outcome is None:
        return None
    elapsed = (time.perf_counter() - started) * 1000.0
    solution = Solution(outcome, position.ply, keep, keep[:1], 0, elapsed)
    return Answer(solution, Source.STRATEGY)


def keep_bound(position: Connect4, solver: Connect4Solver, low: int) -> Answer:
    """The drops that keep a proven lower bound ``low`` of the position's score (one
    null-window probe each), as an answer whose score is that bound.  The solver's limits
    apply (SolveAbortedError)."""
    started = time.perf_counter()
    first_node = solver.nodes
    stones = position.ply
    best = solver.best_moves(position.current, position.mask, stones, low)
    elapsed = (time.perf_counter() - started) * 1000.0
    solution = Solution(low, stones, best, best[:1], solver.nodes - first_node, elapsed)
    return Answer(solution, Source.BOUND)


class Connect4Player:
    """The play policy (module docstring) with a given book, as an ``ExactSolver`` hook.

    ``book`` returns the book to use (None: none); it is called on each ``go``, so a cached
    loader reads the shipped file on first use, not at import.  ``node_budget`` is the
    solver's budget when no clock bounds the move.
    """

    __slots__ = ("_book", "_node_budget")

    def __init__(
        self, book: Callable[[], Connect4Book | None], *, node_budget: int = UCI_NODE_BUDGET
    ) -> None:
        self._book = book
        self._node_budget = node_budget

    def __call__(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        on_info: InfoCallback,
        *,
        move_overhead_ms: int,
    ) -> SearchResult | None:
        """Declines (None, the caller searches normally) when the position is not a Connect4
        or is finished, when ``go`` asks for a fixed ``depth`` or ``nodes`` without
        ``mate``/``infinite`` (those searches stay reproducible), when ``searchmoves``
        restricts the root, or when the proof does not fit the budget: half the soft time of
        the move when a clock or ``movetime`` bounds it (the normal search needs the rest),
        else the node budget; ``stop`` ends it at once, and while pondering only the node
        budget applies until ``ponderhit``.  When the budget runs out after the narrowing
        proved at least a draw, a quarter more finds the drops that keep that bound.

        An answer reports one ``info`` line per null-window probe (bounds, as
        ``lowerbound``/``upperbound``, the last one exact when it proves the score), an
        ``info string`` naming its source (``book:``, ``strategy:``,
        ``exact:`` or ``bound:``) with the score and every best column, and a final line with
        the PV, exact (its WDL certain) or, for a bound or a strategy's win, ``lowerbound``;
        its ``score`` is a ``Mate`` (``Cp(0)`` for a draw).
        """
        if not isinstance(game, Connect4) or _declines(game, limits):
            return None
        started = time.monotonic()
        book = self._book()
        if book is not None and book.move_scores(game) is None:
            strategy = strategy_answer(game, book)
            if strategy is not None:
                return _report(game, strategy, 0, started, on_info)
        budget = allocate(limits, game.side, game.ply, move_overhead_ms)
        solver = Connect4Solver(_UCI_TT_ENTRIES)
        node_budget = self._node_budget
        use_nodes = budget is None or limits.ponder

        def stopped_after(share: float) -> Callable[[], bool]:
            def stopped() -> bool:
                if control.stopped:
                    return True
                if budget is None or control.pondering:
                    return False
                ponderhit = control.ponderhit_at
                clock_start = ponderhit if ponderhit is not None else started
                return time.monotonic() - clock_start >= budget.soft_ms * share / 1000.0

            return stopped

        reporter = _ProbeReporter(game.ply, solver, started, on_info)
        solver.limit(max_nodes=node_budget if use_nodes else None, stopped=stopped_after(0.5))
        try:
            answer = solve_with_book(
                game, solver, book, pv_nodes=node_budget // 10, on_probe=reporter
            )
        except SolveAbortedError:
            known = None if book is None else book.score(game)
            low = reporter.low if known is None else known
            if low < 0 or control.stopped:
                return None
            # At least a draw is proven: a quarter more of the budget for the drops keeping it.
            extra = solver.nodes + node_budget // 4
            solver.limit(max_nodes=extra if use_nodes else None, stopped=stopped_after(0.625))
            try:
                answer = keep_bound(game, solver, low)
            except SolveAbortedError:
                return None
        finally:
            solver.limit()
        return _report(game, answer, solver.table_size, started, on_info)


def _declines(game: Connect4, limits: Limits) -> bool:
    """The ``go`` commands the hook leaves to the normal search (see ``__call__``)."""
    if game.is_terminal() or limits.searchmoves is not None:
        return True
    fixed = limits.depth is not None or limits.nodes is not None
    return fixed and not (limits.mate is not None or limits.infinite)


solve_for_uci: Final = Connect4Player(shipped_book)
"""The ``cfour`` variant's hook, with the shipped book."""


class _ProbeReporter:
    """An ``on_probe`` that reports each bound the narrowing moves as an ``info`` line, and
    the exact score as soon as the bounds meet (before the best moves and the PV are looked
    for), and keeps the bounds proven so far (:attr:`low`, :attr:`high`)."""

    __slots__ = ("_on_info", "_solver", "_started", "_stones", "high", "low")

    def __init__(
        self, stones: int, solver: Connect4Solver, started: float, on_info: InfoCallback
    ) -> None:
        self._stones = stones
        self._solver = solver
        self._started = started
        self._on_info = on_info
        self.low = -((CELLS - stones) // 2)
        self.high = win_score(stones)

    def __call__(self, probe: tuple[int, int]) -> None:
        low, high = probe
        # The true score lies in [low, high]: report it once proven, else the bound this
        # probe moved.
        if low == high:
            score, bound = low, InfoBound.EXACT
        elif low != self.low:
            score, bound = low, InfoBound.LOWER
        else:
            score, bound = high, InfoBound.UPPER
        self.low, self.high = low, high
        elapsed = _elapsed_ms(self._started)
        solver = self._solver
        nodes = solver.nodes
        depth = CELLS - self._stones
        self._on_info(
            SearchInfo(
                depth=depth,
                seldepth=depth,
                score=report(engine_score(score, self._stones)),
                bound=bound,
                nodes=nodes,
                nps=nodes * 1000 // max(1, elapsed),
                time_ms=elapsed,
                hashfull=min(1000, solver.table_size * 1000 // _UCI_TT_ENTRIES),
            )
        )


def _report(
    game: Connect4, answer: Answer, table_size: int, started: float, on_info: InfoCallback
) -> SearchResult:
    """Report a proven answer (an ``info string`` and the final exact line) and return it."""
    solution = answer.solution
    score, stones = solution.score, solution.stones
    depth = CELLS - stones
    pv = pv_text(game, solution.pv)
    elapsed = _elapsed_ms(started)
    nodes = solution.nodes
    reported = report(engine_score(score, stones))
    label = _LABELS[answer.source]
    on_info(
        SearchInfo(
            depth=depth,
            string=f"{answer.source.value}: {label} {score:+d}, best columns "
            f"{' '.join(str(c + 1) for c in solution.best_moves)}",
        )
    )
    exact = answer.source in (Source.BOOK, Source.SOLVER) or (
        answer.source is Source.STRATEGY and score == 0
    )
    wdl = (1000, 0, 0) if score > 0 else (0, 0, 1000) if score < 0 else (0, 1000, 0)
    line = SearchInfo(
        depth=depth,
        seldepth=depth,
        score=reported,
        bound=InfoBound.EXACT if exact else InfoBound.LOWER,
        nodes=nodes,
        nps=nodes * 1000 // max(1, elapsed),
        time_ms=elapsed,
        hashfull=min(1000, table_size * 1000 // _UCI_TT_ENTRIES),
        pv=pv,
        wdl=wdl if exact or score > 0 else None,
    )
    on_info(line)
    return SearchResult(
        best=pv[0],
        ponder=pv[1] if len(pv) > 1 else None,
        score=reported,
        depth=depth,
        nodes=nodes,
        time_ms=elapsed,
        pv=pv,
        lines=(line,),
    )


_LABELS: Final = {
    Source.BOOK: "book score",
    Source.SOLVER: "solver score",
    Source.BOUND: "proven at least",
    Source.STRATEGY: "strategy keeps at least",
}


def pv_text(game: Connect4, columns: tuple[int, ...] | list[int]) -> tuple[str, ...]:
    """Columns (0..6) played from ``game`` as UCI drops (each landing square depends on the
    moves before it)."""
    board = game.copy()
    texts: list[str] = []
    for col in columns:
        cell = board.drop_cell(col)
        if cell is None:
            raise ValueError(f"column {col + 1} is full in {board.fen()}")
        texts.append(board.format_move(cell))
        board.push(cell)
    return tuple(texts)


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
