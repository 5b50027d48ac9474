"""Which piece stands on a square: python-chess's ``piece_type_at`` for the hot path.

``Board.piece_type_at`` takes a square, derives its mask and asks every piece set in turn.
The search's callers (``push``, the exchange evaluator, the check test) already hold the
square's mask and ask several times per node, so they share this one copy of the test
instead of each inlining the same chain of bit tests.
"""

from __future__ import annotations

import chess
from chess import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK

__all__ = ["piece_type_on"]


def piece_type_on(board: chess.Board, mask: chess.Bitboard) -> int:  # noqa: PLR0911 - one test each
    """The type of the piece on the one-square bitboard ``mask``, or 0 if it is empty."""
    if board.pawns & mask:
        return PAWN
    if board.knights & mask:
        return KNIGHT
    if board.bishops & mask:
        return BISHOP
    if board.rooks & mask:
        return ROOK
    if board.queens & mask:
        return QUEEN
    if board.kings & mask:
        return KING
    return 0
