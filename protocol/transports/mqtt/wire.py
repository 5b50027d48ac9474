"""The wire format between the ask clients and the workers, beyond the topic names
(:mod:`protocol.transports.mqtt.topics`).

* **Job**: UCI text (``setoption`` lines, ``position``, one final ``go`` with a finite limit)
  published to ``<prefix>/jobs/<game>`` (``<game>`` a ``UCI_Variant`` name) at QoS 1, with
  *Response Topic* and *Correlation Data*.  Workers take jobs through
  ``$share/<group>/<prefix>/jobs/#`` with *Receive Maximum* = ``concurrency``, and acknowledge
  a job only after its terminal reply is published.
* **Replies**: to the response topic, correlation data copied back, user properties
  ``worker`` and ``status`` (:class:`ReplyProperty`, :class:`ReplyStatus`): ``accepted`` and
  ``info`` at QoS 0, then exactly one terminal ``done`` or ``error`` at QoS 1.  An ``error``
  is ``info string error: …`` lines, never a traceback, a path or a stand-in move.  Payloads
  are UTF-8 lines.
* **Presence**: ``<prefix>/workers/<id>/status``, retained ``online``; the Will sets a
  retained ``offline`` that expires after :data:`OFFLINE_EXPIRY_S`.
* **The same job**: :class:`JobKey`.

The full tables: docs/deploy.md, *The wire*.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

OFFLINE_EXPIRY_S = 86_400
"""How long the broker keeps a retained ``offline`` status (MQTT 5 Message Expiry)."""


class QoS(enum.IntEnum):
    """The MQTT delivery guarantees this transport uses: progress may be lost, answers not."""

    AT_MOST_ONCE = 0
    """``accepted`` and ``info`` replies (and QoS 0 jobs, which a full worker drops)."""
    AT_LEAST_ONCE = 1
    """Jobs, terminal replies, presence and subscriptions."""


class ReplyProperty(enum.StrEnum):
    """The names of the MQTT 5 user properties every reply carries."""

    STATUS = "status"
    """A :class:`ReplyStatus` value."""
    WORKER = "worker"
    """The id of the worker that sends the reply."""


class ReplyStatus(enum.StrEnum):
    """The ``status`` user property of a reply: what the reply is, in the job's life."""

    ACCEPTED = "accepted"
    """A worker took the job (empty payload, QoS 0)."""
    INFO = "info"
    """Progress lines (QoS 0)."""
    DONE = "done"
    """Terminal: the last ``info`` lines and the ``bestmove`` line (QoS 1)."""
    ERROR = "error"
    """Terminal: ``info string error:`` lines, no ``bestmove`` (QoS 1)."""

    @property
    def terminal(self) -> bool:
        """Whether this reply ends the job (exactly one terminal reply per job)."""
        return self in (ReplyStatus.DONE, ReplyStatus.ERROR)


class Presence(enum.StrEnum):
    """A worker's retained presence on ``<prefix>/workers/<id>/status``."""

    ONLINE = "online"
    OFFLINE = "offline"


@dataclass(frozen=True, slots=True)
class JobKey:
    """What makes two deliveries the same job: the same response topic, correlation data, job
    topic and payload (a broker redelivery or a client's resend).

    The job's topic and payload are part of the key because correlation data is the client's
    choice: a client that reuses it for another job must get that job's answer, not the first
    one's.  ``job_digest`` is a hash of the job topic and payload rather than the payload
    itself, so the LRU of recent jobs stays small however long the jobs are.
    """

    response_topic: str
    correlation: bytes
    job_digest: bytes

    @classmethod
    def of(cls, response_topic: str, correlation: bytes, topic: str, payload: bytes) -> JobKey:
        digest = hashlib.blake2b(digest_size=16)
        digest.update(topic.encode("utf-8", errors="surrogateescape"))
        digest.update(b"\x00")
        digest.update(payload)
        return cls(response_topic, correlation, digest.digest())


def new_properties(packet_type: int) -> Properties:
    """Empty MQTT 5 properties for a packet type (paho's constructor is untyped)."""
    return Properties(packet_type)  # type: ignore[no-untyped-call]


def reply_properties(correlation: bytes | None, status: ReplyStatus, worker: str) -> Properties:
    props = new_properties(PacketTypes.PUBLISH)
    if correlation is not None:
        props.CorrelationData = correlation
    props.UserProperty = [
        (ReplyProperty.STATUS.value, status.value),
        (ReplyProperty.WORKER.value, worker),
    ]
    return props


def user_properties(props: Properties | None) -> dict[str, str]:
    pairs = getattr(props, "UserProperty", None) if props is not None else None
    if not isinstance(pairs, list):
        return {}
    return {str(key): str(value) for key, value in pairs}


def correlation_of(props: Properties | None) -> bytes | None:
    value = getattr(props, "CorrelationData", None) if props is not None else None
    return bytes(value) if isinstance(value, bytes | bytearray) else None


def response_topic_of(props: Properties | None) -> object:
    return getattr(props, "ResponseTopic", None) if props is not None else None
