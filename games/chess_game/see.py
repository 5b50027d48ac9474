"""Static exchange evaluation: does a capture win material once every recapture is made?

Quiescence search spends most of its nodes on captures that lose material (a queen taking a
defended pawn) or cannot matter (a pawn captured while a rook down); the search asks
``see_ge(move, threshold)`` to skip both.  The question is a threshold test rather than a
value because a yes/no answer usually needs only the first one or two captures of the
exchange (Stockfish's ``see_ge``): a pawn taking a knight wins at least 220 whatever follows,
a queen taking an undefended pawn wins the pawn.

The exchange is played out on bitboards only, least valuable attacker first, with x-ray
attackers (a rook behind a rook, a bishop or queen behind a pawn) joining as the pieces in
front leave the square.  Pins are ignored, as in most engines: the answer is an estimate that
errs on the side of the pinned defender, and the search verifies what it does not prune.
The king captures last and only when the square is no longer defended.
"""

from __future__ import annotations

from typing import Final

import chess
from librt.vecs import vec
from mypy_extensions import i64

from games.chess_game.bitboard64 import (
    BISHOP,
    BLACK_PAWN_ATTACKS,
    KING,
    KING_ATTACKS,
    KNIGHT,
    KNIGHT_ATTACKS,
    PAWN,
    QUEEN,
    ROOK,
    SQUARE,
    WHITE_PAWN_ATTACKS,
    Bitboards,
    bishop_attacks,
    lsb,
    rook_attacks,
)
from games.chess_game.move_codes import PROMOTION_SHIFT, SQUARE_MASK, TO_SHIFT

__all__ = ["SEE_VALUES", "see_ge"]

SEE_VALUES: Final = (0, 100, 320, 330, 500, 950, 20_000)
"""Exchange values by python-chess piece type (index 0 = empty square), in centipawns."""

_VALUE: Final = vec[i64](list(SEE_VALUES))
"""``SEE_VALUES`` as a native array: compiled, indexing the fixed-length tuple by a variable
boxed all seven values into a new tuple first (a fifth of the exchange's instructions)."""
_PAWN_VALUE: Final[i64] = SEE_VALUES[chess.PAWN]


def see_ge(boards: Bitboards, move: i64, threshold: int) -> bool:
    """Whether ``move`` (pseudo-legal for the side to move) wins at least ``threshold``
    centipawns by static exchange on its target square.

    Castling and other non-captures gain nothing (a promotion gains its piece over the pawn),
    so for them the answer is ``threshold <= gain`` unless the moved piece can be taken.
    """
    frm = move & SQUARE_MASK
    to = (move >> TO_SHIFT) & SQUARE_MASK
    to_bb: i64 = SQUARE[to]
    from_bb: i64 = SQUARE[frm]
    us = boards.turn
    white = boards.white
    black = boards.black
    if (white if us else black) & to_bb:
        return threshold <= 0  # Chess960 castling: king takes own rook
    attacker = boards.piece_type_on(from_bb)
    victim = boards.piece_type_on(to_bb)
    occ = boards.occupied ^ from_bb
    if not victim:
        victim_value: i64 = 0
        if attacker == PAWN and to == boards.ep_square:
            victim_value = _PAWN_VALUE
            victim_square: i64 = SQUARE[to - 8 if us else to + 8]
            occ ^= victim_square
        elif attacker == KING and (to - frm == 2 or frm - to == 2):
            return threshold <= 0  # standard castling
    else:
        victim_value = _VALUE[victim]
    promotion = move >> PROMOTION_SHIFT
    # Native words from here: compiled, a tagged int's sums are checked for a boxed long.
    limit: i64 = threshold
    swap = victim_value - limit
    if promotion:
        swap += _VALUE[promotion] - _PAWN_VALUE
        attacker = promotion
    if swap < 0:
        return False
    swap = _VALUE[attacker] - swap
    if swap <= 0:
        return True
    # The rest of the exchange is played on native words only.
    occ |= to_bb
    pawns = boards.pawns
    knights = boards.knights
    bishops = boards.bishops
    rooks = boards.rooks
    queens = boards.queens
    kings = boards.kings
    bishops_queens = bishops | queens
    rooks_queens = rooks | queens
    knight_attacks: i64 = KNIGHT_ATTACKS[to]
    king_attacks: i64 = KING_ATTACKS[to]
    by_white_pawns: i64 = BLACK_PAWN_ATTACKS[to]
    by_black_pawns: i64 = WHITE_PAWN_ATTACKS[to]
    attackers = (
        (knight_attacks & knights)
        | (king_attacks & kings)
        | (rook_attacks(to, occ) & rooks_queens)
        | (bishop_attacks(to, occ) & bishops_queens)
        | (by_black_pawns & pawns & black)
        | (by_white_pawns & pawns & white)
    )
    side = us
    result = True
    while True:
        side = not side
        attackers &= occ
        own = white if side else black
        mine = attackers & own
        if not mine:
            break
        result = not result
        if mine & pawns:
            found = mine & pawns
            piece_type = PAWN
        elif mine & knights:
            found = mine & knights
            piece_type = KNIGHT
        elif mine & bishops:
            found = mine & bishops
            piece_type = BISHOP
        elif mine & rooks:
            found = mine & rooks
            piece_type = ROOK
        elif mine & queens:
            found = mine & queens
            piece_type = QUEEN
        else:
            # The king may capture only if the other side has nothing left to recapture.
            return result if not attackers & (black if side else white) else not result
        swap = _VALUE[piece_type] - swap
        if swap < result:
            break
        occ ^= SQUARE[lsb(found)]
        if piece_type in (PAWN, BISHOP, QUEEN):
            attackers |= bishop_attacks(to, occ) & bishops_queens
        if piece_type in (ROOK, QUEEN):
            attackers |= rook_attacks(to, occ) & rooks_queens
    return result
