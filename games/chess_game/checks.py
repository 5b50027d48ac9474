"""Does a move give check?  Answered on bitboards, without playing the move.

Pruning near the horizon skips quiet moves that cannot matter, except those that give check
(a quiet mate must not hide behind a move count).  python-chess answers ``gives_check`` by
pushing and popping the move, which costs as much as searching a leaf; here the position
after the move is only imagined: its occupancy and the moved piece's new square, then every
kind of attacker is tested against the enemy king, so direct checks, discovered checks and
en passant discoveries come out of the same few table lookups.
"""

from __future__ import annotations

from typing import Final

import chess

__all__ = ["CheckSquares", "check_squares", "gives_check", "quick_gives_check"]

_BB_SQUARES: Final = chess.BB_SQUARES
_RANK_MASKS: Final = chess.BB_RANK_MASKS
_FILE_MASKS: Final = chess.BB_FILE_MASKS
_DIAG_MASKS: Final = chess.BB_DIAG_MASKS
_RANK_ATTACKS: Final = chess.BB_RANK_ATTACKS
_FILE_ATTACKS: Final = chess.BB_FILE_ATTACKS
_DIAG_ATTACKS: Final = chess.BB_DIAG_ATTACKS
_KNIGHT_ATTACKS: Final = chess.BB_KNIGHT_ATTACKS
_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS
_RAYS: Final = chess.BB_RAYS
_BETWEEN: Final = chess.between
_PAWN: Final = chess.PAWN
_KNIGHT: Final = chess.KNIGHT
_BISHOP: Final = chess.BISHOP
_ROOK: Final = chess.ROOK
_QUEEN: Final = chess.QUEEN
_KING: Final = chess.KING


def gives_check(board: chess.Board, move: chess.Move) -> bool:
    """Whether the legal ``move`` leaves the opponent in check.

    Castling is answered by playing it (the rook's new square decides, and castling is
    rare enough not to matter for speed).
    """
    us = board.turn
    frm = move.from_square
    to = move.to_square
    piece = board.piece_type_at(frm)
    mine = board.occupied_co[us]
    if piece == _KING and (mine & _BB_SQUARES[to] or to - frm == 2 or frm - to == 2):
        return board.gives_check(move)
    king_bb = board.kings & board.occupied_co[not us]
    if not king_bb:
        return False
    king = king_bb.bit_length() - 1
    from_bb = _BB_SQUARES[frm]
    to_bb = _BB_SQUARES[to]
    occupied = (board.occupied & ~from_bb) | to_bb
    if piece == _PAWN and to == board.ep_square and not board.occupied & to_bb:
        occupied &= ~_BB_SQUARES[to - 8 if us else to + 8]
    mine = (mine & ~from_bb) | to_bb
    moved = move.promotion or piece
    vacated = ~(from_bb | to_bb)  # the mover leaves, a captured piece disappears
    pawns = board.pawns & vacated
    knights = board.knights & vacated
    diagonal = (board.bishops | board.queens) & vacated
    straight = (board.rooks | board.queens) & vacated
    if moved == _PAWN:
        pawns |= to_bb
    elif moved == _KNIGHT:
        knights |= to_bb
    elif moved == _BISHOP:
        diagonal |= to_bb
    elif moved == _ROOK:
        straight |= to_bb
    elif moved == _QUEEN:
        diagonal |= to_bb
        straight |= to_bb
    if _PAWN_ATTACKS[not us][king] & pawns & mine or _KNIGHT_ATTACKS[king] & knights & mine:
        return True
    if _DIAG_ATTACKS[king][_DIAG_MASKS[king] & occupied] & diagonal & mine:
        return True
    return bool(
        (
            _RANK_ATTACKS[king][_RANK_MASKS[king] & occupied]
            | _FILE_ATTACKS[king][_FILE_MASKS[king] & occupied]
        )
        & straight
        & mine
    )


CheckSquares = tuple[int, tuple[int, int, int, int, int, int, int], int]
"""For one position: the enemy king square, the squares from which each piece type (indexed
by python-chess piece type) would attack it, and the side to move's pieces that shield it
from one of their own sliders (moving one off the line is a discovered check)."""


def check_squares(board: chess.Board) -> CheckSquares | None:
    """What :func:`quick_gives_check` needs, computed once per position (``None``: no king)."""
    us = board.turn
    king_bb = board.kings & board.occupied_co[not us]
    if not king_bb:
        return None
    king = king_bb.bit_length() - 1
    occupied = board.occupied
    mine = board.occupied_co[us]
    diagonal = _DIAG_ATTACKS[king][_DIAG_MASKS[king] & occupied]
    straight = (
        _RANK_ATTACKS[king][_RANK_MASKS[king] & occupied]
        | _FILE_ATTACKS[king][_FILE_MASKS[king] & occupied]
    )
    snipers = (
        (_RANK_ATTACKS[king][0] | _FILE_ATTACKS[king][0]) & (board.rooks | board.queens)
        | _DIAG_ATTACKS[king][0] & (board.bishops | board.queens)
    ) & mine
    shields = 0
    while snipers:
        low = snipers & -snipers
        snipers ^= low
        between = _BETWEEN(king, low.bit_length() - 1) & occupied
        if between and not between & (between - 1):
            shields |= between
    squares = (
        0,
        _PAWN_ATTACKS[not us][king],
        _KNIGHT_ATTACKS[king],
        diagonal,
        straight,
        diagonal | straight,
        0,
    )
    return king, squares, shields & mine


def quick_gives_check(board: chess.Board, move: chess.Move, info: CheckSquares) -> bool:
    """:func:`gives_check` for a position whose :func:`check_squares` are known: a table
    lookup for plain moves; promotions, en passant and castling take the long way (their
    lines change in ways the table does not see)."""
    frm = move.from_square
    to = move.to_square
    piece = board.piece_type_at(frm)
    if move.promotion or piece is None or piece == _KING or (
        piece == _PAWN and to == board.ep_square
    ):
        return gives_check(board, move)
    king, squares, shields = info
    if squares[piece] & _BB_SQUARES[to]:
        return True
    return bool(shields & _BB_SQUARES[frm]) and not _RAYS[frm][to] & _BB_SQUARES[king]
