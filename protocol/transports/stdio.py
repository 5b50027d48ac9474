"""UCI over standard input/output: how GUIs and match tools run an engine.

Only moves lines: stdin → session, session → stdout.  stdin is read on a daemon thread (a
blocking read works for pipes, files and terminals alike, which asyncio's pipe support does
not) and handed to the event loop with at most a few dozen lines in flight, so a flood of
input waits in the pipe, not in our memory.  Every output line is flushed at once: a GUI
waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from typing import TextIO

from protocol.uci.session import MAX_LINE_LENGTH, EngineSession

log = logging.getLogger(__name__)

_EOF = None
INPUT_QUEUE_LINES = 64
READ_CHUNK = 1 << 16


class StdoutSink:
    """Writes each line and flushes; a closed stdout ends output quietly (the GUI is gone)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def send(self, line: str, *, droppable: bool = False) -> None:
        if self.broken:
            return
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.broken = True
            log.info("stdout closed; discarding further output")


def _read_lines(
    fd: int,
    loop: asyncio.AbstractEventLoop,
    queue: asyncio.Queue[str | None],
    slots: threading.Semaphore,
    *,
    max_line_bytes: int = 4 * (MAX_LINE_LENGTH + 1),
) -> None:
    """Blocking reader thread.

    Reads the raw file descriptor with ``os.read`` rather than ``sys.stdin``: a daemon thread
    blocked inside a *buffered* reader holds its lock, and CPython aborts at exit when it
    finds it held.  Splits lines itself; accepts LF and CRLF (the parser strips the CR).

    The work is linear in the input: each chunk is split on its own (a newline can only be in
    the bytes just read) and the unfinished line grows in a ``bytearray``, so a 40 MB line
    costs one pass, not one re-scan of everything pending per chunk.  Of a line longer than
    ``max_line_bytes`` only that many bytes are kept: the session refuses any line over
    :data:`~protocol.uci.session.MAX_LINE_LENGTH` characters, and the default keeps enough bytes
    (four per character, UTF-8's most) that the prefix still decodes to more than that, so
    the client still gets "line too long" while a flood costs no memory.

    Backpressure is a semaphore of free queue places (released by the consumer), so handing a
    line over is a plain ``call_soon_threadsafe``: no coroutine or task is ever created for
    the loop from this thread, and none is left pending or unawaited when ``quit`` closes the
    loop while input is still arriving.
    """

    def put(item: str | None) -> None:
        slots.acquire()
        loop.call_soon_threadsafe(queue.put_nowait, item)  # RuntimeError once the loop closed

    pending = bytearray()

    def keep(piece: bytes) -> None:
        room = max_line_bytes - len(pending)
        if room > 0:
            pending.extend(piece[:room])

    def put_pending() -> None:
        line = pending.decode("utf-8", errors="replace")
        pending.clear()
        put(line)

    try:
        while chunk := os.read(fd, READ_CHUNK):
            *ended, rest = chunk.split(b"\n")
            for piece in ended:
                if pending:
                    keep(piece)
                    put_pending()
                else:  # the common case: a whole line inside this chunk
                    put(piece[:max_line_bytes].decode("utf-8", errors="replace"))
            keep(rest)
        if pending:
            put_pending()
        put(_EOF)
    except OSError:
        log.info("stdin read failed; treating as end of input", exc_info=True)
        with contextlib.suppress(RuntimeError):
            put(_EOF)
    except RuntimeError:
        return  # the loop closed under us: nobody is listening any more


async def serve_stdio(
    stdin_fd: int = 0,
    stdout: TextIO | None = None,
    *,
    interrupt: asyncio.Event | None = None,
) -> int:
    """Run one session on the process's stdio until ``quit``, end of input or ``interrupt``.

    ``interrupt`` (set by the application on Ctrl-C) is a ``quit`` from outside the
    protocol: the search stops, its ``bestmove`` is written, and the session ends.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    slots = threading.Semaphore(INPUT_QUEUE_LINES)
    sink = StdoutSink(stdout or sys.stdout)
    session = EngineSession(sink)
    reader = threading.Thread(
        target=_read_lines,
        args=(stdin_fd, loop, queue, slots),
        name="brudno-stdin",
        daemon=True,
    )
    reader.start()
    interrupted = asyncio.ensure_future((interrupt or asyncio.Event()).wait())
    try:
        while True:
            getting = asyncio.ensure_future(queue.get())
            await asyncio.wait((getting, interrupted), return_when=asyncio.FIRST_COMPLETED)
            if not getting.done():
                getting.cancel()
                log.info("interrupted: quitting")
                await session.handle("quit")
                break
            line = getting.result()
            slots.release()
            if line is _EOF:
                await session.finish_input()
                break
            if not await session.handle(line):
                break
    finally:
        interrupted.cancel()
    return 0
