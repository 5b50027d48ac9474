"""Perft: count the leaves of the legal-move tree, the standard test of move generation.

Game-agnostic through the contract's make/unmake; draws by rule do not stop the count
(``legal_moves()`` stays non-empty for them), a finished game does.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.game import Game, MoveT


def perft(game: Game[MoveT], depth: int) -> int:
    """Number of move sequences of exactly ``depth`` plies (fewer if the game ends first:
    a finished game is a leaf only at ``depth`` 0)."""
    if depth == 0:
        return 1
    moves = game.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        game.push(move)
        total += perft(game, depth - 1)
        game.pop()
    return total


def divide(game: Game[MoveT], depth: int) -> list[tuple[str, int]]:
    """Per-root-move counts (``depth`` >= 1), sorted by move text, as ``go perft`` prints."""
    counts = []
    for move in game.legal_moves():
        game.push(move)
        counts.append((game.format_move(move), perft(game, depth - 1)))
        game.pop()
    return sorted(counts)


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
