"""One service's Prometheus metrics, in a registry of its own.

A registry per service (not prometheus-client's global one), so that two servers in one
process (tests start several) keep their counts apart, and nothing another library
registers globally leaks into our scrape.

Two kinds of metric, by where the number lives:

* events counted as they happen (:class:`Metrics`' counters and histograms), incremented by
  the session taps (:mod:`protocol.transports.http.tap`) and the monitor — once per ``go``,
  ``bestmove``, refusal, failed login: never per node or per ``info`` line;
* levels and totals that something else already keeps (sessions open, memory held, search
  speed, worker restarts, the MQTT worker's job counters), read only when Prometheus scrapes,
  through :class:`ServiceGauges` — so they cost nothing between scrapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from protocol.transports.http.status import ServiceKind

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
"""``go`` → ``bestmove`` (seconds): from bullet moves to long analyses."""
OVERSHOOT_BUCKETS = (0.0, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""How much later than ``go movetime`` asked (seconds); 0 is on time (or early)."""
STOP_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""``stop`` → ``bestmove`` (seconds): the engine's promise is "at once"."""

MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class JobCounts:
    """An MQTT worker's job counters (totals since it started)."""

    received: int
    answered: int
    failed: int
    retried: int
    """Jobs seen again (a broker's redelivery, a client's resend) and answered once."""
    rejected: int
    dropped: int
    running: int
    workers_online: int


@dataclass(frozen=True, slots=True)
class ServiceGauges:
    """What a scrape reads from the running service."""

    ready: bool
    sessions_open: int
    nps: int
    memory_used_mb: int
    memory_budget_mb: int
    worker_restarts: int
    jobs: JobCounts | None = None


class Metrics:
    """The counters and histograms of one service, and its exposition."""

    def __init__(self, kind: ServiceKind, gauges: Callable[[], ServiceGauges]) -> None:
        self.kind = kind
        registry = self.registry = CollectorRegistry(auto_describe=False)
        self.sessions_opened = Counter(
            "brudno_sessions_opened",
            "Sessions started (for mqtt: jobs given a session).",
            registry=registry,
        )
        self.sessions_refused = Counter(
            "brudno_sessions_refused",
            "Clients turned away without a session, by reason.",
            ["reason"],
            registry=registry,
        )
        self.auth_failures = Counter(
            "brudno_auth_failures",
            "Connections that failed to authenticate, by reason.",
            ["reason"],
            registry=registry,
        )
        self.searches_started = Counter(
            "brudno_searches_started", "go commands received.", registry=registry
        )
        self.searches_finished = Counter(
            "brudno_searches_finished", "bestmove answers sent.", registry=registry
        )
        self.nodes = Counter(
            "brudno_nodes_searched",
            "Nodes searched by finished searches.",
            registry=registry,
        )
        self.bestmove_latency = Histogram(
            "brudno_bestmove_latency_seconds",
            "From a go line read to its bestmove written, for searches that end by themselves.",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.bestmove_overshoot = Histogram(
            "brudno_bestmove_overshoot_seconds",
            "How much later than go movetime the bestmove was written (0 when on time).",
            buckets=OVERSHOOT_BUCKETS,
            registry=registry,
        )
        self.stop_latency = Histogram(
            "brudno_stop_latency_seconds",
            "From a stop line read to the bestmove written.",
            buckets=STOP_BUCKETS,
            registry=registry,
        )
        self.emergency_moves = Counter(
            "brudno_emergency_moves",
            "bestmoves played without a completed search (a starved or failed search).",
            registry=registry,
        )
        self.page_updates_dropped = Counter(
            "brudno_status_updates_dropped",
            "Status page samples replaced by newer ones before a slow browser took them.",
            registry=registry,
        )
        registry.register(_ServiceCollector(kind, gauges))
        ProcessCollector(registry=registry)  # the service process's memory, CPU, files

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)


class _ServiceCollector(Collector):
    """The levels and totals read at scrape time (see the module notes)."""

    def __init__(self, kind: ServiceKind, gauges: Callable[[], ServiceGauges]) -> None:
        self._kind = kind
        self._gauges = gauges

    def describe(self) -> list[Metric]:
        return []  # nothing to check for clashes at registration; collect() is the truth

    def collect(self) -> Iterator[Metric]:
        g = self._gauges()
        info = GaugeMetricFamily(
            "brudno_service_info", "Which service this is.", labels=["service"]
        )
        info.add_metric([self._kind.value], 1.0)
        yield info
        yield GaugeMetricFamily(
            "brudno_ready", "1 while the service takes work (/readyz).", value=float(g.ready)
        )
        yield GaugeMetricFamily(
            "brudno_sessions_open", "Sessions open now (mqtt: jobs searching).", g.sessions_open
        )
        yield GaugeMetricFamily(
            "brudno_nodes_per_second", "Searching sessions' nodes per second, together.", g.nps
        )
        yield GaugeMetricFamily(
            "brudno_memory_used_bytes",
            "Hash tables and search helpers held by the sessions (what the budget counts).",
            g.memory_used_mb * MIB,
        )
        yield GaugeMetricFamily(
            "brudno_memory_budget_bytes",
            "The budget they must fit (serve: --max-memory-mb; mqtt: --max-hash x concurrency).",
            g.memory_budget_mb * MIB,
        )
        yield CounterMetricFamily(
            "brudno_worker_restarts",
            "Search processes started again after one died, or replaced because stuck.",
            g.worker_restarts,
        )
        jobs = g.jobs
        if jobs is None:
            return
        for name, value, text in (
            ("received", jobs.received, "Job messages received."),
            ("answered", jobs.answered, "Jobs answered with their bestmove."),
            ("failed", jobs.failed, "Jobs ended by an internal error."),
            ("retried", jobs.retried, "Jobs delivered again (redelivery, resend), answered once."),
            ("rejected", jobs.rejected, "Jobs refused as malformed."),
            ("dropped", jobs.dropped, "QoS 0 jobs dropped by a full intake."),
        ):
            yield CounterMetricFamily(f"brudno_mqtt_jobs_{name}", text, value)
        yield GaugeMetricFamily("brudno_mqtt_jobs_running", "Jobs searching now.", jobs.running)
        yield GaugeMetricFamily(
            "brudno_mqtt_workers_online",
            "Workers whose retained presence is online (as this worker sees it).",
            jobs.workers_online,
        )
