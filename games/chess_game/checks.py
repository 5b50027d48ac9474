"""Does a move give check?  Answered on bitboards, without playing the move.

Pruning near the horizon skips quiet moves that cannot matter, except those that give check
(a quiet mate must not hide behind a move count).  python-chess answers ``gives_check`` by
pushing and popping the move, which costs as much as searching a leaf; here the position
after the move is only imagined: its occupancy and the moved piece's new square, then every
kind of attacker is tested against the enemy king, so direct checks, discovered checks and
en passant discoveries come out of the same few table lookups.
"""

from __future__ import annotations

import chess
from chess import (
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_ATTACKS,
    BB_FILE_MASKS,
    BB_KNIGHT_ATTACKS,
    BB_PAWN_ATTACKS,
    BB_RANK_ATTACKS,
    BB_RANK_MASKS,
    BB_RAYS,
    BB_SQUARES,
    BISHOP,
    KING,
    KNIGHT,
    PAWN,
    QUEEN,
    ROOK,
    between,
)

from games.chess_game.pieces import piece_type_on

__all__ = ["CheckSquares", "check_squares", "gives_check", "quick_gives_check"]


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
    if piece == KING and (mine & BB_SQUARES[to] or to - frm == 2 or frm - to == 2):
        return board.gives_check(move)
    king_bb = board.kings & board.occupied_co[not us]
    if not king_bb:
        return False
    king = king_bb.bit_length() - 1
    from_bb = BB_SQUARES[frm]
    to_bb = BB_SQUARES[to]
    occupied = (board.occupied & ~from_bb) | to_bb
    if piece == PAWN and to == board.ep_square and not board.occupied & to_bb:
        occupied &= ~BB_SQUARES[to - 8 if us else to + 8]
    mine = (mine & ~from_bb) | to_bb
    moved = move.promotion or piece
    vacated = ~(from_bb | to_bb)  # the mover leaves, a captured piece disappears
    pawns = board.pawns & vacated
    knights = board.knights & vacated
    diagonal = (board.bishops | board.queens) & vacated
    straight = (board.rooks | board.queens) & vacated
    if moved == PAWN:
        pawns |= to_bb
    elif moved == KNIGHT:
        knights |= to_bb
    elif moved == BISHOP:
        diagonal |= to_bb
    elif moved == ROOK:
        straight |= to_bb
    elif moved == QUEEN:
        diagonal |= to_bb
        straight |= to_bb
    if BB_PAWN_ATTACKS[not us][king] & pawns & mine or BB_KNIGHT_ATTACKS[king] & knights & mine:
        return True
    if BB_DIAG_ATTACKS[king][BB_DIAG_MASKS[king] & occupied] & diagonal & mine:
        return True
    return bool(
        (
            BB_RANK_ATTACKS[king][BB_RANK_MASKS[king] & occupied]
            | BB_FILE_ATTACKS[king][BB_FILE_MASKS[king] & occupied]
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
    diagonal = BB_DIAG_ATTACKS[king][BB_DIAG_MASKS[king] & occupied]
    straight = (
        BB_RANK_ATTACKS[king][BB_RANK_MASKS[king] & occupied]
        | BB_FILE_ATTACKS[king][BB_FILE_MASKS[king] & occupied]
    )
    snipers = (
        (BB_RANK_ATTACKS[king][0] | BB_FILE_ATTACKS[king][0]) & (board.rooks | board.queens)
        | BB_DIAG_ATTACKS[king][0] & (board.bishops | board.queens)
    ) & mine
    shields = 0
    while snipers:
        low = snipers & -snipers
        snipers ^= low
        blockers = between(king, low.bit_length() - 1) & occupied
        if blockers and not blockers & (blockers - 1):
            shields |= blockers
    squares = (
        0,
        BB_PAWN_ATTACKS[not us][king],
        BB_KNIGHT_ATTACKS[king],
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
    from_bb = BB_SQUARES[frm]
    piece = piece_type_on(board, from_bb)
    # Kings (castling moves the rook too), empty squares, en passant and promotions take the
    # long way.
    if piece == KING or not piece or move.promotion or (piece == PAWN and to == board.ep_square):
        return gives_check(board, move)
    king, squares, shields = info
    if squares[piece] & BB_SQUARES[to]:
        return True
    return bool(shields & from_bb) and not BB_RAYS[frm][to] & BB_SQUARES[king]
