"""The MQTT transport's own exceptions for settings and the broker (jobs have theirs in
:mod:`protocol.transports.mqtt.jobs`).

They are separate from aiomqtt's so that a caller can tell what retrying can fix (a broker
that is down: :class:`aiomqtt.MqttError`, retried with backoff) from what it cannot (bad
settings, a broker that refuses us), and the application can turn the latter into an exit
code and one message.
"""

from __future__ import annotations


class MqttConfigError(ValueError):
    """Settings the worker or client refuses to start with (explained in the message)."""


class FatalBrokerError(RuntimeError):
    """The broker refused us in a way that retrying will not change (credentials, ACLs)."""
