"""What a transport tells an onlooker about its sessions (metrics, a status page).

The transports (:mod:`protocol.transports.tcp`, :mod:`protocol.transports.mqtt`) know when a
session opens, which lines go in and out of it, and why a client was turned away; an
operator's tools (:mod:`protocol.transports.http`) want exactly that.  These protocols are
the seam between the two, so a transport never imports the monitoring package (nor its
HTTP and Prometheus libraries) and runs unobserved when nobody asked for monitoring.

The contract for an observer is to be cheap and never to block: it is called on the event
loop for every line a session reads or writes.  It may only note what it sees (the latest
``info`` line, a time stamp); anything costlier happens when someone looks (a scrape, the
page's next sample).  It must not raise: a transport calls it without a guard, as it calls
its own sink.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Protocol

from protocol.uci.session import EngineSession, LineSink


class Refusal(enum.StrEnum):
    """Why a client got no session: the ``reason`` label of the refusal counter."""

    FULL = "full"
    MEMORY = "memory"
    SHUTDOWN = "shutdown"


class AuthFailure(enum.StrEnum):
    """How a client failed to authenticate: the ``reason`` label of the failure counter."""

    WRONG_TOKEN = "wrong_token"
    TIMEOUT = "timeout"
    EVICTED = "evicted"
    """Pushed out of the pending-auth budget by newer connections before its first line."""
    THROTTLED = "throttled"
    """Refused unchecked: too many wrong tokens from its address lately
    (:mod:`~protocol.transports.auth_throttle`)."""


class SessionObserver(Protocol):
    """Sees one session's lines, both ways, in the order the session sees them."""

    def line_in(self, line: str) -> None:
        """A line the session is about to handle."""

    def line_out(self, line: str) -> None:
        """A line the session sent (``info`` lines included, before any transport drops)."""

    def closed(self) -> None:
        """The session has ended; no more lines follow."""


class ServiceObserver(Protocol):
    """Sees a whole service: the sessions it opens and the clients it turns away."""

    def session_opened(
        self, sid: str, session: EngineSession, *, restarts: Callable[[], int]
    ) -> SessionObserver:
        """A session started; ``restarts`` tells, when asked, how many times its search
        process had to be started again (a crash, a kill)."""
        ...

    def session_refused(self, reason: Refusal) -> None: ...

    def auth_failed(self, reason: AuthFailure) -> None: ...


class ObservedSink:
    """A :class:`~protocol.uci.session.LineSink` that shows every line to an observer, then
    passes it on unchanged (dropping stays the inner sink's business).

    The observer is set once the session exists (it is built with this sink, and the
    observer wants to see the session): until then, and without one, lines just pass.
    """

    __slots__ = ("_sink", "observer")

    def __init__(self, sink: LineSink, observer: SessionObserver | None = None) -> None:
        self._sink = sink
        self.observer = observer

    def send(self, line: str, *, droppable: bool = False) -> None:
        if self.observer is not None:
            self.observer.line_out(line)
        self._sink.send(line, droppable=droppable)
