"""Connect Four's books: positions looked up by key, with their exact score or their outcome.

**Kinds** (:class:`BookKind`).  An *exact* book holds every position a game reaches from the
book's root with at most :attr:`Connect4Book.depth` stones, finished games excluded, each
with its exact score in the solver's convention (:mod:`games.connect4.solver`).  An *outcome*
book holds only the sign of the score (1 win, 0 draw, -1 loss for the side to move) of the
positions of a strategy (:mod:`games.connect4.strategy`): each position where the player of
the strategy is to move, and the one child the strategy plays there, whose outcome for the
opponent is the position's negated.  A position and its mirror image (columns reversed) share
one entry, under the smaller of their two keys (:func:`book_key`).

**File.**  Little-endian: a 24-byte header (:data:`MAGIC`, the format version, the depth, the
entry count, the CRC-32 of the payload, the kind), then the payload: the keys as sorted
unsigned 64-bit words, then the values as signed bytes in the same order.  Loading reads both
arrays whole, without a Python object per entry; a lookup is a binary search.  Built by
``scripts/build_connect4_book.py`` (exact) and ``scripts/build_connect4_strategy.py`` (the
shipped outcome book); the formats and how to rebuild: docs/playing.md, *Connect Four's
opening book*.
"""

from __future__ import annotations

import enum
import struct
import sys
import zlib
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import Final

from games.connect4.board import (
    BOARD,
    COLUMN_ORDER,
    HEIGHT,
    WIDTH,
    Connect4,
    drops,
    has_four,
)
from games.connect4.solver import win_score

__all__ = [
    "MAGIC",
    "SHIPPED_BOOK",
    "BookFormatError",
    "BookKind",
    "Connect4Book",
    "book_key",
    "mirror",
]

MAGIC: Final = b"BRC4BOOK"
VERSION: Final = 2
_HEADER: Final = struct.Struct("<8sHHIIB3x")
"""Magic, version, depth, entry count, CRC-32 of the payload, kind, padding to 24 bytes."""

SHIPPED_BOOK: Final = Path(__file__).resolve().parent.parent / "data" / "connect4_book.bin"

_COLUMN_BITS: Final = HEIGHT + 1
_COLUMN_MASK: Final = (1 << _COLUMN_BITS) - 1


class BookKind(enum.IntEnum):
    """What a book's values are (the byte in its header)."""

    EXACT = 0
    """The exact score of every position up to the book's depth."""
    OUTCOME = 1
    """The outcome (1, 0, -1) of a strategy's positions only."""


class BookFormatError(ValueError):
    """A book file that is not one: wrong magic, version or kind, truncated, or a bad
    checksum."""


def mirror(bits: int) -> int:
    """A bitboard (or a key) with its columns in reverse order.  A key's columns never carry
    into each other (each column's part is below ``1 << 7``), so ``mirror(key)`` is the key of
    the mirrored position."""
    out = 0
    for col in range(WIDTH):
        out |= ((bits >> (col * _COLUMN_BITS)) & _COLUMN_MASK) << ((WIDTH - 1 - col) * _COLUMN_BITS)
    return out


def book_key(current: int, mask: int) -> int:
    """The entry's key: the smaller of the position's key (``current + mask``, Pons' key) and
    its mirror image's."""
    key = current + mask
    return min(key, mirror(key))


class Connect4Book:
    """Sorted keys and their values (:class:`BookKind`); immutable once built.

    :meth:`score` answers for a position of an exact book, :meth:`move_scores` for a position
    all of whose children an exact book knows (where it chooses a move by itself),
    :meth:`outcome` for a position of either kind, and :meth:`strategy_moves` for a position
    where a book of either kind knows children that keep the position's outcome.
    """

    __slots__ = ("_keys", "_values", "depth", "kind")

    def __init__(
        self,
        depth: int,
        keys: array[int],
        values: array[int],
        kind: BookKind = BookKind.EXACT,
    ) -> None:
        """``keys`` sorted ascending without repeats (typecode ``Q``; not checked, so that a
        large book loads without a pass over its entries), ``values`` the exact score (or, in
        an outcome book, the outcome) of each (typecode ``b``); ValueError for the wrong
        typecodes or lengths."""
        if keys.typecode != "Q" or values.typecode != "b" or len(keys) != len(values):
            raise ValueError("a book needs keys (array 'Q') and as many values (array 'b')")
        self.depth = depth
        """The deepest ply (stone count) in the book."""
        self.kind = kind
        self._keys = keys
        self._values = values

    def __len__(self) -> int:
        return len(self._keys)

    def items(self) -> list[tuple[int, int]]:
        """Every (key, value) pair, in key order."""
        return list(zip(self._keys, self._values, strict=True))

    def _value_of(self, current: int, mask: int) -> int | None:
        if mask.bit_count() > self.depth:
            return None
        key = book_key(current, mask)
        keys = self._keys
        index = bisect_left(keys, key)
        if index < len(keys) and keys[index] == key:
            return int(self._values[index])
        return None

    def score(self, position: Connect4) -> int | None:
        """The exact score of ``position`` (side to move's view), None when not in the book
        or the book is an outcome book."""
        return self.score_of(position.current, position.mask)

    def score_of(self, current: int, mask: int) -> int | None:
        """:meth:`score` for a position given as bitboards."""
        if self.kind is not BookKind.EXACT:
            return None
        return self._value_of(current, mask)

    def outcome(self, position: Connect4) -> int | None:
        """1, 0 or -1: the side to move wins, draws or loses; None when not in the book."""
        value = self._value_of(position.current, position.mask)
        return None if value is None else (value > 0) - (value < 0)

    def move_scores(self, position: Connect4) -> dict[int, int] | None:
        """Every legal drop's score from the mover's view (column 0..6 → score), or None when
        some child is neither finished by the drop nor in the book, or the book is an
        outcome book."""
        if position.is_terminal() or self.kind is not BookKind.EXACT:
            return None
        current, mask = position.current, position.mask
        stones = mask.bit_count()
        scores: dict[int, int] = {}
        for col, mover, child_mask in drops(current, mask):
            if has_four(mover):
                scores[col] = win_score(stones)
                continue
            if child_mask == BOARD:
                scores[col] = 0
                continue
            child = self.score_of(mover ^ child_mask, child_mask)
            if child is None:
                return None
            scores[col] = -child
        return scores

    def best_moves(self, position: Connect4) -> tuple[int, ...] | None:
        """The columns (centre first) that keep the position's score, or None when the book
        does not know every child (:meth:`move_scores`)."""
        scores = self.move_scores(position)
        if scores is None:
            return None
        best = max(scores.values())
        return tuple(col for col in COLUMN_ORDER if scores.get(col) == best)

    def strategy_moves(self, position: Connect4) -> tuple[int, ...]:
        """The columns (centre first) that the book shows keep the position's outcome: a drop
        that wins at once, or one to a child the book holds with the negated outcome.  Empty
        when the book does not hold the position itself, or holds none of those children
        (the position is not the book's to answer)."""
        own = self.outcome(position)
        if own is None or position.is_terminal():
            return ()
        current, mask = position.current, position.mask
        keep: list[int] = []
        for col, mover, child_mask in drops(current, mask):
            if has_four(mover):
                keep.append(col)
                continue
            if child_mask == BOARD:
                if own == 0:
                    keep.append(col)
                continue
            child = self._value_of(mover ^ child_mask, child_mask)
            if child is not None and (child > 0) - (child < 0) == -own:
                keep.append(col)
        return tuple(col for col in COLUMN_ORDER if col in keep)

    # -- the file ----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        keys = array("Q", self._keys)
        if sys.byteorder == "big":
            keys.byteswap()
        payload = keys.tobytes() + self._values.tobytes()
        crc = zlib.crc32(payload)
        header = _HEADER.pack(MAGIC, VERSION, self.depth, len(self), crc, self.kind)
        return header + payload

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str = "book") -> Connect4Book:
        """Parse a book file's contents; BookFormatError (naming ``source``) when it is not
        one."""
        if len(data) < _HEADER.size:
            raise BookFormatError(f"{source}: too short for a Connect Four book header")
        magic, version, depth, count, crc, kind = _HEADER.unpack_from(data)
        if magic != MAGIC:
            raise BookFormatError(f"{source}: not a Connect Four book (magic {magic!r})")
        if version != VERSION:
            raise BookFormatError(f"{source}: book format version {version}, expected {VERSION}")
        payload = memoryview(data)[_HEADER.size :]
        if len(payload) != count * 9:
            raise BookFormatError(
                f"{source}: {len(payload)} payload bytes, expected {count * 9} for {count} entries"
            )
        if zlib.crc32(payload) != crc:
            raise BookFormatError(f"{source}: checksum mismatch (a damaged book)")
        if kind not in {member.value for member in BookKind}:
            raise BookFormatError(f"{source}: unknown book kind {kind}")
        keys = array("Q")
        keys.frombytes(payload[: count * 8])
        if sys.byteorder == "big":
            keys.byteswap()
        values = array("b")
        values.frombytes(payload[count * 8 :])
        return cls(depth, keys, values, BookKind(kind))

    @classmethod
    def load(cls, path: Path = SHIPPED_BOOK) -> Connect4Book:
        """Read a book file (the shipped one by default)."""
        return cls.from_bytes(path.read_bytes(), source=str(path))
