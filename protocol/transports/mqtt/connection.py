"""One live connection to the broker, and how to read the broker's refusals.

Manual acknowledgement: aiomqtt 2.5 does not expose paho-mqtt's ``manual_ack`` switch, so
:func:`enable_manual_ack` turns it on, and :class:`BrokerConnection` sends PUBACKs, through the
aiomqtt client's paho client (``Client._client``).  That is the one private attribute used in
this package; without it a job would be acknowledged on arrival and lost with a worker that
dies mid-search.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiomqtt
from paho.mqtt.properties import Properties

from protocol.transports.mqtt.wire import QoS

log = logging.getLogger(__name__)

PUBLISH_TIMEOUT_S = 10.0

FIRST_FAILURE_CODE = 0x80
"""MQTT 5 reason codes from here up are failures (a SUBACK's, a CONNACK's)."""


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


class BrokerConnection:
    """One live MQTT connection: publishes that give up when the connection is lost, and
    manual acknowledgements that are never sent on a later connection (message ids are per
    connection, so acknowledging an old one there would acknowledge the wrong message)."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.lost = asyncio.Event()
        self.error: BaseException | None = None

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
    ) -> bool:
        """Publish; True once the broker has it (QoS 1: acknowledged), False if the
        connection is lost or the broker does not acknowledge in time."""
        if not self.alive:
            return False
        sending = asyncio.ensure_future(
            self.client.publish(
                topic, payload, qos=qos, retain=retain, properties=properties, timeout=timeout
            )
        )
        lost = asyncio.ensure_future(self.lost.wait())
        try:
            await asyncio.wait({sending, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            if not sending.done():
                sending.cancel()
        if sending.cancelled():
            return False
        error = sending.exception()
        if error is not None:
            log.debug("publish to %s failed: %s", topic, error)
            return False
        return True

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
