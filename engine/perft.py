"""Perft: count the leaves of the legal-move tree, the standard test of move generation.

Game-agnostic through the contract's make/unmake; draws by rule do not stop the count
(``legal_moves()`` stays non-empty for them), a finished game does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.control import SearchControl
from engine.game import Game, MoveT


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


@dataclass(frozen=True, slots=True)
class Divided:
    """Per-root-move counts, sorted by move text, and how many root moves there were: more
    than ``len(counts)`` when ``stop`` came first.  A value, so it crosses the pipe from a
    worker process."""

    counts: tuple[tuple[str, int], ...]
    root_moves: int

    @property
    def complete(self) -> bool:
        return len(self.counts) == self.root_moves

    @property
    def nodes(self) -> int:
        return sum(count for _, count in self.counts)


def divide(game: Game[MoveT], depth: int) -> list[tuple[str, int]]:
    """Per-root-move counts (``depth`` >= 1), sorted by move text, as ``go perft`` prints."""
    return list(_divide(game, depth, _never).counts)


def divide_until_stopped(game: Game[MoveT], depth: int, *, control: SearchControl) -> Divided:
    """:func:`divide` as a job that ``control`` can stop: a perft 8 must end on ``stop`` or a
    disconnect, not hours later, and still show the root moves counted in full."""
    return _divide(game, depth, lambda: control.stopped)


def _divide(game: Game[MoveT], depth: int, stopped: Callable[[], bool]) -> Divided:
    counts = []
    moves = game.legal_moves()
    for move in moves:
        game.push(move)
        try:
            counts.append((game.format_move(move), perft(game, depth - 1, stopped)))
        except _AbandonedError:
            break
        finally:
            game.pop()
    return Divided(tuple(sorted(counts)), len(moves))


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
