"""Perft: count the leaves of the legal-move tree, the standard test of move generation.

Game-agnostic through the contract's make/unmake; draws by rule do not stop the count
(``legal_moves()`` stays non-empty for them), a finished game does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.control import SearchControl
from engine.game import Game, MoveT


class PerftStoppedError(Exception):
    """``stop`` (or a disconnect) ended a perft early; ``counts`` holds the root moves
    that were counted in full before it, so the caller can still show them."""

    def __init__(self, counts: list[tuple[str, int]], total_moves: int) -> None:
        super().__init__(f"perft stopped after {len(counts)} of {total_moves} root moves")
        self.counts = counts
        self.total_moves = total_moves


def _never() -> bool:
    return False


def perft(game: Game[MoveT], depth: int, stopped: Callable[[], bool] = _never) -> int:
    """Number of move sequences of exactly ``depth`` plies (fewer if the game ends first:
    a finished game is a leaf only at ``depth`` 0).

    ``stopped`` is asked at every interior node two plies or more above the leaves (a few
    thousand times a second in chess, a negligible cost next to move generation); when it
    answers True the count is abandoned by raising :class:`_AbandonedError`.
    """
    if depth == 0:
        return 1
    moves = game.legal_moves()
    if depth == 1:
        return len(moves)
    if stopped():
        raise _AbandonedError
    total = 0
    for move in moves:
        game.push(move)
        try:
            total += perft(game, depth - 1, stopped)
        finally:
            game.pop()
    return total


class _AbandonedError(Exception):
    """Unwinds a stopped perft (the pushes are popped on the way out)."""


def divide(
    game: Game[MoveT], depth: int, *, control: SearchControl | None = None
) -> list[tuple[str, int]]:
    """Per-root-move counts (``depth`` >= 1), sorted by move text, as ``go perft`` prints.

    Raises :class:`PerftStoppedError` (with the root moves counted so far) once ``control`` is
    stopped: a perft 8 must end on ``stop`` or a disconnect, not hours later.
    """
    stopped = _never if control is None else (lambda: control.stopped)
    counts = []
    moves = game.legal_moves()
    for move in moves:
        game.push(move)
        try:
            counts.append((game.format_move(move), perft(game, depth - 1, stopped)))
        except _AbandonedError:
            raise PerftStoppedError(sorted(counts), len(moves)) from None
        finally:
            game.pop()
    return sorted(counts)


@dataclass(frozen=True, slots=True)
class Divided:
    """What a stoppable ``go perft`` hands back (a value, so it crosses a process boundary
    as the exception would not): the per-root-move counts, and how many root moves there
    were, which is more than ``len(counts)`` when ``stop`` came first."""

    counts: tuple[tuple[str, int], ...]
    root_moves: int

    @property
    def complete(self) -> bool:
        return len(self.counts) == self.root_moves

    @property
    def nodes(self) -> int:
        return sum(count for _, count in self.counts)


def divide_until_stopped(game: Game[MoveT], depth: int, *, control: SearchControl) -> Divided:
    """:func:`divide` as a job that ``control`` can stop: the moves counted in full so far."""
    try:
        counts = divide(game, depth, control=control)
    except PerftStoppedError as stopped:
        return Divided(tuple(stopped.counts), stopped.total_moves)
    return Divided(tuple(counts), len(counts))


@dataclass(frozen=True, slots=True)
class TreeCount:
    """Whole-tree statistics of a finite game: every node, and every finished game."""

    nodes: int
    games: int


def count_tree(game: Game[MoveT]) -> TreeCount:
    """Walk the complete game tree (only sensible for small games such as tic-tac-toe)."""
    nodes = 1
    games = 0
    moves = game.legal_moves()
    if not moves:
        return TreeCount(1, 1)
    for move in moves:
        game.push(move)
        sub = count_tree(game)
        game.pop()
        nodes += sub.nodes
        games += sub.games
    return TreeCount(nodes, games)
