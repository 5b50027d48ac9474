"""A TCP client's bytes as UCI lines, never holding more than one line's worth.

A socket delivers chunks, not lines, and a client may send a line of any length (or garbage):
the reader must bound what it keeps, report an overlong line once instead of closing the
connection, and let undecodable bytes reach the parser as text it can refuse.
"""

from __future__ import annotations

import asyncio
import enum

READ_CHUNK = 1 << 16
"""Bytes asked of the socket per read (and the stream buffer's lower bound)."""


class InputEvent(enum.Enum):
    """What the reader returns instead of a line; the value is how a close reason names it
    (``eof before authenticating``).

    Deliberately not a ``StrEnum``: events travel in the same stream as the client's lines,
    and a client that sends the line ``eof`` must not compare equal to end of input.
    """

    EOF = "eof"
    TOO_LONG = "too long"


class LineReader:
    """Splits the byte stream into lines, never holding more than one line's worth.

    A line longer than the limit is reported once and skipped up to its newline.  Accepts LF
    and CRLF; undecodable bytes become U+FFFD, so garbage reaches the parser as an unknown
    command instead of breaking the connection.
    """

    def __init__(self, reader: asyncio.StreamReader, max_bytes: int) -> None:
        self._reader = reader
        self._max = max_bytes
        self._buffer = bytearray()
        self._discarding = False
        self._eof = False

    async def readline(self) -> str | InputEvent:
        buffer = self._buffer
        while True:
            end = buffer.find(b"\n")
            if end >= 0:
                raw = bytes(buffer[:end])
                del buffer[: end + 1]
                if self._discarding:
                    self._discarding = False
                    continue
                if len(raw) > self._max:
                    return InputEvent.TOO_LONG
                return raw.decode("utf-8", errors="replace")
            if len(buffer) > self._max:
                buffer.clear()
                if not self._discarding:
                    self._discarding = True
                    return InputEvent.TOO_LONG
            if self._eof:
                if buffer and not self._discarding:
                    raw = bytes(buffer)
                    buffer.clear()
                    return raw.decode("utf-8", errors="replace")
                buffer.clear()
                return InputEvent.EOF
            chunk = await self._reader.read(READ_CHUNK)
            if not chunk:
                self._eof = True
            else:
                buffer += chunk
