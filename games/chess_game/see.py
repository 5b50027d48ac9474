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
from chess import (
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_ATTACKS,
    BB_FILE_MASKS,
    BB_KING_ATTACKS,
    BB_KNIGHT_ATTACKS,
    BB_RANK_ATTACKS,
    BB_RANK_MASKS,
    BB_SQUARES,
    BISHOP,
    BLACK,
    KING,
    KNIGHT,
    PAWN,
    QUEEN,
    ROOK,
    WHITE,
)

from games.chess_game.pieces import piece_type_on

__all__ = ["SEE_VALUES", "see_ge"]

SEE_VALUES: Final = (0, 100, 320, 330, 500, 950, 20_000)
"""Exchange values by python-chess piece type (index 0 = empty square), in centipawns."""

_WHITE_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS[chess.WHITE]
_BLACK_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS[chess.BLACK]
_PAWN_VALUE: Final = SEE_VALUES[chess.PAWN]
_DIAGONAL_XRAY: Final = frozenset((chess.PAWN, chess.BISHOP, chess.QUEEN))
"""Capturers that can uncover a bishop or queen behind them."""
_ORTHOGONAL_XRAY: Final = frozenset((chess.ROOK, chess.QUEEN))
"""Capturers that can uncover a rook or queen behind them."""


def see_ge(board: chess.Board, move: chess.Move, threshold: int) -> bool:
    """Whether ``move`` (pseudo-legal for the side to move) wins at least ``threshold``
    centipawns by static exchange on its target square.

    Castling and other non-captures gain nothing (a promotion gains its piece over the pawn),
    so for them the answer is ``threshold <= gain`` unless the moved piece can be taken.
    """
    frm = move.from_square
    to = move.to_square
    to_bb = BB_SQUARES[to]
    from_bb = BB_SQUARES[frm]
    occupied_co = board.occupied_co
    us = board.turn
    if occupied_co[us] & to_bb:
        return threshold <= 0  # Chess960 castling: king takes own rook
    attacker = piece_type_on(board, from_bb)
    victim = piece_type_on(board, to_bb)
    occupied = board.occupied ^ from_bb
    if not victim:
        victim_value = 0
        if attacker == PAWN and to == board.ep_square:
            victim_value = _PAWN_VALUE
            occupied ^= BB_SQUARES[to - 8 if us else to + 8]
        elif attacker == KING and (to - frm == 2 or frm - to == 2):
            return threshold <= 0  # standard castling
    else:
        victim_value = SEE_VALUES[victim]
    promotion = move.promotion
    swap = victim_value - threshold
    if promotion:
        swap += SEE_VALUES[promotion] - _PAWN_VALUE
        attacker = promotion
    if swap < 0:
        return False
    swap = SEE_VALUES[attacker] - swap
    if swap <= 0:
        return True
    occupied |= to_bb
    pawns = board.pawns
    knights = board.knights
    bishops = board.bishops
    rooks = board.rooks
    queens = board.queens
    bishops_queens = bishops | queens
    rooks_queens = rooks | queens
    attackers = (
        (BB_KNIGHT_ATTACKS[to] & knights)
        | (BB_KING_ATTACKS[to] & board.kings)
        | (BB_RANK_ATTACKS[to][BB_RANK_MASKS[to] & occupied] & rooks_queens)
        | (BB_FILE_ATTACKS[to][BB_FILE_MASKS[to] & occupied] & rooks_queens)
        | (BB_DIAG_ATTACKS[to][BB_DIAG_MASKS[to] & occupied] & bishops_queens)
        | (_WHITE_PAWN_ATTACKS[to] & pawns & occupied_co[BLACK])
        | (_BLACK_PAWN_ATTACKS[to] & pawns & occupied_co[WHITE])
    )
    by_type = (
        (pawns, PAWN),
        (knights, KNIGHT),
        (bishops, BISHOP),
        (rooks, ROOK),
        (queens, QUEEN),
        (board.kings, KING),
    )
    side = us
    result = True
    while True:
        side = not side
        attackers &= occupied
        mine = attackers & occupied_co[side]
        if not mine:
            break
        result = not result
        piece_type = KING
        found = 0
        for pieces, candidate in by_type:
            found = mine & pieces
            if found:
                piece_type = candidate
                break
        if piece_type == KING:
            # The king may capture only if the other side has nothing left to recapture.
            return result if not attackers & occupied_co[not side] else not result
        swap = SEE_VALUES[piece_type] - swap
        if swap < result:
            break
        occupied ^= found & -found
        if piece_type in _DIAGONAL_XRAY:
            attackers |= BB_DIAG_ATTACKS[to][BB_DIAG_MASKS[to] & occupied] & bishops_queens
        if piece_type in _ORTHOGONAL_XRAY:
            attackers |= (
                BB_RANK_ATTACKS[to][BB_RANK_MASKS[to] & occupied]
                | BB_FILE_ATTACKS[to][BB_FILE_MASKS[to] & occupied]
            ) & rooks_queens
    return result
