"""What ``brudno serve`` and its clients agree on beyond UCI itself: the default port, the
``auth`` line, and the words of the refusals a client must tell apart.

A module of its own so that clients (:mod:`protocol.transports.connect`) depend on this small
contract instead of on the server, and cannot drift from what the server says.
"""

from __future__ import annotations

DEFAULT_PORT = 4000

MAX_PORT = 65535
"""The highest TCP port number (ports are 16-bit)."""

AUTH_COMMAND = "auth"
"""The first line a token server expects: ``auth <token>``."""

RETRY_LATER = "try again later"
"""Ends every refusal for lack of capacity, so clients (``brudno ping``) can tell "busy"
from "broken"."""

AUTH_FAILED = "authentication failed"
"""How the server's answer to a wrong or missing ``auth`` line begins (after ``info string
error:``), so clients can recognise it."""

ALREADY_AUTHENTICATED = "already authenticated"
"""The answer to a further ``auth`` line (never echoed: it holds the token)."""

PENDING_FULL = f"too many connections waiting to authenticate; {RETRY_LATER}"
"""Said to a pending connection evicted to make room for a newer one (see
:class:`~protocol.transports.tcp.pending_auth.PendingAuth`); it ends in :data:`RETRY_LATER`
because it is a matter of capacity, not of a wrong token."""


def auth_line(token: str) -> str:
    """The line a client sends first to a server with a token."""
    return f"{AUTH_COMMAND} {token}"
