"""The worker of an MQTT fleet: takes jobs from the broker, searches them, publishes the answers.

The wire is :mod:`protocol.transports.mqtt.wire`, a job's checks and reply thinning
:mod:`protocol.transports.mqtt.jobs`; this module takes jobs in, runs each once and delivers
each answer once.  :func:`serve_mqtt` runs until its ``stop`` event is set; it neither prints
nor handles signals, and logs every event as one ``key=value`` line.

Guarantees: replies go only under the allowed reply prefixes
(:class:`~protocol.transports.mqtt.topics.ReplyTopics`), other jobs are rejected unanswered;
a duplicate (:class:`~protocol.transports.mqtt.wire.JobKey`) joins the running job or gets
the cached reply at most :data:`MAX_REPLAYS` times (memory bounded by ``dedup_bytes``); QoS 0
jobs beyond ``concurrency + backlog`` pending are dropped, QoS 1 never, so at most ``2 *
concurrency + backlog`` jobs are held; a job is acknowledged only once its terminal reply is
published, and a reply the broker refuses or that fails :data:`MAX_REPLY_ATTEMPTS` times is
given up.  Each job runs in a fresh :class:`EngineSession` on a kept slot
(:mod:`protocol.transports.mqtt.slots`); only the table carries over, cleared by
``ucinewgame`` or different evaluation options.

Why: docs/deploy.md, *Flow control, acknowledgement, duplicates*, *When a worker or the broker
goes away* and *Why the services are built as they are*.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes

from protocol.text import printable
from protocol.transports.events import log_line
from protocol.transports.mqtt.backoff import Backoff
from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.connection import (
    BrokerConnection,
    Published,
    PublishOutcome,
    bound_outgoing_queue,
    connect_failure_is_fatal,
    reason_failed,
)
from protocol.transports.mqtt.errors import FatalBrokerError
from protocol.transports.mqtt.jobs import (
    Job,
    JobError,
    JobFailedError,
    ReplyCollector,
    TerminalReply,
    internal_error_line,
    parse_job,
)
from protocol.transports.mqtt.slots import EVALUATION_OPTIONS, Slot
from protocol.transports.mqtt.topics import (
    game_from_topic,
    jobs_filter,
    status_topic,
    valid_response_topic,
)
from protocol.transports.mqtt.wire import (
    OFFLINE_EXPIRY_S,
    JobKey,
    Presence,
    QoS,
    ReplyStatus,
    correlation_of,
    new_properties,
    reply_properties,
    response_topic_of,
)
from protocol.transports.observer import ObservedSink, ServiceObserver
from protocol.transports.thread_budget import ThreadBudget
from protocol.uci.options import OptionName
from protocol.uci.session import EngineSession, State
from protocol.uci.workers import ProcessRunner, warm_up

log = logging.getLogger(__name__)

MAX_REPLAYS = 1
"""How often a finished job's terminal reply is published again for duplicates: once, for the
client that resends after losing its connection (a running job's ``accepted`` likewise)."""

MAX_REPLY_ATTEMPTS = 3
"""Connections a terminal reply may be tried on before it is given up (logged, counted)."""

RECORD_OVERHEAD_BYTES = 256
"""What a remembered job costs besides its topic, correlation data and reply text."""

STOP_GRACE_S = 10.0
"""After ``stop``, how long a search may take to hand back its move before its runner is
replaced (the session then still answers with a legal move)."""


@dataclass(slots=True)
class WorkerStats:
    """Counters for logs and tests."""

    received: int = 0
    searched: int = 0
    """Jobs that ran a search (each job at most once)."""
    rejected: int = 0
    duplicates: int = 0
    connections: int = 0
    unanswerable: int = 0
    """Jobs without a usable response topic (acknowledged and dropped)."""
    dropped: int = 0
    """QoS 0 jobs dropped because the intake was full (see *Intake* in the module notes)."""
    failed: int = 0
    """Jobs that ended with an internal error (answered ``error``, logged with an incident)."""
    bad_reply_topic: int = 0
    """Jobs whose response topic lies outside the reply prefixes (also counted in
    ``rejected``): dropped unanswered."""
    duplicates_ignored: int = 0
    """Duplicates past :data:`MAX_REPLAYS`: acknowledged, not answered again."""
    replies_refused: int = 0
    """Terminal replies the broker refused (PUBACK reason code >= 0x80)."""
    replies_given_up: int = 0
    """Terminal replies dropped after :data:`MAX_REPLY_ATTEMPTS` failed connections."""
    tables_cleared: int = 0
    """Jobs before which the slot's table was cleared for a change of evaluation."""
    answered: int = 0
    """Jobs that ended with their ``bestmove`` (a ``done`` reply)."""
    peak_pending: int = 0
    """The most jobs pending at once (taken in, terminal reply not yet handed to the broker):
    the bound the intake keeps, visible to tests and operators."""


@dataclass(slots=True)
class _Delivery:
    """One delivery of a job, acknowledged once the job's terminal reply is out, and only on
    the connection it came in on (message ids are per connection)."""

    connection: BrokerConnection
    mid: int
    qos: int


class _JobState(enum.StrEnum):
    """Where a remembered job is: a duplicate joins a running job, or gets a done one's reply."""

    RUNNING = "running"
    DONE = "done"


class _FollowStage(enum.IntEnum):
    """How far :meth:`MqttWorker._follow` has gone to end a search that overran its time."""

    SEARCHING = 0
    """Within the job's time limit."""
    TOLD_TO_STOP = 1
    """Sent ``stop``; the search has :data:`STOP_GRACE_S` to hand back its move."""
    RUNNER_REPLACED = 2
    """It did not: its process was killed and replaced; the session answers on its own."""


@dataclass(eq=False, slots=True)
class _Record:
    """One job, by :class:`JobKey`: who is waiting for it, its answer."""

    response_topic: str
    correlation: bytes | None
    deliveries: list[_Delivery]
    state: _JobState = _JobState.RUNNING
    reply: TerminalReply | None = None
    """Set when the job is done (``state`` is ``DONE``)."""
    unsent: bool = False
    replays: int = 0
    """Times the terminal reply was published again for a duplicate."""
    accepted_again: bool = False
    """A duplicate that came while the job ran got its ``accepted`` (later ones get none)."""
    attempts: int = 0
    """Connections on which publishing the terminal reply failed."""
    refused: bool = False
    """The broker refused a reply to ``response_topic``: nothing more is published there."""
    key: JobKey | None = None
    """The key the job is remembered under; ``None`` without correlation data (such a job
    cannot be told from another, so it is never deduplicated)."""
    pending: bool = False
    """The job counts towards the worker's pending jobs (see *Intake* in the module notes)."""

    @property
    def size(self) -> int:
        """Bytes this record holds, for the bound on the memory of recent jobs."""
        reply = len(self.reply.payload.encode()) if self.reply is not None else 0
        correlation = len(self.correlation or b"")
        return RECORD_OVERHEAD_BYTES + len(self.response_topic.encode()) + correlation + reply


class MqttWorker:
    """Takes jobs from the broker and answers them until :meth:`run`'s ``stop`` is set."""

    def __init__(self, config: WorkerConfig, observer: ServiceObserver | None = None) -> None:
        config.check()
        self.config = config
        self.observer = observer
        """Sees each job's session (metrics, the status page), when monitoring is on."""
        self._job_ids = itertools.count(1)
        self.eval_files = config.eval_files()
        """What a job's ``EvalFile`` may read, resolved once for all jobs."""
        self.syzygy = config.syzygy()
        """Which tablebase directories a job's ``SyzygyPath`` may name, likewise."""
        self.book_files = config.book_files()
        """What a job's ``BookFile`` may read, likewise."""
        self.stats = WorkerStats()
        self.threads = ThreadBudget(config.total_threads(), config.max_threads)
        """``Threads`` granted to the jobs searching now (see its module)."""
        self.connected = asyncio.Event()
        """Set while connected and subscribed (tests and health checks wait on it)."""
        self._conn: BrokerConnection | None = None
        self._records: OrderedDict[JobKey, _Record] = OrderedDict()
        self._records_bytes = 0
        self._unsent: OrderedDict[int, _Record] = OrderedDict()
        self._unsent_bytes = 0
        self._reply_topics = config.reply_topics()
        self._sessions: dict[int, EngineSession] = {}
        self._slots: asyncio.Queue[Slot] = asyncio.Queue()
        self._all_slots: list[Slot] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._pending = 0
        self._dropped_in_burst = 0
        self._accepting = True
        self._topic_jobs = jobs_filter(config.prefix, config.group)
        self._topic_status = status_topic(config.prefix, config.worker_id)

    @property
    def running_jobs(self) -> int:
        return len(self._sessions)

    @property
    def pending_jobs(self) -> int:
        """Jobs taken in whose terminal reply has not yet been handed to the broker (or
        parked for a resend): what the worker holds in memory for its clients."""
        return self._pending

    @property
    def restarts(self) -> int:
        """How often the slots' search processes were started again or replaced."""
        return sum(slot.restarts for slot in self._all_slots)

    @property
    def hash_in_use_mb(self) -> int:
        """The ``Hash`` of the jobs searching now (MiB)."""
        return sum(s.options.get_int(OptionName.HASH) for s in self._sessions.values())

    @property
    def remembered_bytes(self) -> int:
        """What the memory of recent jobs holds now (at most ``dedup_bytes`` once the jobs in
        it are done)."""
        return self._records_bytes

    @property
    def intake_limit(self) -> int:
        """A QoS 0 job is taken only while fewer jobs than this are pending."""
        return self.config.concurrency + self.config.backlog

    # -- lifecycle ---------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set, then shut down gracefully.

        Raises :class:`FatalBrokerError` when the broker refuses the credentials, the
        subscription or the worker's presence; every other broker trouble is retried with backoff.
        """
        config = self.config
        for _ in range(config.concurrency):
            slot = Slot(config.runner_factory)
            self._all_slots.append(slot)
            self._slots.put_nowait(slot)
        self._write_status_file(Presence.OFFLINE)
        try:
            await self._connect_loop(stop)
        finally:
            self._accepting = False
            await self._stop_all_jobs()
            await self._wait_tasks()
            for slot in self._all_slots:
                await slot.runner.close()
            log.info(
                "%s",
                log_line(
                    "stopped",
                    worker=config.worker_id,
                    searched=self.stats.searched,
                    rejected=self.stats.rejected,
                    duplicates=self.stats.duplicates,
                    duplicates_ignored=self.stats.duplicates_ignored,
                    replies_refused=self.stats.replies_refused,
                    replies_given_up=self.stats.replies_given_up,
                ),
            )

    async def _connect_loop(self, stop: asyncio.Event) -> None:
        config = self.config
        backoff = Backoff(config.reconnect_initial_s, config.reconnect_max_s)
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            began = loop.time()
            try:
                served = await self._connected_session(stop)
                if served and loop.time() - began >= config.reconnect_max_s:
                    backoff.reset()  # a connection that lasted: not a broker throwing us out
            except (aiomqtt.MqttError, OSError) as exc:
                # OSError: certificate files unreadable, DNS, … — may well heal; retry.
                if connect_failure_is_fatal(exc):
                    raise FatalBrokerError(f"the broker refused the login: {exc}") from exc
                log.warning(
                    "%s",
                    log_line(
                        "broker_unavailable",
                        broker=config.broker.url,
                        error=str(exc) or type(exc).__name__,
                    ),
                )
            if stop.is_set():
                break
            delay = backoff.next_delay()
            log.info("%s", log_line("reconnect_wait", seconds=f"{delay:.2f}"))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)

    def _new_client(self) -> aiomqtt.Client:
        config = self.config
        props = new_properties(PacketTypes.CONNECT)
        props.ReceiveMaximum = config.concurrency
        if config.session_expiry_s > 0:
            props.SessionExpiryInterval = config.session_expiry_s
        will_props = new_properties(PacketTypes.WILLMESSAGE)
        will_props.MessageExpiryInterval = OFFLINE_EXPIRY_S
        will = aiomqtt.Will(
            self._topic_status,
            Presence.OFFLINE.value,
            qos=QoS.AT_LEAST_ONCE,
            retain=True,
            properties=will_props,
        )
        client = config.broker.client(
            config.worker_id,
            will=will,
            properties=props,
            clean_start=config.session_expiry_s == 0,
            manual_ack=True,
        )
        bound_outgoing_queue(client, config.max_queued_replies)
        return client

    async def _connected_session(self, stop: asyncio.Event) -> bool:
        """One connection, from CONNECT to its loss or to a graceful shutdown.

        Returns whether the worker got as far as serving (so the backoff starts over);
        raises :class:`aiomqtt.MqttError` when connecting or subscribing fails.
        """
        config = self.config
        client = self._new_client()
        served = False
        async with client:
            conn = BrokerConnection(client)
            self._conn = conn
            self.stats.connections += 1
            reader: asyncio.Task[None] | None = None
            try:
                codes = await client.subscribe(self._topic_jobs, qos=QoS.AT_LEAST_ONCE)
                failure = reason_failed(codes)
                if failure is not None:
                    raise FatalBrokerError(
                        f"the broker refused the subscription {self._topic_jobs} "
                        f"(reason code 0x{failure:02X}; shared subscriptions need MQTT 5 "
                        "and an ACL that allows them)"
                    )
                reader = asyncio.create_task(self._read(conn), name="mqtt-reader")
                online = await conn.publish(
                    self._topic_status, Presence.ONLINE.value, qos=QoS.AT_LEAST_ONCE, retain=True
                )
                if online.outcome is PublishOutcome.REFUSED:
                    raise FatalBrokerError(
                        f"the broker refused the presence {self._topic_status} (reason code "
                        f"0x{online.reason_code or 0:02X}; the ACL must let a worker write "
                        "its own presence)"
                    )
                if online.delivered:
                    served = True
                    log.info(
                        "%s",
                        log_line(
                            "connected",
                            broker=config.broker.url,
                            worker=config.worker_id,
                            concurrency=config.concurrency,
                            subscription=self._topic_jobs,
                        ),
                    )
                    self.connected.set()
                    self._write_status_file(Presence.ONLINE)
                    self._resend_unsent()
                    waiting = asyncio.ensure_future(stop.wait())
                    try:
                        await asyncio.wait({reader, waiting}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        waiting.cancel()
                    if stop.is_set() and conn.alive:
                        await self._graceful_shutdown(conn)
            finally:
                self._conn = None
                self.connected.clear()
                self._write_status_file(Presence.OFFLINE)
                if reader is not None:
                    reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await reader
        if not stop.is_set():
            log.warning(
                "%s",
                log_line("connection_lost", broker=config.broker.url, error=conn.error or "closed"),
            )
        return served

    def _write_status_file(self, status: Presence) -> None:
        path = self.config.status_file
        if path is None:
            return
        try:
            temporary = path.with_name(path.name + ".tmp")
            temporary.write_text(status.value + "\n", encoding="utf-8")
            os.replace(temporary, path)  # readers never see a half-written file
        except OSError as exc:
            log.warning("%s", log_line("status_file_error", path=path, error=exc))

    async def _graceful_shutdown(self, conn: BrokerConnection) -> None:
        """Take no more jobs, let the running ones finish (or stop them), say offline."""
        log.info("%s", log_line("shutdown", running=self.running_jobs))
        with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
            await asyncio.wait_for(
                conn.client.unsubscribe(self._topic_jobs), self.config.broker.timeout_s
            )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), self.config.shutdown_timeout_s)
        self._accepting = False
        await self._stop_all_jobs()
        await self._wait_tasks()
        props = new_properties(PacketTypes.PUBLISH)
        props.MessageExpiryInterval = OFFLINE_EXPIRY_S
        await conn.publish(
            self._topic_status,
            Presence.OFFLINE.value,
            qos=QoS.AT_LEAST_ONCE,
            retain=True,
            properties=props,
        )

    async def _stop_all_jobs(self) -> None:
        for session in list(self._sessions.values()):
            with contextlib.suppress(Exception):
                await session.handle("stop")

    async def _wait_tasks(self) -> None:
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- incoming jobs -----------------------------------------------------------------------
    async def _read(self, conn: BrokerConnection) -> None:
        async for message in conn.messages():
            try:
                self._on_message(conn, message)
            except Exception:  # a bad message must never take the worker down
                log.exception("%s", log_line("message_failed", topic=message.topic.value))
                conn.ack(message.mid, message.qos)

    def _on_message(self, conn: BrokerConnection, message: aiomqtt.Message) -> None:
        self.stats.received += 1
        topic = message.topic.value
        if message.qos == QoS.AT_MOST_ONCE and self._pending >= self.intake_limit:
            self._drop(topic)
            return
        delivery = _Delivery(conn, message.mid, message.qos)
        props = message.properties
        response_topic = response_topic_of(props)
        correlation = correlation_of(props)
        if not valid_response_topic(response_topic):
            self.stats.unanswerable += 1
            log.info("%s", log_line("unanswerable", topic=topic, reason="no usable response topic"))
            conn.ack(delivery.mid, delivery.qos)
            return
        if not self._reply_topics.permits(response_topic):
            self.stats.unanswerable += 1
            self.stats.bad_reply_topic += 1
            self.stats.rejected += 1
            log.warning(
                "%s",
                log_line(
                    "rejected",
                    topic=printable(topic, 200),
                    reason="response topic outside the reply prefixes",
                    response_topic=printable(response_topic, 200),
                    allowed=",".join(self._reply_topics.allowed),
                ),
            )
            conn.ack(delivery.mid, delivery.qos)
            return
        raw = message.payload
        payload = bytes(raw) if isinstance(raw, bytes | bytearray) else str(raw or "").encode()
        key = (
            JobKey.of(response_topic, correlation, topic, payload)
            if correlation is not None
            else None
        )
        record = self._records.get(key) if key is not None else None
        if record is not None and key is not None:
            self._on_duplicate(record, key, delivery, topic)
            return
        if not self._accepting:
            return  # shutting down: unacknowledged, so the broker may hand it to another
        record = _Record(response_topic, correlation, [delivery], key=key)
        self._hold(record)
        if key is not None:
            self._remember(key, record)
        game = game_from_topic(topic, self.config.prefix)
        try:
            job = parse_job(payload, game)
        except JobError as exc:
            self.stats.rejected += 1
            log.info("%s", log_line("rejected", topic=topic, reason=exc.what))
            self._finish(record, TerminalReply(ReplyStatus.ERROR, exc.line()))
            return
        self._active += 1
        self._idle.clear()
        self._spawn(self._run_job(record, job), "mqtt-job")

    def _on_duplicate(self, record: _Record, key: JobKey, delivery: _Delivery, topic: str) -> None:
        """A job seen again: joined or answered again at most :data:`MAX_REPLAYS` times."""
        self.stats.duplicates += 1
        self._records.move_to_end(key)
        running = record.state is _JobState.RUNNING
        again = record.accepted_again if running else record.replays >= MAX_REPLAYS
        answer = not again and not record.refused
        log.info(
            "%s",
            log_line(
                "duplicate",
                topic=printable(topic, 200),
                state=record.state.value,
                action="answered" if answer else "ignored",
            ),
        )
        if not answer:
            self.stats.duplicates_ignored += 1
            delivery.connection.ack(delivery.mid, delivery.qos)
            return
        if delivery.qos > QoS.AT_MOST_ONCE:  # a QoS 0 delivery has nothing to acknowledge
            record.deliveries.append(delivery)
        if running:
            record.accepted_again = True
            self._spawn(self._publish_status(record, ReplyStatus.ACCEPTED), "mqtt-accepted")
        else:
            record.replays += 1
            self._spawn(self._replay(record), "mqtt-replay")

    async def _replay(self, record: _Record) -> None:
        """Publish a finished job's reply again, counted as pending meanwhile (the intake
        bound holds for duplicates too)."""
        self._pending += 1
        self.stats.peak_pending = max(self.stats.peak_pending, self._pending)
        try:
            await self._deliver(record)
        finally:
            self._pending -= 1

    def _drop(self, topic: str) -> None:
        """Drop a QoS 0 job the intake has no room for: one warning when the intake fills,
        one with the count when it has room again (a flood must not flood the log too)."""
        self.stats.dropped += 1
        if self._dropped_in_burst == 0:
            log.warning(
                "%s",
                log_line(
                    "intake_full", topic=topic, pending=self._pending, action="dropping QoS 0 jobs"
                ),
            )
        self._dropped_in_burst += 1

    def _hold(self, record: _Record) -> None:
        record.pending = True
        self._pending += 1
        self.stats.peak_pending = max(self.stats.peak_pending, self._pending)

    def _release(self, record: _Record) -> None:
        if not record.pending:
            return
        record.pending = False
        self._pending -= 1
        if self._dropped_in_burst and self._pending < self.intake_limit:
            log.warning(
                "%s", log_line("qos0_dropped", count=self._dropped_in_burst, pending=self._pending)
            )
            self._dropped_in_burst = 0

    def _remember(self, key: JobKey, record: _Record) -> None:
        self._records[key] = record
        self._records_bytes += record.size
        self._trim_records()

    def _trim_records(self) -> None:
        """Forget the oldest finished jobs until the memory fits ``dedup_bytes``; running
        ones stay (there are few of them, and they hold no reply yet)."""
        records = self._records
        while self._records_bytes > self.config.dedup_bytes:
            for old_key, old in records.items():
                if old.state is _JobState.DONE:
                    del records[old_key]
                    self._records_bytes -= old.size
                    break
            else:
                break

    async def _run_job(self, record: _Record, job: Job) -> None:
        reply: TerminalReply | None = None
        try:
            slot = await self._slots.get()
            try:
                if self._accepting:
                    reply = await self._search(record, job, slot)
            finally:
                self._slots.put_nowait(slot)
        except Exception as exc:
            reply = self._internal_error(job, exc)
        finally:
            self._active -= 1
            if self._active == 0:
                self._idle.set()
        if reply is None:
            # Shutting down before it started: left unacknowledged, for the broker (or the
            # client's resend) to give to another worker.
            self._forget(record)
            self._release(record)
            return
        self._finish(record, reply)

    def _internal_error(self, job: Job, exc: Exception) -> TerminalReply:
        """Log a job's failure in full, under a fresh incident id; the short client reply.

        A failure the session reported (:class:`JobFailedError`) was logged with its
        traceback by the session already; the incident line adds what it said, so the two
        can be found together.  Any other exception is logged here with its traceback.
        """
        incident = uuid.uuid4().hex[:12]
        self.stats.failed += 1
        reported = isinstance(exc, JobFailedError)
        log.error(
            "%s",
            log_line(
                "internal_error",
                incident=incident,
                game=job.game,
                go=printable(job.go, 160),
                detail=str(exc) if reported else None,
            ),
            exc_info=None if reported else exc,
        )
        return TerminalReply(ReplyStatus.ERROR, internal_error_line(incident, job))

    def _forget(self, record: _Record) -> None:
        if record.key is not None and self._records.get(record.key) is record:
            del self._records[record.key]
            self._records_bytes -= record.size

    async def _search(self, record: _Record, job: Job, slot: Slot) -> TerminalReply:
        """Run one job in a fresh session on ``slot``; returns the terminal reply.

        Raises :class:`JobFailedError` when the session reports an internal error (its
        lines are the exception's text, for the worker's log).
        """
        collector = ReplyCollector()
        limit = self.config.max_hash_mb

        def hash_budget(mb: int) -> str | None:
            return None if mb <= limit else f"Hash above this worker's limit of {limit} MiB"

        grant_key = str(id(record))
        self.threads.request(grant_key, 1)  # the job's main search counts from the start
        observed = ObservedSink(collector)
        session = EngineSession(
            observed,
            runner_factory=slot.lease,
            hash_budget=hash_budget,
            thread_budget=lambda threads: self.threads.request(grant_key, threads),
            eval_files=self.eval_files,
            syzygy=self.syzygy,
            book_files=self.book_files,
        )
        self._sessions[id(record)] = session
        if self.observer is not None:
            observed.observer = self.observer.session_opened(
                f"j{next(self._job_ids)}", session, restarts=lambda: 0
            )
        started = time.monotonic()
        try:
            if job.new_game:
                await slot.runner.clear()
            for line in (f"setoption name UCI_Variant value {job.game}", *job.setup):
                if observed.observer is not None:
                    observed.observer.line_in(line)
                await session.handle(line)
                if collector.internal_errors:
                    raise JobFailedError(collector.internal_errors)
                if collector.errors:
                    self.stats.rejected += 1
                    log.info(
                        "%s",
                        log_line(
                            "rejected", game=job.game, reason=printable(collector.errors[0], 160)
                        ),
                    )
                    return TerminalReply(ReplyStatus.ERROR, "\n".join(collector.errors))
            evaluation = tuple(str(session.options[name]) for name in EVALUATION_OPTIONS)
            if await slot.prepare(evaluation):
                self.stats.tables_cleared += 1
                log.debug("%s", log_line("table_cleared", reason="evaluation options changed"))
            self.stats.searched += 1
            await self._publish_status(record, ReplyStatus.ACCEPTED)
            if observed.observer is not None:
                observed.observer.line_in(job.go)
            await session.handle(job.go)
            await self._follow(record, session, collector, slot)
            if collector.internal_errors:
                raise JobFailedError(collector.internal_errors)
            assert collector.final is not None
            log.debug(
                "%s", log_line("done", game=job.game, ms=round((time.monotonic() - started) * 1000))
            )
            self.stats.answered += 1
            return TerminalReply(ReplyStatus.DONE, "\n".join(collector.final))
        finally:
            del self._sessions[id(record)]
            await session.close()
            if observed.observer is not None:
                observed.observer.closed()
            self.threads.release(grant_key)
            await slot.reset_after_job()

    async def _follow(
        self, record: _Record, session: EngineSession, collector: ReplyCollector, slot: Slot
    ) -> None:
        """Publish progress until the bestmove; enforce the job time limit."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.max_job_s
        stage = _FollowStage.SEARCHING
        while collector.final is None:
            if collector.internal_errors and session.state is State.IDLE:
                # The session failed before it started a search: no bestmove will come,
                # and the job ends with an error whatever else might.
                raise JobFailedError(collector.internal_errors)
            try:
                await asyncio.wait_for(collector.changed.wait(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                if stage is _FollowStage.SEARCHING:
                    log.warning("%s", log_line("job_time_limit", seconds=self.config.max_job_s))
                    await session.handle("stop")
                    deadline, stage = loop.time() + STOP_GRACE_S, _FollowStage.TOLD_TO_STOP
                elif stage is _FollowStage.TOLD_TO_STOP:
                    log.error("%s", log_line("search_stuck", action="replacing the runner"))
                    await slot.replace()
                    deadline, stage = loop.time() + STOP_GRACE_S, _FollowStage.RUNNER_REPLACED
                else:
                    raise RuntimeError("the search neither stopped nor died") from None
                continue
            collector.changed.clear()
            ready = collector.take_ready()
            if ready:
                await self._publish_reply(
                    record, ReplyStatus.INFO, "\n".join(ready), qos=QoS.AT_MOST_ONCE
                )

    # -- replies -----------------------------------------------------------------------------
    def _finish(self, record: _Record, reply: TerminalReply) -> None:
        remembered = record.key is not None and self._records.get(record.key) is record
        if remembered:
            self._records_bytes -= record.size
        record.state, record.reply = _JobState.DONE, reply
        if remembered:
            self._records_bytes += record.size
            self._trim_records()
        self._spawn(self._deliver_first(record), "mqtt-reply")

    async def _deliver_first(self, record: _Record) -> None:
        """The first delivery of a terminal reply; the job stops counting as pending once the
        broker has the reply, or once it is parked for a resend (a bounded buffer of its own)."""
        try:
            await self._deliver(record)
        finally:
            self._release(record)

    async def _deliver(self, record: _Record) -> None:
        """Publish the terminal reply, then acknowledge every delivery of the job (also when
        the broker refused the reply: it would refuse it again)."""
        reply = record.reply
        assert reply is not None, "only a finished job is delivered"
        if record.refused:
            return
        conn = self._conn
        if conn is None:
            self._park(record)
            return
        published = await self._publish_reply(
            record, reply.status, reply.payload, qos=QoS.AT_LEAST_ONCE, conn=conn
        )
        if published.outcome is PublishOutcome.LOST:
            record.attempts += 1
            if record.attempts < MAX_REPLY_ATTEMPTS:
                self._park(record)
                return
            self.stats.replies_given_up += 1
            log.warning(
                "%s",
                log_line(
                    "reply_given_up",
                    response_topic=printable(record.response_topic, 200),
                    attempts=record.attempts,
                ),
            )
            record.refused = True  # the memory of this job must not bring it back
        self._unpark(record)
        deliveries, record.deliveries = record.deliveries, []
        for delivery in deliveries:
            if delivery.connection is self._conn:
                delivery.connection.ack(delivery.mid, delivery.qos)

    def _park(self, record: _Record) -> None:
        """Keep a reply that could not be published for the next connection (bounded by
        ``dedup_bytes`` too: the oldest are dropped first)."""
        if not record.unsent:
            record.unsent = True
            self._unsent[id(record)] = record
            self._unsent_bytes += record.size
        while self._unsent_bytes > self.config.dedup_bytes and len(self._unsent) > 1:
            _, old = self._unsent.popitem(last=False)
            old.unsent = False
            self._unsent_bytes -= old.size

    def _unpark(self, record: _Record) -> None:
        if record.unsent:
            record.unsent = False
            self._unsent.pop(id(record), None)
            self._unsent_bytes -= record.size

    def _resend_unsent(self) -> None:
        for record in list(self._unsent.values()):
            self._spawn(self._deliver(record), "mqtt-resend")

    async def _publish_status(self, record: _Record, status: ReplyStatus) -> None:
        await self._publish_reply(record, status, "", qos=QoS.AT_MOST_ONCE)

    async def _publish_reply(
        self,
        record: _Record,
        status: ReplyStatus,
        payload: str,
        *,
        qos: QoS,
        conn: BrokerConnection | None = None,
    ) -> Published:
        """Publish one reply of ``record``'s job; a refusal is logged and counted, and ends
        all publishing for the job (:attr:`_Record.refused`)."""
        conn = conn or self._conn
        if conn is None or record.refused:
            return Published(PublishOutcome.LOST)
        props = reply_properties(record.correlation, status, self.config.worker_id)
        published = await conn.publish(record.response_topic, payload, qos=qos, properties=props)
        if published.outcome is PublishOutcome.REFUSED and not record.refused:
            record.refused = True
            self.stats.replies_refused += 1
            log.warning(
                "%s",
                log_line(
                    "reply_refused",
                    response_topic=printable(record.response_topic, 200),
                    status=status.value,
                    reason_code=f"0x{published.reason_code or 0:02X}",
                ),
            )
        return published


# -- serving ---------------------------------------------------------------------------------
async def warm_up_runners(config: WorkerConfig) -> None:
    """Start the search processes' fork server now, before serving, rather than on the first
    job (only for the production runner: other runners start no processes)."""
    if config.runner_factory is ProcessRunner:
        await asyncio.to_thread(warm_up)


async def serve_mqtt(
    config: WorkerConfig,
    stop: asyncio.Event,
    *,
    ready: Callable[[MqttWorker], None] | None = None,
    observer: ServiceObserver | None = None,
    alongside: Callable[[MqttWorker], AbstractAsyncContextManager[object]] | None = None,
) -> None:
    """Run a worker until ``stop`` is set, then shut down gracefully.

    ``ready`` sees the worker before it connects (its counters, its ``connected`` event).
    ``observer`` sees each job's session; ``alongside`` runs for as long as the worker does
    (the monitoring HTTP server, which reports on it).  Raises :class:`FatalBrokerError` when
    the broker refuses the login or the subscription; every other broker trouble is retried.
    """
    worker = MqttWorker(config, observer)
    if ready is not None:
        ready(worker)
    if alongside is None:
        await worker.run(stop)
        return
    async with alongside(worker):
        await worker.run(stop)
