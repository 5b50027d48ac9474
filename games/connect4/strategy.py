"""Connect Four strategy books: for every position a player can meet from a root, one drop that
keeps the position's outcome, down to where Brudno's play proves the position at the board.

Built depth-first from roots where the strategy's player is to move ("our" positions):

1. an our position's outcome (win, draw, loss) comes from one solver shared by the whole build
   (its table carries proofs from position to position); a lost position ends the line;
2. when the play hook (:class:`games.connect4.play.Connect4Player`, without a book, within
   ``leaf_nodes`` nodes) answers the position with a drop that keeps its outcome, the position
   is a leaf: the board proves it in time, and the book does not hold it;
3. otherwise the book holds the position with its outcome, and the first child (centre first)
   whose outcome is the negated, with that outcome; every reply of the opponent to that child
   is step 1 again.

Every decision depends on the position alone (an outcome is a fact, and the leaf test starts
from a fresh table of a fixed size), so the book is the same whatever order or process
explores it: :func:`build_strategy` shares the subtrees among processes and unites their
entries.  The result is an outcome book (:class:`games.connect4.book.BookKind`); how it is
played and how big it is: docs/playing.md, *Connect Four's opening book*.
"""

from __future__ import annotations

import multiprocessing
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engine.control import SearchControl
from engine.info import SearchInfo
from engine.limits import Limits
from engine.score import value_of
from games.connect4.board import BOARD, Connect4, drops, has_four
from games.connect4.book import BookKind, Connect4Book, book_key
from games.connect4.book_builder import position_of
from games.connect4.play import Connect4Player
from games.connect4.solver import Connect4Solver

__all__ = [
    "BUILDER_TT_ENTRIES",
    "DEFAULT_LEAF_NODES",
    "BuildPlan",
    "StrategyBuilder",
    "StrategyStats",
    "build_strategy",
]

DEFAULT_LEAF_NODES = 250_000
"""The play hook's node budget in the leaf test: about a quarter of what the compiled solver
searches in the half of a move's soft time the hook gets at 10+0.1 (docs/playing.md)."""

BUILDER_TT_ENTRIES = 1 << 25
"""Slots of the build's shared table (256 MiB): a build's proofs overlap a lot."""


@dataclass(frozen=True, slots=True)
class StrategyStats:
    """What a build found and cost: our positions the book holds (``inner``), those left to
    the board (``leaves``), lost ones where the line ends (``lost``), and solver nodes."""

    inner: int = 0
    leaves: int = 0
    lost: int = 0
    nodes: int = 0

    def __add__(self, other: StrategyStats) -> StrategyStats:
        return StrategyStats(
            self.inner + other.inner,
            self.leaves + other.leaves,
            self.lost + other.lost,
            self.nodes + other.nodes,
        )

    def __sub__(self, other: StrategyStats) -> StrategyStats:
        return StrategyStats(
            self.inner - other.inner,
            self.leaves - other.leaves,
            self.lost - other.lost,
            self.nodes - other.nodes,
        )


def _ignore(_info: SearchInfo) -> None:
    pass


class StrategyBuilder:
    """One process's share of a build: :meth:`grow` explores the strategy from our positions
    and collects :attr:`entries` (folded key → outcome)."""

    def __init__(
        self, leaf_nodes: int = DEFAULT_LEAF_NODES, *, tt_entries: int = BUILDER_TT_ENTRIES
    ) -> None:
        self.entries: dict[int, int] = {}
        self.depth = 0
        """The most stones of a position in :attr:`entries`."""
        self._solver = Connect4Solver(tt_entries)
        self._player = Connect4Player(lambda: None, node_budget=leaf_nodes)
        self._seen: set[int] = set()
        self._inner = self._leaves = self._lost = 0

    @property
    def stats(self) -> StrategyStats:
        return StrategyStats(self._inner, self._leaves, self._lost, self._solver.nodes)

    def outcome(self, current: int, mask: int) -> int:
        """1, 0 or -1 for the side to move (the shared solver, weakly)."""
        score = self._solver.root_score(current, mask, mask.bit_count(), True)
        return (score > 0) - (score < 0)

    def step(self, current: int, mask: int) -> list[tuple[int, int]]:
        """Steps 1-3 for one of our positions (module docstring): the our positions after
        each reply of the opponent to the drop the book holds, as ``(current, mask)``; empty
        for a leaf, a lost position, or one met before."""
        key = book_key(current, mask)
        if key in self._seen:
            return []
        self._seen.add(key)
        outcome = self.outcome(current, mask)
        if outcome < 0:
            self._lost += 1
            return []
        if self.proves_at_board(current, mask, outcome):
            self._leaves += 1
            return []
        self._inner += 1
        child = self._keeping_child(current, mask, outcome)
        if child is None:  # a drop ends the game (a win, or the draw of the last cell)
            return []
        child_current, child_mask = child
        self.entries[key] = outcome
        self.entries[book_key(child_current, child_mask)] = -outcome
        self.depth = max(self.depth, child_mask.bit_count())
        replies: list[tuple[int, int]] = []
        for _col, mover, reply_mask in drops(child_current, child_mask):
            if has_four(mover) or reply_mask == BOARD:
                continue
            replies.append((mover ^ reply_mask, reply_mask))
        return replies

    def grow(self, current: int, mask: int) -> None:
        """The whole strategy below one of our positions (depth-first)."""
        stack = [(current, mask)]
        while stack:
            stack.extend(reversed(self.step(*stack.pop())))

    def proves_at_board(self, current: int, mask: int, outcome: int) -> bool:
        """True when the play hook, without a book and within the leaf budget, plays a drop
        that keeps ``outcome``."""
        position = position_of(current, mask)
        result = self._player(position, Limits(), SearchControl(), _ignore, move_overhead_ms=0)
        if result is None or result.score is None:
            return False
        value = value_of(result.score)
        return (value > 0) - (value < 0) == outcome

    def _keeping_child(self, current: int, mask: int, outcome: int) -> tuple[int, int] | None:
        """The first child (centre first) whose outcome is ``-outcome``; None when a drop
        that keeps the outcome ends the game."""
        for _col, mover, child_mask in drops(current, mask):
            if has_four(mover):
                return None
            if child_mask == BOARD:
                if outcome == 0:
                    return None
                continue
            child_current = mover ^ child_mask
            if self.outcome(child_current, child_mask) == -outcome:
                return child_current, child_mask
        raise AssertionError(f"no drop keeps the outcome {outcome} of {current:x}/{mask:x}")


# -- a build shared among processes -------------------------------------------------------------
_worker: StrategyBuilder | None = None


def _start_worker(leaf_nodes: int, tt_entries: int) -> None:
    global _worker  # noqa: PLW0603 (one builder per worker process, kept between tasks)
    _worker = StrategyBuilder(leaf_nodes, tt_entries=tt_entries)


_Position = tuple[int, int]
_TaskResult = tuple[dict[int, int], int, StrategyStats, list[_Position]]
"""A task's entries, their deepest stone count, its cost, and the positions it leaves."""


def _task(position: _Position, whole: bool) -> _TaskResult:
    """One task in a worker: the whole strategy below ``position`` (``whole``), or only its
    step, leaving the replies' positions to later tasks."""
    assert _worker is not None
    first = _worker.stats
    _worker.entries = {}
    _worker.depth = 0
    if whole:
        _worker.grow(*position)
        left: list[_Position] = []
    else:
        left = _worker.step(*position)
    return _worker.entries, _worker.depth, _worker.stats - first, left


def _step_task(position: _Position) -> _TaskResult:
    return _task(position, False)


def _grow_task(position: _Position) -> _TaskResult:
    return _task(position, True)


@dataclass(frozen=True, slots=True)
class BuildPlan:
    """How to build: the leaf test's node budget, the worker processes, the plies explored
    before the work is shared out, and each solver's table slots."""

    leaf_nodes: int = DEFAULT_LEAF_NODES
    jobs: int = 1
    split_plies: int = 4
    tt_entries: int = BUILDER_TT_ENTRIES


def build_strategy(
    roots: Iterable[Connect4],
    plan: BuildPlan = BuildPlan(),
    on_task: Callable[[int, int, StrategyStats], None] | None = None,
) -> tuple[Connect4Book, StrategyStats]:
    """The outcome book of the strategy from each root (the side to move there is the
    strategy's player), and what it cost.

    Each of our positions in the first ``plan.split_plies`` plies from the roots is a task
    for one of ``plan.jobs`` worker processes (with 1, this process) that takes its step;
    each of our positions below them, a task that takes the whole strategy below it.
    ``on_task(done, known, stats)`` follows the tasks: those done, those known so far, and
    the cost so far.
    """
    leaf_nodes, jobs, tt_entries = plan.leaf_nodes, plan.jobs, plan.tt_entries
    pool = None
    if jobs <= 1:
        _start_worker(leaf_nodes, tt_entries)
    else:
        context = multiprocessing.get_context("fork")
        pool = context.Pool(jobs, initializer=_start_worker, initargs=(leaf_nodes, tt_entries))
    entries: dict[int, int] = {}
    total = StrategyStats()
    depth = done = 0
    level = [(root.current, root.mask) for root in roots]
    try:
        for split in range(0, plan.split_plies + 1, 2):
            task = _grow_task if split == plan.split_plies else _step_task
            tasks = list({book_key(*position): position for position in level}.values())
            results = map(task, tasks) if pool is None else pool.imap_unordered(task, tasks)
            level = []
            for index, (found, found_depth, stats, left) in enumerate(results, 1):
                for key, value in found.items():
                    if entries.setdefault(key, value) != value:
                        raise AssertionError(f"two outcomes for key {key:x}")
                depth = max(depth, found_depth)
                total += stats
                level.extend(left)
                if on_task is not None:
                    on_task(done + index, done + len(tasks), total)
            done += len(tasks)
    finally:
        if pool is not None:
            pool.terminate()
    keys = sorted(entries)
    book = Connect4Book(
        depth, array("Q", keys), array("b", (entries[key] for key in keys)), BookKind.OUTCOME
    )
    return book, total
