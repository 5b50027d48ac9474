"""Does a move give check?  Answered on bitboards, without playing the move.

Pruning near the horizon skips quiet moves that cannot matter, except those that give check
(a quiet mate must not hide behind a move count).  python-chess answers ``gives_check`` by
pushing and popping the move, which costs as much as searching a leaf; here the position
after the move is only imagined: its occupancy and the moved piece's new square, then every
kind of attacker is tested against the enemy king, so direct checks, discovered checks and
en passant discoveries come out of the same few table lookups.
"""

from __future__ import annotations

from mypy_extensions import i64

from games.chess_game.bitboard64 import (
    BISHOP,
    BLACK_PAWN_ATTACKS,
    KING,
    KNIGHT,
    KNIGHT_ATTACKS,
    LINE,
    PAWN,
    QUEEN,
    ROOK,
    SQUARE,
    WHITE_PAWN_ATTACKS,
    Bitboards,
    bishop_attacks,
    castling_rook,
    castling_targets,
    msb,
    rook_attacks,
)
from games.chess_game.move_codes import PROMOTION_SHIFT, SQUARE_MASK, TO_SHIFT

__all__ = ["CheckSquares", "check_squares", "gives_check", "quick_gives_check"]


def gives_check(boards: Bitboards, move: i64) -> bool:
    """Whether the legal ``move`` leaves the opponent in check (``boards``: the position's
    sets as native words)."""
    us = boards.turn
    frm = move & SQUARE_MASK
    to = (move >> TO_SHIFT) & SQUARE_MASK
    from_bb: i64 = SQUARE[frm]
    to_bb: i64 = SQUARE[to]
    piece = boards.piece_type_on(from_bb)
    mine = boards.white if us else boards.black
    king_bb = boards.kings & (boards.black if us else boards.white)
    if not king_bb:
        return False
    king = msb(king_bb)
    if piece == KING:
        rook_from = castling_rook(mine, frm, to)
        if rook_from >= 0:
            return _castling_checks(boards, frm, rook_from, mine, king)
    occupied = (boards.occupied & ~from_bb) | to_bb
    if piece == PAWN and to == boards.ep_square and not boards.occupied & to_bb:
        occupied &= ~SQUARE[to - 8 if us else to + 8]
    mine = (mine & ~from_bb) | to_bb
    promotion = move >> PROMOTION_SHIFT
    moved = promotion or piece
    vacated = ~(from_bb | to_bb)  # the mover leaves, a captured piece disappears
    pawns = boards.pawns & vacated
    knights = boards.knights & vacated
    diagonal = (boards.bishops | boards.queens) & vacated
    straight = (boards.rooks | boards.queens) & vacated
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
    # Our pawns attack the king from where an enemy pawn on the king's square would attack.
    pawn_squares: i64 = BLACK_PAWN_ATTACKS[king] if us else WHITE_PAWN_ATTACKS[king]
    knight_squares: i64 = KNIGHT_ATTACKS[king]
    if (pawn_squares & pawns | knight_squares & knights) & mine:
        return True
    if bishop_attacks(king, occupied) & diagonal & mine:
        return True
    return bool(rook_attacks(king, occupied) & straight & mine)


def _castling_checks(boards: Bitboards, frm: i64, rook_from: i64, mine: i64, king: i64) -> bool:
    """Whether castling (king from ``frm``, rook from ``rook_from``) checks the enemy king on
    ``king``: only the rook, or a slider behind the king's old square, can; the pieces are
    taken off before they are put back, as their squares may overlap."""
    king_to, rook_to = castling_targets(frm, rook_from)
    rook_to_bb: i64 = SQUARE[rook_to]
    after = mine & ~SQUARE[frm] & ~SQUARE[rook_from] | SQUARE[king_to] | rook_to_bb
    occupied = boards.occupied & ~mine | after
    straight = (boards.rooks & ~SQUARE[rook_from] | rook_to_bb | boards.queens) & after
    if rook_attacks(king, occupied) & straight:
        return True
    return bool(bishop_attacks(king, occupied) & (boards.bishops | boards.queens) & after)


class CheckSquares:
    """For one position: the enemy king square, the squares from which each piece type would
    attack it, and the side to move's pieces that shield it from one of their own sliders
    (moving one off the line is a discovered check)."""

    def __init__(self, boards: Bitboards) -> None:
        us = boards.turn
        self.king: i64 = msb(boards.kings & (boards.black if us else boards.white))
        king = self.king
        occupied = boards.occupied
        mine = boards.white if us else boards.black
        diagonal = bishop_attacks(king, occupied)
        straight = rook_attacks(king, occupied)
        self.shields: i64 = boards.lone_blockers(king, us) & mine
        pawn_squares: i64 = BLACK_PAWN_ATTACKS[king] if us else WHITE_PAWN_ATTACKS[king]
        self.pawn: i64 = pawn_squares
        self.knight: i64 = KNIGHT_ATTACKS[king]
        self.bishop: i64 = diagonal
        self.rook: i64 = straight
        self.queen: i64 = diagonal | straight


def check_squares(boards: Bitboards) -> CheckSquares | None:
    """What :func:`quick_gives_check` needs, computed once per position (``None``: no king)."""
    if not boards.kings & (boards.black if boards.turn else boards.white):
        return None
    return CheckSquares(boards)


def quick_gives_check(boards: Bitboards, move: i64, info: CheckSquares) -> bool:
    """:func:`gives_check` for a position whose :func:`check_squares` are known: a table
    lookup for plain moves; promotions, en passant and castling take the long way (their
    lines change in ways the table does not see)."""
    frm = move & SQUARE_MASK
    to = (move >> TO_SHIFT) & SQUARE_MASK
    from_bb: i64 = SQUARE[frm]
    piece = boards.piece_type_on(from_bb)
    # Kings (castling moves the rook too), empty squares, en passant and promotions take the
    # long way.
    if (
        piece == KING
        or not piece
        or move >> PROMOTION_SHIFT
        or (piece == PAWN and to == boards.ep_square)
    ):
        return gives_check(boards, move)
    to_bb: i64 = SQUARE[to]
    if piece == PAWN:
        squares = info.pawn
    elif piece == KNIGHT:
        squares = info.knight
    elif piece == BISHOP:
        squares = info.bishop
    elif piece == ROOK:
        squares = info.rook
    else:
        squares = info.queen
    if squares & to_bb:
        return True
    line: i64 = LINE[frm * 64 + to]
    return bool(info.shields & from_bb) and not line & SQUARE[info.king]
