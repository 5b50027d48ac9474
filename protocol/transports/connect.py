"""Clients of ``brudno serve``: the stdio bridge, the health check, python-chess over TCP.

:func:`bridge` is a UCI engine on stdin/stdout that forwards everything to a remote server,
because GUIs and match tools only know how to launch local processes.  It is a byte pipe, not
a second engine: the server's session does all the work.  End of input is passed on as a
half-close, so a finite search still delivers its ``bestmove`` (the server treats end of input
as stdio does).

:func:`ping` sends ``isready`` and reports whether ``readyok`` came back: the container's
health check.  A server that answers but refuses the session because it is full is alive and
well, and says so in words (:data:`~protocol.transports.tcp.wire.RETRY_LATER`) that
:func:`ping` reports as :attr:`PingStatus.BUSY`, so an orchestrator need not restart it.

:func:`open_uci_tcp` connects python-chess's asyncio engine client to a server directly.

TLS: each takes ``tls``, a client :class:`ssl.SSLContext`
(:func:`protocol.transports.tls.client_context`: the chain and the host name are verified);
``None`` speaks plain TCP.  Over TLS the bridge cannot half-close (TLS has no half-close in
asyncio), so end of input is passed on as ``quit``: a running search is stopped and its
``bestmove`` delivered.

Where a token comes from (options, files, the environment) is the application's business:
these functions take the token itself.  They print nothing either: failures are exceptions or
:class:`PingStatus` values with a one-line explanation, which ``brudno connect`` and
``brudno ping`` turn into messages and exit statuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from typing import BinaryIO

import chess.engine

from protocol.text import printable
from protocol.transports.tcp.wire import (
    AUTH_FAILED,
    DEFAULT_PORT,
    MAX_PORT,
    RETRY_LATER,
    auth_line,
)

CONNECT_TIMEOUT_S = 10.0
PING_TIMEOUT_S = 5.0
READ_CHUNK = 1 << 16
INPUT_QUEUE_CHUNKS = 16


class PingStatus(enum.StrEnum):
    """What :func:`ping` found out about a server."""

    READY = "ready"
    """It answered ``readyok``."""
    BUSY = "busy"
    """It answered, but refused a session for lack of capacity (full, out of memory)."""
    TOKEN_REQUIRED = "token required"
    """It wants a token and none was given.  Apart from :attr:`FAILED` because the server
    cannot tell a missing token from a wrong one (it only sees a first line that is not
    ``auth <token>``) and says "authentication failed"; the client knows it sent none, and
    saying so names the fix instead of suggesting a bad secret."""
    FAILED = "failed"
    """Unreachable, silent, a wrong token, or closed without ``readyok``."""


class BridgeError(Exception):
    """:func:`bridge` could not reach the server, or the server went away while the client
    still wanted it; the message says which, in words meant for the user."""


class AddressError(ValueError):
    """``HOST:PORT`` text that does not name an endpoint."""


def parse_address(text: str, default_port: int = DEFAULT_PORT) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``[IPv6]:PORT`` or ``[IPv6]`` → (host, port)."""
    text = text.strip()
    if not text:
        raise AddressError("empty address")
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise AddressError(f"unclosed '[' in {text!r}")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise AddressError(f"unexpected {rest!r} after the IPv6 address in {text!r}")
        port_text = rest[1:] if rest else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif ":" in text:
        host, port_text = text, ""  # a bare IPv6 address
    else:
        host, port_text = text, ""
    if not host:
        raise AddressError(f"no host in {text!r}")
    if not port_text:
        return host, default_port
    try:
        port = int(port_text)
    except ValueError:
        raise AddressError(f"port {port_text!r} is not a number") from None
    if not 1 <= port <= MAX_PORT:
        raise AddressError(f"port {port} out of range 1..65535")
    return host, port


async def open_connection(
    host: str,
    port: int,
    *,
    token: str | None = None,
    timeout: float = CONNECT_TIMEOUT_S,
    tls: ssl.SSLContext | None = None,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect and authenticate (the ``auth`` line goes first; the server answers only if it
    is wrong).  Raises ``OSError`` / ``TimeoutError`` when the server cannot be reached, and
    ``ssl.SSLError`` (an ``OSError``) when its certificate does not verify."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=tls), timeout)
    if token is not None:
        writer.write(f"{auth_line(token)}\n".encode())
    return reader, writer


# -- python-chess over TCP -------------------------------------------------------------------
class _SocketAsProcess(asyncio.SubprocessTransport, asyncio.Protocol):
    """Presents a TCP connection to python-chess as the subprocess it expects.

    python-chess writes to ``get_pipe_transport(0)`` and reads ``pipe_data_received(1, …)``;
    a closed connection looks like an exited process (return code 0).
    """

    def __init__(self, engine: chess.engine.Protocol) -> None:
        super().__init__()
        self._engine = engine
        self._socket: asyncio.Transport | None = None
        self._returncode: int | None = None

    # asyncio.Protocol side (the socket)
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._socket = transport

    def data_received(self, data: bytes) -> None:
        self._engine.pipe_data_received(1, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._returncode = 0 if exc is None else 1
        self._engine.connection_lost(exc)

    # SubprocessTransport side (what python-chess sees)
    def get_pid(self) -> int:
        return 0

    def get_returncode(self) -> int | None:
        return self._returncode

    def get_pipe_transport(self, fd: int) -> asyncio.BaseTransport | None:
        return self._socket if fd == 0 else None

    def send_signal(self, signal: int) -> None:
        self.close()

    def terminate(self) -> None:
        self.close()

    def kill(self) -> None:
        if self._socket is not None:
            self._socket.abort()

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()

    def is_closing(self) -> bool:
        return self._socket is None or self._socket.is_closing()


async def open_uci_tcp(
    host: str,
    port: int,
    *,
    token: str | None = None,
    timeout: float = CONNECT_TIMEOUT_S,
    tls: ssl.SSLContext | None = None,
) -> tuple[asyncio.SubprocessTransport, chess.engine.UciProtocol]:
    """python-chess's UCI client, talking to ``brudno serve`` instead of a local process.

    Use it like :func:`chess.engine.popen_uci`: ``transport, engine = await
    open_uci_tcp(host, port)``, then ``await engine.initialize()``, ``await engine.play(…)``,
    ``await engine.quit()``.  ``tls``: a client context
    (:func:`~protocol.transports.tls.client_context`) for a TLS server.
    """
    loop = asyncio.get_running_loop()
    engine = chess.engine.UciProtocol()
    bridge = _SocketAsProcess(engine)
    await asyncio.wait_for(loop.create_connection(lambda: bridge, host, port, ssl=tls), timeout)
    engine.connection_made(bridge)
    if token is not None:
        engine.send_line(auth_line(token))
    return bridge, engine


# -- the stdio bridge ------------------------------------------------------------------------
def _read_stdin(
    fd: int, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes | None]
) -> None:
    """Blocking reader thread (raw ``os.read``, as in :mod:`protocol.transports.stdio`)."""

    def put(item: bytes | None) -> None:
        asyncio.run_coroutine_threadsafe(queue.put(item), loop).result()

    try:
        while chunk := os.read(fd, READ_CHUNK):
            put(chunk)
        put(None)
    except OSError:
        with contextlib.suppress(RuntimeError):
            put(None)
    except RuntimeError:
        return  # the loop is gone


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    """Which server :func:`bridge` connects to: its address, the token it wants (``None``:
    none), TLS (``None``: plain TCP), and how long connecting may take."""

    host: str
    port: int
    token: str | None = None
    timeout: float = CONNECT_TIMEOUT_S
    tls: ssl.SSLContext | None = None


async def bridge(
    config: BridgeConfig, *, stdin_fd: int = 0, stdout: BinaryIO | None = None
) -> None:
    """Forward stdin to the server and the server's output to stdout until it closes.

    Returns once the server has closed after the client said ``quit`` or ended its input;
    raises :class:`BridgeError` when the server cannot be reached, the connection fails, or
    the server closes first (the GUI would otherwise wait for an engine that is gone).
    """
    out = stdout if stdout is not None else sys.stdout.buffer
    host, port = config.host, config.port
    try:
        reader, writer = await open_connection(
            host, port, token=config.token, timeout=config.timeout, tls=config.tls
        )
    except (OSError, TimeoutError) as exc:
        raise BridgeError(f"cannot reach {host}:{port}: {exc or 'timed out'}") from exc
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=INPUT_QUEUE_CHUNKS)
    threading.Thread(
        target=_read_stdin, args=(stdin_fd, loop, queue), name="brudno-connect-stdin", daemon=True
    ).start()
    said_quit = False
    input_ended = False

    async def upstream() -> None:
        nonlocal said_quit, input_ended
        pending = b""
        while (chunk := await queue.get()) is not None:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            said_quit = said_quit or any(line.strip() == b"quit" for line in lines)
            writer.write(chunk)
            await writer.drain()
        input_ended = True
        if writer.can_write_eof():
            writer.write_eof()  # half-close: the server still sends the last bestmove
        elif not said_quit:
            writer.write(b"\nquit\n")  # TLS: no half-close; quit still delivers bestmove
            await writer.drain()

    async def downstream() -> None:
        while chunk := await reader.read(READ_CHUNK):
            out.write(chunk)
            out.flush()

    sending = asyncio.create_task(upstream(), name="connect-upstream")
    try:
        await downstream()
    except (ConnectionError, OSError) as exc:
        raise BridgeError(f"connection to {host}:{port} failed: {exc}") from exc
    finally:
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
            await sending
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()
    if not (said_quit or input_ended):
        raise BridgeError(f"{host}:{port} closed the connection")


# -- the health check ------------------------------------------------------------------------
def _without_readyok(
    host: str, port: int, error: str, *, token_given: bool
) -> tuple[PingStatus, str]:
    """What a server that closed without ``readyok`` meant, from its last error line."""
    if RETRY_LATER in error:
        return PingStatus.BUSY, f"{host}:{port} is up but busy: {error}"
    if not token_given and error.startswith(AUTH_FAILED):
        return PingStatus.TOKEN_REQUIRED, (
            f"the server at {host}:{port} requires a token and none was given"
        )
    return PingStatus.FAILED, f"{host}:{port} closed without readyok" + (
        f": {error}" if error else ""
    )


async def ping(
    host: str,
    port: int,
    *,
    token: str | None = None,
    timeout: float = PING_TIMEOUT_S,
    tls: ssl.SSLContext | None = None,
) -> tuple[PingStatus, str]:
    """Ask ``isready``; returns what came of it and a one-line explanation.

    The server's own words (its ``info string error:`` text) are shown through
    :func:`~protocol.text.printable`: they come from the network and end up on a terminal.
    """
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await open_connection(
                host, port, token=token, timeout=timeout, tls=tls
            )
            try:
                writer.write(b"isready\n")
                await writer.drain()
                error = ""
                while line := await reader.readline():
                    text = line.decode("utf-8", errors="replace").strip()
                    if text == "readyok":
                        elapsed = (time.monotonic() - started) * 1000.0
                        with contextlib.suppress(ConnectionError, OSError):
                            writer.write(b"quit\n")
                            await writer.drain()
                        return PingStatus.READY, f"readyok from {host}:{port} in {elapsed:.1f} ms"
                    if text.startswith("info string error:"):
                        error = printable(text.removeprefix("info string error:").strip())
                return _without_readyok(host, port, error, token_given=token is not None)
            finally:
                writer.close()
                with contextlib.suppress(ConnectionError, OSError):
                    await writer.wait_closed()
    except TimeoutError:
        return PingStatus.FAILED, f"no readyok from {host}:{port} within {timeout:g} s"
    except OSError as exc:
        return PingStatus.FAILED, f"cannot reach {host}:{port}: {exc}"
    except ValueError:  # asyncio's reader refuses a line beyond its 64 KiB limit
        return PingStatus.FAILED, f"{host}:{port} sent a line too long for a UCI server"
