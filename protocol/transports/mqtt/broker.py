"""Where the broker is and how to log in to it: the settings the worker and the ask client
share, the broker URL they are written as, and the MQTT client built from them.

Only values go in here: reading them from a command line, the environment or a secret file
is the application's business (:mod:`brudno.commands.mqtt`).
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import aiomqtt
from paho.mqtt.properties import Properties

from protocol.transports.mqtt.connection import enable_manual_ack
from protocol.transports.mqtt.errors import MqttConfigError

MQTT_PORT = 1883
MQTTS_PORT = 8883
_MAX_PORT = 65535
"""The highest TCP port number (ports are 16-bit)."""
_MIN_KEEPALIVE_S = 5
"""The shortest keep-alive accepted, in seconds."""

PAHO_LOGGER = "protocol.transports.mqtt.worker.paho"
"""paho-mqtt's log goes here, below the worker's logger, so ``brudno mqtt``'s log level
(which raises the worker's to INFO) covers it, and operators' filters keep their name."""


@dataclass(frozen=True, slots=True)
class BrokerSettings:
    """Where the broker is and how to log in; shared by the worker and the ask client."""

    host: str = "127.0.0.1"
    port: int = MQTT_PORT
    tls: bool = False
    cafile: Path | None = None
    """CA bundle to verify the broker with (default: the system's trust store)."""
    certfile: Path | None = None
    """Client certificate, for brokers that authenticate clients by certificate."""
    keyfile: Path | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    keepalive_s: int = 30
    """MQTT keep-alive: the broker drops a silent client after 1.5 times this, which is when
    a half-open connection's Will fires; the client likewise notices a dead broker."""
    timeout_s: float = 10.0
    """How long connecting, subscribing and QoS 1 publishes may wait for the broker."""

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'mqtts' if self.tls else 'mqtt'}://{host}:{self.port}"

    def check(self) -> None:
        if not 0 < self.port <= _MAX_PORT:
            raise MqttConfigError(f"broker port {self.port} out of range 1..65535")
        if self.keepalive_s < _MIN_KEEPALIVE_S:
            raise MqttConfigError("keep-alive must be at least 5 seconds")
        if self.password is not None and self.username is None:
            raise MqttConfigError("a password needs a user name (--username)")
        if (self.cafile or self.certfile) and not self.tls:
            raise MqttConfigError("--cafile/--certfile need TLS (--tls or an mqtts:// URL)")
        if self.keyfile is not None and self.certfile is None:
            raise MqttConfigError("--keyfile needs --certfile")

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context (certificate and host name verified), or ``None`` without TLS."""
        if not self.tls:
            return None
        context = ssl.create_default_context(
            cafile=str(self.cafile) if self.cafile is not None else None
        )
        if self.certfile is not None:
            context.load_cert_chain(
                str(self.certfile), str(self.keyfile) if self.keyfile is not None else None
            )
        return context

    def client(
        self,
        identifier: str,
        *,
        will: aiomqtt.Will | None = None,
        properties: Properties | None = None,
        clean_start: bool = True,
        manual_ack: bool = False,
    ) -> aiomqtt.Client:
        """A new (not yet connected) MQTT 5 client; each connection attempt gets its own."""
        client = aiomqtt.Client(
            self.host,
            self.port,
            identifier=identifier,
            username=self.username,
            password=self.password,
            protocol=aiomqtt.ProtocolVersion.V5,
            will=will,
            clean_start=clean_start,
            keepalive=self.keepalive_s,
            timeout=self.timeout_s,
            properties=properties,
            tls_context=self.ssl_context(),
            logger=logging.getLogger(PAHO_LOGGER),
        )
        # Many jobs in flight at once are normal here, not a sign of a leak.
        client.pending_calls_threshold = 1 << 16
        if manual_ack:
            enable_manual_ack(client)
        return client


def parse_broker_url(url: str) -> tuple[str, int, bool]:
    """``mqtt://host:port`` (also ``tcp://``, ``mqtts://``, ``ssl://``, bare ``host[:port]``)
    → (host, port, tls).  The port defaults to 1883, or 8883 with TLS.

    Credentials in the URL are refused rather than used: a URL travels on command lines and
    in logs, where a password must never be; the message points at the ways that keep it out
    (the application's ``--username`` and its password variable).
    """
    text = url.strip()
    if "://" not in text:
        text = "mqtt://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise MqttConfigError(f"bad broker URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in {"mqtt", "tcp", "mqtts", "ssl"}:
        raise MqttConfigError(f"bad broker URL {url!r}: use mqtt://HOST:PORT or mqtts://…")
    if not parts.hostname:
        raise MqttConfigError(f"bad broker URL {url!r}: no host")
    if parts.path not in {"", "/"} or parts.query or parts.username or parts.password:
        raise MqttConfigError(
            f"bad broker URL {url!r}: only a host and a port (credentials go in --username "
            "and $BRUDNO_MQTT_PASSWORD)"
        )
    tls = scheme in {"mqtts", "ssl"}
    return parts.hostname, port if port is not None else (MQTTS_PORT if tls else MQTT_PORT), tls
