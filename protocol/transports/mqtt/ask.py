"""The client side of the MQTT fleet: publish jobs, collect replies.

:class:`AskClient` keeps one connection (reconnecting with backoff) and any number of jobs in
flight; ``brudno mqtt-ask`` (:mod:`brudno.commands.mqtt_ask`) is a thin command around it.
Each job gets fresh Correlation Data, and replies come back on the client's own topic,
``<prefix>/replies/<client id>`` or, with a user name, ``<prefix>/replies/<user name>/<client
id>`` (:func:`~protocol.transports.mqtt.topics.client_reply_topic`).

Guarantees: a job is re-sent (same correlation data) when the worker that accepted it goes
``offline``, when none accepted it within ``retry_after``, or after a reconnect; the first
terminal reply wins.  Jobs expire (Message Expiry) when the client stops waiting.  The
workers' retained presence is read before publishing, so ``require_worker=True`` fails at
once when no worker is online.

Why it re-sends, and how it knows the presence is in: docs/deploy.md, *When a worker or the
broker goes away* and *Why the services are built as they are*.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import aiomqtt
from paho.mqtt.packettypes import PacketTypes

from protocol.transports.events import escape_controls
from protocol.transports.mqtt.backoff import Backoff
from protocol.transports.mqtt.broker import BrokerSettings
from protocol.transports.mqtt.connection import (
    BrokerConnection,
    PublishOutcome,
    connect_failure_is_fatal,
    reason_failed,
)
from protocol.transports.mqtt.errors import FatalBrokerError
from protocol.transports.mqtt.topics import (
    DEFAULT_PREFIX,
    check_topic_prefix,
    client_reply_topic,
    jobs_topic,
    status_filter,
    worker_from_status_topic,
)
from protocol.transports.mqtt.wire import (
    Presence,
    QoS,
    ReplyProperty,
    ReplyStatus,
    correlation_of,
    new_properties,
    user_properties,
)

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_RETRY_AFTER_S = 30.0

LineCallback = Callable[[str], None]


class AskError(Exception):
    """A job that got no answer."""


class AskTimeoutError(AskError):
    """No terminal reply within the time asked for."""


class NoWorkerOnlineError(AskError):
    """No worker's retained presence is ``online``: nobody would take the job."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What came back for one job."""

    lines: tuple[str, ...]
    """Every reply line in arrival order: progress ``info`` lines, then the terminal ones."""
    bestmove: str | None
    """The move of the ``bestmove`` line (``None`` for an error reply)."""
    ponder: str | None
    worker: str | None
    """The id of the worker that answered."""
    error: bool
    """True when the job was refused (its lines say why)."""
    sends: int
    """How many times the job was published (1 unless it had to be re-sent)."""

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(line for line in self.lines if line.startswith("info string error:"))


@dataclass(frozen=True, slots=True)
class AskOptions:
    """How :meth:`AskClient.ask` waits: re-send after ``retry_after`` seconds without word
    from a taker (``None``: never), call ``on_line`` with each reply line and
    ``on_accepted`` with each taker's id, and with ``require_worker`` refuse at once when no
    worker is online."""

    retry_after: float | None = DEFAULT_RETRY_AFTER_S
    on_line: LineCallback | None = None
    on_accepted: LineCallback | None = None
    require_worker: bool = False


@dataclass(eq=False, slots=True)
class _Pending:
    game: str
    payload: bytes
    correlation: bytes
    deadline: float
    on_line: LineCallback | None
    on_accepted: LineCallback | None
    answer: asyncio.Future[Answer]
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    lines: list[str] = field(default_factory=list)
    owner: str | None = None
    last_heard: float = 0.0
    sends: int = 0
    resend_now: bool = False


def build_job(
    *,
    fen: str | None = None,
    moves: tuple[str, ...] = (),
    options: tuple[tuple[str, str], ...] = (),
    go: str = "go movetime 1000",
) -> str:
    """A job's UCI text from its parts (the game comes from the topic, not from here)."""
    lines = [f"setoption name {name} value {value}" for name, value in options]
    position = "position startpos" if fen is None else f"position fen {fen}"
    if moves:
        position += " moves " + " ".join(moves)
    lines.append(position)
    lines.append(go if go.startswith("go") else f"go {go}")
    return "\n".join(lines) + "\n"


def parse_bestmove(line: str) -> tuple[str | None, str | None]:
    match line.split():
        case [_, best, "ponder", ponder, *_]:
            return best, ponder
        case [_, best, *_]:
            return best, None
        case _:
            return None, None


def _answer(pending: _Pending, status: ReplyStatus, lines: list[str], sender: str | None) -> Answer:
    """The answer to a job whose terminal reply (``status``, its ``lines``) has arrived."""
    best = ponder = None
    if status is ReplyStatus.DONE:
        for line in reversed(lines):
            if line.startswith("bestmove"):
                best, ponder = parse_bestmove(line)
                break
    return Answer(
        lines=tuple(pending.lines),
        bestmove=best,
        ponder=ponder,
        worker=sender,
        error=status is ReplyStatus.ERROR,
        sends=pending.sends,
    )


class AskClient:
    """An MQTT client that asks the fleet for moves; use as an async context manager."""

    def __init__(
        self,
        broker: BrokerSettings,
        *,
        prefix: str = DEFAULT_PREFIX,
        client_id: str | None = None,
        reconnect_initial_s: float = 0.2,
        reconnect_max_s: float = 5.0,
    ) -> None:
        broker.check()
        check_topic_prefix(prefix)
        self.broker = broker
        self.prefix = prefix
        self.client_id = client_id or f"brudno-ask-{uuid.uuid4().hex[:12]}"
        self.reply_topic = client_reply_topic(prefix, self.client_id, broker.username)
        self.workers: dict[str, str] = {}
        """Last known presence of each worker seen on the status topics (a
        :class:`~protocol.transports.mqtt.wire.Presence` value, or whatever else a worker
        published)."""
        self._sync_token = b"presence-sync:" + uuid.uuid4().bytes
        self._presence_known = asyncio.Event()
        self._backoff = Backoff(reconnect_initial_s, reconnect_max_s)
        self._pending: dict[bytes, _Pending] = {}
        self._conn: BrokerConnection | None = None
        self._connected = asyncio.Event()
        self._first: asyncio.Future[None] | None = None
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        """Connect; raises :class:`aiomqtt.MqttError` if the first connection fails."""
        first: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._first = first
        task = self._task = asyncio.create_task(self._run(), name="mqtt-ask-connection")
        try:
            either: set[asyncio.Future[Any]] = {first, task}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if not first.done():
                task.result()  # the connection task ended without connecting: its error
                raise aiomqtt.MqttError("the connection task ended before connecting")
            first.result()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Disconnect; questions still waiting fail with :class:`AskError`."""
        self._closing.set()
        for pending in self._pending.values():
            if not pending.answer.done():
                pending.answer.set_exception(AskError("the client was closed"))
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(
                asyncio.CancelledError, aiomqtt.MqttError, FatalBrokerError, OSError
            ):
                await task

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def _online(self) -> list[str]:
        return sorted(w for w, status in self.workers.items() if status == Presence.ONLINE)

    async def online_workers(self, timeout: float | None = None) -> list[str]:
        """The ids of the workers whose presence is ``online``, once the retained presence
        has arrived (see the module notes).

        Waits at most ``timeout`` seconds (default: the broker timeout) for the presence
        marker; a broker that keeps the marker from us (an ACL that forbids publishing to
        our own reply topic) costs that wait, after which the presence seen so far counts.
        """
        wait = self.broker.timeout_s if timeout is None else timeout
        try:
            await asyncio.wait_for(self._presence_known.wait(), wait)
        except TimeoutError:
            log.debug("presence marker not back after %s s; using the presence seen", wait)
        return self._online()

    async def wait_workers(self, count: int, timeout: float) -> list[str]:
        """Wait until at least ``count`` workers are ``online``; returns their ids."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            online = self._online()
            if len(online) >= count:
                return online
            if loop.time() >= deadline:
                raise AskTimeoutError(f"{len(online)} of {count} workers online after {timeout} s")
            await asyncio.sleep(0.05)

    # -- asking ------------------------------------------------------------------------------
    async def ask(
        self,
        game: str,
        job: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        options: AskOptions = AskOptions(),
    ) -> Answer:
        """Publish one job and wait for its terminal reply.

        ``options.on_line`` sees each reply line as it arrives; ``on_accepted`` gets the id of each
        worker that takes the job (more than one when it had to be re-sent).  Raises
        :class:`AskTimeoutError` when no terminal reply comes within ``timeout`` seconds
        (re-sending as the module explains).  With ``require_worker``, raises
        :class:`NoWorkerOnlineError` at once, publishing nothing, when no worker is online;
        without it the job is published anyway (a worker may yet come for it).
        """
        retry_after, on_line, on_accepted = (
            options.retry_after,
            options.on_line,
            options.on_accepted,
        )
        if options.require_worker and not await self.online_workers():
            raise NoWorkerOnlineError(self._no_worker_message())
        loop = asyncio.get_running_loop()
        pending = _Pending(
            game=game,
            payload=job.encode(),
            correlation=uuid.uuid4().bytes,
            deadline=loop.time() + timeout,
            on_line=on_line,
            on_accepted=on_accepted,
            answer=loop.create_future(),
        )
        self._pending[pending.correlation] = pending
        try:
            await self._send(pending)
            while not pending.answer.done():
                now = loop.time()
                if now >= pending.deadline:
                    raise AskTimeoutError(
                        f"no answer within {timeout} s (sent {pending.sends} time(s))"
                    )
                wake_at = pending.deadline
                if retry_after is not None and pending.owner is None:
                    wake_at = min(wake_at, pending.last_heard + retry_after)
                pending.wake.clear()
                waiter = asyncio.ensure_future(pending.wake.wait())
                either: set[asyncio.Future[Any]] = {waiter, pending.answer}
                try:
                    await asyncio.wait(
                        either, timeout=max(0.0, wake_at - now), return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waiter.cancel()
                if pending.answer.done():
                    break
                now = loop.time()
                retry_due = (
                    retry_after is not None
                    and pending.owner is None
                    and pending.last_heard + retry_after <= now < pending.deadline
                )
                if pending.resend_now or retry_due:
                    log.info(
                        "re-sending job %s (owner %s)",
                        pending.correlation.hex()[:8],
                        "lost" if pending.resend_now else "none",
                    )
                    await self._send(pending)
            return pending.answer.result()
        finally:
            del self._pending[pending.correlation]

    def _no_worker_message(self) -> str:
        offline = sum(status == Presence.OFFLINE for status in self.workers.values())
        known = f"; {offline} known worker(s) offline" if offline else ""
        return (
            f"no worker is online: none announces 'online' on "
            f"{status_filter(self.prefix)}{known} (start one with 'brudno mqtt', or "
            "check --broker and --prefix)"
        )

    async def _send(self, pending: _Pending) -> None:
        loop = asyncio.get_running_loop()
        pending.resend_now = False
        pending.last_heard = loop.time()
        conn = self._conn
        if conn is None:
            pending.resend_now = True  # sent when the connection is back
            return
        props = new_properties(PacketTypes.PUBLISH)
        props.ResponseTopic = self.reply_topic
        props.CorrelationData = pending.correlation
        props.MessageExpiryInterval = max(1, math.ceil(pending.deadline - loop.time()))
        pending.sends += 1
        published = await conn.publish(
            jobs_topic(self.prefix, pending.game),
            pending.payload,
            qos=QoS.AT_LEAST_ONCE,
            properties=props,
        )
        if published.outcome is PublishOutcome.REFUSED:
            if not pending.answer.done():
                pending.answer.set_exception(
                    AskError(
                        f"the broker refused the job (reason code 0x{published.reason_code:02X}:"
                        " check the account's ACL)"
                    )
                )
        elif not published.delivered:
            pending.resend_now = True

    # -- the connection ----------------------------------------------------------------------
    async def _run(self) -> None:
        while not self._closing.is_set():
            try:
                await self._connection()
                self._backoff.reset()
            except (aiomqtt.MqttError, FatalBrokerError, OSError) as exc:
                if self._first is not None and not self._first.done():
                    self._first.set_exception(exc)
                    return
                if isinstance(exc, FatalBrokerError) or connect_failure_is_fatal(exc):
                    log.error("broker refused the client: %s", exc)
                    return
                log.warning("broker unavailable (%s); reconnecting", exc)
            if self._closing.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self._backoff.next_delay())

    async def _connection(self) -> None:
        client = self.broker.client(self.client_id, clean_start=True)
        async with client:
            conn = BrokerConnection(client)
            for topic in (self.reply_topic, status_filter(self.prefix)):
                failure = reason_failed(await client.subscribe(topic, qos=QoS.AT_LEAST_ONCE))
                if failure is not None:
                    raise FatalBrokerError(
                        f"the broker refused the subscription {topic} (0x{failure:02X})"
                    )
            reader = asyncio.create_task(self._read(conn), name="mqtt-ask-reader")
            self._conn = conn
            self._connected.set()
            await self._send_presence_marker(conn)
            if self._first is not None and not self._first.done():
                self._first.set_result(None)
            try:
                for pending in list(self._pending.values()):
                    # While we were away the broker may have lost the job, and a reply sent
                    # then had no subscriber: ask again.  The owner, if it still has the
                    # job, answers from its cache; a new worker computes it once more.
                    pending.resend_now = True
                    pending.wake.set()
                closing = asyncio.ensure_future(self._closing.wait())
                try:
                    await asyncio.wait({reader, closing}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    closing.cancel()
            finally:
                self._conn = None
                self._connected.clear()
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader
            if not self._closing.is_set():
                raise aiomqtt.MqttError(f"connection lost: {conn.error or 'closed'}")

    async def _send_presence_marker(self, conn: BrokerConnection) -> None:
        """Publish the marker whose return means the retained presence is in (module notes).

        A marker the broker refuses is only logged: :meth:`online_workers` then waits its
        timeout instead.
        """
        props = new_properties(PacketTypes.PUBLISH)
        props.CorrelationData = self._sync_token
        published = await conn.publish(
            self.reply_topic, b"", qos=QoS.AT_LEAST_ONCE, properties=props
        )
        if not published.delivered:
            log.debug(
                "could not publish the presence marker: %s (reason code %s)",
                published.outcome.value,
                published.reason_code,
            )

    async def _read(self, conn: BrokerConnection) -> None:
        async for message in conn.messages():
            try:
                self._on_message(message)
            except Exception:
                log.exception("bad reply on %s", escape_controls(message.topic.value))

    def _on_message(self, message: aiomqtt.Message) -> None:
        topic = message.topic.value
        payload = message.payload
        text = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""
        worker = worker_from_status_topic(topic, self.prefix)
        if worker is not None:
            self._on_status(worker, text.strip())
            return
        if topic != self.reply_topic:
            return
        correlation = correlation_of(message.properties)
        if correlation == self._sync_token:
            self._presence_known.set()
            return
        pending = self._pending.get(correlation) if correlation is not None else None
        if pending is None or pending.answer.done():
            return  # a late copy of an answered job, or someone else's
        props = user_properties(message.properties)
        try:
            status: ReplyStatus | None = ReplyStatus(props.get(ReplyProperty.STATUS, ""))
        except ValueError:
            status = None  # a newer worker's status: its lines still count as progress
        sender = props.get(ReplyProperty.WORKER)
        pending.last_heard = asyncio.get_running_loop().time()
        if sender is not None:
            pending.owner = sender
        lines = [line for line in text.splitlines() if line]
        for line in lines:
            pending.lines.append(line)
            if pending.on_line is not None:
                pending.on_line(line)
        if status is not None and status.terminal:
            pending.answer.set_result(_answer(pending, status, lines, sender))
        elif status is ReplyStatus.ACCEPTED and sender is not None:
            log.debug("job %s accepted by %s", pending.correlation.hex()[:8], sender)
            if pending.on_accepted is not None:
                pending.on_accepted(sender)

    def _on_status(self, worker: str, status: str) -> None:
        if status:
            self.workers[worker] = status
        else:
            self.workers.pop(worker, None)  # a cleared retained status
        if status in (Presence.OFFLINE, ""):
            for pending in self._pending.values():
                if pending.owner == worker and not pending.answer.done():
                    pending.owner = None
                    pending.resend_now = True
                    pending.wake.set()
