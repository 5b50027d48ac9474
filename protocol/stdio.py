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

from protocol.session import EngineSession

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
) -> None:
    """Blocking reader thread.

    Reads the raw file descriptor with ``os.read`` rather than ``sys.stdin``: a daemon thread
    blocked inside a *buffered* reader holds its lock, and CPython aborts at exit when it
    finds it held.  Splits lines itself; accepts LF and CRLF (the parser strips the CR).

    Backpressure is a semaphore of free queue places (released by the consumer), so handing a
    line over is a plain ``call_soon_threadsafe``: no coroutine or task is ever created for
    the loop from this thread, and none is left pending or unawaited when ``quit`` closes the
    loop while input is still arriving.
    """

    def put(item: str | None) -> None:
        slots.acquire()
        loop.call_soon_threadsafe(queue.put_nowait, item)  # RuntimeError once the loop closed

    pending = b""
    try:
        while chunk := os.read(fd, READ_CHUNK):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                put(raw.decode("utf-8", errors="replace"))
        if pending:
            put(pending.decode("utf-8", errors="replace"))
        put(_EOF)
    except OSError:
        log.info("stdin read failed; treating as end of input", exc_info=True)
        with contextlib.suppress(RuntimeError):
            put(_EOF)
    except RuntimeError:
        return  # the loop closed under us: nobody is listening any more


async def serve_stdio(stdin_fd: int = 0, stdout: TextIO | None = None) -> int:
    """Run one session on the process's stdio until ``quit`` or end of input."""
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
    while True:
        line = await queue.get()
        slots.release()
        if line is _EOF:
            await session.finish_input()
            break
        if not await session.handle(line):
            break
    return 0
