"""Who may read the metrics and the status page: everyone without a token, else whoever
shows it.

Three ways to show it, for three kinds of client, all compared in constant time:

* ``Authorization: Bearer <token>`` — Prometheus (``authorization.credentials_file``), curl;
* ``Authorization: Basic`` with the token as the password (any user name) — scrapers and
  probes that only speak basic auth;
* a cookie set by the page's login form — browsers, whose ``EventSource`` cannot send
  headers.  The cookie holds an HMAC of the token, not the token: the token itself never
  appears in any response, and a stolen cookie does not give away the game port's secret.

The health probes need none of this (they tell nothing but "up" and "ready").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping

COOKIE = "brudno_status"
"""The login cookie's name."""
_COOKIE_CONTEXT = b"brudno status page login v1"


class Access:
    """The token rule of one HTTP server."""

    def __init__(self, token: str | None) -> None:
        self._token = None if token is None else token.encode("utf-8")
        self._cookie = (
            None
            if self._token is None
            else hmac.new(self._token, _COOKIE_CONTEXT, hashlib.sha256).hexdigest()
        )

    @property
    def open(self) -> bool:
        """No token: every request is allowed."""
        return self._token is None

    def token_matches(self, given: str) -> bool:
        if self._token is None:
            return True
        return hmac.compare_digest(given.encode("utf-8"), self._token)

    def cookie_value(self) -> str:
        """What the login form sets (only meaningful with a token)."""
        assert self._cookie is not None, "no login without a token"
        return self._cookie

    def allows(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> bool:
        """Whether a request with these headers and cookies may see protected pages."""
        if self._token is None:
            return True
        cookie = cookies.get(COOKIE)
        if (
            cookie is not None
            and self._cookie is not None
            and hmac.compare_digest(cookie.encode("utf-8"), self._cookie.encode("ascii"))
        ):
            return True
        scheme, _, value = headers.get("Authorization", "").strip().partition(" ")
        match scheme.lower():
            case "bearer":
                return self.token_matches(value.strip())
            case "basic":
                try:
                    decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    return False
                return self.token_matches(decoded.partition(":")[2])
            case _:
                return False
