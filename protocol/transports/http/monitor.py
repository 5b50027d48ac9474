"""The sessions of one service, as its operators see them: the observer the transports feed.

A :class:`Monitor` is the :class:`~protocol.transports.observer.ServiceObserver` handed to a
TCP server or an MQTT worker.  It gives each session a tap
(:class:`~protocol.transports.http.tap.SessionTap`), counts refusals and failed logins, and
answers the two kinds of question asked of it: a scrape (:meth:`gauges`, for
:mod:`~protocol.transports.http.metrics`) and a page sample (:meth:`snapshot`).  Until the
service is attached (:meth:`attach`) it reports "not ready".
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.transports.http.metrics import Metrics, ServiceGauges
from protocol.transports.http.status import (
    Readiness,
    ServiceKind,
    StatusSnapshot,
)
from protocol.transports.http.tap import SessionTap
from protocol.transports.http.views import ServiceView
from protocol.transports.observer import AuthFailure, Refusal
from protocol.uci.session import EngineSession

MAX_SESSIONS_SHOWN = 64
"""Sessions a page sample carries (the busiest first): a large server's page stays small."""


class Monitor:
    """Taps, metrics and readiness of one service."""

    def __init__(self, kind: ServiceKind) -> None:
        self.kind = kind
        self.metrics = Metrics(kind, self.gauges)
        self._taps: dict[str, SessionTap] = {}
        self._closed_restarts = 0
        self._closed_searches = 0
        self._view: ServiceView | None = None

    def attach(self, view: ServiceView) -> None:
        """The service is up: readiness and its own counters come from ``view`` now."""
        self._view = view

    def detach(self) -> None:
        """The service is going away: not ready any more."""
        self._view = None

    # -- ServiceObserver -----------------------------------------------------------------------
    def session_opened(
        self, sid: str, session: EngineSession, *, restarts: Callable[[], int]
    ) -> SessionTap:
        tap = SessionTap(sid, session, self.metrics, restarts, on_closed=self._closed)
        session.on_result = tap.searched
        self._taps[sid] = tap
        self.metrics.sessions_opened.inc()
        return tap

    def session_refused(self, reason: Refusal) -> None:
        self.metrics.sessions_refused.labels(reason.value).inc()

    def auth_failed(self, reason: AuthFailure) -> None:
        self.metrics.auth_failures.labels(reason.value).inc()

    def _closed(self, tap: SessionTap) -> None:
        if self._taps.pop(tap.sid, None) is tap:
            self._closed_restarts += tap.restarts()
            self._closed_searches += tap.searches

    # -- what is asked of it -------------------------------------------------------------------
    def readiness(self) -> Readiness:
        view = self._view
        return view.readiness() if view is not None else Readiness(False, "starting")

    def gauges(self) -> ServiceGauges:
        """Read at scrape time (see :mod:`protocol.transports.http.metrics`)."""
        view = self._view
        taps = list(self._taps.values())
        used, budget = view.memory_mb() if view is not None else (0, 0)
        restarts = self._closed_restarts + sum(tap.restarts() for tap in taps)
        return ServiceGauges(
            ready=self.readiness().ready,
            sessions_open=len(taps),
            nps=sum(tap.nps() for tap in taps),
            memory_used_mb=used,
            memory_budget_mb=budget,
            worker_restarts=restarts + (view.restarts() if view is not None else 0),
            jobs=view.jobs() if view is not None else None,
        )

    def snapshot(self, dropped_updates: int = 0) -> StatusSnapshot:
        """One sample for the page (see :mod:`protocol.transports.http.status`)."""
        view = self._view
        taps = sorted(self._taps.values(), key=lambda t: (not t.searching, t.sid))
        statuses = tuple(tap.status() for tap in taps[:MAX_SESSIONS_SHOWN])
        return StatusSnapshot(
            service=self.kind,
            readiness=self.readiness(),
            sessions=statuses,
            nps=sum(tap.nps() for tap in taps),
            searches_finished=self._closed_searches + sum(tap.searches for tap in taps),
            fleet=view.fleet() if view is not None else None,
            dropped_updates=dropped_updates,
        )
