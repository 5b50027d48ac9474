"""What a worker is told to be: its broker, topics, size, limits and timings, checked once.

A worker takes a :class:`WorkerConfig` and nothing else, so the same worker runs from the
``brudno mqtt`` command (:mod:`brudno.commands.mqtt`), from tests and from other programs.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from protocol.transports.mqtt.broker import BrokerSettings
from protocol.transports.mqtt.errors import MqttConfigError
from protocol.transports.mqtt.topics import (
    DEFAULT_GROUP,
    DEFAULT_PREFIX,
    ReplyTopics,
    check_topic_level,
    check_topic_prefix,
)
from protocol.uci.options import EvalFileAccess
from protocol.uci.runner import SearchRunner
from protocol.uci.syzygy import SyzygyAccess
from protocol.uci.workers import ProcessRunner

_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")

_MAX_CONCURRENCY = 65535
"""The concurrency is sent as MQTT 5's Receive Maximum, a two-byte integer."""


def default_worker_id() -> str:
    """``<host>-<pid>``: unique per process on a machine, and per container (where the host
    name is the container's and the pid is stable across restarts)."""
    host = _ID_CHARS.sub("-", socket.gethostname()).strip("-") or "worker"
    return f"{host}-{os.getpid()}"


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    broker: BrokerSettings = field(default_factory=BrokerSettings)
    prefix: str = DEFAULT_PREFIX
    group: str = DEFAULT_GROUP
    concurrency: int = 1
    """Jobs searched at once: the Receive Maximum announced to the broker and the number of
    search processes.  One per core the worker may use."""
    worker_id: str = field(default_factory=default_worker_id)
    session_expiry_s: int = 0
    """MQTT session expiry: 0 ends the session with the connection (see the package notes on
    lost workers, :mod:`protocol.transports.mqtt`)."""
    max_job_s: float = 300.0
    """A search still running after this long is told to stop (its bestmove still goes out)."""
    max_hash_mb: int = 256
    """The largest ``Hash`` a job may ask for, per concurrent job."""
    max_threads: int = 1
    """The most ``Threads`` a job may ask for (search processes; more is cut down to this)."""
    max_total_threads: int | None = None
    """The sum of ``Threads`` over the jobs searched at once, each counted with at least its
    main search; ``None``: the machine's cores, or ``concurrency`` if that is more."""
    dedup_bytes: int = 8 << 20
    """What the memory of recent jobs may hold (their keys and cached replies, in bytes):
    bounded by size, not count, because one MultiPV reply can be tens of KB."""
    reply_prefixes: tuple[str, ...] = ()
    """Topic prefixes a job's response topic must start with; empty: ``<prefix>/replies/``
    (see :class:`~protocol.transports.mqtt.topics.ReplyTopics`)."""
    max_queued_replies: int = 1024
    """Replies waiting in the MQTT client's outgoing queue; beyond it a publish fails at once
    (paho's queue is unbounded otherwise)."""
    backlog: int = 16
    """QoS 0 jobs held waiting for a free slot; more are dropped.  The broker's Receive
    Maximum holds back QoS 1 jobs but not QoS 0 ones, so without this bound a flood of QoS 0
    jobs would queue in the worker's memory without limit (see *Intake* in
    :mod:`protocol.transports.mqtt.worker`)."""
    reconnect_initial_s: float = 0.5
    reconnect_max_s: float = 30.0
    shutdown_timeout_s: float = 10.0
    """On SIGTERM: time running jobs get to finish before they are stopped."""
    runner_factory: Callable[[int], SearchRunner] = field(default=ProcessRunner)
    status_file: Path | None = None
    """Kept at ``online`` while connected and subscribed, ``offline`` otherwise: a local
    health check (a container's) reads it without talking to the broker."""
    eval_file_dir: Path | None = None
    """The directory a job's ``EvalFile`` names a file in; ``None`` refuses every file (a
    job would otherwise read any file on the worker's machine)."""
    syzygy_dir: Path | None = None
    """The directory a job's ``SyzygyPath`` names tablebase directories in (``.`` for
    itself); ``None`` refuses every directory, as for ``eval_file_dir``."""
    book_dir: Path | None = None
    """The directory a job's ``BookFile`` names an opening book in; ``None`` refuses every
    file, as for ``eval_file_dir``."""

    def total_threads(self) -> int:
        """:attr:`max_total_threads`, with its default filled in."""
        if self.max_total_threads is not None:
            return self.max_total_threads
        return max(self.concurrency, os.cpu_count() or 1)

    def reply_topics(self) -> ReplyTopics:
        """Where this worker may publish replies; :class:`MqttConfigError` if a prefix is bad."""
        return ReplyTopics.for_fleet(self.prefix, self.reply_prefixes)

    def eval_files(self) -> EvalFileAccess:
        """The jobs' ``EvalFile`` policy; :class:`MqttConfigError` if the directory is
        unusable."""
        try:
            return EvalFileAccess.for_server(self.eval_file_dir)
        except ValueError as exc:
            raise MqttConfigError(f"--eval-file-dir: {exc}") from None

    def book_files(self) -> EvalFileAccess:
        """The jobs' ``BookFile`` policy (the same rules as ``EvalFile``'s)."""
        try:
            return EvalFileAccess.for_server(self.book_dir)
        except ValueError as exc:
            raise MqttConfigError(f"--book-dir: {exc}") from None

    def syzygy(self) -> SyzygyAccess:
        """The jobs' ``SyzygyPath`` policy; :class:`MqttConfigError` if the directory is
        unusable."""
        try:
            return SyzygyAccess.for_server(self.syzygy_dir)
        except ValueError as exc:
            raise MqttConfigError(f"--syzygy-dir: {exc}") from None

    def check(self) -> None:
        self.broker.check()
        check_topic_prefix(self.prefix)
        check_topic_level("group", self.group)
        check_topic_level("worker id", self.worker_id)
        if not 1 <= self.concurrency <= _MAX_CONCURRENCY:
            raise MqttConfigError("concurrency must be in 1..65535")
        if self.session_expiry_s < 0:
            raise MqttConfigError("session expiry must not be negative")
        if self.max_job_s <= 0 or self.shutdown_timeout_s < 0:
            raise MqttConfigError("times must be positive")
        if self.max_hash_mb < 1 or self.dedup_bytes < 1 or self.max_queued_replies < 1:
            raise MqttConfigError("max hash, dedup bytes and queued replies must be at least 1")
        if self.max_threads < 1 or (self.max_total_threads or 1) < 1:
            raise MqttConfigError("thread limits must be at least 1")
        if self.backlog < 0:
            raise MqttConfigError("backlog must not be negative")
        if self.reconnect_initial_s <= 0 or self.reconnect_max_s <= 0:
            raise MqttConfigError("reconnect delays must be positive")
        self.reply_topics()
        self.eval_files()
        self.syzygy()
        self.book_files()
