"""Chance nodes: the game contract for games where dice or cards move too.

Some positions of such a game are *chance nodes*: nobody chooses there, an outcome happens with
a known probability, and expectiminimax values the node as the probability-weighted mean of its
outcomes.  The capability, :class:`~engine.game.ChanceGame`, lives with the other optional
capabilities in :mod:`engine.game` (re-exported here); :func:`has_chance` is the test the
searches that understand chance ask once per search.  The rules:

* ``is_chance_node()`` is true where the next event is random.  There, ``chance_outcomes()``
  lists every outcome with its probability, each a :class:`~fractions.Fraction` > 0, summing to
  exactly 1, and ``legal_moves()`` returns the same outcomes in the same order.  Outcomes are
  pushed and popped like moves.
* ``side`` at a chance node is the player whose point of view the node's value takes; a search
  compares a child's ``side`` with its parent's to know whether to negate.
* ``value_bound`` is a number ``U`` with ``-U <= evaluate() <= U`` at every node; a decided
  game is worth ``U`` to the winner and ``-U`` to the loser (0 for a draw).

Why an optional capability and exact fractions: docs/lab.md, *Chance nodes*.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from engine.game import ChanceGame, Game

__all__ = ["ChanceGame", "check_outcomes", "has_chance"]


def has_chance(game: Game[Any]) -> bool:
    """The capability test: does ``game`` implement the chance-node contract?"""
    return isinstance(game, ChanceGame)


def check_outcomes(outcomes: list[tuple[Any, Fraction]]) -> None:
    """Raise ``ValueError`` unless the probabilities are positive and sum to exactly 1.

    Adapters call it in their tests (or once per distinct distribution); the searches trust
    the contract and do not re-check on their hot path.
    """
    if not outcomes:
        raise ValueError("a chance node needs at least one outcome")
    if any(p <= 0 for _, p in outcomes):
        raise ValueError(f"chance probabilities must be positive: {[p for _, p in outcomes]}")
    total = sum((p for _, p in outcomes), Fraction(0))
    if total != 1:
        raise ValueError(f"chance probabilities sum to {total}, not 1")
