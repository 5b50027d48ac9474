"""What the monitor reads from the service it watches: a TCP server or an MQTT worker.

A :class:`ServiceView` answers the questions that do not come from the sessions' lines:
is the service ready, how much memory do its sessions hold against what budget, how often
did search processes have to be restarted, and (for a worker) its jobs and fleet.  Each
answer reads the service's own counters at the moment of asking; none is kept here.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from protocol.transports.http.metrics import JobCounts
from protocol.transports.http.status import FleetStatus, Readiness, ServiceKind
from protocol.transports.mqtt.worker import MqttWorker
from protocol.transports.tcp.server import TcpServer

RATE_WINDOW_S = 10.0
"""Jobs per second are counted over about this many seconds."""


class ServiceView(Protocol):
    kind: ServiceKind

    def readiness(self) -> Readiness: ...

    def memory_mb(self) -> tuple[int, int]:
        """(held now, budget)."""
        ...

    def restarts(self) -> int:
        """Search process restarts the service counts itself (beyond its sessions')."""
        ...

    def jobs(self) -> JobCounts | None: ...

    def fleet(self) -> FleetStatus | None: ...


class TcpView:
    """``brudno serve``: ready while it would give a new client a session."""

    kind = ServiceKind.SERVE

    def __init__(self, server: TcpServer) -> None:
        self._server = server

    def readiness(self) -> Readiness:
        server = self._server
        if server.accepting:
            return Readiness(True, "accepting sessions")
        if server.sessions >= server.config.max_sessions:
            return Readiness(False, f"full: {server.sessions} sessions")
        return Readiness(False, "not listening (starting or shutting down)")

    def memory_mb(self) -> tuple[int, int]:
        memory = self._server.memory
        return memory.used_mb, memory.limit_mb

    def restarts(self) -> int:
        return 0  # counted per session (its connection knows its runner)

    def jobs(self) -> JobCounts | None:
        return None

    def fleet(self) -> FleetStatus | None:
        return None


class WorkerView:
    """``brudno mqtt``: ready while connected and subscribed; its fleet from ``online``."""

    kind = ServiceKind.MQTT

    def __init__(
        self,
        worker: MqttWorker,
        online: Callable[[], list[str]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._worker = worker
        self._online = online
        self._clock = clock
        self._answers: deque[tuple[float, int]] = deque()
        """(time, jobs answered) at each look, over the last :data:`RATE_WINDOW_S`."""

    def readiness(self) -> Readiness:
        if self._worker.connected.is_set():
            return Readiness(True, "subscribed to jobs")
        return Readiness(False, "not connected to the broker")

    def memory_mb(self) -> tuple[int, int]:
        config = self._worker.config
        return self._worker.hash_in_use_mb, config.max_hash_mb * config.concurrency

    def restarts(self) -> int:
        return self._worker.restarts

    def jobs(self) -> JobCounts:
        stats = self._worker.stats
        return JobCounts(
            received=stats.received,
            answered=stats.answered,
            failed=stats.failed,
            retried=stats.duplicates,
            rejected=stats.rejected,
            dropped=stats.dropped,
            running=self._worker.running_jobs,
            workers_online=len(self._online()),
        )

    def fleet(self) -> FleetStatus:
        worker = self._worker
        answered = worker.stats.answered
        now = self._clock()
        samples = self._answers
        samples.append((now, answered))
        while len(samples) > 2 and now - samples[1][0] >= RATE_WINDOW_S:  # noqa: PLR2004
            samples.popleft()
        first_time, first_count = samples[0]
        elapsed = now - first_time
        rate = (answered - first_count) / elapsed if elapsed > 0 else 0.0
        return FleetStatus(
            worker=worker.config.worker_id,
            workers_online=tuple(self._online()),
            jobs_per_s=rate,
            jobs_answered=answered,
            jobs_running=worker.running_jobs,
        )
