"""The topic tree of a fleet: where jobs go, how workers share them, where presence lives.

``<prefix>/jobs/<game>`` takes jobs, ``$share/<group>/<prefix>/jobs/#`` hands each to one
worker of a group, ``<prefix>/workers/<id>/status`` holds a worker's presence, and replies go
under ``<prefix>/replies/`` (:class:`ReplyTopics`: a job names its response topic, so the
worker checks it before publishing anything there).  Names are
built and taken apart only here, so the worker and the ask client cannot disagree on them.
The prefix, group and worker id become topic levels, hence the checks: a ``+``, ``#`` or
``/`` in them would silently subscribe to (or publish on) other topics than meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeGuard

from protocol.transports.mqtt.errors import MqttConfigError

DEFAULT_PREFIX = "brudno"
DEFAULT_GROUP = "bots"

_TOPIC_PART = re.compile(r"[^/+#\x00]+")


def check_topic_prefix(prefix: str) -> None:
    if not prefix or not all(_TOPIC_PART.fullmatch(part) for part in prefix.split("/")):
        raise MqttConfigError(
            f"bad topic prefix {prefix!r}: non-empty levels without '+', '#' or a leading/"
            "trailing '/'"
        )


def check_topic_level(kind: str, value: str) -> None:
    if not _TOPIC_PART.fullmatch(value):
        raise MqttConfigError(f"bad {kind} {value!r}: must not be empty or contain / + #")


def jobs_topic(prefix: str, game: str) -> str:
    return f"{prefix}/jobs/{game}"


def jobs_filter(prefix: str, group: str) -> str:
    """The shared subscription through which a group of workers takes jobs."""
    return f"$share/{group}/{prefix}/jobs/#"


def status_topic(prefix: str, worker_id: str) -> str:
    return f"{prefix}/workers/{worker_id}/status"


def status_filter(prefix: str) -> str:
    return f"{prefix}/workers/+/status"


def worker_from_status_topic(topic: str, prefix: str) -> str | None:
    head, tail = f"{prefix}/workers/", "/status"
    if topic.startswith(head) and topic.endswith(tail):
        worker = topic[len(head) : -len(tail)]
        return worker if worker and "/" not in worker else None
    return None


def game_from_topic(topic: str, prefix: str) -> str:
    """The ``<game>`` level of a job topic (whatever follows ``<prefix>/jobs/``)."""
    head = f"{prefix}/jobs/"
    return topic[len(head) :] if topic.startswith(head) else topic


def valid_response_topic(topic: object) -> TypeGuard[str]:
    """A topic one may publish to: non-empty text, no wildcards, no NUL."""
    return isinstance(topic, str) and bool(topic) and not any(c in topic for c in "+#\x00")


def replies_prefix(prefix: str) -> str:
    """Where replies go by default: ``<prefix>/replies/`` (note the trailing ``/``)."""
    return f"{prefix}/replies/"


def client_reply_topic(prefix: str, client_id: str, username: str | None = None) -> str:
    """A client's response topic: ``<prefix>/replies/[<user name>/]<client id>``.

    With a user name the topic is keyed on it, which the broker authenticates, so an ACL
    pattern (Mosquitto's ``%u``) can give each account its own replies whatever client id
    it picks.
    """
    check_topic_level("client id", client_id)
    if username is None:
        return f"{replies_prefix(prefix)}{client_id}"
    check_topic_level("user name", username)
    return f"{replies_prefix(prefix)}{username}/{client_id}"


@dataclass(frozen=True, slots=True)
class ReplyTopics:
    """The response topics a worker publishes to: under one of ``allowed`` (topic prefixes
    ending in ``/``), never inside the fleet's own ``<prefix>/jobs/`` or ``<prefix>/workers/``
    trees, never a ``$`` topic, never a wildcard.  Anything else is refused unanswered."""

    prefix: str
    allowed: tuple[str, ...]

    @classmethod
    def for_fleet(cls, prefix: str, allowed: tuple[str, ...] = ()) -> ReplyTopics:
        """``allowed`` empty means ``<prefix>/replies/``; each entry gets a trailing ``/``."""
        check_topic_prefix(prefix)
        normalized = []
        for entry in allowed or (replies_prefix(prefix),):
            stem = entry.rstrip("/")
            check_topic_prefix(stem)
            if stem.startswith("$"):
                raise MqttConfigError(f"bad reply prefix {entry!r}: '$' topics are the broker's")
            normalized.append(stem + "/")
        reserved = cls(prefix, ()).reserved
        for entry in normalized:
            if any(entry.startswith(tree) for tree in reserved):
                raise MqttConfigError(f"bad reply prefix {entry!r}: inside {' or '.join(reserved)}")
        return cls(prefix, tuple(normalized))

    @property
    def reserved(self) -> tuple[str, str]:
        """The fleet's own trees, where no reply may ever go."""
        return f"{self.prefix}/jobs/", f"{self.prefix}/workers/"

    def permits(self, topic: str) -> bool:
        return (
            valid_response_topic(topic)
            and not topic.startswith("$")
            and not any(topic.startswith(tree) for tree in self.reserved)
            and any(topic.startswith(stem) and len(topic) > len(stem) for stem in self.allowed)
        )
