"""An exact Connect Four solver: the game-theoretic score of a position, and the moves that keep it.

**Score.**  The solver literature's convention (Pascal Pons' test sets): from the side to move's
point of view, ``22 - s`` when it wins with its ``s``-th stone (1 for a win with the very last
stone, 18 for a win with the 4th), 0 for a draw, the negated figure when the opponent wins.
With ``n`` stones on the board a win on the spot scores ``(43 - n) // 2``.
:func:`engine_score` converts it to the engine's mate distance in plies, so UCI prints the
same fact as ``score mate N``.

**Limits.**  Negamax with alpha-beta in pure Python: early positions can take minutes.  A stop,
the node and time budgets and the optional progress callback
(:meth:`Connect4Solver.report_progress`) are checked every :data:`CHECK_INTERVAL` nodes; a
stop or a spent budget raises :class:`SolveAbortedError`.  Nodes counted are negamax calls, as
in Pons' tables.

The algorithm and its tuning: docs/playing.md, *Connect Four's solver*.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from engine.score import DRAW, mate_in, mated_in
from games.connect4.board import (
    BOARD,
    BOTTOM,
    CELLS,
    COLUMN_ORDER,
    HEIGHT,
    WIDTH,
    Connect4,
    can_win_next,
    winning_cells,
)

__all__ = [
    "CHECK_INTERVAL",
    "DEFAULT_TT_ENTRIES",
    "Connect4Solver",
    "Solution",
    "SolveAbortedError",
    "engine_score",
    "mate_moves",
    "win_score",
]

MAX_SCORE: Final = (CELLS + 1) // 2 - 3
"""18: the best score there is (a win with the 4th stone, on the first player's 7th drop)."""
MIN_SCORE: Final = -(CELLS // 2) + 3
"""-18, the worst."""

CHECK_INTERVAL: Final = 1024
"""Nodes between two looks at the stop flag, the node budget and the clock."""

DEFAULT_TT_ENTRIES: Final = 1 << 20
"""Entries kept before the table is emptied (about 100 MB of Python objects when full)."""

_COLUMN: Final = tuple(((1 << HEIGHT) - 1) << (col * (HEIGHT + 1)) for col in range(WIDTH))
_ORDERED_COLUMNS: Final = tuple(_COLUMN[col] for col in COLUMN_ORDER)


class SolveAbortedError(Exception):
    """The solve was stopped, or ran out of nodes or time, before it proved the score."""


def win_score(stones: int) -> int:
    """The score of the side to move when it wins with its next drop."""
    return (CELLS + 1 - stones) // 2


def _trunc_half(x: int) -> int:
    """``x / 2`` rounded towards zero (C division, as the bisection rule is stated)."""
    return x // 2 if x >= 0 else -(-x // 2)


def mate_moves(score: int, stones: int) -> int | None:
    """The UCI mate distance in moves (negative when the side to move loses), None for a draw.

    The side to move has played ``stones // 2`` stones and wins with its ``22 - score``-th; the
    opponent has played ``stones - stones // 2`` and wins with its ``22 + score``-th.
    """
    if score > 0:
        return (CELLS // 2 + 1 - score) - stones // 2
    if score < 0:
        return -((CELLS // 2 + 1 + score) - (stones - stones // 2))
    return None


def engine_score(score: int, stones: int) -> int:
    """The solver's score as an engine score (:mod:`engine.score`): mate distance in plies."""
    moves = mate_moves(score, stones)
    if moves is None:
        return DRAW
    if moves > 0:
        return mate_in(2 * moves - 1)
    return mated_in(-2 * moves)


@dataclass(frozen=True, slots=True)
class Solution:
    """What :meth:`Connect4Solver.solve_position` proves about one position.

    ``best_moves`` are columns 0..6 (centre first) that keep ``score``; ``pv`` a line of
    columns where both sides play best moves to the end (or as far as the budget allowed).
    """

    score: int
    stones: int
    best_moves: tuple[int, ...]
    pv: tuple[int, ...]
    nodes: int
    time_ms: float

    @property
    def mate(self) -> int | None:
        """UCI ``score mate`` moves; None for a draw."""
        return mate_moves(self.score, self.stones)

    @property
    def outcome(self) -> str:
        """``"win"``, ``"draw"`` or ``"loss"`` for the side to move."""
        return "win" if self.score > 0 else "loss" if self.score < 0 else "draw"


class Connect4Solver:
    """Exact solver with a transposition table that survives between calls.

    Reuse one solver for related positions (a game, an analysis): the table carries proofs
    from one position to the next.  Call :meth:`reset` to start cold (benchmarks do, so that
    every position is measured alone).  Not thread-safe: one solve at a time per instance.
    """

    __slots__ = (
        "_deadline",
        "_max_nodes",
        "_on_progress",
        "_stopped",
        "_table",
        "_tt_entries",
        "nodes",
    )

    def __init__(self, tt_entries: int = DEFAULT_TT_ENTRIES) -> None:
        if tt_entries < 1:
            raise ValueError(f"tt_entries must be positive ({tt_entries})")
        self._tt_entries = tt_entries
        self._table: dict[int, int] = {}
        self.nodes = 0
        """Negamax calls since the last :meth:`reset` (all solves, probes and PV walks)."""
        self._max_nodes: int | None = None
        self._deadline: float | None = None
        self._stopped: Callable[[], bool] | None = None
        self._on_progress: Callable[[int], None] | None = None

    def reset(self) -> None:
        """Forget every proof and zero the node count."""
        self._table.clear()
        self.nodes = 0

    @property
    def table_size(self) -> int:
        return len(self._table)

    # -- limits ----------------------------------------------------------------------------
    def limit(
        self,
        *,
        max_nodes: int | None = None,
        deadline: float | None = None,
        stopped: Callable[[], bool] | None = None,
    ) -> None:
        """Budget for the following calls: abort (:class:`SolveAbortedError`) once ``nodes``
        reaches ``max_nodes``, ``time.monotonic()`` passes ``deadline``, or ``stopped()``
        turns true.  All ``None`` (the default) means unlimited."""
        self._max_nodes = max_nodes
        self._deadline = deadline
        self._stopped = stopped

    def report_progress(self, on_progress: Callable[[int], None] | None) -> None:
        """Call ``on_progress(nodes)`` (the running :attr:`nodes` count) every
        :data:`CHECK_INTERVAL` nodes during the following calls, until set to None.

        An early position can take the solver minutes, and a caller with a user waiting
        (``brudno solve``) has no other way to show that work is being done.  The call rides
        on the search's existing periodic limit check, so it costs nothing per node; it should
        return quickly (look at a clock, print now and then) and may raise to abandon the
        solve, as a limit does.
        """
        self._on_progress = on_progress

    # -- solving ---------------------------------------------------------------------------
    def score(self, position: Connect4, *, weak: bool = False) -> int:
        """The exact score of ``position`` (side to move's view; see the module docstring).

        With ``weak`` only the sign is exact: 1 win, 0 draw, -1 loss (much faster early in
        the game).  Raises ValueError for a finished game, SolveAbortedError when a limit hits.
        """
        current, mask, stones = _bitboards(position)
        score = self._root_score(current, mask, stones, weak)
        return (score > 0) - (score < 0) if weak else score

    def move_scores(self, position: Connect4, *, weak: bool = False) -> dict[int, int]:
        """The score of every legal drop (column 0..6 → score from the mover's view), what a
        player's analysis board shows under each column; with ``weak`` only the outcomes
        (1, 0, -1)."""
        current, mask, stones = _bitboards(position)
        scores: dict[int, int] = {}
        for col in range(WIDTH):
            score = self._move_score(current, mask, stones, col, weak)
            if score is not None:
                scores[col] = (score > 0) - (score < 0) if weak else score
        return scores

    def solve_position(self, position: Connect4, *, pv_nodes: int | None = None) -> Solution:
        """Score, every best move and a principal variation of ``position``.

        ``pv_nodes`` caps the extra nodes spent extending the PV past the first move (the
        score and best moves are always complete); None extends it to the end of the game.
        """
        started = time.perf_counter()
        first_node = self.nodes
        current, mask, stones = _bitboards(position)
        score = self._root_score(current, mask, stones, False)
        best = self._best_moves(current, mask, stones, score)
        pv = self._principal_variation(current, mask, stones, score, best[0], pv_nodes=pv_nodes)
        return Solution(
            score=score,
            stones=stones,
            best_moves=best,
            pv=pv,
            nodes=self.nodes - first_node,
            time_ms=(time.perf_counter() - started) * 1000.0,
        )

    def probes(
        self, position: Connect4, *, weak: bool = False
    ) -> tuple[int, list[tuple[int, int]]]:
        """Like :meth:`score`, also returning the bisection's bounds after each null-window
        probe as ``(lower, upper)`` pairs (for progress reports)."""
        current, mask, stones = _bitboards(position)
        steps: list[tuple[int, int]] = []
        score = self._root_score(current, mask, stones, weak, steps.append)
        return score, steps

    # -- internals -------------------------------------------------------------------------
    def _root_score(
        self,
        current: int,
        mask: int,
        stones: int,
        weak: bool,
        on_probe: Callable[[tuple[int, int]], None] | None = None,
    ) -> int:
        if can_win_next(current, mask):
            return win_score(stones)
        low = -((CELLS - stones) // 2)
        high = (CELLS + 1 - stones) // 2
        if weak:
            low, high = -1, 1
        negamax = self._negamax()
        while low < high:
            med = low + (high - low) // 2
            if med <= 0 and _trunc_half(low) < med:
                med = _trunc_half(low)
            elif med >= 0 and _trunc_half(high) > med:
                med = _trunc_half(high)
            result = negamax(current, mask, stones, med, med + 1)
            if result <= med:
                high = result
            else:
                low = result
            if on_probe is not None:
                on_probe((low, high))
        return low

    def _move_score(self, current: int, mask: int, stones: int, col: int, weak: bool) -> int | None:
        """The mover's score after dropping in ``col``; None when the column is full."""
        drop = (mask + BOTTOM) & BOARD & _COLUMN[col]
        if not drop:
            return None
        if winning_cells(current, mask) & drop:
            return win_score(stones)
        child_current = current ^ mask
        child_mask = mask | drop
        return -self._root_score(child_current, child_mask, stones + 1, weak)

    def _best_moves(self, current: int, mask: int, stones: int, score: int) -> tuple[int, ...]:
        """Every drop that keeps ``score``: one null-window probe per drop (the table makes
        them cheap after the solve): the child's score is at least ``-score``, so the drop
        is best exactly when the probe shows it is at most that."""
        playable = (mask + BOTTOM) & BOARD
        wins = winning_cells(current, mask) & playable
        if wins:
            return tuple(col for col in COLUMN_ORDER if wins & _COLUMN[col])
        opponent_wins = winning_cells(current ^ mask, mask)
        negamax = self._negamax()
        best: list[int] = []
        for col in COLUMN_ORDER:
            drop = playable & _COLUMN[col]
            if not drop:
                continue
            child_current = current ^ mask
            child_mask = mask | drop
            if opponent_wins & ((child_mask + BOTTOM) & BOARD):
                # The opponent wins on its next drop: the score of an immediate loss.
                value = -win_score(stones + 1)
                if value == score:
                    best.append(col)
                continue
            target = -score
            if negamax(child_current, child_mask, stones + 1, target, target + 1) <= target:
                best.append(col)
        return tuple(best)

    def _principal_variation(
        self,
        current: int,
        mask: int,
        stones: int,
        score: int,
        first: int,
        *,
        pv_nodes: int | None,
    ) -> tuple[int, ...]:
        """Play ``first``, then a best move for each side in turn (each found by the same
        probes as :meth:`_best_moves`) until the game ends or ``pv_nodes`` are spent."""
        pv = [first]
        budget_end = None if pv_nodes is None else self.nodes + pv_nodes
        while True:
            col = pv[-1]
            drop = (mask + BOTTOM) & BOARD & _COLUMN[col]
            mover = current | drop
            current, mask = current ^ mask, mask | drop
            stones += 1
            score = -score
            if _is_four(mover) or mask == BOARD:
                break
            if budget_end is not None and self.nodes >= budget_end:
                break
            saved = self._max_nodes
            if budget_end is not None:
                self._max_nodes = budget_end if saved is None else min(saved, budget_end)
            try:
                best = self._best_moves(current, mask, stones, score)
            except SolveAbortedError:
                self._max_nodes = saved
                if self._aborted_by_caller():
                    raise
                break
            finally:
                self._max_nodes = saved
            pv.append(best[0])
        return tuple(pv)

    def _aborted_by_caller(self) -> bool:
        """True when the caller's own limits (not the PV budget) have been reached."""
        if self._stopped is not None and self._stopped():
            return True
        if self._deadline is not None and time.monotonic() >= self._deadline:
            return True
        return self._max_nodes is not None and self.nodes >= self._max_nodes

    def _negamax(self) -> Callable[[int, int, int, int, int], int]:
        """The recursive search, as a closure over this solver's table and limits.

        Invariant on entry: the side to move cannot win with its next drop (the root checks
        it, and every node only plays drops after which the opponent cannot either).  Scores
        returned follow alpha-beta's fail-soft-in-the-bounds contract: the true score when it
        lies inside (alpha, beta), else a bound on the side of the window it fell out of.
        """
        table = self._table
        table_get = table.get
        solver = self
        board = BOARD
        bottom = BOTTOM
        ordered_columns = _ORDERED_COLUMNS
        cells = CELLS
        max_nodes = self._max_nodes
        deadline = self._deadline
        stopped = self._stopped
        on_progress = self._on_progress
        tt_entries = self._tt_entries
        monotonic = time.monotonic
        nodes = self.nodes
        next_check = nodes + CHECK_INTERVAL

        def check() -> None:
            nonlocal next_check
            next_check = nodes + CHECK_INTERVAL
            solver.nodes = nodes
            if len(table) > tt_entries:
                table.clear()
            if max_nodes is not None and nodes >= max_nodes:
                raise SolveAbortedError(f"node budget of {max_nodes} reached")
            if deadline is not None and monotonic() >= deadline:
                raise SolveAbortedError("time budget reached")
            if stopped is not None and stopped():
                raise SolveAbortedError("stopped")
            if on_progress is not None:
                on_progress(nodes)

        def negamax(current: int, mask: int, stones: int, alpha: int, beta: int) -> int:
            nonlocal nodes
            nodes += 1
            if nodes >= next_check:
                check()
            # Step 1: the drops that do not lose at once.
            opponent = current ^ mask
            free = board ^ mask
            p = opponent
            r = (p << 1) & (p << 2) & (p << 3)
            a = p << 7
            b = a << 7
            c = p >> 7
            d = c >> 7
            r |= a & b & ((b << 7) | c) | c & d & (a | (d >> 7))
            a = p << 6
            b = a << 6
            c = p >> 6
            d = c >> 6
            r |= a & b & ((b << 6) | c) | c & d & (a | (d >> 6))
            a = p << 8
            b = a << 8
            c = p >> 8
            d = c >> 8
            r |= a & b & ((b << 8) | c) | c & d & (a | (d >> 8))
            threats = r & free
            possible = (mask + bottom) & board
            forced = possible & threats
            if forced:
                if forced & (forced - 1):
                    return -((cells - stones) // 2)  # two threats to block: lost
                possible = forced
            possible &= ~(threats >> 1)  # never drop right under an opponent's threat
            if not possible:
                return -((cells - stones) // 2)
            if stones >= cells - 2:
                return 0
            # Step 2: bounds from the stone count and the table.
            low = -((cells - 2 - stones) // 2)
            if alpha < low:
                alpha = low
                if alpha >= beta:
                    return alpha
            high = (cells - 1 - stones) // 2
            key = current + mask
            entry = table_get(key)
            if entry is not None:
                if entry & 1:
                    value = entry >> 1
                    if alpha < value:
                        alpha = value
                        if alpha >= beta:
                            return alpha
                elif (entry >> 1) < high:
                    high = entry >> 1
            if beta > high:
                beta = high
                if alpha >= beta:
                    return beta
            # Step 3: order the drops by the threats they create, centre first on ties.
            if possible & (possible - 1):
                ranked: list[int] = []
                rank = 8
                for column in ordered_columns:
                    rank -= 1
                    drop = possible & column
                    if drop:
                        p = current | drop
                        r = (p << 1) & (p << 2) & (p << 3)
                        a = p << 7
                        b = a << 7
                        c = p >> 7
                        d = c >> 7
                        r |= a & b & ((b << 7) | c) | c & d & (a | (d >> 7))
                        a = p << 6
                        b = a << 6
                        c = p >> 6
                        d = c >> 6
                        r |= a & b & ((b << 6) | c) | c & d & (a | (d >> 6))
                        a = p << 8
                        b = a << 8
                        c = p >> 8
                        d = c >> 8
                        r |= a & b & ((b << 8) | c) | c & d & (a | (d >> 8))
                        ranked.append(((r & free).bit_count() << 3 | rank) << 64 | drop)
                ranked.sort(reverse=True)
                drops = [item & 0xFFFFFFFFFFFFFFFF for item in ranked]
            else:
                drops = [possible]
            # Step 4: search.
            for drop in drops:
                score = -negamax(opponent, mask | drop, stones + 1, -beta, -alpha)
                if score >= beta:
                    table[key] = score << 1 | 1
                    return score
                if score > alpha:  # noqa: PLR1730 (hot path: max() is a call)
                    alpha = score
            table[key] = alpha << 1
            return alpha

        def run(current: int, mask: int, stones: int, alpha: int, beta: int) -> int:
            nonlocal nodes, next_check
            nodes = solver.nodes
            next_check = nodes + CHECK_INTERVAL
            if max_nodes is not None and nodes >= max_nodes:
                raise SolveAbortedError(f"node budget of {max_nodes} reached")
            try:
                return negamax(current, mask, stones, alpha, beta)
            finally:
                solver.nodes = nodes

        return run


def _is_four(stones: int) -> bool:
    m = stones & (stones >> 1)
    if m & (m >> 2):
        return True
    m = stones & (stones >> 7)
    if m & (m >> 14):
        return True
    m = stones & (stones >> 6)
    if m & (m >> 12):
        return True
    m = stones & (stones >> 8)
    return bool(m & (m >> 16))


def _bitboards(position: Connect4) -> tuple[int, int, int]:
    """(side to move's stones, mask, stone count); ValueError for a finished game."""
    if position.is_terminal():
        raise ValueError(f"the game is over, there is nothing to solve ({position.fen()})")
    mask = position.mask
    return position.current, mask, mask.bit_count()
