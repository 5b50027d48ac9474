"""``Board.push`` for the moves a search plays most, with what the caller already knows.

python-chess's ``push`` is general: it converts castling notation both ways, re-derives the
moving and the captured piece with ``piece_type_at``, builds a new ``Move`` for the move
stack, and moves pieces through ``_remove_piece_at``/``_set_piece_at``.  The adapter already
knows the moving and captured piece types (it needs them for the key and the evaluation), so
for every move except castling this module updates the board's fields directly.

The result must be exactly the board python-chess's ``push`` would leave, stacks included:
``Board.pop``, FEN output, repetition tests and copies all read them.  The tests compare every
field after every legal move of many positions.

The undo record on the board's stack is :class:`BoardUndo`, a compiled twin of python-chess's
``_BoardState`` (the same fields and ``restore``): python-chess's own class is interpreted
Python, and building and restoring it was the largest Python-level cost left per node.

The board's undo stack (``Board._stack``) is python-chess's private state: only
:func:`undo_stack` touches it, and importing this module checks that the installed
python-chess is one of :data:`PYTHON_CHESS_SUPPORTED` (``tests/games/test_chess_make.py``
checks the internals themselves).
"""

from __future__ import annotations

from typing import Any, Final

import chess
from chess import BB_RANK_1, BB_RANK_8, BB_SQUARES, KING, PAWN

__all__ = [
    "PYTHON_CHESS_SUPPORTED",
    "BoardUndo",
    "check_python_chess",
    "pop_move",
    "push_null",
    "push_plain",
    "undo_stack",
]

_NULL: Final = chess.Move.null()

PYTHON_CHESS_SUPPORTED: Final = ((1, 11), (1, 12))
"""The python-chess versions whose private ``Board._stack`` and ``_BoardState`` this module
was checked against: from the first (inclusive) to the second (exclusive) minor version, the
range ``pyproject.toml`` pins."""


def check_python_chess(version: str) -> None:
    """Raise ``ImportError`` unless python-chess ``version`` is in the supported range."""
    lowest, beyond = PYTHON_CHESS_SUPPORTED
    try:
        minor = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        minor = ()
    if not lowest <= minor < beyond:
        raise ImportError(
            f"python-chess {version} is not supported: games.chess_game.make writes its "
            f"private Board._stack, checked for {lowest[0]}.{lowest[1]} to below "
            f"{beyond[0]}.{beyond[1]}"
        )


check_python_chess(chess.__version__)


class BoardUndo:
    """python-chess's ``_BoardState``, field for field: what ``Board.pop`` restores.

    ``Board.pop``, ``Board.root``, ``Board.copy`` and the repetition test use only its fields
    and its ``restore``, so python-chess works on a stack holding these records.
    """

    def __init__(self, board: chess.Board) -> None:
        occupied_co = board.occupied_co
        self.pawns: int = board.pawns
        self.knights: int = board.knights
        self.bishops: int = board.bishops
        self.rooks: int = board.rooks
        self.queens: int = board.queens
        self.kings: int = board.kings
        self.occupied_w: int = occupied_co[True]
        self.occupied_b: int = occupied_co[False]
        self.occupied: int = board.occupied
        self.promoted: int = board.promoted
        self.turn: bool = board.turn
        self.castling_rights: int = board.castling_rights
        self.ep_square: int | None = board.ep_square
        self.halfmove_clock: int = board.halfmove_clock
        self.fullmove_number: int = board.fullmove_number

    def restore(self, board: chess.Board) -> None:
        board.pawns = self.pawns
        board.knights = self.knights
        board.bishops = self.bishops
        board.rooks = self.rooks
        board.queens = self.queens
        board.kings = self.kings
        occupied_co = board.occupied_co
        occupied_co[True] = self.occupied_w
        occupied_co[False] = self.occupied_b
        board.occupied = self.occupied
        board.promoted = self.promoted
        board.turn = self.turn
        board.castling_rights = self.castling_rights
        board.ep_square = self.ep_square
        board.halfmove_clock = self.halfmove_clock
        board.fullmove_number = self.fullmove_number


def undo_stack(board: chess.Board) -> list[Any]:
    """python-chess's private undo stack of ``board`` (``Board._stack``), typed to hold
    :class:`BoardUndo` records too: the one place that reads it."""
    return board._stack


def push_null(board: chess.Board) -> None:
    """``board.push(chess.Move.null())``: the turn passes, en passant is forfeit."""
    state = BoardUndo(board)
    stack = undo_stack(board)
    if not stack:
        board.castling_rights = board.clean_castling_rights()
    stack.append(state)
    board.move_stack.append(_NULL)
    board.ep_square = None
    board.halfmove_clock += 1
    us = board.turn
    if not us:
        board.fullmove_number += 1
    board.turn = not us


def pop_move(board: chess.Board) -> None:
    """``board.pop()`` after :func:`push_plain`, :func:`push_null` or ``Board.push``."""
    board.move_stack.pop()
    state = undo_stack(board).pop()
    if isinstance(state, BoardUndo):
        state.restore(board)
    else:
        state.restore(board)  # python-chess's own record, from Board.push (castling)


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
    state = BoardUndo(board)
    stack = undo_stack(board)
    rights = board.castling_rights
    if rights:
        if not stack:
            rights = board.clean_castling_rights()  # python-chess cleans them once, at first
        rights &= ~to_bb & ~from_bb
        if piece_type == KING and not board.promoted & from_bb:
            rights &= ~(BB_RANK_1 if us else BB_RANK_8)
        board.castling_rights = rights
    stack.append(state)
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
