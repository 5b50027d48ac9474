"""Checks shared by the FEN dialects of the drop games (tic-tac-toe, Connect Four).

cutechess and Fairy-Stockfish write these games as chess-like FENs in which every stone is a
pawn dropped from a pocket: ``<board>[<pocket>] <side> <castling> <ep> <halfmove>
<fullmove>``.  The board part is each game's own; the pocket and the trailing fields follow
one rule set, kept here so both games word their complaints alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from engine.game import InvalidPositionError

MIN_FEN_FIELDS: Final = 2
"""The fields a FEN must have: the placement and the side to move (the rest may be omitted)."""
FEN_FIELDS: Final = 6
"""The fields of a full FEN."""

_COUNTER_RE: Final = re.compile(r"[0-9]+")
_DEFAULTS: Final = ("-", "-", "0", "1")
_PLACEMENT_RE: Final = re.compile(r"([^\[\]]*)\[([^\[\]]*)\]")

Square = Callable[[int, int], int]
"""A game's bit for (file, rank), both from 0: each game lays out its bitboard its own way."""


def board_text(first: int, second: int, width: int, height: int, square: Square) -> str:
    """The FEN board field: top rank first, ``P``/``p`` stones, runs of empties as digits."""
    ranks = []
    for rank in range(height - 1, -1, -1):
        text = ""
        empty = 0
        for file in range(width):
            bit = square(file, rank)
            piece = "P" if first & bit else "p" if second & bit else ""
            if piece:
                if empty:
                    text += str(empty)
                    empty = 0
                text += piece
            else:
                empty += 1
        if empty:
            text += str(empty)
        ranks.append(text)
    return "/".join(ranks)


def split_placement(placement: str, example: str) -> tuple[str, str]:
    """``<board>[<pocket>]`` into its two parts; ``example`` shows the expected shape."""
    match = _PLACEMENT_RE.fullmatch(placement)
    if match is None:
        raise InvalidPositionError(
            f"expected the board and the pocket in brackets, e.g. {example} ({placement})"
        )
    board, pocket = match.groups()
    return board, pocket


def parse_board(text: str, width: int, height: int, square: Square, unit: str) -> tuple[int, int]:
    """Both players' bitboards from the FEN board field; ``unit`` names a square in errors
    ("squares", "cells")."""
    ranks = text.split("/")
    if len(ranks) != height:
        raise InvalidPositionError(f"the board needs {height} ranks separated by '/' ({text})")
    first = 0
    second = 0
    digits = "123456789"[:width]
    for rank, rank_text in zip(range(height - 1, -1, -1), ranks, strict=True):
        file = 0
        for char in rank_text:
            if char in digits:
                file += int(char)
                continue
            if char not in "Pp":
                raise InvalidPositionError(
                    f"unexpected {char!r} in rank {rank + 1}: only P, p and 1-{width} ({rank_text})"
                )
            if file < width:
                if char == "P":
                    first |= square(file, rank)
                else:
                    second |= square(file, rank)
            file += 1
        if file != width:
            raise InvalidPositionError(f"rank {rank + 1} is not {width} {unit} wide ({rank_text})")
    return first, second


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
