"""Zobrist keys for chess: Polyglot's random numbers, extended for Chess960 castling rights.

Why Polyglot's numbers: a key computed here for a standard-chess position *is* the Polyglot
opening-book key (``chess.polyglot.zobrist_hash``), so books, logs and other tools agree with
the engine, and the numbers are fixed forever, which makes node counts reproducible across
processes and machines.

Polyglot knows castling rights only for rooks in the corners.  A Chess960 right for a rook on
another back-rank square gets its own number from a fixed SplitMix64 stream, so two Chess960
positions that differ only in such a right still get different keys; standard positions never
touch those numbers and keep their Polyglot value.

The en passant file enters the key, as in Polyglot, only when a pawn of the side to move stands
beside the pawn that just made the double step (pseudo-legal capture possible).  The rare
position where that capture exists only pseudo-legally (the capturing pawn is pinned) therefore
keys differently from its twin without the en passant square; a repetition through such a
position is missed, never invented.

The adapter keeps the key up to date move by move; :func:`zobrist_key` computes it from
scratch and is the reference the incremental update is tested against.  The adapter holds the
key as the ``i64`` with the same 64 bits (:func:`~games.chess_game.bitboard64.signed`), updated
from the native tables here (:data:`PIECE_KEYS64` and its companions): a Python ``int`` of 64
bits is a heap object, and each XOR on one allocated a new object (3% of the search's
instructions), where a native word's XOR is one instruction.
"""

from __future__ import annotations

from typing import Final

import chess
from chess.polyglot import POLYGLOT_RANDOM_ARRAY
from mypy_extensions import i64

from games.chess_game.bitboard64 import SQUARE, msb, signed, signed_table, unsigned

__all__ = [
    "CASTLING_KEYS",
    "EP_KEYS",
    "PIECE_KEYS",
    "PIECE_KEYS64",
    "TURN_KEY",
    "TURN_KEY64",
    "WHITE_KEYS",
    "castling_key",
    "castling_key64",
    "ep_key",
    "ep_key_after_double_step",
    "zobrist_key",
]

_MASK64: Final = (1 << 64) - 1


def _splitmix64(seed: int, count: int) -> list[int]:
    """``count`` 64-bit numbers of the SplitMix64 sequence from ``seed`` (pure arithmetic, so
    the same on every platform and Python version)."""
    out = []
    state = seed & _MASK64
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        out.append(z ^ (z >> 31))
    return out


def _piece_keys() -> tuple[tuple[tuple[int, ...], ...], ...]:
    # Polyglot's piece index is 2 * (piece_type - 1) + colour (black 0, white 1).
    table = []
    for color in (chess.BLACK, chess.WHITE):
        per_type: list[tuple[int, ...]] = [(0,) * 64]  # no piece type 0: index by type
        for piece_type in chess.PIECE_TYPES:
            base = 64 * (2 * (piece_type - 1) + int(color))
            per_type.append(tuple(POLYGLOT_RANDOM_ARRAY[base : base + 64]))
        table.append(tuple(per_type))
    return tuple(table)


PIECE_KEYS: Final = _piece_keys()
"""``PIECE_KEYS[color][piece_type][square]``; colour indexes as python-chess's bool (black 0)."""

PIECE_KEYS64: Final = signed_table(
    [
        PIECE_KEYS[color][piece_type][square]
        for color in (0, 1)
        for piece_type in range(7)
        for square in range(64)
    ]
)
""":data:`PIECE_KEYS` as one native table of signed words, indexed
``(color * 7 + piece_type) * 64 + square`` (:data:`WHITE_KEYS` is white's offset)."""

WHITE_KEYS: Final = 7 * 64
"""Where white's part of :data:`PIECE_KEYS64` starts (black's starts at 0)."""


def _castling_keys() -> tuple[int, ...]:
    keys = [0] * 64
    extra = iter(_splitmix64(0xB4D0_C4E5_5960, 16))
    for square in (*chess.SquareSet(chess.BB_RANK_1), *chess.SquareSet(chess.BB_RANK_8)):
        keys[square] = next(extra)
    for offset, square in enumerate((chess.H1, chess.A1, chess.H8, chess.A8)):
        keys[square] = POLYGLOT_RANDOM_ARRAY[768 + offset]
    return tuple(keys)


CASTLING_KEYS: Final = _castling_keys()
"""One number per rook square that may carry a castling right (the back ranks)."""

EP_KEYS: Final = tuple(POLYGLOT_RANDOM_ARRAY[772 : 772 + 8])
"""By file of the en passant square."""

TURN_KEY: Final[int] = POLYGLOT_RANDOM_ARRAY[780]
"""Present when white is to move (Polyglot's convention)."""

TURN_KEY64: Final[i64] = signed(TURN_KEY)
""":data:`TURN_KEY` as a native signed word."""

_CASTLING64: Final = signed_table(CASTLING_KEYS)
_EP64: Final = signed_table(EP_KEYS)

_NOT_FILE_A: Final = chess.BB_ALL & ~chess.BB_FILE_A
_NOT_FILE_H: Final = chess.BB_ALL & ~chess.BB_FILE_H

_BESIDE: Final = signed_table(
    [((bb << 1) & _NOT_FILE_A) | ((bb >> 1) & _NOT_FILE_H) for bb in chess.BB_SQUARES]
)
"""The squares left and right of a square on the same rank (as native words)."""


def castling_key(rights: chess.Bitboard) -> int:
    """Key contribution of a set of castling rook squares (as ``clean_castling_rights()``)."""
    return unsigned(castling_key64(signed(rights)))


def castling_key64(rights: i64) -> i64:
    """:func:`castling_key` of ``rights`` (as a native word), as a native signed word."""
    key: i64 = 0
    # Each square's bit taken out by XOR with its table entry, not by ``rights & (rights -
    # 1)``: in pure Python a rook on h8 makes ``rights`` negative, and that would never
    # reach 0.
    while rights:
        square = msb(rights)
        key ^= _CASTLING64[square]
        rights ^= SQUARE[square]
    return key


def ep_key_after_double_step(capturers: i64, pawn_square: i64) -> i64:
    """Key contribution of the en passant file after a double step to ``pawn_square``, where
    ``capturers`` are the pawns of the side to move next (as a native word), as a native
    signed word."""
    if capturers & _BESIDE[pawn_square]:
        return _EP64[pawn_square & 7]
    return 0


def ep_key(board: chess.Board) -> int:
    """Key contribution of ``board.ep_square`` under the Polyglot rule."""
    ep = board.ep_square
    if ep is None:
        return 0
    pawn_square = ep - 8 if board.turn == chess.WHITE else ep + 8
    capturers = signed(board.pawns & board.occupied_co[board.turn])
    return unsigned(ep_key_after_double_step(capturers, pawn_square))


def zobrist_key(board: chess.Board) -> int:
    """The key of ``board`` computed from scratch (slow; the adapter updates it per move)."""
    key = 0
    for color in chess.COLORS:
        color_keys = PIECE_KEYS[color]
        occupied = board.occupied_co[color]
        for piece_type in chess.PIECE_TYPES:
            keys = color_keys[piece_type]
            for square in chess.scan_forward(board.pieces_mask(piece_type, color) & occupied):
                key ^= keys[square]
    key ^= castling_key(board.clean_castling_rights())
    key ^= ep_key(board)
    if board.turn == chess.WHITE:
        key ^= TURN_KEY
    return key
