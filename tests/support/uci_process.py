"""A raw UCI transcript driver for the real `brudno` process.

python-chess's client covers chess; this covers what it cannot express: other variants, bad
input, CRLF framing, exact ordering of lines.  Timeouts here only keep a broken engine from
hanging the suite; no test asserts on how fast anything is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

HANG_TIMEOUT = 60.0


class UciProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.transcript: list[str] = []

    @classmethod
    async def start(cls, command: list[str]) -> UciProcess:
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        return cls(proc)

    async def send(self, *lines: str, end: str = "\n") -> None:
        assert self.proc.stdin is not None
        for line in lines:
            self.proc.stdin.write((line + end).encode())
        await self.proc.stdin.drain()

    async def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def readline(self) -> str:
        assert self.proc.stdout is not None
        raw = await asyncio.wait_for(self.proc.stdout.readline(), HANG_TIMEOUT)
        if not raw:
            raise EOFError("engine closed stdout; transcript:\n" + "\n".join(self.transcript))
        line = raw.decode().rstrip("\r\n")
        self.transcript.append(line)
        return line

    async def read_until(self, done: Callable[[str], bool]) -> list[str]:
        """Lines up to and including the first one for which ``done`` is true."""
        lines = []
        while True:
            line = await self.readline()
            lines.append(line)
            if done(line):
                return lines

    async def exchange(self, *lines: str) -> list[str]:
        """Send lines then `isready`; return everything printed before `readyok`."""
        await self.send(*lines, "isready")
        out = await self.read_until(lambda s: s == "readyok")
        return out[:-1]

    async def close(self) -> int:
        if self.proc.returncode is None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await self.send("quit")
            try:
                # communicate (not wait) reads the pipes to their end, which closes the
                # transport while the loop runs: no "Event loop is closed" at collection.
                await asyncio.wait_for(self.proc.communicate(), HANG_TIMEOUT)
            except TimeoutError:
                self.proc.kill()
                await self.proc.communicate()
        return self.proc.returncode or 0
