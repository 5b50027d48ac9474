"""Polyglot opening books: open one, check it, and draw a move from it by weight.

python-chess reads the format (:mod:`chess.polyglot`); this module adds what an engine needs
around it:

* :meth:`OpeningBook.open` checks a file before it is used: a regular file, a whole number of
  16-byte entries, at least one, keys in ascending order (the reader's binary search depends on
  it, and random bytes fail it at once).  Anything else is a :class:`BookError` naming the file
  as the caller wants it named.
* :meth:`OpeningBook.choose` draws one of the position's book moves with probability
  proportional to its weight.  The draw is seeded by the position's Polyglot key and a
  ``seed``, so the same position with the same seed gets the same move every time, in every
  process (a match is reproducible); another seed gives another draw.  Entries of weight 0
  are never played (Polyglot's way of deleting a move), and moves that are not legal in the
  position are skipped, so a book made for other positions cannot make the engine play an
  illegal move.

Books hold standard-chess positions: only the ``chess`` variant (:data:`BOOK_VARIANT`) uses
them.  Castling is stored as king-takes-rook (``e1h1``); python-chess turns it back into the
board's own notation.
"""

from __future__ import annotations

import os
import random
import stat
import sys
from array import array
from pathlib import Path
from typing import Any, Final

import chess
import chess.polyglot

from engine.game import Game, IllegalMoveError
from games.chess_game.adapter import ChessGame
from games.variant import BookMove, GameFileError

__all__ = ["BOOK_VARIANT", "ENTRY_BYTES", "BookError", "BookMove", "OpeningBook"]

BOOK_VARIANT: Final = "chess"
"""The one ``UCI_Variant`` whose positions Polyglot books describe."""

ENTRY_BYTES: Final = 16
"""One Polyglot entry: key u64, move u16, weight u16, learn u32, big-endian."""

_CHECK_CHUNK_ENTRIES = 1 << 16
"""Entries read at once while checking the key order (1 MiB): bounded memory for any book."""


class BookError(GameFileError):
    """A file that cannot be used as a Polyglot book; the message names it and says why."""


class OpeningBook:
    """An open Polyglot book (memory-mapped by python-chess); :meth:`close` releases it."""

    __slots__ = ("_reader", "entries", "name")

    def __init__(self, reader: chess.polyglot.MemoryMappedReader, name: str) -> None:
        self._reader = reader
        self.name = name
        """How messages name the file (as the client gave it)."""
        self.entries = len(reader)

    @classmethod
    def open(cls, path: Path, *, shown_as: str | None = None) -> OpeningBook:
        """Check ``path`` and open it.  Raises :class:`BookError` (naming the file
        ``shown_as``, default ``path``) when it is missing, unreadable, not a regular file,
        empty, not a whole number of entries, or its keys are out of order."""
        name = str(path) if shown_as is None else shown_as
        _check(path, name)
        try:
            reader = chess.polyglot.open_reader(path)
        except OSError as exc:  # replaced or removed since the check
            raise BookError(f"cannot read {name}: {exc.strerror or exc}") from None
        return cls(reader, name)

    def close(self) -> None:
        self._reader.close()

    def summary(self) -> str:
        """One line for the client confirming what is now in use."""
        noun = "entry" if self.entries == 1 else "entries"
        return f"BookFile: {self.entries} {noun} from {self.name}"

    def choose(self, game: Game[Any], seed: int = 0) -> BookMove | None:
        """A book move for ``game``'s position, drawn by weight, or ``None`` when the book has
        no playable move there (or the game is not chess).

        The draw uses a :class:`random.Random` seeded with the position's Polyglot key and
        ``seed`` (a non-negative integer): deterministic, independent of what was drawn before.
        Each candidate is checked once more against the game's own move parser, so the move
        returned is one the game accepts as legal.
        """
        if not isinstance(game, ChessGame):
            return None
        board = game.board
        candidates: list[tuple[str, int]] = []
        for entry in self._reader.find_all(board, minimum_weight=1):
            text = board.uci(entry.move, chess960=game.chess960)
            try:
                game.parse_move(text)
            except IllegalMoveError:
                continue
            candidates.append((text, entry.weight))
        if not candidates:
            return None
        total = sum(weight for _, weight in candidates)
        key = chess.polyglot.zobrist_hash(board)
        point = random.Random((seed << 64) | key).randrange(total)
        for text, weight in candidates:
            if point < weight:
                return BookMove(text, weight, total, len(candidates))
            point -= weight
        raise AssertionError("the draw fell outside the weights")  # pragma: no cover


def _check(path: Path, name: str) -> None:
    """Refuse (without blocking on a FIFO, and reading at most a chunk at a time) anything
    that is not a plausible Polyglot book."""

    def nonblocking(file: str, flags: int) -> int:
        return os.open(file, flags | getattr(os, "O_NONBLOCK", 0))

    try:
        with open(path, "rb", opener=nonblocking) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise BookError(f"{name} is not a regular file")
            if info.st_size == 0:
                raise BookError(f"{name} is empty: not a Polyglot book")
            if info.st_size % ENTRY_BYTES:
                raise BookError(
                    f"{name} is not a Polyglot book: {info.st_size} bytes is not a whole "
                    f"number of {ENTRY_BYTES}-byte entries"
                )
            previous = 0
            index = 0
            while chunk := handle.read(_CHECK_CHUNK_ENTRIES * ENTRY_BYTES):
                if len(chunk) % ENTRY_BYTES:
                    raise BookError(f"cannot read {name}: it changed while being read")
                words = array("Q", chunk)
                if sys.byteorder == "little":  # Polyglot is big-endian
                    words.byteswap()
                keys = words[::2]
                if keys[0] < previous or keys.tolist() != sorted(keys):
                    raise BookError(
                        f"{name} is not a Polyglot book: its keys are not in ascending "
                        f"order (near entry {index + _first_descent(keys, previous)})"
                    )
                previous = keys[-1]
                index += len(keys)
    except OSError as exc:
        raise BookError(f"cannot read {name}: {exc.strerror or exc}") from None


def _first_descent(keys: array[int], previous: int) -> int:
    """Index of the first key smaller than the one before it (``previous`` before the first)."""
    before = previous
    for i, key in enumerate(keys):
        if key < before:
            return i
        before = key
    return 0
