"""UCI over TCP: many sessions in one server, each connection its own engine.

A connection is one :class:`~protocol.uci.session.EngineSession` (its own position, options
and table) whose searches run in a worker process, so the event loop never searches and
answers ``isready`` and ``stop`` at once.  This module holds :class:`TcpServer` (admits and
counts) and its connections (converse and report back); settings, output, input, the
pending-auth and Hash budgets and the client-facing text live in the sibling modules
``config``, ``sink``, ``lines``, ``pending_auth``, ``memory`` and ``wire``.

Guarantees: every resource is capped (sessions, pending auth, connections, memory, threads,
line length, idle time, output buffer); a full server refuses with one ``info string error:
…`` line, and at the pending or connection cap the oldest connection holding no session gives
way, never the newcomer.  ``bestmove`` and replies are never dropped (search ``info`` lines
may be).  :func:`serve_until` runs until its ``stop`` event, then :meth:`TcpServer.shutdown`
delivers each searching client its ``bestmove`` within ``shutdown_timeout_s``.  Connection
events are ``key=value`` lines on :data:`log`.

Every limit and why: docs/deploy.md, *The TCP server* and *Why the services are built as they
are*.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import hmac
import itertools
import logging
import math
import socket
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from protocol.transports.auth_throttle import AuthThrottle
from protocol.transports.events import log_line
from protocol.transports.observer import (
    AuthFailure,
    ObservedSink,
    Refusal,
    ServiceObserver,
    SessionObserver,
)
from protocol.transports.tcp.config import ServerConfig
from protocol.transports.tcp.lines import READ_CHUNK, InputEvent, LineReader
from protocol.transports.tcp.memory import MemoryBudget
from protocol.transports.tcp.pending_auth import PendingAuth, address_key
from protocol.transports.tcp.sink import TcpSink
from protocol.transports.tcp.wire import (
    ALREADY_AUTHENTICATED,
    AUTH_COMMAND,
    AUTH_FAILED,
    PENDING_FULL,
    RETRY_LATER,
)
from protocol.transports.thread_budget import ThreadBudget
from protocol.uci.formatting import error_line, info_string
from protocol.uci.options import OptionName
from protocol.uci.runner import SearchRunner
from protocol.uci.session import EngineSession, State
from protocol.uci.workers import ProcessRunner, warm_up

__all__ = [
    "CloseReason",
    "Connection",
    "TcpServer",
    "close_gracefully",
    "log",
    "log_accept_errors",
    "serve_until",
]

log = logging.getLogger(__name__)
"""Every connection event is logged here; the application sets its level
(``brudno serve --no-connection-log``)."""

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


class CloseReason(enum.StrEnum):
    """Why a connection ended: the ``reason=`` of its ``event=close`` log line.

    The fixed causes are these members.  A few reasons are composed from them or carry a
    detail, and are plain text: ``eof before authenticating`` (an :class:`InputEvent` before
    the ``auth`` line), ``eof, then <reason>`` (the connection ended while a job finished
    after end of input), and the sink's own words when output could no longer be delivered
    (``client read nothing for 60 s``, see :attr:`TcpSink.lost`).
    """

    QUIT = "quit"
    EOF = "eof"
    IDLE = "idle timeout"
    SHUTDOWN = "shutdown"
    RESET = "connection reset"
    INTERNAL_ERROR = "internal error"
    AUTH_TIMEOUT = "auth timeout"
    AUTH_FAILED = "auth failed"
    AUTH_THROTTLED = "auth throttled"
    """Refused unchecked: too many wrong tokens from the address lately."""
    AUTH_EVICTED = "auth evicted"
    """Evicted from the pending-auth budget to make room for a newer connection."""
    CUT = "cut: connection cap"
    """Cut without a word to make room under ``max_connections`` (see
    :meth:`TcpServer._make_room`)."""
    REFUSED_FULL = "refused: full"
    REFUSED_MEMORY = "refused: memory"


def _event(event: str, session: str | None = None, **fields: object) -> None:
    if log.isEnabledFor(logging.INFO):
        if session is not None:
            fields = {"session": session, **fields}
        log.info("%s", log_line(event, **fields))


@dataclass(frozen=True, slots=True)
class _Interrupted:
    """The connection must end for a reason outside its input (shutdown, a broken socket):
    a :class:`CloseReason`, or the sink's words when output was lost."""

    reason: str


# -- one connection --------------------------------------------------------------------------
class Connection:
    """One client: its socket, its session (once authenticated) and its output sink."""

    def __init__(
        self,
        server: TcpServer,
        sid: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self._server = server
        self._config = server.config
        self.sid = sid
        self._reader = reader
        self._writer = writer
        self._lines = LineReader(reader, self._config.max_line_bytes)
        self._interrupt: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._sink = TcpSink(
            writer,
            high_water=self._config.output_buffer_bytes,
            write_timeout_s=self._config.write_timeout_s,
            on_lost=self._interrupt_with,
            on_progress=self._poke,
        )
        self._inbox: deque[str | InputEvent] = deque()
        """Lines read ahead of the session (at most :data:`INBOX_LINES`)."""
        self._room = asyncio.Event()
        """Set while the reader may read more: the inbox has room."""
        self._room.set()
        self._waiter: asyncio.Future[None] | None = None
        """What the conversation awaits: a line, writable output, an interrupt, a timeout."""
        self._session: EngineSession | None = None
        self._runner: SearchRunner | None = None
        self._observer: SessionObserver | None = None
        """Sees the session's lines when the server is observed (metrics, status page)."""
        self._first_line_seen = False
        self.lines_in = 0
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.host = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        self.address = address_key(self.host)
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
        self._interrupt_with(CloseReason.SHUTDOWN)

    def evict(self) -> None:
        """Give up this connection's pending-auth place to a newer one: it is told
        :data:`PENDING_FULL` and closed.  Only the server calls it, and only while the
        connection has sent no line (see :class:`PendingAuth`)."""
        self._interrupt_with(CloseReason.AUTH_EVICTED)

    def cut(self) -> None:
        """Drop this connection at once (a reset, no last line): the server is at
        ``max_connections`` and this one holds no session."""
        self._interrupt_with(CloseReason.CUT)
        self._writer.transport.abort()

    async def run(self) -> None:
        started = time.monotonic()
        reason: str = CloseReason.INTERNAL_ERROR
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
                "close",
                self.sid,
                reason=reason,
                peer=self.peer,
                duration_s=f"{time.monotonic() - started:.3f}",
                lines_in=self.lines_in,
                lines_out=self._sink.lines,
                dropped_info=self._sink.dropped,
            )

    async def _teardown(self) -> None:
        session = self._session
        if session is not None:
            self._server.memory.release(self.sid)
            self._server.threads.release(self.sid)
            try:
                await session.close()
            finally:
                if self._runner is not None:
                    await self._runner.close()  # idempotent; a must when close was cut short
                if self._observer is not None:
                    self._observer.closed()
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
                self._server.observe_refusal(Refusal.FULL)
                return CloseReason.REFUSED_FULL
        observed = ObservedSink(self._sink)
        session = EngineSession(
            observed,
            runner_factory=self._make_runner,
            hash_budget=lambda mb: self._server.memory.request(self.sid, mb),
            thread_budget=lambda threads: self._server.grant_threads(self.sid, threads),
            eval_files=self._server.eval_files,
            syzygy=self._server.syzygy,
            book_files=self._server.book_files,
        )
        self._session = session
        hash_mb = session.options.get_int(OptionName.HASH)
        if not self._server.memory.admit(self.sid, hash_mb):
            memory = self._server.memory
            self._sink.send(
                info_string(
                    f"error: server memory limit reached ({memory.used_mb} of {memory.limit_mb} "
                    f"MiB held by other sessions); {RETRY_LATER}"
                )
            )
            _event("refused", self.sid, reason="max_memory", peer=self.peer)
            self._server.observe_refusal(Refusal.MEMORY)
            return CloseReason.REFUSED_MEMORY
        self._server.threads.request(self.sid, 1)  # its main search counts from the start
        if self._server.observer is not None:
            self._observer = observed.observer = self._server.observer.session_opened(
                self.sid, session, restarts=self._restarts
            )
        _event("session", self.sid, peer=self.peer, hash_mb=hash_mb)
        return await self._converse(session)

    def _make_runner(self, hash_mb: int) -> SearchRunner:
        self._runner = self._config.runner_factory(hash_mb)
        return self._runner

    def _restarts(self) -> int:
        """How often this session's worker process was started again (after a death)."""
        runner = self._runner
        return max(0, runner.started - 1) if isinstance(runner, ProcessRunner) else 0

    async def _authenticate(self, token: str) -> str | None:
        item = await self._next_input(self._config.auth_timeout_s)
        self._server.leave_pending(self)
        if item is None:
            self._sink.send(info_string("error: authentication timed out"))
            _event("auth_failed", self.sid, reason="timeout", peer=self.peer)
            self._server.observe_auth_failure(AuthFailure.TIMEOUT)
            return CloseReason.AUTH_TIMEOUT
        if isinstance(item, _Interrupted):
            if item.reason == CloseReason.AUTH_EVICTED:
                self._sink.send(info_string(f"error: {PENDING_FULL}"))
                _event("auth_evicted", self.sid, peer=self.peer, pending=self._server.pending_auth)
                self._server.observe_auth_failure(AuthFailure.EVICTED)
            return item.reason
        if isinstance(item, InputEvent):
            return f"{item.value} before authenticating"
        self.lines_in += 1
        throttle = self._server.auth_throttle
        host = self.host
        wait = throttle.blocked_for(host)
        if wait > 0:
            # Not even checked: while an address is penalised, its guesses are worth nothing.
            await asyncio.sleep(AUTH_FAILURE_DELAY_S)
            self._sink.send(
                info_string(
                    f"error: {AUTH_FAILED} (too many failed attempts from your address; "
                    f"try again in {math.ceil(wait)} s)"
                )
            )
            self._server.observe_auth_failure(AuthFailure.THROTTLED)
            return CloseReason.AUTH_THROTTLED
        words = item.split(None, 1)
        given = words[1].strip() if words[1:] and words[0] == AUTH_COMMAND else ""
        if hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8")):
            throttle.succeeded(host)
            _event("auth_ok", self.sid, peer=self.peer)
            return None
        # Counted before the pause, with no await since the check above: guesses sent in
        # parallel see each other's failures, so the penalty holds however many there are.
        failure = throttle.failed(host)
        await asyncio.sleep(AUTH_FAILURE_DELAY_S)
        self._sink.send(
            info_string(f"error: {AUTH_FAILED} (the first line must be 'auth <token>')")
        )
        if failure.report:
            _event("auth_failed", self.sid, reason="wrong token", peer=self.peer)
            if failure.penalty_s > 0:
                _event(
                    "auth_throttled",
                    address=failure.address,
                    failures=failure.failures,
                    penalty_s=f"{failure.penalty_s:g}",
                )
        self._server.observe_auth_failure(AuthFailure.WRONG_TOKEN)
        return CloseReason.AUTH_FAILED

    async def _converse(self, session: EngineSession) -> str:
        idle = self._config.idle_timeout_s
        first = self._config.token is None
        while True:
            item = await self._next_input(idle)
            if isinstance(item, str):
                self.lines_in += 1
                if item.split(None, 1)[:1] == [AUTH_COMMAND]:
                    # Never handed to the session, which would echo it ("unknown command")
                    # with the token.  A client configured with a token, on a server without
                    # one, sends it first: fine, silently.
                    if not first:
                        self._sink.send(info_string(f"error: {ALREADY_AUTHENTICATED}"))
                    first = False
                    continue
                first = False
                if self._observer is not None:
                    self._observer.line_in(item)
                if not await session.handle(item):
                    return CloseReason.QUIT
            elif item is InputEvent.TOO_LONG:
                self._sink.send(
                    error_line(
                        "line too long", f"more than {self._config.max_line_bytes} bytes; ignored"
                    )
                )
            elif item is InputEvent.EOF:
                return await self._finish(session)
            elif item is None:
                if session.state is not State.IDLE:
                    continue  # a long analysis is not idleness
                self._sink.send(info_string(f"error: idle for {idle:g} s; closing"))
                await self._end_search(session)
                return CloseReason.IDLE
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
                self._interrupt_with(CloseReason.RESET)
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
            if item is InputEvent.EOF:
                return

    async def _next_input(self, timeout: float | None) -> str | InputEvent | _Interrupted | None:
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
            await asyncio.wait(
                (finishing, self._interrupt),
                timeout=EOF_PROBE_S,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if finishing.done() or self._interrupt.done():
                break
            if self._sink.lines == written:
                self._sink.probe()
            written = self._sink.lines
        if not finishing.done():
            await session.handle("stop")
            await finishing
            return f"{CloseReason.EOF}, then {self._interrupt.result()}"
        return CloseReason.EOF

    async def _end_search(self, session: EngineSession) -> None:
        """Stop any search and let its ``bestmove`` through before the connection closes."""
        await session.handle("stop")
        await session.close()
        if self._interrupt.done() and self._interrupt.result() == CloseReason.SHUTDOWN:
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
    exit (see :meth:`shutdown`).  An ``observer`` (metrics, the status page:
    :mod:`protocol.transports.http`) sees the sessions and the clients turned away.
    """

    def __init__(self, config: ServerConfig, observer: ServiceObserver | None = None) -> None:
        config.check()
        self.config = config
        self.observer = observer
        self.memory = MemoryBudget(config.max_memory_mb)
        self.threads = ThreadBudget(config.max_total_threads, config.max_threads)
        self.eval_files = config.eval_files()
        """What ``EvalFile`` may read, resolved once for all sessions."""
        self.syzygy = config.syzygy()
        """Which tablebase directories ``SyzygyPath`` may name, likewise."""
        self.book_files = config.book_files()
        """What ``BookFile`` may read, likewise."""
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
        self._refusing: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        """Refused connections still saying why (briefly: see :func:`close_gracefully`)."""
        self.auth_throttle = AuthThrottle(config.auth_throttle)
        """Wrong tokens by address; the monitoring port shares it (one limit, both ports)."""
        self._handshaking: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        """Connections still in their TLS handshake (see :meth:`_handshake`)."""
        self.cut_connections = 0
        """Connections cut to stay within ``max_connections``."""
        self._ids = itertools.count(1)
        self._shutting_down = False
        self._stopped = asyncio.Event()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.shutdown()

    async def start(self) -> None:
        config = self.config
        self._server = await asyncio.start_server(
            self._on_client,
            config.host,
            config.port,
            limit=max(READ_CHUNK, config.max_line_bytes),
            reuse_address=True,
        )
        for address in self.addresses:
            pending: dict[str, object] = (
                {}
                if config.token is None
                else {
                    "max_pending_auth": config.max_pending_auth,
                    "max_pending_per_address": config.max_pending_per_address,
                }
            )
            _event(
                "listening",
                None,
                address=f"{address[0]}:{address[1]}",
                max_sessions=config.max_sessions,
                max_memory_mb=config.max_memory_mb,
                **pending,
                auth="token" if config.token is not None else "none",
                tls="on" if config.tls is not None else "off",
            )

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

    @property
    def accepting(self) -> bool:
        """Listening, not shutting down, and a session slot free: a new client would get a
        session (what a readiness probe asks)."""
        return (
            self._server is not None
            and self._server.is_serving()
            and not self._shutting_down
            and len(self._sessions) < self.config.max_sessions
        )

    def observe_refusal(self, reason: Refusal) -> None:
        if self.observer is not None:
            self.observer.session_refused(reason)

    def observe_auth_failure(self, reason: AuthFailure) -> None:
        if self.observer is not None:
            self.observer.auth_failed(reason)

    def open_connections(self) -> list[Connection]:
        return list(self._connections.values())

    def grant_threads(self, sid: str, threads: int) -> tuple[int, str]:
        """A session's ``thread_budget`` hook: cores first, then memory for the helpers."""
        granted, why = self.threads.request(sid, threads)
        fitting = 1 + self.memory.reserve_helpers(sid, granted - 1)
        if fitting < granted:
            granted, _ = self.threads.request(sid, fitting)
            why = f"the server's memory limit ({self.memory.limit_mb} MiB) has room for no more"
        return granted, why

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

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        sid = f"s{next(self._ids)}"
        needs_auth = self.config.token is not None
        if not self._make_room():
            self.cut_connections += 1
            _event("cut", sid, reason="every connection holds a session")
            writer.transport.abort()
            return
        if self.config.tls is not None and not await self._handshake(task, sid, writer):
            return
        if self._shutting_down or not (needs_auth or self.claim_session(sid)):
            why = (
                "server shutting down"
                if self._shutting_down
                else (f"server full ({self.config.max_sessions} sessions); {RETRY_LATER}")
            )
            self.observe_refusal(Refusal.SHUTDOWN if self._shutting_down else Refusal.FULL)
            self._refusing[task] = writer
            try:
                await self._refuse(reader, writer, sid, why)
            finally:
                self._refusing.pop(task, None)
            return
        connection = Connection(self, sid, reader, writer)
        self._connections[task] = connection
        if needs_auth:
            victim = self._pending.admit(connection, connection.address)
            if victim is not None:
                victim.evict()
        _event(
            "open",
            sid,
            peer=connection.peer,
            connections=len(self._connections),
            pending=len(self._pending),
            sessions=len(self._sessions),
        )
        try:
            await connection.run()
        finally:
            del self._connections[task]
            self._pending.leave(connection)
            self._sessions.discard(sid)

    async def _handshake(
        self, task: asyncio.Task[None], sid: str, writer: asyncio.StreamWriter
    ) -> bool:
        """The TLS handshake, with the current certificate, done here rather than by the
        listening socket so that the connection counts (and can be cut, see
        :meth:`_make_room`) from the moment it is accepted.  False when it failed (a
        plaintext client, a silent one past ``tls_handshake_timeout_s``, a cut): the
        connection is gone then, having reached neither authentication nor a session."""
        tls = self.config.tls
        assert tls is not None
        self._handshaking[task] = writer
        try:
            await writer.start_tls(
                tls.context, ssl_handshake_timeout=self.config.tls_handshake_timeout_s
            )
        except (OSError, TimeoutError) as exc:  # ssl.SSLError is an OSError
            writer.transport.abort()
            peer = writer.get_extra_info("peername")
            _event(
                "tls_failed",
                sid,
                peer=f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else peer,
                error=type(exc).__name__,
            )
            return False
        finally:
            self._handshaking.pop(task, None)
        return True

    def _make_room(self) -> bool:
        """Below ``max_connections`` after cutting, if need be, one connection that holds no
        session: the oldest being refused, else the oldest still in its TLS handshake, else
        the oldest pending (:meth:`PendingAuth.take_oldest`: from the address holding the
        most).  False when every connection holds a session (the newcomer gives way then).

        The old connection gives way, not the newcomer: were newcomers refused, whoever
        holds the connections with silent sockets would keep everyone out; a real client
        authenticates within one round trip of being accepted and is then safe.
        """
        held = len(self._connections) + len(self._refusing) + len(self._handshaking)
        if held < self.config.max_connections:
            return True
        for waiting in (self._refusing, self._handshaking):
            if waiting:
                task, writer = next(iter(waiting.items()))
                del waiting[task]
                writer.transport.abort()
                break
        else:
            victim = self._pending.take_oldest()
            if victim is None:
                return False
            victim.cut()
        self.cut_connections += 1
        _event("cut", None, connections=held, pending=len(self._pending))
        return True

    async def _refuse(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, sid: str, why: str
    ) -> None:
        peer = writer.get_extra_info("peername")
        _event(
            "refused",
            sid,
            reason=why,
            peer=f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else peer,
        )
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
        for writer in self._handshaking.values():
            writer.transport.abort()
        tasks = set(self._connections) | set(self._refusing) | set(self._handshaking)
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


ACCEPT_OUT_OF_RESOURCES = "socket.accept() out of system resource"
"""asyncio's words when ``accept`` fails for want of descriptors or memory (EMFILE, ENFILE,
ENOBUFS, ENOMEM): it stops accepting for a second and tries again, so nothing spins."""


def log_accept_errors(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """An event loop exception handler (``loop.set_exception_handler``): an ``accept`` out
    of descriptors becomes one ``event=accept_failed`` line instead of a traceback; anything
    else goes to the loop's default handler."""
    if context.get("message") == ACCEPT_OUT_OF_RESOURCES:
        log.warning("%s", log_line("accept_failed", error=context.get("exception"), retry_s=1))
        return
    loop.default_exception_handler(context)


async def serve_until(
    config: ServerConfig,
    stop: asyncio.Event,
    *,
    observer: ServiceObserver | None = None,
    alongside: Callable[[TcpServer], AbstractAsyncContextManager[object]] | None = None,
) -> None:
    """Run a server until ``stop`` is set, then shut down gracefully (:meth:`TcpServer.shutdown`).

    The caller decides what ``stop`` means (``brudno serve`` sets it on SIGTERM/SIGINT), so
    the library installs no signal handler.  With worker processes, the fork server is
    started first, off the event loop: it imports the engine, and the first client should not
    wait for that (nor should the loop, which answers ``isready`` meanwhile).

    ``observer`` sees the sessions; ``alongside`` is entered once the server listens and left
    before it shuts down (the monitoring HTTP server, which reports on this one).
    """
    if config.runner_factory is ProcessRunner:
        await asyncio.to_thread(warm_up)
    async with TcpServer(config, observer) as server:
        if alongside is None:
            await stop.wait()
            return
        async with alongside(server):
            await stop.wait()
