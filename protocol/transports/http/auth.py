"""Who may read the metrics and the status page: everyone without a token, else whoever
shows it.

The token is the operator token when one is set (the game token then opens nothing here),
else the game token.  Three ways to show it, all compared in constant time:

* ``Authorization: Bearer <token>`` — Prometheus (``authorization.credentials_file``), curl;
* ``Authorization: Basic`` with the token as the password (any user name);
* the page's login form, which opens a login session: a random id in a cookie, valid for
  ``session_ttl_s`` or until logout revokes it, derived from nothing (a stolen cookie gives
  away no secret and dies with its session).  Browsers need it: ``EventSource`` cannot send
  headers.

The health probes need none of this (they tell nothing but "up" and "ready").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

COOKIE = "brudno_status"
"""The login cookie's name."""
MAX_LOGIN_SESSIONS = 1024
"""Login sessions remembered at once; the oldest is forgotten first."""


class Access:
    """The token rule of one HTTP server, and its login sessions."""

    def __init__(
        self,
        token: str | None,
        *,
        session_ttl_s: float = 8 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._token = None if token is None else token.encode("utf-8")
        self.session_ttl_s = session_ttl_s
        self._clock = clock
        self._sessions: OrderedDict[str, float] = OrderedDict()
        """SHA-256 of each login session's id → when it expires, oldest first (the ids
        themselves are kept nowhere, and a lookup leaks nothing through its timing)."""

    @property
    def open(self) -> bool:
        """No token: every request is allowed."""
        return self._token is None

    def token_matches(self, given: str) -> bool:
        if self._token is None:
            return True
        return hmac.compare_digest(given.encode("utf-8"), self._token)

    def session_alive(self, cookies: Mapping[str, str]) -> bool:
        """The cookie names a login session that has neither expired nor been revoked."""
        session = cookies.get(COOKIE)
        if session is None:
            return False
        self._forget_expired()
        return _digest(session) in self._sessions

    def log_in(self) -> str:
        """Open a login session (after the right token): its id, for the cookie."""
        self._forget_expired()
        while len(self._sessions) >= MAX_LOGIN_SESSIONS:
            self._sessions.popitem(last=False)
        session = secrets.token_urlsafe(32)
        self._sessions[_digest(session)] = self._clock() + self.session_ttl_s
        return session

    def log_out(self, cookies: Mapping[str, str]) -> None:
        """Revoke the login session the cookie names, if any."""
        session = cookies.get(COOKIE)
        if session is not None:
            self._sessions.pop(_digest(session), None)

    def _forget_expired(self) -> None:
        now = self._clock()
        sessions = self._sessions
        while sessions and next(iter(sessions.values())) <= now:
            sessions.popitem(last=False)


def _digest(session: str) -> str:
    return hashlib.sha256(session.encode("utf-8", errors="replace")).hexdigest()


def shown_token(headers: Mapping[str, str]) -> str | None:
    """The token a request shows in its ``Authorization`` header (bearer, or basic auth's
    password); ``None`` when it shows none.  A malformed basic header shows ``""``."""
    scheme, _, value = headers.get("Authorization", "").strip().partition(" ")
    match scheme.lower():
        case "bearer":
            return value.strip()
        case "basic":
            try:
                decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return ""
            return decoded.partition(":")[2]
        case _:
            return None
