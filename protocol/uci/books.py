"""The ``BookFile`` option's opening book: opened through the variant's book capability.

The file is checked when it is set (on a worker thread: a large book takes a moment), not at
the next ``go``: a bad file is reported against the ``setoption`` that named it, and the old
book stays.  Which files may be read is the transport's policy
(:class:`~protocol.uci.options.EvalFileAccess`, with :data:`~protocol.uci.options.BOOK_FILES`
wording).  A book belongs to the variant it was opened for and answers only for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from engine.game import Game
from games.variant import BookMove, GameFileError, OpenBook, Variant
from protocol.errors import OptionError
from protocol.uci.options import BOOK_FILES, EvalFileAccess

__all__ = ["SessionBook"]


class SessionBook:
    """The book one session has open (``BookFile``), if any."""

    def __init__(self, access: EvalFileAccess, book_games: Sequence[str]) -> None:
        self._access = access
        self._games = ", ".join(book_games)
        """The games that have books (named when another refuses one)."""
        self._book: OpenBook | None = None
        self._variant = ""
        """The variant the open book was opened for."""

    def refusal(self, option: str, variant: Variant) -> str:
        """Why ``option`` (``OwnBook``, ``BookFile``) does not apply under ``variant``."""
        return f"{option}: opening books are for {self._games} only (UCI_Variant is {variant.name})"

    def note(self, variant: Variant) -> str:
        """What to say when ``OwnBook`` is on and the variant becomes one without books."""
        return (
            f"OwnBook: no book moves while UCI_Variant is {variant.name} "
            f"(opening books are for {self._games} only)"
        )

    async def open(self, value: str, variant: Variant) -> str:
        """Open the book ``value`` names for ``variant`` and close the old one; returns the
        book's summary line.  Raises :class:`OptionError` (the old book stays) when the
        variant has no books, the policy refuses the file, or the file is not a book."""
        opener = variant.open_book
        if opener is None:
            raise OptionError(self.refusal("BookFile", variant), option="BookFile")
        path, shown_as = self._access.locate(value, BOOK_FILES)
        try:
            book = await asyncio.to_thread(opener, path, shown_as=shown_as)
        except GameFileError as exc:
            raise OptionError(f"BookFile: {exc}", option="BookFile", value=value) from None
        self.close()
        self._book, self._variant = book, variant.name
        return book.summary()

    def close(self) -> None:
        """Close the open book, if any (``BookFile`` empty, or the session ends)."""
        old, self._book = self._book, None
        if old is not None:
            old.close()

    def is_open_for(self, variant: Variant) -> bool:
        return self._book is not None and self._variant == variant.name

    def choose(self, game: Game[Any], seed: int) -> BookMove | None:
        """The open book's move for ``game`` (see :meth:`OpenBook.choose`)."""
        if self._book is None:
            return None
        return self._book.choose(game, seed)
