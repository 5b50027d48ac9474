"""The bitboard primitives of :mod:`games.chess_game.bitboard64` on Python's builtins.

Same names, arguments and results (boards as signed 64-bit values, h8 the sign bit); they
replace the word arithmetic when that module runs uncompiled, where ``int.bit_count`` and
python-chess's attack tables beat interpreted shifts and multiplies.  Never compiled.
"""

from __future__ import annotations

from typing import Final

import chess

__all__ = ["bishop_attacks", "lsb", "msb", "popcount", "rook_attacks"]

_MASK_64: Final = (1 << 64) - 1
_SIGN: Final = 1 << 63


def _signed(bb: int) -> int:
    return (bb ^ _SIGN) - _SIGN


def popcount(bb: int) -> int:
    """Squares on the board."""
    return (bb & _MASK_64).bit_count()


def lsb(bb: int) -> int:
    """The lowest square of a non-empty board."""
    return (bb & -bb & _MASK_64).bit_length() - 1


def msb(bb: int) -> int:
    """The highest square of a non-empty board."""
    return (bb & _MASK_64).bit_length() - 1


def rook_attacks(square: int, occupied: int) -> int:
    """Squares a rook on ``square`` attacks, its first blocker in each direction included."""
    occ = occupied & _MASK_64
    return _signed(
        chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occ]
        | chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occ]
    )


def bishop_attacks(square: int, occupied: int) -> int:
    """Squares a bishop on ``square`` attacks, its first blocker in each direction included."""
    return _signed(chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied & _MASK_64])
