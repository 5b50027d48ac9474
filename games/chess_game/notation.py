"""Chess text in and out, for people: moves parsed with the reason a move is refused, an
invalid position's flags named, the board drawn.  Plain Python on python-chess boards; the
adapter's compiled code calls it only when a client sends or asks for text.
"""

from __future__ import annotations

import functools
from typing import Final

import chess

from engine.game import IllegalMoveError

__all__ = ["board_diagram", "describe_status", "parse_uci_move"]

_LAST_RANKS: Final = (0, 7)
_FILES: Final = 8

_STATUS_TEXT: Final = (
    (chess.STATUS_EMPTY, "STATUS_EMPTY", "the board is empty"),
    (chess.STATUS_NO_WHITE_KING, "STATUS_NO_WHITE_KING", "white has no king"),
    (chess.STATUS_NO_BLACK_KING, "STATUS_NO_BLACK_KING", "black has no king"),
    (chess.STATUS_TOO_MANY_KINGS, "STATUS_TOO_MANY_KINGS", "there are more than two kings"),
    (
        chess.STATUS_TOO_MANY_WHITE_PAWNS,
        "STATUS_TOO_MANY_WHITE_PAWNS",
        "white has more than 8 pawns",
    ),
    (
        chess.STATUS_TOO_MANY_BLACK_PAWNS,
        "STATUS_TOO_MANY_BLACK_PAWNS",
        "black has more than 8 pawns",
    ),
    (
        chess.STATUS_PAWNS_ON_BACKRANK,
        "STATUS_PAWNS_ON_BACKRANK",
        "pawns stand on the first or eighth rank",
    ),
    (
        chess.STATUS_TOO_MANY_WHITE_PIECES,
        "STATUS_TOO_MANY_WHITE_PIECES",
        "white has more than 16 pieces",
    ),
    (
        chess.STATUS_TOO_MANY_BLACK_PIECES,
        "STATUS_TOO_MANY_BLACK_PIECES",
        "black has more than 16 pieces",
    ),
    (
        chess.STATUS_BAD_CASTLING_RIGHTS,
        "STATUS_BAD_CASTLING_RIGHTS",
        "a castling right names a king or rook that is not on its castling square",
    ),
    (
        chess.STATUS_INVALID_EP_SQUARE,
        "STATUS_INVALID_EP_SQUARE",
        "the en passant square does not follow a double pawn step",
    ),
    (
        chess.STATUS_OPPOSITE_CHECK,
        "STATUS_OPPOSITE_CHECK",
        "the side that just moved is in check",
    ),
    (
        chess.STATUS_TOO_MANY_CHECKERS,
        "STATUS_TOO_MANY_CHECKERS",
        "more than two pieces give check",
    ),
    (
        chess.STATUS_IMPOSSIBLE_CHECK,
        "STATUS_IMPOSSIBLE_CHECK",
        "no single move could have given this check",
    ),
)


def describe_status(status: chess.Status) -> str:
    """Human-readable reasons for a ``board.status()`` bitmask, naming each flag."""
    reasons = [f"{text} ({name})" for flag, name, text in _STATUS_TEXT if status & flag]
    known = functools.reduce(lambda acc, entry: acc | entry[0], _STATUS_TEXT, 0)
    if status & ~known:
        reasons.append(f"python-chess status flags {int(status & ~known):#x}")
    return "; ".join(reasons)


def parse_uci_move(board: chess.Board, text: str) -> chess.Move:
    """The legal move ``text`` names in ``board`` (UCI long algebraic: ``e2e4``, ``e7e8q``;
    castling as ``e1g1`` or king-takes-rook ``e1h1``).

    Raises IllegalMoveError with one line saying why (and the text as given)."""
    stripped = text.strip()
    if stripped == "0000":
        raise IllegalMoveError(f"the null move cannot be played ({text})")
    try:
        move = chess.Move.from_uci(stripped)
    except ValueError:
        raise IllegalMoveError(f"not a UCI move, expected e.g. e2e4 or e7e8q ({text})") from None
    if move.drop:
        raise IllegalMoveError(f"chess has no drops ({text})")
    try:
        return board.parse_uci(stripped)
    except ValueError:
        raise IllegalMoveError(f"{_why_illegal(board, move)} ({text})") from None


def _why_illegal(board: chess.Board, move: chess.Move) -> str:
    origin = chess.SQUARE_NAMES[move.from_square]
    piece = board.piece_at(move.from_square)
    to_move = chess.COLOR_NAMES[board.turn]
    if piece is None:
        return f"illegal move: no piece on {origin}"
    name = chess.piece_name(piece.piece_type)
    if piece.color != board.turn:
        return f"illegal move: the {name} on {origin} is not {to_move}'s"
    last_rank = chess.square_rank(move.to_square) in _LAST_RANKS
    if (
        piece.piece_type == chess.PAWN
        and last_rank
        and not move.promotion
        and any(
            m.from_square == move.from_square and m.to_square == move.to_square
            for m in board.generate_legal_moves()
        )
    ):
        return "illegal move: a pawn reaching the last rank must name its promotion piece"
    if move.promotion and not (piece.piece_type == chess.PAWN and last_rank):
        return "illegal move: only a pawn reaching the last rank promotes"
    reason = f"illegal move: the {name} on {origin} cannot go to "
    reason += chess.SQUARE_NAMES[move.to_square]
    if board.is_check():
        reason += f" ({to_move} is in check)"
    return reason


def board_diagram(board: chess.Board, fen: str, key: int) -> str:
    """The board from white's side (rank 8 on top), then ``fen``, ``key`` (hexadecimal) and
    the checkers, as Stockfish's ``d`` command prints them."""
    separator = " +---+---+---+---+---+---+---+---+"
    lines = [separator]
    for rank in range(_FILES - 1, -1, -1):
        cells = []
        for file in range(_FILES):
            piece = board.piece_at(chess.square(file, rank))
            cells.append(piece.symbol() if piece else " ")
        lines.append(" | " + " | ".join(cells) + f" | {rank + 1}")
        lines.append(separator)
    lines.append("   a   b   c   d   e   f   g   h")
    lines.append("")
    lines.append(f"Fen: {fen}")
    lines.append(f"Key: {key:016X}")
    checkers = " ".join(chess.SQUARE_NAMES[sq] for sq in board.checkers())
    lines.append(f"Checkers: {checkers}".rstrip())
    return "\n".join(lines)
