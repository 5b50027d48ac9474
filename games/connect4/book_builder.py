"""Build a Connect Four opening book (:mod:`games.connect4.book`) with the exact solver.

Every position reachable from the root with at most ``depth`` stones is listed once per mirror
pair; the deepest ones (the leaves) are solved one by one in key order with one solver, whose
table carries proofs from leaf to leaf; every shallower position's score is then the best of
its children's, ply by ply upwards.  Nothing is random, so the same depth and root give the
same bytes (``scripts/build_connect4_book.py --check`` relies on it).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass

from games.connect4.board import BOARD, CELLS, Connect4, drops, has_four
from games.connect4.book import Connect4Book, book_key
from games.connect4.solver import Connect4Solver, win_score

__all__ = ["BuildStats", "build_book", "position_of", "positions_by_ply"]


@dataclass(frozen=True, slots=True)
class BuildStats:
    """What a build cost: the entries written, the leaves solved, the solver's nodes."""

    entries: int
    leaves: int
    nodes: int


def _children(current: int, mask: int) -> list[tuple[int, int, int]]:
    """``(column, child current, child mask)`` of every drop that neither wins nor fills the
    board, centre first; a winning or filling drop is left out (its score needs no child)."""
    out: list[tuple[int, int, int]] = []
    for col, mover, child_mask in drops(current, mask):
        if has_four(mover) or child_mask == BOARD:
            continue
        out.append((col, mover ^ child_mask, child_mask))
    return out


def positions_by_ply(root: Connect4, depth: int) -> list[dict[int, tuple[int, int]]]:
    """Per ply from the root's to ``depth``: folded key → (current, mask) of one
    representative, for every unfinished position reachable from ``root``."""
    if root.is_terminal():
        raise ValueError(f"the root is a finished game ({root.fen()})")
    if depth < root.ply:
        raise ValueError(f"depth {depth} is below the root's ply {root.ply}")
    level = {book_key(root.current, root.mask): (root.current, root.mask)}
    levels = [level]
    for _ in range(root.ply, depth):
        following: dict[int, tuple[int, int]] = {}
        for current, mask in level.values():
            for _col, child_current, child_mask in _children(current, mask):
                following.setdefault(
                    book_key(child_current, child_mask), (child_current, child_mask)
                )
        levels.append(following)
        level = following
    return levels


def build_book(
    depth: int,
    *,
    root: Connect4 | None = None,
    solver: Connect4Solver | None = None,
    on_leaf: Callable[[int, int, int], None] | None = None,
) -> tuple[Connect4Book, BuildStats]:
    """The book of every position from ``root`` (the empty board by default) up to ``depth``
    stones, and what it cost.  ``on_leaf(done, total, nodes)`` is called after each leaf is
    solved (for progress); the solver's limits apply (SolveAbortedError ends the build)."""
    root = Connect4() if root is None else root
    solver = Connect4Solver() if solver is None else solver
    levels = positions_by_ply(root, depth)
    leaves = levels[-1]
    first_node = solver.nodes
    scores: dict[int, int] = {}
    for done, key in enumerate(sorted(leaves), 1):
        current, mask = leaves[key]
        scores[key] = _leaf_score(solver, current, mask)
        if on_leaf is not None:
            on_leaf(done, len(leaves), solver.nodes - first_node)
    for level in reversed(levels[:-1]):
        for key, (current, mask) in level.items():
            scores[key] = _backed_up_score(current, mask, scores)
    keys = sorted(scores)
    book = Connect4Book(depth, array("Q", keys), array("b", (scores[key] for key in keys)))
    return book, BuildStats(len(keys), len(leaves), solver.nodes - first_node)


def position_of(current: int, mask: int) -> Connect4:
    """The position with the side to move's stones ``current`` and all stones ``mask``."""
    if mask.bit_count() & 1:
        return Connect4(current ^ mask, current)
    return Connect4(current, current ^ mask)


def _leaf_score(solver: Connect4Solver, current: int, mask: int) -> int:
    return solver.score(position_of(current, mask))


def _backed_up_score(current: int, mask: int, scores: dict[int, int]) -> int:
    """The best of the children's scores (negated), a winning drop scoring at once."""
    stones = mask.bit_count()
    best = -CELLS
    for _col, mover, child_mask in drops(current, mask):
        if has_four(mover):
            return win_score(stones)
        value = 0 if child_mask == BOARD else -scores[book_key(mover ^ child_mask, child_mask)]
        best = max(best, value)
    return best
