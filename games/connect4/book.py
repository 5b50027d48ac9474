"""Connect Four's opening book: the exact score of every position up to a ply depth, looked up
by key.

**Contents.**  Every position a game reaches from the book's root (the empty board for the
shipped book) with at most :attr:`Connect4Book.depth` stones, finished games excluded, and its
exact score in the solver's convention (:mod:`games.connect4.solver`).  A position and its
mirror image (columns reversed) have the same score and share one entry, under the smaller of
their two keys (:func:`book_key`).

**File.**  Little-endian: a 24-byte header (:data:`MAGIC`, the format version, the depth, the
entry count, the CRC-32 of the payload), then the payload: the keys as sorted unsigned 64-bit
words, then the scores as signed bytes in the same order.  Loading reads both arrays whole,
without a Python object per entry; a lookup is a binary search.  Built by
``scripts/build_connect4_book.py``; the format and how to rebuild: docs/playing.md,
*Connect Four's opening book*.
"""

from __future__ import annotations

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
    "Connect4Book",
    "book_key",
    "mirror",
]

MAGIC: Final = b"BRC4BOOK"
VERSION: Final = 1
_HEADER: Final = struct.Struct("<8sHHII4x")
"""Magic, version, depth, entry count, CRC-32 of the payload, padding to 24 bytes."""

SHIPPED_BOOK: Final = Path(__file__).resolve().parent.parent / "data" / "connect4_book.bin"

_COLUMN_BITS: Final = HEIGHT + 1
_COLUMN_MASK: Final = (1 << _COLUMN_BITS) - 1


class BookFormatError(ValueError):
    """A book file that is not one: wrong magic or version, truncated, or a bad checksum."""


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
    """Sorted keys and their scores; immutable once built.

    :meth:`score` answers for a position in the book, :meth:`move_scores` for a position all
    of whose children are known (in the book, or finished by the drop), which is where the
    book can choose a move by itself.
    """

    __slots__ = ("_keys", "_scores", "depth")

    def __init__(self, depth: int, keys: array[int], scores: array[int]) -> None:
        """``keys`` sorted ascending without repeats (typecode ``Q``; not checked, so that a
        large book loads without a pass over its entries), ``scores`` the exact score of each
        (typecode ``b``); ValueError for the wrong typecodes or lengths."""
        if keys.typecode != "Q" or scores.typecode != "b" or len(keys) != len(scores):
            raise ValueError("a book needs keys (array 'Q') and as many scores (array 'b')")
        self.depth = depth
        """The deepest ply (stone count) in the book."""
        self._keys = keys
        self._scores = scores

    def __len__(self) -> int:
        return len(self._keys)

    def items(self) -> list[tuple[int, int]]:
        """Every (key, score) pair, in key order."""
        return list(zip(self._keys, self._scores, strict=True))

    def score(self, position: Connect4) -> int | None:
        """The exact score of ``position`` (side to move's view), None when not in the book."""
        return self.score_of(position.current, position.mask)

    def score_of(self, current: int, mask: int) -> int | None:
        """:meth:`score` for a position given as bitboards."""
        if mask.bit_count() > self.depth:
            return None
        key = book_key(current, mask)
        keys = self._keys
        index = bisect_left(keys, key)
        if index < len(keys) and keys[index] == key:
            return int(self._scores[index])
        return None

    def move_scores(self, position: Connect4) -> dict[int, int] | None:
        """Every legal drop's score from the mover's view (column 0..6 → score), or None when
        some child is neither finished by the drop nor in the book."""
        if position.is_terminal():
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

    # -- the file ----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        keys = array("Q", self._keys)
        if sys.byteorder == "big":
            keys.byteswap()
        payload = keys.tobytes() + self._scores.tobytes()
        header = _HEADER.pack(MAGIC, VERSION, self.depth, len(self), zlib.crc32(payload))
        return header + payload

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str = "book") -> Connect4Book:
        """Parse a book file's contents; BookFormatError (naming ``source``) when it is not
        one."""
        if len(data) < _HEADER.size:
            raise BookFormatError(f"{source}: too short for a Connect Four book header")
        magic, version, depth, count, crc = _HEADER.unpack_from(data)
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
        keys = array("Q")
        keys.frombytes(payload[: count * 8])
        if sys.byteorder == "big":
            keys.byteswap()
        scores = array("b")
        scores.frombytes(payload[count * 8 :])
        return cls(depth, keys, scores)

    @classmethod
    def load(cls, path: Path = SHIPPED_BOOK) -> Connect4Book:
        """Read a book file (the shipped one by default)."""
        return cls.from_bytes(path.read_bytes(), source=str(path))
