"""Chess moves as the adapter hands them to the search: small ints, one shared object each.

A move is ``from | to << 6 | promotion << 12``: the squares 0-63 and the promotion piece as
python-chess numbers it (0 for none, 2-5 for knight to queen).  That is at most 15 bits and
never 0, since a move's squares differ, and it is also the move's code in the transposition
table (:class:`engine.game.MoveCodec`) and its index in the history tables
(:meth:`engine.native_game.NativeGame.history_index`): encoding is free.

Why ints and not ``chess.Move``: compiled code reads a python-chess move's squares through
the generic attribute lookup, a dictionary probe each.  Those reads were a seventh of the
search's instructions (the move's code, the check test, capture ranking, make and static
exchange); an int's fields are a shift and a mask.  python-chess's moves stay at the edges:
:func:`to_chess` and :func:`from_chess` cross over for notation, the reference board and the
tablebases.

Why shared objects: the search compares moves by identity (``engine.game.InternedMoves``),
one pointer compare where ``==`` would be a call.  Python makes a new object for every int
above 256 it boxes, so the tables here hold one object per move, built once, and the move
generator appends those very objects: they are typed ``Any``, which compiled code passes on
as it found them instead of unboxing and boxing a fresh copy.  Every move the adapter hands
out comes from :func:`shared`, :data:`MOVES` or :func:`promotions`.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import chess

__all__ = [
    "CODE_LIMIT",
    "MOVES",
    "PROMOTION_SHIFT",
    "SQUARE_MASK",
    "TO_SHIFT",
    "SharedMove",
    "encode",
    "from_chess",
    "promotions",
    "shared",
    "to_chess",
]

SharedMove: TypeAlias = Any
"""A move as a shared object: an int from the tables here.  Typed ``Any`` where compiled code
hands a move on (returns it, stores it), because compiled code keeps an ``Any`` value as the
object it is but unboxes an ``int`` and boxes it again as a new object.  Parameters that only
read a move's fields are plain ``int``."""

SQUARE_MASK: Final = 63
"""A move's from-square is ``move & SQUARE_MASK``."""
TO_SHIFT: Final = 6
"""A move's to-square is ``(move >> TO_SHIFT) & SQUARE_MASK``."""
PROMOTION_SHIFT: Final = 12
"""A move's promotion piece (0: none) is ``move >> PROMOTION_SHIFT``.

The three layout constants are ``Final`` literals, so compiled readers elsewhere in the
adapter (make, the check test, static exchange) get them inlined as C constants: one place
says how a move is laid out, at no cost on the hot path."""
CODE_LIMIT: Final = (chess.QUEEN + 1) << PROMOTION_SHIFT
"""Codes run below this: a queen promotion has the largest."""

_SHARED: Final[tuple[SharedMove, ...]] = tuple(range(CODE_LIMIT))
"""``_SHARED[code]``: the one int object of each code (``range`` makes each value once)."""

MOVES: Final[tuple[tuple[SharedMove, ...], ...]] = tuple(
    tuple(_SHARED[frm | to << TO_SHIFT] for to in chess.SQUARES) for frm in chess.SQUARES
)
"""``MOVES[from][to]``: the plain move from ``from`` to ``to``, as its shared object."""

_PROMOTION_PIECES: Final = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
_PROMOTION_MOVES: Final[tuple[tuple[SharedMove, ...], ...]] = tuple(
    tuple(_SHARED[frm | to << TO_SHIFT | piece << PROMOTION_SHIFT] for piece in _PROMOTION_PIECES)
    if chess.square_rank(to) in (0, 7)
    else ()
    for frm in chess.SQUARES
    for to in chess.SQUARES
)
"""``[from * 64 + to]``: the four promotions of a pawn move to a back rank, queen first
(python-chess's order); empty for other squares."""


def encode(frm: int, to: int, promotion: int) -> SharedMove:
    """The move ``frm``-``to`` promoting to ``promotion`` (0: none), as its shared object."""
    return _SHARED[frm | to << TO_SHIFT | promotion << PROMOTION_SHIFT]


def shared(code: int) -> SharedMove:
    """The shared object of ``code``, a number made by :func:`encode` (for instance one
    read back from the transposition table)."""
    return _SHARED[code]


def promotions(frm: int, to: int) -> tuple[SharedMove, ...]:
    """The four promotions of a pawn move, queen first (python-chess's order)."""
    return _PROMOTION_MOVES[frm * 64 + to]


def from_chess(move: chess.Move) -> SharedMove:
    """python-chess's ``move`` as the adapter's move (a drop or null move has none)."""
    if move.drop or not move:
        raise ValueError(f"not a chess board move: {move.uci()}")
    return encode(move.from_square, move.to_square, move.promotion or 0)


def to_chess(move: int) -> chess.Move:
    """The adapter's ``move`` as python-chess's."""
    return chess.Move(
        move & SQUARE_MASK, (move >> TO_SHIFT) & SQUARE_MASK, (move >> PROMOTION_SHIFT) or None
    )
