"""The wire format between the ask clients and the workers, beyond the topic names
(:mod:`protocol.transports.mqtt.topics`).

* **Job** — a client publishes UCI text (``setoption …`` lines, ``position …``, one final
  ``go …`` with a finite limit) to ``<prefix>/jobs/<game>`` at QoS 1, with the MQTT 5
  *Response Topic* and *Correlation Data* properties.  ``<game>`` is a ``UCI_Variant`` name.
* **Taking jobs** — workers subscribe to ``$share/<group>/<prefix>/jobs/#``, so the broker
  hands each job to one worker of the group.  A worker announces *Receive Maximum* =
  ``concurrency``: the broker never has more unacknowledged jobs out to it than it has
  search slots.  A job is acknowledged (PUBACK) only after its final reply is published, so a
  worker that dies mid-job leaves it unacknowledged (see the package notes on lost workers).
* **Replies** go to the response topic with the correlation data copied back and two user
  properties (:class:`ReplyProperty`): ``worker`` (the worker's id) and ``status``
  (:class:`ReplyStatus`): ``accepted`` (empty payload, QoS 0: a worker took the job),
  ``info`` (QoS 0: progress, thinned to the last ``info`` line per depth and MultiPV line),
  then exactly one terminal reply at QoS 1: ``done`` (the last ``info`` lines and the
  ``bestmove`` line) or ``error`` (``info string error: <what> (<offending text>)`` lines:
  the job was refused and nothing ran; or one ``info string error: internal error, …`` line:
  the job failed inside the worker, which logged the details under the incident id the line
  names — a client never sees a traceback or a path of the worker's machine, and never takes
  a stand-in move for an answer).  Payloads are UTF-8 lines separated by ``\\n``.
* **Presence** — ``<prefix>/workers/<id>/status`` holds a retained ``online`` while the worker
  is connected; the Will (and a clean shutdown) set a retained ``offline`` that expires after
  a day (:data:`OFFLINE_EXPIRY_S`), so departed workers do not litter the topic tree forever.
* **The same job** — what makes two deliveries one job is :class:`JobKey`.
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
