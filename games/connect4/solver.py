"""An exact Connect Four solver: the game-theoretic score of a position, and the moves that keep it.

**Score.**  The solver literature's convention (Pascal Pons' test sets): from the side to move's
point of view, ``22 - s`` when it wins with its ``s``-th stone (1 for a win with the very last
stone, 18 for a win with the 4th), 0 for a draw, the negated figure when the opponent wins.
With ``n`` stones on the board a win on the spot scores ``(43 - n) // 2``.
:func:`engine_score` converts it to the engine's mate distance in plies, so UCI prints the
same fact as ``score mate N``.

**Limits.**  Negamax with alpha-beta (:class:`games.connect4.negamax.Negamax`, compiled by
mypyc): the hardest opening positions take seconds to minutes.  A stop,
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
    winning_cells,
)
from games.connect4.negamax import CHECK_INTERVAL, NO_NODE_LIMIT, Negamax, can_win_next

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

DEFAULT_TT_ENTRIES: Final = 1 << 23
"""Transposition table slots (rounded up to the prime 8,388,617, Pons' size): 64 MiB of
native words, allocated once per solver."""

_COLUMN: Final = tuple(((1 << HEIGHT) - 1) << (col * (HEIGHT + 1)) for col in range(WIDTH))


class SolveAbortedError(Exception):
    """The solve was stopped, or ran out of nodes or time, before it proved the score."""


def win_score(stones: int) -> int:
    """The score of the side to move when it wins with its next drop."""
    return (CELLS + 1 - stones) // 2


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
    ``tt_entries`` is the table's slot count (rounded up to a prime; each slot one 64-bit
    word, a newer result replacing an older one in its slot).
    """

    __slots__ = (
        "_deadline",
        "_max_nodes",
        "_on_progress",
        "_search",
        "_stopped",
    )

    def __init__(self, tt_entries: int = DEFAULT_TT_ENTRIES) -> None:
        if tt_entries < 1:
            raise ValueError(f"tt_entries must be positive ({tt_entries})")
        self._search = Negamax(tt_entries, self._check)
        self._max_nodes: int | None = None
        self._deadline: float | None = None
        self._stopped: Callable[[], bool] | None = None
        self._on_progress: Callable[[int], None] | None = None

    def reset(self) -> None:
        """Forget every proof and zero the node count."""
        self._search.clear()
        self._search.nodes = 0

    @property
    def nodes(self) -> int:
        """Negamax calls since the last :meth:`reset` (all solves, probes and PV walks)."""
        return self._search.nodes

    @property
    def table_size(self) -> int:
        """Slots of the transposition table in use."""
        return self._search.filled

    @property
    def table_entries(self) -> int:
        """Slots of the transposition table (``tt_entries`` rounded up to a prime)."""
        return self._search.entries

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
        score = self.root_score(current, mask, stones, weak)
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
        score = self.root_score(current, mask, stones, False)
        best = self.best_moves(current, mask, stones, score)
        pv = self.principal_variation(current, mask, stones, score, best[0], pv_nodes=pv_nodes)
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
        score = self.root_score(current, mask, stones, weak, steps.append)
        return score, steps

    # -- internals -------------------------------------------------------------------------
    def root_score(
        self,
        current: int,
        mask: int,
        stones: int,
        weak: bool,
        on_probe: Callable[[tuple[int, int]], None] | None = None,
    ) -> int:
        """The exact score (``weak``: only its sign) of the position whose side to move owns
        ``current``, with ``mask`` every stone and ``stones`` their count, by null-window
        narrowing; ``on_probe((lower, upper))`` after each probe.  The limits apply."""
        if can_win_next(current, mask):
            return win_score(stones)
        low = -((CELLS - stones) // 2)
        high = (CELLS + 1 - stones) // 2
        if weak:
            low, high = -1, 1
        node_limit = NO_NODE_LIMIT if self._max_nodes is None else self._max_nodes
        # The null-window narrowing runs compiled too (Negamax.narrow): for the end-game
        # positions, whose trees take ~50 nodes, the Python loop cost as much as the search.
        return self._search.narrow(current, mask, stones, low, high, node_limit, on_probe)

    def _move_score(self, current: int, mask: int, stones: int, col: int, weak: bool) -> int | None:
        """The mover's score after dropping in ``col``; None when the column is full."""
        drop = (mask + BOTTOM) & BOARD & _COLUMN[col]
        if not drop:
            return None
        if winning_cells(current, mask) & drop:
            return win_score(stones)
        child_current = current ^ mask
        child_mask = mask | drop
        return -self.root_score(child_current, child_mask, stones + 1, weak)

    def best_moves(self, current: int, mask: int, stones: int, score: int) -> tuple[int, ...]:
        """Every drop that keeps ``score``: one null-window probe per drop (the table makes
        them cheap after the solve): the child's score is at least ``-score``, so the drop
        is best exactly when the probe shows it is at most that."""
        playable = (mask + BOTTOM) & BOARD
        wins = winning_cells(current, mask) & playable
        if wins:
            return tuple(col for col in COLUMN_ORDER if wins & _COLUMN[col])
        opponent_wins = winning_cells(current ^ mask, mask)
        negamax = self._run
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

    def principal_variation(
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
        probes as :meth:`best_moves`) until the game ends or ``pv_nodes`` are spent."""
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
                best = self.best_moves(current, mask, stones, score)
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

    def _run(self, current: int, mask: int, stones: int, alpha: int, beta: int) -> int:
        """One search of the window ``(alpha, beta)`` (see :meth:`Negamax.search`), within the
        limits: a spent node budget aborts before the first node."""
        search = self._search
        if self._max_nodes is not None and search.nodes >= self._max_nodes:
            raise SolveAbortedError(f"node budget of {self._max_nodes} reached")
        search.next_check = search.nodes + CHECK_INTERVAL
        return search.search(current, mask, stones, alpha, beta)

    def _check(self) -> None:
        """The search's periodic look at the limits and the progress callback."""
        nodes = self._search.nodes
        if self._max_nodes is not None and nodes >= self._max_nodes:
            raise SolveAbortedError(f"node budget of {self._max_nodes} reached")
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise SolveAbortedError("time budget reached")
        if self._stopped is not None and self._stopped():
            raise SolveAbortedError("stopped")
        if self._on_progress is not None:
            self._on_progress(nodes)


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
