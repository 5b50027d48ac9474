"""Helpers for the TCP server tests: a raw line client, an in-process server, leak checks.

Timeouts here only keep a broken server from hanging the suite; no test asserts on how fast
anything is (the latency figures come from bench/server_load.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import socket
import struct
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from protocol.tcp import ServerConfig, TcpServer
from protocol.workers import warm_up

HANG_TIMEOUT = 60.0

_warm = False


async def ensure_warm() -> None:
    """Start the worker fork server once per test process (it imports the engine)."""
    global _warm
    if not _warm:
        await asyncio.to_thread(warm_up)
        _warm = True


def worker_pids() -> set[int]:
    """Live search workers started by this process."""
    return {
        p.pid
        for p in multiprocessing.active_children()
        if p.name == "brudno-worker" and p.pid is not None
    }


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


async def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition``; fail (never pass) after the hang timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_TIMEOUT
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.02)


class TcpClient:
    """A UCI client speaking raw lines to the server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.transcript: list[str] = []

    @classmethod
    async def open(cls, port: int, *, token: str | None = None, host: str = "127.0.0.1",
                   rcvbuf: int | None = None) -> TcpClient:
        if rcvbuf is None:
            reader, writer = await asyncio.open_connection(host, port)
        else:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, (host, port))
            reader, writer = await asyncio.open_connection(sock=sock)
        client = cls(reader, writer)
        if token is not None:
            await client.send(f"auth {token}")
        return client

    async def send(self, *lines: str) -> None:
        for line in lines:
            self.writer.write((line + "\n").encode())
        await self.writer.drain()

    async def send_bytes(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def readline(self) -> str | None:
        """The next line, or ``None`` at end of stream."""
        raw = await asyncio.wait_for(self.reader.readline(), HANG_TIMEOUT)
        if not raw:
            return None
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        self.transcript.append(line)
        return line

    async def read_until(self, done: Callable[[str], bool]) -> list[str]:
        lines = []
        while True:
            line = await self.readline()
            if line is None:
                raise EOFError("server closed; transcript:\n" + "\n".join(self.transcript))
            lines.append(line)
            if done(line):
                return lines

    async def read_to_end(self) -> list[str]:
        lines = []
        while (line := await self.readline()) is not None:
            lines.append(line)
        return lines

    async def exchange(self, *lines: str) -> list[str]:
        """Send lines then ``isready``; everything printed before ``readyok``."""
        await self.send(*lines, "isready")
        return (await self.read_until(lambda s: s == "readyok"))[:-1]

    async def bestmove(self) -> tuple[list[str], str]:
        """Lines up to the next ``bestmove``, and the move it names."""
        out = await self.read_until(lambda s: s.startswith("bestmove"))
        return out[:-1], out[-1].split()[1]

    def abort(self) -> None:
        """Drop the connection with a reset, as a crashed client's kernel would."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await asyncio.wait_for(self.writer.wait_closed(), HANG_TIMEOUT)


@contextlib.asynccontextmanager
async def running_server(**settings: Any) -> AsyncIterator[TcpServer]:
    """An in-process server on a free loopback port; on a clean exit, checks that every
    connection, task and worker process it made is gone."""
    await ensure_warm()
    tasks_before = len(asyncio.all_tasks())
    workers_before = worker_pids()
    server = TcpServer(replace(ServerConfig(port=0), **settings))
    await server.start()
    try:
        yield server
    except BaseException:
        await server.shutdown()
        raise
    await wait_until(lambda: server.connections == 0, "every connection closed")
    started = worker_pids() - workers_before
    await server.shutdown()
    await wait_until(lambda: not (worker_pids() - workers_before), "the workers exited")
    for pid in started:
        await wait_until(lambda pid=pid: not pid_alive(pid), f"worker {pid} is reaped")
    assert len(asyncio.all_tasks()) == tasks_before, [
        t.get_name() for t in asyncio.all_tasks()
    ]

