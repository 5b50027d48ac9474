"""The monitoring HTTP server's settings, and the checks it refuses to start without.

The rule is the game port's (:mod:`protocol.transports.tcp.config`): loopback without a
token, any address with one.  The page shows positions and the metrics show load, which is
nobody else's business, and the token is what keeps strangers out of both.  With an operator
token, only it does: players, who hold the game token, see neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.transports.auth_throttle import ThrottlePolicy
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
    """The game token: needed for ``/metrics``, the page and its feed when set and no
    ``operator_token`` is; the health probes stay open."""
    operator_token: str | None = None
    """When set, the only token that opens ``/metrics`` and the page (``token`` does not)."""
    session_ttl_s: float = 8 * 3600.0
    """How long a login through the page's form lasts (logout ends it sooner)."""
    auth_throttle: ThrottlePolicy = field(default_factory=ThrottlePolicy)
    """The brute-force limit on wrong tokens (when the server is not handed the game port's
    :class:`~protocol.transports.auth_throttle.AuthThrottle` to share)."""

    sample_interval_s: float = 0.5
    """How often the page's feed samples the sessions (and so its most frequent update)."""
    max_page_clients: int = 16
    """Pages open at once; more are told 503 (each holds a connection and a queue)."""
    tls: ServerTls | None = None
    """Serve HTTPS with this (renewable) certificate, shared with the game port (the login
    cookie is then ``Secure``)."""
    tls_handshake_timeout_s: float = DEFAULT_HANDSHAKE_TIMEOUT_S
    max_connections: int = 128
    """Open connections at once; a newcomer beyond it closes the oldest idle one."""
    keepalive_timeout_s: float = 5.0
    """An idle connection (no request in progress, or none yet) is closed after this long."""

    @property
    def guard_token(self) -> str | None:
        """The token this port asks for: the operator's if set, else the game token."""
        return self.operator_token if self.operator_token is not None else self.token

    def check(self) -> None:
        for token in (self.token, self.operator_token):
            if token is not None and (not token.strip() or token != token.strip()):
                raise HttpConfigError("the token must not be empty or start or end with blanks")
        if self.guard_token is None and not is_loopback(self.host):
            raise HttpConfigError(
                f"serving metrics on {self.host!r} (not loopback) requires a token"
            )
        if not 0 <= self.port <= MAX_PORT:
            raise HttpConfigError(f"port {self.port} out of range 0..65535")
        if not self.sample_interval_s > 0:
            raise HttpConfigError("the sample interval must be positive")
        if self.max_page_clients < 1:
            raise HttpConfigError("max_page_clients must be at least 1")
        if not self.session_ttl_s > 0:
            raise HttpConfigError("the login session lifetime must be positive")
        try:
            self.auth_throttle.check()
        except ValueError as exc:
            raise HttpConfigError(f"auth_throttle: {exc}") from None
        if not self.keepalive_timeout_s > 0:
            raise HttpConfigError("the idle timeout must be positive")
        if self.max_connections <= self.max_page_clients:
            raise HttpConfigError("max_connections must be more than max_page_clients")
