"""Helpers for the TCP server tests: a raw line client, an in-process server, a real
`brudno serve` process, a command run to its end, leak checks.

Timeouts here only keep a broken server from hanging the suite; no test asserts on how fast
anything is (the latency figures come from bench/server_load.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import re
import signal
import socket
import struct
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from brudno.commands.serve import TOKEN_ENV
from protocol.transports.tcp.config import ServerConfig
from protocol.transports.tcp.server import TcpServer
from protocol.uci.workers import warm_up

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
    async def open(
        cls,
        port: int,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        rcvbuf: int | None = None,
        local_host: str | None = None,
    ) -> TcpClient:
        """Connect (from ``local_host`` if given: any 127.x.y.z is this machine on Linux,
        which lets one test be several client addresses) and send ``auth`` if given."""
        if rcvbuf is None:
            local_addr = None if local_host is None else (local_host, 0)
            reader, writer = await asyncio.open_connection(host, port, local_addr=local_addr)
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

    @property
    def local(self) -> str:
        """Our end as ``host:port``: what the server logs as ``peer=``."""
        host, port = self.writer.get_extra_info("sockname")[:2]
        return f"{host}:{port}"

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
    assert len(asyncio.all_tasks()) == tasks_before, [repr(t) for t in asyncio.all_tasks()]


def env_without_token(**extra: str) -> dict[str, str]:
    """This process's environment without any ``BRUDNO_TOKEN*`` variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(TOKEN_ENV)}
    env.update(extra)
    return env


async def run_command(*command: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run a command to its end: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    out, err = await asyncio.wait_for(proc.communicate(), HANG_TIMEOUT)
    return proc.returncode or 0, out.decode(), err.decode()


class ServeProcess:
    """A real ``brudno serve`` child process; its stderr log is collected as it comes, so a
    test can wait for an event instead of sleeping."""

    LISTENING = re.compile(r"event=listening address=(\S+):(\d+)")

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.log: list[str] = []
        self.port = 0
        self._changed = asyncio.Event()
        self._reading = asyncio.create_task(self._read_log(), name="serve-log")

    async def _read_log(self) -> None:
        assert self.proc.stderr is not None
        while raw := await self.proc.stderr.readline():
            self.log.append(raw.decode(errors="replace"))
            self._changed.set()
        self._changed.set()

    async def wait_for_log(self, pattern: str, *, start: int = 0) -> re.Match[str]:
        """The first log line from index ``start`` on that matches ``pattern``; fails (never
        passes) if the server exits or the hang timeout passes first."""
        regex = re.compile(pattern)
        async with asyncio.timeout(HANG_TIMEOUT):
            seen = start
            while True:
                for line in self.log[seen:]:
                    if found := regex.search(line):
                        return found
                seen = max(seen, len(self.log))
                if self._reading.done():
                    raise AssertionError(
                        f"serve exited before logging {pattern!r}:\n" + "".join(self.log)
                    )
                self._changed.clear()
                await self._changed.wait()

    async def stop(self) -> int:
        """SIGTERM, then the exit code (after the log has been read to its end)."""
        self.proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self.proc.wait(), HANG_TIMEOUT)
        await asyncio.wait_for(self._reading, HANG_TIMEOUT)
        return code


@contextlib.asynccontextmanager
async def serve_process(
    brudno: list[str], *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[ServeProcess]:
    """``brudno serve --port 0 *args`` until the block ends (killed if it is still running
    then); ``env`` defaults to ours without a token."""
    proc = await asyncio.create_subprocess_exec(
        *brudno,
        "serve",
        "--port",
        "0",
        *args,
        stderr=asyncio.subprocess.PIPE,
        env=env_without_token() if env is None else env,
    )
    server = ServeProcess(proc)
    try:
        found = await server.wait_for_log(ServeProcess.LISTENING.pattern)
        server.port = int(found[2])
        yield server
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        server._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server._reading
