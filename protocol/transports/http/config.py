"""The monitoring HTTP server's settings, and the checks it refuses to start without.

The rule is the game port's (:mod:`protocol.transports.tcp.config`): loopback without a
token, any address with one.  The page shows positions and the metrics show load, which is
nobody else's business, and the token is what keeps strangers out of both.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.transports.tcp.config import is_loopback
from protocol.transports.tcp.wire import MAX_PORT
from protocol.transports.tls import DEFAULT_HANDSHAKE_TIMEOUT_S, ServerTls


class HttpConfigError(ValueError):
    """A configuration the HTTP server refuses to start with (explained in the message)."""


@dataclass(frozen=True, slots=True)
class HttpConfig:
    host: str = "127.0.0.1"
    port: int = 9400
    """0 picks a free port (see :attr:`~protocol.transports.http.server.HttpServer.port`)."""
    token: str | None = None
    """Needed for ``/metrics``, the page and its feed when set; the health probes stay open."""
    sample_interval_s: float = 0.5
    """How often the page's feed samples the sessions (and so its most frequent update)."""
    max_page_clients: int = 16
    """Pages open at once; more are told 503 (each holds a connection and a queue)."""
    tls: ServerTls | None = None
    """Serve HTTPS with this (renewable) certificate, shared with the game port."""
    tls_handshake_timeout_s: float = DEFAULT_HANDSHAKE_TIMEOUT_S
    max_connections: int = 128
    """Open connections at once; a newcomer beyond it closes the oldest idle one."""
    keepalive_timeout_s: float = 5.0
    """An idle connection (no request in progress, or none yet) is closed after this long."""

    def check(self) -> None:
        if self.token is not None and (not self.token.strip() or self.token != self.token.strip()):
            raise HttpConfigError("the token must not be empty or start or end with blanks")
        if self.token is None and not is_loopback(self.host):
            raise HttpConfigError(
                f"serving metrics on {self.host!r} (not loopback) requires a token"
            )
        if not 0 <= self.port <= MAX_PORT:
            raise HttpConfigError(f"port {self.port} out of range 0..65535")
        if not self.sample_interval_s > 0:
            raise HttpConfigError("the sample interval must be positive")
        if self.max_page_clients < 1:
            raise HttpConfigError("max_page_clients must be at least 1")
        if not self.keepalive_timeout_s > 0:
            raise HttpConfigError("the idle timeout must be positive")
        if self.max_connections <= self.max_page_clients:
            raise HttpConfigError("max_connections must be more than max_page_clients")
