"""One live connection to the broker, and how to read the broker's refusals.

Manual acknowledgement: aiomqtt 2.5 does not expose paho-mqtt's ``manual_ack`` switch, so
:func:`enable_manual_ack` turns it on, and :class:`BrokerConnection` sends PUBACKs, through the
aiomqtt client's paho client (``Client._client``).  That is the one private attribute used in
this package; without it a job would be acknowledged on arrival and lost with a worker that
dies mid-search.  The same client publishes for :class:`BrokerConnection` too, because
aiomqtt's ``publish`` drops the PUBACK's reason code, and a reply the broker refused (an ACL
that denies the topic: 0x87) must not count as delivered.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiomqtt
from paho.mqtt.client import MQTT_ERR_SUCCESS
from paho.mqtt.properties import Properties

from protocol.transports.mqtt.wire import QoS

log = logging.getLogger(__name__)

PUBLISH_TIMEOUT_S = 10.0

FIRST_FAILURE_CODE = 0x80
"""MQTT 5 reason codes from here up are failures (a SUBACK's, a CONNACK's, a PUBACK's)."""


class PublishOutcome(enum.Enum):
    """What became of one publish."""

    DELIVERED = "delivered"
    """The broker has it (QoS 1: acknowledged with a success code)."""
    REFUSED = "refused"
    """The broker acknowledged it with a failure reason code and dropped it."""
    LOST = "lost"
    """It never got there: connection lost, no acknowledgement in time, queue full."""


@dataclass(frozen=True, slots=True)
class Published:
    """The outcome of a publish, with the broker's reason code when it refused."""

    outcome: PublishOutcome
    reason_code: int | None = None

    @property
    def delivered(self) -> bool:
        return self.outcome is PublishOutcome.DELIVERED


class LoginRefusal(enum.IntEnum):
    """CONNACK reasons that retrying cannot fix."""

    BAD_USER_NAME_OR_PASSWORD = 0x86
    NOT_AUTHORIZED = 0x87
    BAD_AUTHENTICATION_METHOD = 0x8C


_LOGIN_REFUSALS = frozenset(LoginRefusal)
"""As a set of plain codes: ``int in LoginRefusal`` raises on Python 3.11."""


def _paho(client: aiomqtt.Client) -> Any:
    """The paho-mqtt client inside an aiomqtt client (for manual acknowledgements)."""
    return client._client


def enable_manual_ack(client: aiomqtt.Client) -> None:
    """Leave acknowledging incoming QoS 1 messages to :meth:`BrokerConnection.ack`."""
    _paho(client).manual_ack_set(True)


def bound_outgoing_queue(client: aiomqtt.Client, messages: int) -> None:
    """Let at most ``messages`` QoS 1 publishes wait for their PUBACK; a publish beyond that
    fails at once instead of queueing in memory without limit (paho's default)."""
    _paho(client).max_queued_messages_set(messages)


class BrokerConnection:
    """One live MQTT connection: publishes that give up when the connection is lost, and
    manual acknowledgements that are never sent on a later connection (message ids are per
    connection, so acknowledging an old one there would acknowledge the wrong message)."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.lost = asyncio.Event()
        self.error: BaseException | None = None
        self._acks: dict[int, asyncio.Future[int]] = {}
        paho = _paho(client)
        self._forward_on_publish = paho.on_publish
        paho.on_publish = self._on_publish

    @property
    def alive(self) -> bool:
        return not self.lost.is_set()

    def mark_lost(self, error: BaseException | None = None) -> None:
        if not self.lost.is_set():
            self.error = error
            self.lost.set()

    async def publish(
        self,
        topic: str,
        payload: str | bytes,
        *,
        qos: QoS,
        retain: bool = False,
        properties: Properties | None = None,
        timeout: float = PUBLISH_TIMEOUT_S,
    ) -> Published:
        """Publish and wait until the broker has it (QoS 1: its PUBACK; QoS 0: written).

        The outcome says whether the broker took it, refused it (a PUBACK reason code of
        0x80 or more, e.g. 0x87 not authorized) or whether it never got there (connection
        lost, no PUBACK in time, the client's outgoing queue full).
        """
        if not self.alive:
            return Published(PublishOutcome.LOST)
        loop = asyncio.get_running_loop()
        info = _paho(self.client).publish(topic, payload, qos, retain, properties)
        if info.rc != MQTT_ERR_SUCCESS:
            log.debug("publish to %s failed at once: rc=%s", topic, info.rc)
            return Published(PublishOutcome.LOST)
        acked: asyncio.Future[int] = loop.create_future()
        self._acks[info.mid] = acked
        if info.is_published() and not acked.done():  # sent before we listened (QoS 0)
            acked.set_result(0)
        lost: asyncio.Future[Any] = asyncio.ensure_future(self.lost.wait())
        try:
            waiting: set[asyncio.Future[Any]] = {acked, lost}
            await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            self._acks.pop(info.mid, None)
        if not acked.done():
            acked.cancel()
            return Published(PublishOutcome.LOST)
        code = acked.result()
        if code >= FIRST_FAILURE_CODE:
            return Published(PublishOutcome.REFUSED, code)
        return Published(PublishOutcome.DELIVERED)

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        """paho's on_publish: record the PUBACK's reason code, then let aiomqtt see it."""
        waiter = self._acks.pop(mid, None)
        if waiter is not None and not waiter.done():
            value = getattr(reason, "value", reason)
            waiter.set_result(value if isinstance(value, int) else 0)
        self._forward_on_publish(client, userdata, mid, reason, props)

    def ack(self, mid: int, qos: int) -> None:
        if qos > QoS.AT_MOST_ONCE and self.alive:
            _paho(self.client).ack(mid, qos)

    async def messages(self) -> AsyncIterator[aiomqtt.Message]:
        """The incoming messages until the connection is lost (which this records)."""
        try:
            async for message in self.client.messages:
                yield message
        except aiomqtt.MqttError as exc:
            self.mark_lost(exc)
        else:
            self.mark_lost()


def connect_failure_is_fatal(error: BaseException) -> bool:
    """Whether a failed connect is a refusal that retrying will not fix."""
    if isinstance(error, aiomqtt.MqttCodeError):
        value = getattr(error.rc, "value", error.rc)
        return isinstance(value, int) and value in _LOGIN_REFUSALS
    return False


def reason_failed(codes: object) -> int | None:
    """The first failure code in a SUBACK's reason codes, if any (``None`` when granted)."""
    if not isinstance(codes, list | tuple):
        return None
    for code in codes:
        value = getattr(code, "value", code)
        if isinstance(value, int) and value >= FIRST_FAILURE_CODE:
            return value
    return None
