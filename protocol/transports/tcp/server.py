"""UCI over TCP: many sessions in one server, each connection its own engine.

A connection is one :class:`~protocol.uci.session.EngineSession` (its own position, options and
transposition table); the transport only moves lines between the socket and the session, like
:mod:`protocol.transports.stdio`.  Searches run in a worker process per session
(:class:`~protocol.uci.workers.ProcessRunner`), so sessions search in parallel on all cores and
the event loop, which never searches, answers ``isready`` and ``stop`` at once.

Limits, and why each exists:

* ``max_sessions`` — each session may own a process and a table; further clients get one
  ``info string error: …`` line and are disconnected.  With a token, a connection takes a
  session slot only once its ``auth`` line is accepted: were clients still authenticating
  counted, a stranger holding a few silent sockets (reopened whenever the auth timeout closes
  them) would keep every legitimate client out.
* ``max_pending_auth`` and ``max_pending_per_address`` — connections that have not sent their
  ``auth`` line yet get their own small budget instead (:class:`PendingAuth`).  When it is
  full the *oldest* pending connection is evicted (with one ``info string error: …`` line),
  not the newcomer refused: refusing newcomers would hand the whole budget to whoever opens
  silent sockets first, which is the lockout again; evicting the oldest means an attacker must
  open connections faster than a real client sends its first line (one round trip), and the
  per-address rule makes that flood evict only its own address's connections.  A pending
  connection costs a task and a socket, never a worker or a table.
* ``max_memory_mb`` — the sum of the sessions' ``Hash`` sizes.  A session that would not fit
  is refused like a full server; a ``setoption name Hash`` that would not fit gets an error
  and changes nothing (through the session's ``hash_budget`` hook).
* ``max_line_bytes`` — a longer line is discarded up to its end with one error.  Input read
  ahead of the session is bounded too (:data:`INBOX_LINES` lines plus the stream's buffer);
  the rest waits in the socket.
* ``idle_timeout_s`` — a session that neither sends a line nor runs a search for this long is
  closed (keep-alive probes also detect peers that vanished without a FIN).
* backpressure — output waits in a bounded buffer.  Above ``output_buffer_bytes`` search
  ``info`` lines are dropped (queued ones first, to make room), never ``bestmove`` or replies;
  and the server stops reading a client's input until it reads its output, so a client that
  never reads cannot make the server buffer without bound.  A client that reads nothing for
  ``write_timeout_s`` while output is pending is disconnected.
* ``token`` — required when binding anything but loopback: the first line must be
  ``auth <token>``, compared in constant time.
* ``eval_file_dir`` — ``setoption name EvalFile`` reads a file on the server's machine, so by
  default it is refused; with a directory, a client may name the files in it and nothing
  else (:class:`~protocol.uci.options.EvalFileAccess`).

Shutdown (:meth:`TcpServer.shutdown`, on SIGTERM/SIGINT in ``brudno serve``): stop accepting,
stop every search, deliver each searching client its ``bestmove``, close, all within
``shutdown_timeout_s``; stragglers are then cut off and their workers killed.

Logs: one line per connection event on the ``protocol.transports.tcp.server`` logger, as
``key=value`` pairs with the session id (``event=open session=s12 peer=10.0.0.5:51234``), to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import enum
import hmac
import ipaddress
import itertools
import logging
import math
import os
import signal
import socket
import sys
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Generic, Self, TypeVar

from brudno.argtypes import positive_int
from protocol.transports.events import log_line
from protocol.uci.formatting import error_line, info_string
from protocol.uci.options import EvalFileAccess
from protocol.uci.runner import SearchRunner
from protocol.uci.session import MAX_LINE_LENGTH, EngineSession, State
from protocol.uci.workers import ProcessRunner, preload_in_workers, warm_up

log = logging.getLogger(__name__)

DEFAULT_PORT = 4000
RETRY_LATER = "try again later"
"""Ends every refusal for lack of capacity, so clients (``brudno ping``) can tell "busy"
from "broken"."""
TOKEN_ENV = "BRUDNO_TOKEN"
"""Environment variable a token is read from, so it stays out of process listings."""

READ_CHUNK = 1 << 16
INBOX_LINES = 16
"""Input lines read ahead of the session; beyond that, further input waits in the socket."""
LINGER_S = 1.0
"""How long a closing connection waits for the client to take our last lines and hang up."""
EOF_PROBE_S = 1.0
"""After end of input, while a job still runs and nothing was written for this long, an empty
line is written (see :meth:`Connection._finish`)."""
AUTH_FAILURE_DELAY_S = 0.25
"""A wrong token is answered only after this pause: it makes guessing slow, costs us nothing."""
KEEPALIVE = {"TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 15, "TCP_KEEPCNT": 4}
"""Keep-alive probing (seconds, seconds, probes): a peer that vanished is noticed in ~2 min."""
PENDING_FULL = f"too many connections waiting to authenticate; {RETRY_LATER}"
"""Said to a pending connection evicted to make room for a newer one (see :class:`PendingAuth`);
it ends in :data:`RETRY_LATER` because it is a matter of capacity, not of a wrong token."""
AUTH_FAILED = "authentication failed"
"""How the server's answer to a wrong or missing ``auth`` line begins (after ``info string
error:``), so clients can recognise it."""
AUTH_EVICTED = "auth evicted"
"""The ``close`` reason of an evicted pending connection."""

K = TypeVar("K")


class ServerConfigError(ValueError):
    """A configuration the server refuses to start with (explained in the message)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    """0 picks a free port (see :attr:`TcpServer.port`)."""
    max_sessions: int = 64
    """Authenticated sessions at once (each may own a worker process and a Hash table)."""
    max_pending_auth: int = 16
    """Connections still waiting to send ``auth`` (only with a token), kept apart from
    ``max_sessions`` so that silent sockets cannot take the session slots; when full, the
    oldest pending connection is evicted (see :class:`PendingAuth`)."""
    max_pending_per_address: int = 4
    """Of those, how many one client address may hold (IPv6: one /64); beyond it the
    address's own oldest pending connection is evicted, so one host's flood cannot evict
    anyone else.  Behind a proxy every client has the proxy's address: raise it to
    ``max_pending_auth`` there."""
    token: str | None = None
    max_memory_mb: int = 2048
    """Upper bound on the sum of the sessions' Hash sizes (MiB)."""
    max_line_bytes: int = MAX_LINE_LENGTH
    idle_timeout_s: float | None = 1800.0
    auth_timeout_s: float = 10.0
    output_buffer_bytes: int = 1 << 16
    write_timeout_s: float = 60.0
    send_buffer_bytes: int | None = None
    """SO_SNDBUF of client sockets: caps the kernel's share of a slow reader's backlog too
    (``None`` keeps the kernel's autotuning, up to several MiB per connection)."""
    shutdown_timeout_s: float = 5.0
    runner_factory: Callable[[int], SearchRunner] = field(default=ProcessRunner)
    """Builds a session's runner from its Hash size; worker processes unless a test says so."""
    eval_file_dir: Path | None = None
    """The directory ``EvalFile`` values name files in; ``None`` refuses every file."""

    def eval_files(self) -> EvalFileAccess:
        """The sessions' ``EvalFile`` policy; :class:`ServerConfigError` if the directory is
        unusable."""
        try:
            return EvalFileAccess.for_server(self.eval_file_dir)
        except ValueError as exc:
            raise ServerConfigError(f"--eval-file-dir: {exc}") from None

    def check(self) -> None:
        """Raise :class:`ServerConfigError` for settings that are unsafe or meaningless."""
        if self.token is not None and not self.token.strip():
            raise ServerConfigError("the token is empty")
        if self.token is not None and any(c.isspace() for c in self.token):
            raise ServerConfigError("the token must not contain whitespace")
        if self.token is None and not is_loopback(self.host):
            raise ServerConfigError(
                f"binding to {self.host!r} (not loopback) requires a token: pass --token, "
                f"--token-file or set {TOKEN_ENV}"
            )
        if not 0 <= self.port <= 65535:
            raise ServerConfigError(f"port {self.port} out of range 0..65535")
        for name in ("max_sessions", "max_pending_auth", "max_pending_per_address",
                     "max_memory_mb", "max_line_bytes", "output_buffer_bytes"):
            if getattr(self, name) < 1:
                raise ServerConfigError(f"{name} must be at least 1")
        if not (self.auth_timeout_s > 0 and math.isfinite(self.auth_timeout_s)):
            raise ServerConfigError("auth_timeout_s must be a positive number of seconds")
        self.eval_files()


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback address (so nothing else can
    reach it).  Unresolvable names and the wildcard (``""``, ``0.0.0.0``, ``::``) are not."""
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses
    )


def _event(event: str, session: str | None = None, **fields: object) -> None:
    if log.isEnabledFor(logging.INFO):
        if session is not None:
            fields = {"session": session, **fields}
        log.info("%s", log_line(event, **fields))


# -- memory accounting -----------------------------------------------------------------------
class MemoryBudget:
    """The sessions' Hash sizes, held against one limit (MiB)."""

    def __init__(self, limit_mb: int) -> None:
        self.limit_mb = limit_mb
        self._held: dict[str, int] = {}

    @property
    def used_mb(self) -> int:
        return sum(self._held.values())

    def admit(self, session: str, mb: int) -> bool:
        """Reserve ``mb`` for a new session; False (nothing reserved) if it would not fit."""
        if self.used_mb + mb > self.limit_mb:
            return False
        self._held[session] = mb
        return True

    def request(self, session: str, mb: int) -> str | None:
        """Change a session's reservation (the session's ``hash_budget`` hook)."""
        others = self.used_mb - self._held.get(session, 0)
        if others + mb > self.limit_mb:
            return (
                f"Hash {mb} MiB exceeds the server's memory limit "
                f"({self.limit_mb} MiB, {others} MiB held by other sessions; "
                f"at most {max(0, self.limit_mb - others)} MiB available)"
            )
        self._held[session] = mb
        return None

    def release(self, session: str) -> None:
        self._held.pop(session, None)


# -- connections waiting to authenticate ----------------------------------------------------
def address_key(host: str) -> str:
    """The client address pending connections are counted under (``max_pending_per_address``).

    An IPv4 address as it is; IPv6 by its /64, because one host or home usually owns a whole
    /64 and could otherwise take a fresh address for every connection; an IPv4-mapped IPv6
    address as the IPv4 address it is.  Anything else (a Unix socket path) as given.
    """
    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class PendingAuth(Generic[K]):
    """Connections that have not sent their first line yet, held against their own budget.

    Bookkeeping only: :meth:`admit` registers a newcomer and names the connection that must
    make room, the caller evicts it.  The newcomer is always admitted and the oldest pending
    connection pays, because a pending connection's only job is to send one line and a real
    client sends it at once: refusing the newcomer instead would let whoever holds the budget
    with silent sockets keep everyone out (issue 12), while evicting the oldest forces an
    attacker to flood faster than one round trip of every real client.  Who pays:

    * an address already holding ``per_address`` pending connections gives up its own oldest,
      so a flood from one address churns only that address's connections;
    * otherwise, when ``limit`` are pending, the oldest connection of the address holding the
      most, so many-address floods also hit themselves first.
    """

    def __init__(self, limit: int, per_address: int) -> None:
        self.limit = limit
        self.per_address = per_address
        self._waiting: dict[K, str] = {}
        """Pending connection → its address key, oldest first (dicts keep insertion order)."""

    def __len__(self) -> int:
        return len(self._waiting)

    def __contains__(self, key: object) -> bool:
        return key in self._waiting

    def admit(self, key: K, address: str) -> K | None:
        """Register ``key`` as pending from ``address``; returns the connection to evict
        (already forgotten here), or ``None`` when there was room."""
        victim: K | None = None
        mine = [k for k, a in self._waiting.items() if a == address]
        if len(mine) >= self.per_address:
            victim = mine[0]
        elif len(self._waiting) >= self.limit:
            counts = Counter(self._waiting.values())
            most = max(counts.values())
            victim = next(k for k, a in self._waiting.items() if counts[a] == most)
        if victim is not None:
            del self._waiting[victim]
        self._waiting[key] = address
        return victim

    def leave(self, key: K) -> None:
        """``key`` is no longer pending (it sent a line, or closed); idempotent."""
        self._waiting.pop(key, None)


# -- output ----------------------------------------------------------------------------------
class TcpSink:
    """A session's output, bounded: written straight to the socket while the client keeps up,
    queued (and drained by :meth:`run`) while it does not.

    ``buffered`` counts our queue plus the transport's own buffer.  Above the high-water mark
    ``droppable`` lines are refused and queued ones are purged when a line that must be
    delivered arrives; the connection stops reading input until the sink is :meth:`writable`
    again (``on_progress`` says when to look).
    """

    def __init__(self, writer: asyncio.StreamWriter, *, high_water: int,
                 write_timeout_s: float, on_lost: Callable[[str], None],
                 on_progress: Callable[[], None] | None = None) -> None:
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


# -- input -----------------------------------------------------------------------------------
class _Input(enum.Enum):
    EOF = "eof"
    TOO_LONG = "too long"


@dataclass(frozen=True, slots=True)
class _Interrupted:
    """The connection must end for a reason outside its input (shutdown, a broken socket)."""

    reason: str


class _LineReader:
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

    async def readline(self) -> str | _Input:
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
                    return _Input.TOO_LONG
                return raw.decode("utf-8", errors="replace")
            if len(buffer) > self._max:
                buffer.clear()
                if not self._discarding:
                    self._discarding = True
                    return _Input.TOO_LONG
            if self._eof:
                if buffer and not self._discarding:
                    raw = bytes(buffer)
                    buffer.clear()
                    return raw.decode("utf-8", errors="replace")
                buffer.clear()
                return _Input.EOF
            chunk = await self._reader.read(READ_CHUNK)
            if not chunk:
                self._eof = True
            else:
                buffer += chunk


# -- one connection --------------------------------------------------------------------------
class Connection:
    """One client: its socket, its session (once authenticated) and its output sink."""

    def __init__(self, server: TcpServer, sid: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self._server = server
        self._config = server.config
        self.sid = sid
        self._reader = reader
        self._writer = writer
        self._lines = _LineReader(reader, self._config.max_line_bytes)
        self._interrupt: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._sink = TcpSink(
            writer,
            high_water=self._config.output_buffer_bytes,
            write_timeout_s=self._config.write_timeout_s,
            on_lost=self._interrupt_with,
            on_progress=self._poke,
        )
        self._inbox: deque[str | _Input] = deque()
        """Lines read ahead of the session (at most :data:`INBOX_LINES`)."""
        self._room = asyncio.Event()
        """Set while the reader may read more: the inbox has room."""
        self._room.set()
        self._waiter: asyncio.Future[None] | None = None
        """What the conversation awaits: a line, writable output, an interrupt, a timeout."""
        self._session: EngineSession | None = None
        self._runner: SearchRunner | None = None
        self._first_line_seen = False
        self.lines_in = 0
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.address = address_key(str(peer[0]) if isinstance(peer, tuple) else str(peer))
        """What ``max_pending_per_address`` counts this client under (:func:`address_key`)."""

    @property
    def session(self) -> EngineSession | None:
        return self._session

    @property
    def sink(self) -> TcpSink:
        return self._sink

    def _interrupt_with(self, reason: str) -> None:
        if not self._interrupt.done():
            self._interrupt.set_result(reason)
        self._poke()

    def _poke(self) -> None:
        """Something the conversation may be waiting for has happened: let it look."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def request_shutdown(self) -> None:
        self._interrupt_with("shutdown")

    def evict(self) -> None:
        """Give up this connection's pending-auth place to a newer one: it is told
        :data:`PENDING_FULL` and closed.  Only the server calls it, and only while the
        connection has sent no line (see :class:`PendingAuth`)."""
        self._interrupt_with(AUTH_EVICTED)

    async def run(self) -> None:
        started = time.monotonic()
        reason = "internal error"
        _tune_socket(self._writer, self._config.send_buffer_bytes)
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._sink.run(), name=f"{self.sid}-writer")
                reading = group.create_task(self._read_loop(), name=f"{self.sid}-reader")
                try:
                    reason = await self._serve()
                finally:
                    reading.cancel()
                    self._sink.close()
        except* Exception:
            log.exception("connection %s failed", self.sid)
        finally:
            await self._teardown()
            _event(
                "close", self.sid, reason=reason, peer=self.peer,
                duration_s=f"{time.monotonic() - started:.3f}", lines_in=self.lines_in,
                lines_out=self._sink.lines, dropped_info=self._sink.dropped,
            )

    async def _teardown(self) -> None:
        session = self._session
        if session is not None:
            self._server.memory.release(self.sid)
            try:
                await session.close()
            finally:
                if self._runner is not None:
                    await self._runner.close()  # idempotent; a must when close was cut short
        if self._sink.lost is not None:
            self._writer.transport.abort()
        else:
            await close_gracefully(self._reader, self._writer)

    async def _serve(self) -> str:
        config = self._config
        if config.token is not None:
            failure = await self._authenticate(config.token)
            if failure is not None:
                return failure
            # Only now does the client cost a session slot (without a token the server took
            # it on accept): strangers who never authenticate cannot fill the server.
            if not self._server.claim_session(self.sid):
                why = f"server full ({config.max_sessions} sessions); {RETRY_LATER}"
                self._sink.send(info_string(f"error: {why}"))
                _event("refused", self.sid, reason=why, peer=self.peer)
                return "refused: full"
        session = EngineSession(
            self._sink,
            runner_factory=self._make_runner,
            hash_budget=lambda mb: self._server.memory.request(self.sid, mb),
            eval_files=self._server.eval_files,
        )
        self._session = session
        hash_mb = session.options.get_int("Hash")
        if not self._server.memory.admit(self.sid, hash_mb):
            memory = self._server.memory
            self._sink.send(info_string(
                f"error: server memory limit reached ({memory.used_mb} of {memory.limit_mb} "
                f"MiB held by other sessions); {RETRY_LATER}"
            ))
            _event("refused", self.sid, reason="max_memory", peer=self.peer)
            return "refused: memory"
        _event("session", self.sid, peer=self.peer, hash_mb=hash_mb)
        return await self._converse(session)

    def _make_runner(self, hash_mb: int) -> SearchRunner:
        self._runner = self._config.runner_factory(hash_mb)
        return self._runner

    async def _authenticate(self, token: str) -> str | None:
        item = await self._next_input(self._config.auth_timeout_s)
        self._server.leave_pending(self)
        if item is None:
            self._sink.send(info_string("error: authentication timed out"))
            _event("auth_failed", self.sid, reason="timeout", peer=self.peer)
            return "auth timeout"
        if isinstance(item, _Interrupted):
            if item.reason == AUTH_EVICTED:
                self._sink.send(info_string(f"error: {PENDING_FULL}"))
                _event("auth_evicted", self.sid, peer=self.peer,
                       pending=self._server.pending_auth)
            return item.reason
        if isinstance(item, _Input):
            return f"{item.value} before authenticating"
        self.lines_in += 1
        words = item.split(None, 1)
        given = words[1].strip() if len(words) == 2 and words[0] == "auth" else ""
        if hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8")):
            _event("auth_ok", self.sid, peer=self.peer)
            return None
        await asyncio.sleep(AUTH_FAILURE_DELAY_S)
        self._sink.send(info_string(
            f"error: {AUTH_FAILED} (the first line must be 'auth <token>')"
        ))
        _event("auth_failed", self.sid, reason="wrong token", peer=self.peer)
        return "auth failed"

    async def _converse(self, session: EngineSession) -> str:
        idle = self._config.idle_timeout_s
        first = self._config.token is None
        while True:
            item = await self._next_input(idle)
            if isinstance(item, str):
                self.lines_in += 1
                if first and item.split(None, 1)[:1] == ["auth"]:
                    # A client configured with a token, on a server without one: fine, and
                    # the token must not be echoed back in an "unknown command" error.
                    first = False
                    continue
                first = False
                if not await session.handle(item):
                    return "quit"
            elif item is _Input.TOO_LONG:
                self._sink.send(error_line(
                    "line too long", f"more than {self._config.max_line_bytes} bytes; ignored"
                ))
            elif item is _Input.EOF:
                return await self._finish(session)
            elif item is None:
                if session.state is not State.IDLE:
                    continue  # a long analysis is not idleness
                self._sink.send(info_string(f"error: idle for {idle:g} s; closing"))
                await self._end_search(session)
                return "idle timeout"
            else:
                await self._end_search(session)
                return item.reason

    async def _read_loop(self) -> None:
        """Read lines ahead of the session into the inbox, while it has room."""
        while True:
            await self._room.wait()
            try:
                item = await self._lines.readline()
            except (ConnectionError, OSError):
                self._interrupt_with("connection reset")
                return
            self._inbox.append(item)
            if not self._first_line_seen:
                # The auth line (or EOF) is here: no longer a silent connection, so it
                # cannot be evicted any more (it leaves the pending budget at once).
                self._first_line_seen = True
                self._server.leave_pending(self)
            if len(self._inbox) >= INBOX_LINES:
                self._room.clear()
            self._poke()
            if item is _Input.EOF:
                return

    async def _next_input(self, timeout: float | None) -> str | _Input | _Interrupted | None:
        """The next line or input event; ``None`` when ``timeout`` passes without input.

        A line waits in the inbox while the client is not reading our output (backpressure:
        its further input then waits in the socket, not in our memory); that wait is bounded
        by the sink's write timeout, not by ``timeout``.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            if self._interrupt.done():
                return _Interrupted(self._interrupt.result())
            inbox = self._inbox
            if inbox:
                if self._sink.writable():
                    item = inbox.popleft()
                    if len(inbox) < INBOX_LINES:
                        self._room.set()
                    return item
            elif deadline is not None and loop.time() >= deadline:
                return None
            waiter = self._waiter = loop.create_future()
            timer = None
            if deadline is not None and not inbox:
                timer = loop.call_at(deadline, self._poke)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()

    async def _finish(self, session: EngineSession) -> str:
        """End of input: a finite job still delivers its answer (the client may have only
        half-closed), unless the connection breaks or the server shuts down meanwhile.

        A client that closed its socket entirely looks the same as one that half-closed
        until we write to it; a search writes ``info`` lines all the time, but ``perft 8`` or
        ``bench`` is silent for minutes or hours, and its session slot and worker would stay
        taken all that while.  So while the job is silent an empty line goes out every
        :data:`EOF_PROBE_S`: a gone client's reset makes the next write fail, and the job is
        stopped like one whose connection was reset.
        """
        finishing = asyncio.ensure_future(session.finish_input())
        written = self._sink.lines
        while True:
            await asyncio.wait((finishing, self._interrupt), timeout=EOF_PROBE_S,
                               return_when=asyncio.FIRST_COMPLETED)
            if finishing.done() or self._interrupt.done():
                break
            if self._sink.lines == written:
                self._sink.probe()
            written = self._sink.lines
        if not finishing.done():
            await session.handle("stop")
            await finishing
            return "eof, then " + self._interrupt.result()
        return "eof"

    async def _end_search(self, session: EngineSession) -> None:
        """Stop any search and let its ``bestmove`` through before the connection closes."""
        await session.handle("stop")
        await session.close()
        if self._interrupt.done() and self._interrupt.result() == "shutdown":
            self._sink.send(info_string("server shutting down"))


async def close_gracefully(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Half-close, discard what the client still sends for a moment, then close.

    Closing a socket that has unread input makes the kernel answer with a reset, which can
    destroy our last line (an error, a ``bestmove``) before the client has read it: a
    client that sent ``auth`` and ``isready`` together must still see why it was refused.
    """
    try:
        if writer.can_write_eof():
            writer.write_eof()  # sent once what is buffered has gone out
        async with asyncio.timeout(LINGER_S):
            while await reader.read(READ_CHUNK):
                pass
    except (TimeoutError, ConnectionError, OSError):
        pass
    writer.close()
    with contextlib.suppress(TimeoutError, ConnectionError, OSError):
        await asyncio.wait_for(writer.wait_closed(), LINGER_S)
    if not writer.transport.is_closing():
        writer.transport.abort()


def _tune_socket(writer: asyncio.StreamWriter, send_buffer: int | None) -> None:
    sock = writer.get_extra_info("socket")
    if sock is None:
        return
    with contextlib.suppress(OSError):
        if send_buffer is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in KEEPALIVE.items():
            option = getattr(socket, name, None)
            if option is not None:
                sock.setsockopt(socket.IPPROTO_TCP, option, value)


# -- the server ------------------------------------------------------------------------------
class TcpServer:
    """The listening socket and its connections; an async context manager.

    ``async with TcpServer(config) as server:`` listens on entry and shuts down gracefully on
    exit (see :meth:`shutdown`).
    """

    def __init__(self, config: ServerConfig) -> None:
        config.check()
        self.config = config
        self.memory = MemoryBudget(config.max_memory_mb)
        self.eval_files = config.eval_files()
        """What ``EvalFile`` may read, resolved once for all sessions."""
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], Connection] = {}
        self._pending: PendingAuth[Connection] = PendingAuth(
            config.max_pending_auth, config.max_pending_per_address
        )
        """Connections that have not sent their ``auth`` line yet (only with a token)."""
        self._sessions: set[str] = set()
        """Ids of the connections holding a session slot (``max_sessions``): authenticated
        ones, or every connection on a server without a token.  A slot is held until the
        connection's worker is gone, so the number of workers never exceeds it."""
        self._refusing: set[asyncio.Task[None]] = set()
        """Refused connections still saying why (briefly: see :func:`close_gracefully`)."""
        self._ids = itertools.count(1)
        self._shutting_down = False
        self._stopped = asyncio.Event()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.shutdown()

    async def start(self) -> None:
        config = self.config
        self._server = await asyncio.start_server(
            self._on_client, config.host, config.port,
            limit=max(READ_CHUNK, config.max_line_bytes), reuse_address=True,
        )
        for address in self.addresses:
            pending: dict[str, object] = {} if config.token is None else {
                "max_pending_auth": config.max_pending_auth,
                "max_pending_per_address": config.max_pending_per_address,
            }
            _event("listening", None, address=f"{address[0]}:{address[1]}",
                   max_sessions=config.max_sessions, max_memory_mb=config.max_memory_mb,
                   **pending, auth="token" if config.token is not None else "none")

    @property
    def addresses(self) -> list[tuple[str, int]]:
        if self._server is None:
            return []
        return [
            (str(sock.getsockname()[0]), int(sock.getsockname()[1]))
            for sock in self._server.sockets
        ]

    @property
    def port(self) -> int:
        """The port actually bound (useful with ``port=0``)."""
        addresses = self.addresses
        if not addresses:
            raise RuntimeError("the server is not listening")
        return addresses[0][1]

    @property
    def connections(self) -> int:
        """Open connections, including those still authenticating or closing."""
        return len(self._connections)

    @property
    def sessions(self) -> int:
        """Session slots held (what ``max_sessions`` bounds)."""
        return len(self._sessions)

    @property
    def pending_auth(self) -> int:
        """Connections that have not sent their ``auth`` line yet."""
        return len(self._pending)

    def open_connections(self) -> list[Connection]:
        return list(self._connections.values())

    def claim_session(self, sid: str) -> bool:
        """Take a session slot for ``sid``; False when all ``max_sessions`` are held."""
        if len(self._sessions) >= self.config.max_sessions:
            return False
        self._sessions.add(sid)
        return True

    def leave_pending(self, connection: Connection) -> None:
        """``connection`` has sent its first line (or ended): it no longer counts against
        the pending-auth budget and can no longer be evicted.  Idempotent."""
        self._pending.leave(connection)

    async def _on_client(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        sid = f"s{next(self._ids)}"
        needs_auth = self.config.token is not None
        if self._shutting_down or not (needs_auth or self.claim_session(sid)):
            why = "server shutting down" if self._shutting_down else (
                f"server full ({self.config.max_sessions} sessions); {RETRY_LATER}"
            )
            self._refusing.add(task)
            try:
                await self._refuse(reader, writer, sid, why)
            finally:
                self._refusing.discard(task)
            return
        connection = Connection(self, sid, reader, writer)
        self._connections[task] = connection
        if needs_auth:
            victim = self._pending.admit(connection, connection.address)
            if victim is not None:
                victim.evict()
        _event("open", sid, peer=connection.peer, connections=len(self._connections),
               pending=len(self._pending), sessions=len(self._sessions))
        try:
            await connection.run()
        finally:
            del self._connections[task]
            self._pending.leave(connection)
            self._sessions.discard(sid)

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      sid: str, why: str) -> None:
        peer = writer.get_extra_info("peername")
        _event("refused", sid, reason=why, peer=f"{peer[0]}:{peer[1]}"
               if isinstance(peer, tuple) else peer)
        try:
            writer.write((info_string(f"error: {why}") + "\n").encode())
            await asyncio.wait_for(writer.drain(), LINGER_S)
        except (TimeoutError, ConnectionError, OSError):
            writer.transport.abort()
            return
        await close_gracefully(reader, writer)

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    async def shutdown(self) -> None:
        """Stop accepting, end every search with its ``bestmove``, close every connection.

        Bounded: connections still open after ``shutdown_timeout_s`` are cancelled (their
        workers are killed), so the whole shutdown ends a few seconds after that at worst.
        """
        if self._shutting_down:
            await self._stopped.wait()
            return
        self._shutting_down = True
        started = time.monotonic()
        _event("shutdown", connections=len(self._connections))
        if self._server is not None:
            self._server.close()
        for connection in self._connections.values():
            connection.request_shutdown()
        tasks = set(self._connections) | self._refusing
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=self.config.shutdown_timeout_s)
            for task in pending:
                task.cancel()
            if pending:
                log.warning("%s", log_line("shutdown_forced", connections=len(pending)))
                await asyncio.wait(pending, timeout=self.config.shutdown_timeout_s)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        _event("stopped", duration_s=f"{time.monotonic() - started:.3f}")
        self._stopped.set()


# -- brudno serve ----------------------------------------------------------------------------
def _positive_seconds(text: str) -> float:
    """A finite, positive number of seconds (argparse type): an auth timeout of 0, a
    negative one or ``nan`` would close every connection before it could authenticate."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def configure_serve(parser: argparse.ArgumentParser) -> None:
    defaults = ServerConfig()
    parser.add_argument("--host", default=defaults.host,
                        help="address to bind (default: loopback; others require a token)")
    parser.add_argument("--port", type=int, default=defaults.port,
                        help=f"TCP port (default {defaults.port}; 0 picks a free one)")
    parser.add_argument("--max-sessions", type=positive_int, default=defaults.max_sessions,
                        help="concurrent sessions; with a token, only authenticated clients "
                        "count (default %(default)s)")
    parser.add_argument("--max-pending-auth", type=positive_int,
                        default=defaults.max_pending_auth, metavar="N",
                        help="connections that have not sent 'auth' yet; when full, the "
                        "oldest is closed to make room (default %(default)s)")
    parser.add_argument("--max-pending-per-address", type=positive_int,
                        default=defaults.max_pending_per_address, metavar="N",
                        help="of those, per client address (IPv6: per /64); behind a proxy "
                        "raise it to --max-pending-auth (default %(default)s)")
    parser.add_argument("--auth-timeout", type=_positive_seconds,
                        default=defaults.auth_timeout_s, metavar="SECONDS",
                        help="close a connection that has not authenticated after this long "
                        "(default %(default)s)")
    parser.add_argument("--max-memory-mb", type=positive_int, default=defaults.max_memory_mb,
                        help="total Hash of all sessions in MiB (default %(default)s)")
    parser.add_argument("--token", help=f"shared secret clients send as 'auth <token>'; "
                        f"prefer --token-file or ${TOKEN_ENV} (command lines are visible "
                        "to other users)")
    parser.add_argument("--token-file", type=Path,
                        help="read the token from this file (e.g. a container secret)")
    parser.add_argument("--token-env", default=TOKEN_ENV, metavar="NAME",
                        help="environment variable holding the token (default %(default)s)")
    parser.add_argument("--idle-timeout", type=float, default=defaults.idle_timeout_s,
                        metavar="SECONDS", help="close sessions idle this long; 0 = never "
                        "(default %(default)s)")
    parser.add_argument("--max-line-bytes", type=positive_int,
                        default=defaults.max_line_bytes, help="longest input line accepted")
    parser.add_argument("--shutdown-timeout", type=float, default=defaults.shutdown_timeout_s,
                        metavar="SECONDS", help="on SIGTERM/SIGINT, time given to searches "
                        "and clients before connections are cut (default %(default)s)")
    parser.add_argument("--no-connection-log", action="store_true",
                        help="do not log connection events to stderr")
    parser.add_argument("--eval-file-dir", type=Path, metavar="DIR",
                        help="clients may load EvalFile weights from the files in DIR, and "
                        "no others (default: EvalFile refuses every file)")




def resolve_token(token: str | None, token_file: Path | None, token_env: str) -> str | None:
    """The token from the first source given: the option, the file, the variable
    ``token_env``, or the file named by ``<token_env>_FILE`` (how container secrets arrive;
    it lets the health check find the same token as the server)."""
    if token is not None:
        return token
    if token_file is None:
        value = os.environ.get(token_env)
        if value:
            return value
        named = os.environ.get(f"{token_env}_FILE")
        if not named:
            return None
        token_file = Path(named)
    return token_file.read_text(encoding="utf-8").strip()


def run_serve(args: argparse.Namespace) -> int:
    preload_in_workers("brudno.cli")  # the entry module every worker imports
    if not args.no_connection_log:
        log.setLevel(min(log.getEffectiveLevel(), logging.INFO))
    try:
        token = resolve_token(args.token, args.token_file, args.token_env)
    except OSError as exc:
        print(f"brudno serve: cannot read the token file: {exc}", file=sys.stderr)
        return 2
    config = ServerConfig(
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        max_pending_auth=args.max_pending_auth,
        max_pending_per_address=args.max_pending_per_address,
        auth_timeout_s=args.auth_timeout,
        max_memory_mb=args.max_memory_mb,
        token=token,
        idle_timeout_s=args.idle_timeout if args.idle_timeout > 0 else None,
        max_line_bytes=args.max_line_bytes,
        shutdown_timeout_s=max(0.0, args.shutdown_timeout),
        eval_file_dir=args.eval_file_dir,
    )
    try:
        config.check()
    except ServerConfigError as exc:
        print(f"brudno serve: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(config))
    except OSError as exc:
        print(f"brudno serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1


async def serve(config: ServerConfig, *, ready: Callable[[TcpServer], None] | None = None) -> int:
    """Run a server until SIGTERM or SIGINT, then shut down gracefully; returns 0."""
    if config.runner_factory is ProcessRunner:
        await asyncio.to_thread(warm_up)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    installed = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
            installed.append(signum)
    try:
        async with TcpServer(config) as server:
            if ready is not None:
                ready(server)
            await stop.wait()
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
    return 0

