"""``Board.push`` for the moves a search plays most, with what the caller already knows.

python-chess's ``push`` is general: it converts castling notation both ways, re-derives the
moving and the captured piece with ``piece_type_at``, builds a new ``Move`` for the move
stack, and moves pieces through ``_remove_piece_at``/``_set_piece_at``.  The adapter already
knows the moving and captured piece types (it needs them for the key and the evaluation), so
for every move except castling this module updates the board's fields directly.

The result must be exactly the board python-chess's ``push`` would leave, stacks included:
``Board.pop``, FEN output, repetition tests and copies all read them.  The tests compare every
field after every legal move of many positions.
"""

from __future__ import annotations

from typing import Final

import chess
from chess import BB_RANK_1, BB_RANK_8, BB_SQUARES, KING, PAWN

__all__ = ["push_plain"]

_BoardState: Final = chess._BoardState  # python-chess's own undo record, so Board.pop works


def push_plain(board: chess.Board, move: chess.Move, piece_type: int, captured: int) -> None:
    """``board.push(move)`` for a legal move that is not castling.

    ``piece_type`` is the moving piece, ``captured`` the piece type on the target square (0 for
    none, also for en passant, which is recognised here).
    """
    frm = move.from_square
    to = move.to_square
    from_bb = BB_SQUARES[frm]
    to_bb = BB_SQUARES[to]
    us = board.turn
    state = _BoardState(board)
    rights = board.castling_rights
    if rights:
        if not board._stack:
            rights = board.clean_castling_rights()  # python-chess cleans them once, at first
        rights &= ~to_bb & ~from_bb
        if piece_type == KING and not board.promoted & from_bb:
            rights &= ~(BB_RANK_1 if us else BB_RANK_8)
        board.castling_rights = rights
    board._stack.append(state)
    board.move_stack.append(move)
    ep = board.ep_square
    board.ep_square = None
    if not us:
        board.fullmove_number += 1
    occupied_co = board.occupied_co
    promoted = board.promoted
    was_promoted = bool(promoted & from_bb)

    if captured:
        board.halfmove_clock = 0
        if captured == PAWN:
            board.pawns ^= to_bb
        elif captured == chess.KNIGHT:
            board.knights ^= to_bb
        elif captured == chess.BISHOP:
            board.bishops ^= to_bb
        elif captured == chess.ROOK:
            board.rooks ^= to_bb
        else:
            board.queens ^= to_bb
        occupied_co[not us] ^= to_bb
        board.occupied ^= to_bb
        promoted &= ~to_bb
    elif piece_type == PAWN:
        board.halfmove_clock = 0
    else:
        board.halfmove_clock += 1

    new_type = piece_type
    if piece_type == PAWN:
        diff = to - frm
        if diff in (16, -16):
            board.ep_square = frm + (8 if us else -8)
        elif to == ep and not captured:
            victim_bb = BB_SQUARES[to - 8 if us else to + 8]
            board.pawns ^= victim_bb
            occupied_co[not us] ^= victim_bb
            board.occupied ^= victim_bb
            promoted &= ~victim_bb
        if move.promotion:
            new_type = move.promotion
            was_promoted = True

    move_bb = from_bb | to_bb
    if new_type == piece_type:
        if piece_type == PAWN:
            board.pawns ^= move_bb
        elif piece_type == chess.KNIGHT:
            board.knights ^= move_bb
        elif piece_type == chess.BISHOP:
            board.bishops ^= move_bb
        elif piece_type == chess.ROOK:
            board.rooks ^= move_bb
        elif piece_type == chess.QUEEN:
            board.queens ^= move_bb
        else:
            board.kings ^= move_bb
    else:
        board.pawns ^= from_bb
        if new_type == chess.QUEEN:
            board.queens ^= to_bb
        elif new_type == chess.KNIGHT:
            board.knights ^= to_bb
        elif new_type == chess.ROOK:
            board.rooks ^= to_bb
        else:
            board.bishops ^= to_bb
    occupied_co[us] ^= move_bb
    board.occupied ^= move_bb
    promoted &= ~from_bb
    board.promoted = promoted | to_bb if was_promoted else promoted
    board.turn = not us
