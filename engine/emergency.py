"""The move to play when no search result exists: the best one-ply guess, never "the first".

A session still owes a ``bestmove`` when the search failed or a starved worker never
completed an iteration.  The first generated move is arbitrary (``g1h3`` in chess, a corner
in tic-tac-toe) and often poor; looking one ply ahead costs one ``push``/``evaluate``/``pop``
per legal move (about a millisecond for chess), finds a mate in one, avoids moves that lose
at once, and otherwise takes the move the static evaluation likes best.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.game import Game, MoveT

_WIN = 1 << 30
"""Above any static evaluation: a move that ends the game in the mover's favour."""


def emergency_move(game: Game[MoveT], candidates: Sequence[MoveT] | None = None) -> MoveT | None:
    """The legal move (of ``candidates``, if given) with the best one-ply static value.

    ``None`` when there is no move.  The game is left as it was, also if evaluation raises.
    """
    moves = list(candidates) if candidates is not None else game.legal_moves()
    best: MoveT | None = None
    best_value = -_WIN - 1
    for move in moves:
        game.push(move)
        try:
            # Mate and stalemate show as an empty move list (engine.game's terminal rules).
            over = game.is_terminal() or not game.legal_moves()
            value = -game.terminal_value() * _WIN if over else -game.evaluate()
        finally:
            game.pop()
        if value > best_value:
            best, best_value = move, value
    return best
