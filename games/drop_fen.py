"""Checks shared by the FEN dialects of the drop games (tic-tac-toe, Connect Four).

cutechess and Fairy-Stockfish write these games as chess-like FENs in which every stone is a
pawn dropped from a pocket: ``<board>[<pocket>] <side> <castling> <ep> <halfmove>
<fullmove>``.  The board part is each game's own; the pocket and the trailing fields follow
one rule set, kept here so both games word their complaints alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from engine.game import InvalidPositionError

_COUNTER_RE: Final = re.compile(r"[0-9]+")
_DEFAULTS: Final = ("-", "-", "0", "1")


def check_pocket(pocket: str, first_hand: int, second_hand: int, unit: str) -> None:
    """The pocket must hold exactly the ``unit``s (stones, marks) not on the board."""
    if set(pocket) - {"P", "p"}:
        raise InvalidPositionError(f"the pocket may hold only P and p ({pocket})")
    if pocket.count("P") != first_hand or pocket.count("p") != second_hand:
        raise InvalidPositionError(
            f"the pocket must hold the {unit} not on the board, {first_hand} P and "
            f"{second_hand} p ({pocket})"
        )


def check_trailing_fields(rest: Sequence[str], game: str) -> None:
    """Castling, en passant, halfmove clock, fullmove number; omitted ones default to
    ``- - 0 1`` as Fairy-Stockfish allows.  Drop games have no castling and no en passant."""
    castling, en_passant, halfmove, fullmove = (*rest, *_DEFAULTS[len(rest) :])
    if castling != "-":
        raise InvalidPositionError(f"{game} has no castling rights ({castling})")
    if en_passant != "-":
        raise InvalidPositionError(f"{game} has no en passant square ({en_passant})")
    if _COUNTER_RE.fullmatch(halfmove) is None:
        raise InvalidPositionError(f"the halfmove clock must be a number ({halfmove})")
    if _COUNTER_RE.fullmatch(fullmove) is None or int(fullmove) < 1:
        raise InvalidPositionError(f"the fullmove number must be at least 1 ({fullmove})")
