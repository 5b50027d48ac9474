"""A TCP session's output, bounded: what a client that reads slowly (or never) may cost us.

UCI output is mostly search ``info`` lines that a slow reader can do without, and a few lines
it must never lose (``bestmove``, ``readyok``, replies).  So the sink drops ``info`` first and
never the rest, and tells the connection to stop reading input while it is full, so the
client's further commands wait in its own socket instead of in our memory.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable


class TcpSink:
    """A session's output, bounded: written straight to the socket while the client keeps up,
    queued (and drained by :meth:`run`) while it does not.

    ``buffered`` counts our queue plus the transport's own buffer.  Above the high-water mark
    ``droppable`` lines are refused and queued ones are purged when a line that must be
    delivered arrives; the connection stops reading input until the sink is :meth:`writable`
    again (``on_progress`` says when to look).
    """

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        *,
        high_water: int,
        write_timeout_s: float,
        on_lost: Callable[[str], None],
        on_progress: Callable[[], None] | None = None,
    ) -> None:
        self._writer = writer
        self._transport = writer.transport
        self._high = high_water
        self._transport.set_write_buffer_limits(high=high_water)
        self._write_timeout = write_timeout_s
        self._on_lost = on_lost
        self._on_progress = on_progress or (lambda: None)
        self._queue: deque[tuple[bytes, bool]] = deque()
        self._queued = 0
        self._wakeup = asyncio.Event()
        self._closing = False
        self.lost: str | None = None
        """Why output can no longer be delivered (``None`` while the connection is fine)."""
        self.lines = 0
        self.dropped = 0
        self.peak = 0
        """The most bytes ever buffered (our queue plus the transport's): the bound, observed."""

    @property
    def buffered(self) -> int:
        return self._queued + self._transport.get_write_buffer_size()

    def send(self, line: str, *, droppable: bool = False) -> None:
        if self.lost is not None or self._closing:
            return
        data = (line + "\n").encode("utf-8", errors="replace")
        if self.buffered + len(data) > self._high:
            if droppable:
                self.dropped += 1
                return
            self._purge_droppable()
        if not self._queue and self._transport.get_write_buffer_size() <= self._high:
            # The client keeps up: straight to the socket, no task switch.
            if self._transport.is_closing():
                self._lose("connection closed")
                return
            self._transport.write(data)
            self.lines += 1
            if self._transport.get_write_buffer_size() > self._high:
                self._wakeup.set()  # the writer waits for the client to catch up
        else:
            self._queue.append((data, droppable))
            self._queued += len(data)
            self._wakeup.set()
        self.peak = max(self.peak, self.buffered)

    def _purge_droppable(self) -> None:
        kept = deque(item for item in self._queue if not item[1])
        self.dropped += len(self._queue) - len(kept)
        self._queue = kept
        self._queued = sum(len(data) for data, _ in kept)

    def writable(self) -> bool:
        return self.lost is not None or self.buffered <= self._high

    def probe(self) -> None:
        """Write an empty line to learn whether the client is still there.

        A client that closed its socket entirely answers data with a reset, which the next
        write reports; until then a half-closed client and a gone one look alike.  UCI
        clients skip empty lines (``perft`` prints one itself).
        """
        self.send("")
        if self.lost is None and self._transport.is_closing():
            self._lose("connection closed")

    async def run(self) -> None:
        """Drain what the client has not taken yet, until closed; never raises for I/O."""
        writer = self._writer
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                while True:
                    if self._queue:
                        writer.write(b"".join(data for data, _ in self._queue))
                        self.lines += len(self._queue)
                        self._queue.clear()
                        self._queued = 0
                    if self._transport.get_write_buffer_size() <= self._high:
                        break
                    try:
                        await asyncio.wait_for(writer.drain(), self._write_timeout)
                    except TimeoutError:
                        self._lose(f"client read nothing for {self._write_timeout:g} s")
                        return
                    self._on_progress()
                self._on_progress()
                if self._closing:
                    return
        except (ConnectionError, OSError) as exc:
            self._lose(f"write failed: {exc.__class__.__name__}")

    def _lose(self, why: str) -> None:
        if self.lost is None:
            self.lost = why
            self._queue.clear()
            self._queued = 0
            self._on_lost(why)
            self._on_progress()

    def close(self) -> None:
        """No more lines: :meth:`run` flushes what is queued and returns."""
        self._closing = True
        self._wakeup.set()
