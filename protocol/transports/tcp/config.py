"""The TCP server's settings, and the checks it refuses to start without.

One frozen dataclass, so the application builds it once (from its command line, its
environment, a test's keywords) and the server never reads anything else.  :meth:`check`
turns unsafe or meaningless settings into :class:`ServerConfigError` before a socket is
bound: above all the loopback rule, because a server reachable from the network without a
token hands every stranger a process and a hash table.
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from protocol.transports.auth_throttle import ThrottlePolicy
from protocol.transports.tcp.wire import DEFAULT_PORT, MAX_PORT
from protocol.transports.tls import DEFAULT_HANDSHAKE_TIMEOUT_S, ServerTls
from protocol.uci.options import EvalFileAccess
from protocol.uci.runner import SearchRunner
from protocol.uci.session import MAX_LINE_LENGTH
from protocol.uci.syzygy import SyzygyAccess
from protocol.uci.workers import ProcessRunner


class ServerConfigError(ValueError):
    """A configuration the server refuses to start with (explained in the message)."""


class TokenRequiredError(ServerConfigError):
    """Binding beyond loopback without a token.  A type of its own so the application can
    add where a token comes from (its options, its environment), which the library does not
    know."""


def default_max_threads() -> int:
    """Half the cores (at least 1): one session cannot take the whole machine."""
    return max(1, (os.cpu_count() or 1) // 2)


def default_total_threads() -> int:
    """The machine's cores."""
    return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    """0 picks a free port (see :attr:`~protocol.transports.tcp.server.TcpServer.port`)."""
    max_sessions: int = 64
    """Authenticated sessions at once (each may own a worker process and a Hash table)."""
    max_pending_auth: int = 16
    """Connections still waiting to send ``auth`` (only with a token), kept apart from
    ``max_sessions`` so that silent sockets cannot take the session slots; when full, the
    oldest pending connection is evicted (see
    :class:`~protocol.transports.tcp.pending_auth.PendingAuth`)."""
    max_pending_per_address: int = 4
    """Of those, how many one client address may hold (IPv6: one /64); beyond it the
    address's own oldest pending connection is evicted, so one host's flood cannot evict
    anyone else.  Behind a proxy every client has the proxy's address: raise it to
    ``max_pending_auth`` there."""
    token: str | None = None
    auth_throttle: ThrottlePolicy = field(default_factory=ThrottlePolicy)
    """Failed ``auth`` lines per address before, and the penalties after which, its logins
    are refused unchecked (:mod:`~protocol.transports.auth_throttle`)."""
    max_memory_mb: int = 2048
    """Upper bound on the sum of the sessions' Hash sizes and helper processes (MiB)."""
    max_threads: int = field(default_factory=default_max_threads)
    """The most ``Threads`` one session is granted (search processes)."""
    max_total_threads: int = field(default_factory=default_total_threads)
    """The sum of ``Threads`` over all sessions (each counted with at least its main search)
    within which extra threads are granted: the machine's cores by default."""
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
    syzygy_dir: Path | None = None
    """The directory ``SyzygyPath`` values name tablebase directories in (``.`` for itself);
    ``None`` refuses every directory."""
    book_dir: Path | None = None
    """The directory ``BookFile`` values name opening books in; ``None`` refuses every file."""
    max_connections: int = 1024
    """Open connections at once (sessions, pending, closing); a newcomer beyond it cuts the
    oldest connection that holds no session (see :meth:`TcpServer._make_room`)."""
    tls: ServerTls | None = None
    """Speak TLS with this (renewable) certificate; ``None``: plain TCP."""
    tls_handshake_timeout_s: float = DEFAULT_HANDSHAKE_TIMEOUT_S
    """A connection that has not completed its TLS handshake by then is cut off."""

    def eval_files(self) -> EvalFileAccess:
        """The sessions' ``EvalFile`` policy; :class:`ServerConfigError` if the directory is
        unusable."""
        try:
            return EvalFileAccess.for_server(self.eval_file_dir)
        except ValueError as exc:
            raise ServerConfigError(f"--eval-file-dir: {exc}") from None

    def book_files(self) -> EvalFileAccess:
        """The sessions' ``BookFile`` policy (the same rules as ``EvalFile``'s)."""
        try:
            return EvalFileAccess.for_server(self.book_dir)
        except ValueError as exc:
            raise ServerConfigError(f"--book-dir: {exc}") from None

    def syzygy(self) -> SyzygyAccess:
        """The sessions' ``SyzygyPath`` policy; :class:`ServerConfigError` if the directory
        is unusable."""
        try:
            return SyzygyAccess.for_server(self.syzygy_dir)
        except ValueError as exc:
            raise ServerConfigError(f"--syzygy-dir: {exc}") from None

    def check(self) -> None:
        """Raise :class:`ServerConfigError` for settings that are unsafe or meaningless."""
        if self.token is not None and not self.token.strip():
            raise ServerConfigError("the token is empty")
        if self.token is not None and any(c.isspace() for c in self.token):
            raise ServerConfigError("the token must not contain whitespace")
        if self.token is None and not is_loopback(self.host):
            raise TokenRequiredError(f"binding to {self.host!r} (not loopback) requires a token")
        if not 0 <= self.port <= MAX_PORT:
            raise ServerConfigError(f"port {self.port} out of range 0..65535")
        for name in (
            "max_sessions",
            "max_pending_auth",
            "max_pending_per_address",
            "max_memory_mb",
            "max_threads",
            "max_total_threads",
            "max_line_bytes",
            "output_buffer_bytes",
        ):
            if getattr(self, name) < 1:
                raise ServerConfigError(f"{name} must be at least 1")
        if self.max_connections <= self.max_sessions:
            raise ServerConfigError("max_connections must be more than max_sessions")
        if not (self.auth_timeout_s > 0 and math.isfinite(self.auth_timeout_s)):
            raise ServerConfigError("auth_timeout_s must be a positive number of seconds")
        try:
            self.auth_throttle.check()
        except ValueError as exc:
            raise ServerConfigError(f"auth_throttle: {exc}") from None
        if not (self.tls_handshake_timeout_s > 0 and math.isfinite(self.tls_handshake_timeout_s)):
            raise ServerConfigError("tls_handshake_timeout_s must be a positive number of seconds")
        self.eval_files()
        self.syzygy()
        self.book_files()


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
