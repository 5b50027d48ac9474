"""Parallel alpha-beta on P simulated processors: PV-splitting, YBWC and Lazy SMP.

Nothing here runs in parallel: each search is recursive fail-hard alpha-beta written as a
generator that yields once per node entered, and a discrete-time scheduler (:func:`_run`)
gives each of ``P`` processors one node per time step, so every count is exact and
deterministic.  Measured per scheme (:class:`Scheme`: ``pvsplit``, ``ybwc``, ``lazysmp``):
**time** (steps until the root value is known), **nodes** (entered by all processors, a node
entered again counts again), **idle** (processor-steps without a node; ``P * time == nodes +
idle``), **speedup** ``= serial / time`` and **search overhead** ``= nodes / serial - 1``
against serial alpha-beta (:func:`engine.lab.classic.search`) on the same tree.  With one
processor every scheme repeats the serial search exactly, and every scheme returns the serial
value.  Only deterministic uniform trees (:class:`engine.lab.trees.UniformTree`) are searched.

What each scheme does, what a step does not cost (work hand-out, messages, the shared table
are free) and the measurements: docs/lab.md, *Parallel search, simulated*.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from engine.lab.classic import MoveOrder, search
from engine.lab.trees import UniformTree
from engine.score import INF

__all__ = ["SCHEMES", "ParallelResult", "Scheme", "serial_nodes", "simulate"]


class Scheme(StrEnum):
    """The parallel schemes (see the module docstring)."""

    PV_SPLIT = "pvsplit"
    YBWC = "ybwc"
    LAZY_SMP = "lazysmp"


SCHEMES: Final = tuple(scheme.value for scheme in Scheme)

_VISIT: Final = True
"""What a search yields for a node it enters (one processor-step of work)."""
_WAIT: Final = False
"""What a search yields for a step it spends waiting."""

Steps = Generator[bool, None, int]
"""A search in progress: yields a step at a time, returns its value."""
Task = Generator[bool, None, None]
"""A processor's work: yields a step at a time."""
Window = tuple[int, int]


@dataclass(frozen=True, slots=True)
class ParallelResult:
    """One scheme on ``processors`` simulated processors."""

    scheme: Scheme
    processors: int
    value: int
    """The root value (equal to serial alpha-beta's)."""
    time: int
    nodes: int
    idle: int
    serial: int
    """Serial alpha-beta's node count on the same tree."""

    @property
    def speedup(self) -> float:
        return self.serial / self.time

    @property
    def overhead(self) -> float:
        """Search overhead: the fraction of nodes beyond the serial search's."""
        return self.nodes / self.serial - 1

    @property
    def idle_fraction(self) -> float:
        return self.idle / (self.processors * self.time)


def serial_nodes(tree: UniformTree) -> tuple[int, int]:
    """Serial fail-hard alpha-beta on ``tree`` to its depth: ``(value, nodes)``."""
    result = search("alphabeta", tree.copy(), tree.depth, order=MoveOrder.NATURAL)
    assert isinstance(result.value, int)
    return result.value, result.nodes


def simulate(scheme: Scheme | str, tree: UniformTree, processors: int) -> ParallelResult:
    """Search ``tree`` to its depth with ``scheme`` on ``processors`` simulated processors."""
    if processors < 1:
        raise ValueError(f"processors must be at least 1: {processors}")
    scheme = Scheme(scheme)
    value: int | None
    if scheme is Scheme.LAZY_SMP:
        lazy = _LazySmp(tree)
        tasks: list[Task | None] = [lazy.thread(i) for i in range(processors)]
        time, nodes, idle = _run(tasks, lambda: None, lambda: lazy.value is not None)
        value = lazy.value
    else:
        split = _SplitSearch(tree, ybwc=scheme is Scheme.YBWC)
        tasks = [split.root(), *[None] * (processors - 1)]
        time, nodes, idle = _run(tasks, split.work, lambda: split.value is not None)
        value = split.value
    assert value is not None
    return ParallelResult(scheme, processors, value, time, nodes, idle, serial_nodes(tree)[1])


# -- the machine -----------------------------------------------------------------------------
def _run(
    tasks: list[Task | None], find_work: Callable[[], Task | None], done: Callable[[], bool]
) -> tuple[int, int, int]:
    """Step every processor once per time unit until ``done()``: ``(time, nodes, idle)``.

    ``tasks[p]`` is processor ``p``'s work (``None``: idle); an idle processor asks
    ``find_work`` for a task.  A step of a processor resumes its task until the task yields:
    the bookkeeping in between (returning values, taking work) is free.  The step in which the
    root's value appears is not counted: the value was known at the end of the one before.
    """
    time = nodes = idle = 0
    while True:
        visits = 0
        for p in range(len(tasks)):
            visits += _advance(tasks, p, find_work, done)
            if done():
                return time, nodes, idle
        if visits == 0 and all(task is None for task in tasks):
            raise RuntimeError("parallel simulation stalled: no processor has work")
        time += 1
        nodes += visits
        idle += len(tasks) - visits


def _advance(
    tasks: list[Task | None], p: int, find_work: Callable[[], Task | None], done: Callable[[], bool]
) -> bool:
    """One step of processor ``p``: True when it entered a node."""
    while True:
        task = tasks[p]
        if task is None:
            if done():
                return False
            task = tasks[p] = find_work()
            if task is None:
                return False
        try:
            return next(task)
        except StopIteration:
            tasks[p] = None


# -- PV-splitting and YBWC -------------------------------------------------------------------
class _Cancelled(Exception):  # noqa: N818 - a control-flow signal, not an error
    """A cut-off above made this search useless."""


@dataclass(eq=False, slots=True)
class _Split:
    """A split point: a node whose eldest brother is back and whose younger ones are shared."""

    game: UniformTree
    """A copy positioned at the node; each brother's search copies it again."""
    depth: int
    alpha: int
    beta: int
    moves: list[int]
    """Younger brothers nobody has taken yet."""
    parent: _Split | None
    """The split point this node's search runs under (``None``: the root's processor)."""
    busy: int = 0
    """Brothers being searched."""
    cutoff: bool = False

    def cancelled(self) -> bool:
        """Has a cut-off here or at any split point above made this one useless?"""
        split: _Split | None = self
        while split is not None:
            if split.cutoff:
                return True
            split = split.parent
        return False

    def below(self, ancestor: _Split) -> bool:
        split = self.parent
        while split is not None:
            if split is ancestor:
                return True
            split = split.parent
        return False


def _check(context: _Split | None) -> None:
    if context is not None and context.cancelled():
        raise _Cancelled


class _SplitSearch:
    """PV-splitting (``ybwc=False``: split points at PV nodes only, brothers searched serially)
    and YBWC (``ybwc=True``: split points wherever the eldest brother is back)."""

    def __init__(self, tree: UniformTree, *, ybwc: bool) -> None:
        self.tree = tree
        self.ybwc = ybwc
        self.splits: list[_Split] = []
        """Open split points, oldest first."""
        self.value: int | None = None

    def root(self) -> Task:
        root = self.tree.copy()
        self.value = yield from self._node(root, self.tree.depth, (-INF, INF), None, pv=True)

    def work(self, within: _Split | None = None) -> Task | None:
        """A brother to search for an idle processor: at the open split point nearest the root
        (the oldest on a tie); ``within``: only below that split point."""
        best: _Split | None = None
        for split in self.splits:
            if not split.moves or split.cancelled():
                continue
            if within is not None and not split.below(within):
                continue
            if best is None or split.depth > best.depth:
                best = split
        return None if best is None else self._brother(best)

    def _node(
        self, game: UniformTree, depth: int, window: Window, context: _Split | None, *, pv: bool
    ) -> Steps:
        """Fail-hard alpha-beta; after the eldest brother, a split point where allowed."""
        alpha, beta = window
        yield _VISIT
        _check(context)
        if depth == 0:
            return game.evaluate()
        moves = game.legal_moves()
        for i, move in enumerate(moves):
            if i == 1 and (self.ybwc or pv):  # the eldest brother is back: share the others
                return (yield from self._split(game, depth, (alpha, beta), moves[1:], context))
            game.push(move)
            value = -(yield from self._node(game, depth - 1, (-beta, -alpha), context, pv=pv))
            game.pop()
            if value >= beta:
                return beta
            alpha = max(alpha, value)
        return alpha

    def _split(
        self,
        game: UniformTree,
        depth: int,
        window: Window,
        moves: list[int],
        context: _Split | None,
    ) -> Steps:
        """Search the younger brothers with whoever comes to help; wait for the last one."""
        split = _Split(game.copy(), depth, window[0], window[1], moves, context)
        self.splits.append(split)
        try:
            while split.moves:  # the owner takes brothers like any helper
                yield from self._brother(split)
                _check(context)
            while split.busy and not split.cutoff:
                task = self.work(within=split) if self.ybwc else None
                if task is None:
                    yield _WAIT
                else:  # helpful master: work for the helpers instead of waiting
                    yield from task
                _check(context)
        finally:
            self.splits.remove(split)
        return split.beta if split.cutoff else split.alpha

    def _brother(self, split: _Split) -> Task:
        """Take one younger brother at ``split`` and search it with the best bound so far."""
        move = split.moves.pop(0)
        game = split.game.copy()
        game.push(move)
        split.busy += 1
        try:
            window = (-split.beta, -split.alpha)
            value = -(yield from self._node(game, split.depth - 1, window, split, pv=False))
        except _Cancelled:
            return
        finally:
            split.busy -= 1
        if value >= split.beta:
            split.cutoff = True
            split.moves.clear()
        split.alpha = max(split.alpha, value)


# -- Lazy SMP --------------------------------------------------------------------------------
class _LazySmp:
    """Iterative-deepening alpha-beta searches sharing one table (see the module docstring)."""

    def __init__(self, tree: UniformTree) -> None:
        self.tree = tree
        self.bounds: dict[tuple[int, int], Window] = {}
        """(node, remaining depth) -> (lower, upper) bounds on the node's value."""
        self.best: dict[int, int] = {}
        """node -> the move that last raised alpha or cut off there, at any depth."""
        self.value: int | None = None

    def thread(self, index: int) -> Task:
        """Processor ``index``'s search; index 0 is the main search, whose value counts."""
        depth = self.tree.depth
        offset = index % 2
        for iteration in range(1, depth + 1):
            d = min(depth, iteration + offset)
            value = yield from self._search(self.tree.copy(), d, (-INF, INF), index)
            if index == 0 and iteration == depth:
                self.value = value

    def _moves(self, game: UniformTree, index: int) -> list[int]:
        """The table's move first, then the others (rotated per node for helpers)."""
        moves = game.legal_moves()
        if index:
            shift = hash((index, game.node)) % len(moves)
            moves = moves[shift:] + moves[:shift]
        first = self.best.get(game.node)
        if first is not None:
            moves.remove(first)
            moves.insert(0, first)
        return moves

    def _search(self, game: UniformTree, depth: int, window: Window, index: int) -> Steps:
        """Fail-hard alpha-beta with the shared table."""
        alpha, beta = window
        yield _VISIT
        if depth == 0:
            return game.evaluate()
        node = game.node
        lower, upper = self.bounds.get((node, depth), (-INF, INF))
        if lower >= beta:
            return beta
        if upper <= alpha:
            return alpha
        if lower == upper:
            return lower
        for move in self._moves(game, index):
            game.push(move)
            value = -(yield from self._search(game, depth - 1, (-beta, -alpha), index))
            game.pop()
            if value > alpha:
                self.best[node] = move
                alpha = min(value, beta)
                if value >= beta:
                    break
        self._store(node, depth, window, alpha)
        return alpha

    def _store(self, node: int, depth: int, window: Window, value: int) -> None:
        """Record what a fail-hard result in ``window`` proves about the node's value."""
        lower, upper = self.bounds.get((node, depth), (-INF, INF))
        if value > window[0]:  # not a fail-low: value is a lower bound (exact if below beta)
            lower = max(lower, value)
        if value < window[1]:  # not a fail-high: value is an upper bound
            upper = min(upper, value)
        self.bounds[(node, depth)] = (lower, upper)
