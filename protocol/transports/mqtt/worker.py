"""UCI over MQTT: a fleet of workers behind a broker (``brudno mqtt``).

Where one server is not enough, many workers share the jobs that clients publish to an MQTT 5
broker (Mosquitto on one machine, an EMQX or HiveMQ cluster for bigger fleets).  The wire:

* **Job** — a client publishes UCI text (``setoption …`` lines, ``position …``, one final
  ``go …`` with a finite limit) to ``<prefix>/jobs/<game>`` at QoS 1, with the MQTT 5
  *Response Topic* and *Correlation Data* properties.  ``<game>`` is a ``UCI_Variant`` name.
* **Taking jobs** — workers subscribe to ``$share/<group>/<prefix>/jobs/#``, so the broker
  hands each job to one worker of the group.  A worker announces *Receive Maximum* =
  ``concurrency``: the broker never has more unacknowledged jobs out to it than it has
  search slots.  A job is acknowledged (PUBACK) only after its final reply is published, so a
  worker that dies mid-job leaves it unacknowledged (see *Lost workers* below).
* **Replies** go to the response topic with the correlation data copied back and two user
  properties: ``worker`` (the worker's id) and ``status``:
  ``accepted`` (empty payload, QoS 0: a worker took the job), ``info`` (QoS 0: progress,
  thinned to the last ``info`` line per depth and MultiPV line), then exactly one terminal
  reply at QoS 1: ``done`` (the last ``info`` lines and the ``bestmove`` line) or ``error``
  (``info string error: <what> (<offending text>)`` lines: the job was refused and nothing
  ran; or one ``info string error: internal error, …`` line: the job failed inside the
  worker, which logged the details under the incident id the line names — a client never
  sees a traceback or a path of the worker's machine, and never takes a stand-in move for
  an answer).  Payloads are UTF-8 lines separated by ``\\n``.
* **Presence** — ``<prefix>/workers/<id>/status`` holds a retained ``online`` while the worker
  is connected; the Will (and a clean shutdown) set a retained ``offline`` that expires after
  a day, so departed workers do not litter the topic tree forever.

Duplicates: the same job — the same response topic, correlation data, job topic and payload
— seen again (a broker redelivery or a client's resend) is answered from a bounded LRU of
recent jobs and never searched twice: while the job runs the duplicate joins it (and is
acknowledged with it); once it is done the cached terminal reply is published again.  The
job's topic and payload are part of the key because correlation data is the client's choice:
a client that reuses it for another job must get that job's answer, not the first one's.

Intake: Receive Maximum bounds only QoS 1 (and 2) deliveries, so the broker would hand a
worker QoS 0 jobs as fast as they come.  A worker therefore takes a QoS 0 job only while
fewer than ``concurrency + backlog`` jobs are pending (taken and not yet answered) and drops
the rest, counted and logged: QoS 0 promises no delivery.  QoS 1 jobs are never dropped;
the broker's Receive Maximum keeps at most ``concurrency`` of them pending, so a worker
holds at most ``2 * concurrency + backlog`` jobs whatever its clients send.

Lost workers and brokers.  The worker reconnects with exponential backoff, resubscribes,
republishes its presence and re-sends terminal replies that could not be published while the
broker was away.  What happens to a job whose worker vanished depends on the broker: the MQTT
5 spec says a broker *should* re-send an unacknowledged shared-subscription message to another
member of the group when the session ends (EMQX and HiveMQ do), but Mosquitto 2.0 drops it.
So the client side closes the gap itself (:mod:`protocol.transports.mqtt.ask`): it watches the
presence of the worker that accepted its job and re-sends the job when that worker goes ``offline``
(its Will), or when no worker accepted it within a while; the LRU makes the resend harmless.
With ``--session-expiry`` > 0 (and a stable ``--id``) a worker's session, its subscription
and its unacknowledged jobs outlive a dropped connection or a restart of the worker, and the
broker redelivers them when it comes back — at the price that jobs routed to a dead worker's
session wait there until it returns or the session expires.  The default (0) suits fleets
whose workers come and go.

Manual acknowledgement: aiomqtt 2.5 does not expose paho-mqtt's ``manual_ack`` switch, so
:class:`BrokerConnection` turns it on, and sends PUBACKs, through the aiomqtt client's paho
client (``Client._client``).  That is the one private attribute used here; without it a job
would be acknowledged on arrival and lost with a worker that dies mid-search.

Searches run in a small pool of :class:`~protocol.uci.workers.ProcessRunner` processes (one per
concurrency slot, kept across jobs), each job in a fresh :class:`EngineSession` over a leased
runner: options and position never leak from one job into the next.  The transposition table
does carry over, as between two ``go`` commands of a UCI session (it helps when consecutive
moves of a game meet the same worker, and clearing 16 MiB costs more than a small search); a
job that starts with ``ucinewgame`` gets an empty table, and so the same answer from any
worker for a node- or depth-limited search.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import enum
import hashlib
import logging
import os
import random
import re
import signal
import socket
import ssl
import sys
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard, TypeVar
from urllib.parse import urlsplit

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from brudno.argtypes import positive_int
from engine.control import SearchControl
from engine.game import Game
from engine.info import InfoCallback, SearchResult
from engine.limits import Limits
from games.registry import GAMES
from protocol.text import printable
from protocol.transports.events import log_line
from protocol.uci import commands as cmd
from protocol.uci.formatting import error_line
from protocol.uci.options import EvalFileAccess
from protocol.uci.runner import SearchRunner
from protocol.uci.session import MAX_LINE_LENGTH, EngineSession, State
from protocol.uci.workers import ProcessRunner, preload_in_workers, warm_up

log = logging.getLogger(__name__)

T = TypeVar("T")

MQTT_PORT = 1883
MQTTS_PORT = 8883
DEFAULT_PREFIX = "brudno"
DEFAULT_GROUP = "bots"
BROKER_ENV = "BRUDNO_MQTT_BROKER"
"""Environment variable with the default ``--broker`` URL (handy in containers)."""
PASSWORD_ENV = "BRUDNO_MQTT_PASSWORD"
"""Environment variable the broker password is read from by default (never a CLI argument:
command lines are visible to every user of the machine)."""

PROP_STATUS = "status"
PROP_WORKER = "worker"
OFFLINE_EXPIRY_S = 86_400
"""How long the broker keeps a retained ``offline`` status (MQTT 5 Message Expiry)."""

MAX_JOB_BYTES = MAX_LINE_LENGTH
"""Longer job payloads are refused: no sensible job comes near it."""
DEFAULT_HASH_MB = 16
STOP_GRACE_S = 10.0
"""After ``stop``, how long a search may take to hand back its move before its runner is
replaced (the session then still answers with a legal move)."""
PUBLISH_TIMEOUT_S = 10.0

_TOPIC_PART = re.compile(r"[^/+#\x00]+")
_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_AUTH_FAILURES = frozenset({0x86, 0x87, 0x8C})
"""CONNACK reasons that retrying cannot fix: bad user name or password, not authorized,
bad authentication method."""


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


class MqttConfigError(ValueError):
    """Settings the worker or client refuses to start with (explained in the message)."""


class FatalBrokerError(RuntimeError):
    """The broker refused us in a way that retrying will not change (credentials, ACLs)."""


class JobFailedError(RuntimeError):
    """A job's session reported an internal error (a bug, a crashed search process).

    The message holds the session's error lines (which may name the worker's files), for the
    worker's log; the client gets :func:`internal_error_line` instead.
    """

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))


# -- broker settings -------------------------------------------------------------------------
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
        if not 0 < self.port < 65536:
            raise MqttConfigError(f"broker port {self.port} out of range 1..65535")
        if self.keepalive_s < 5:
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
            logger=logging.getLogger("protocol.transports.mqtt.worker.paho"),
        )
        # Many jobs in flight at once are normal here, not a sign of a leak.
        client.pending_calls_threshold = 1 << 16
        if manual_ack:
            _paho(client).manual_ack_set(True)
        return client


def _paho(client: aiomqtt.Client) -> Any:
    """The paho-mqtt client inside an aiomqtt client (for manual acknowledgements)."""
    return client._client


def parse_broker_url(url: str) -> tuple[str, int, bool]:
    """``mqtt://host:port`` (also ``tcp://``, ``mqtts://``, ``ssl://``, bare ``host[:port]``)
    → (host, port, tls).  The port defaults to 1883, or 8883 with TLS."""
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
            f"and ${PASSWORD_ENV})"
        )
    tls = scheme in {"mqtts", "ssl"}
    return parts.hostname, port if port is not None else (MQTTS_PORT if tls else MQTT_PORT), tls


def add_broker_arguments(parser: argparse.ArgumentParser) -> None:
    """The broker options shared by ``brudno mqtt`` and ``brudno mqtt-ask``."""
    group = parser.add_argument_group("broker")
    group.add_argument(
        "--broker", default=os.environ.get(BROKER_ENV, "mqtt://127.0.0.1:1883"), metavar="URL",
        help=f"mqtt://HOST:PORT, or mqtts://HOST:PORT for TLS (default ${BROKER_ENV} or "
        "%(default)s)",
    )
    group.add_argument("--username", help="user name to log in with")
    group.add_argument(
        "--password-env", metavar="VAR",
        help=f"environment variable holding the password (default {PASSWORD_ENV}, when set)",
    )
    group.add_argument("--password-file", type=Path, metavar="FILE",
                       help="read the password from this file (e.g. a container secret)")
    group.add_argument("--tls", action="store_true", help="connect with TLS (as mqtts://)")
    group.add_argument("--cafile", type=Path, metavar="FILE",
                       help="CA certificates to verify the broker with (default: system CAs)")
    group.add_argument("--certfile", type=Path, metavar="FILE",
                       help="client certificate (PEM) for brokers that require one")
    group.add_argument("--keyfile", type=Path, metavar="FILE",
                       help="private key of --certfile, if not in the same file")
    group.add_argument("--keepalive", type=int, default=30, metavar="SECONDS",
                       help="MQTT keep-alive; a dead peer is noticed after ~1.5x this "
                       "(default %(default)s)")


def broker_from_args(args: argparse.Namespace) -> BrokerSettings:
    """Build and check :class:`BrokerSettings`; raises :class:`MqttConfigError`."""
    host, port, tls = parse_broker_url(args.broker)
    password: str | None = None
    if args.password_file is not None:
        try:
            password = args.password_file.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise MqttConfigError(f"cannot read the password file: {exc}") from None
    elif args.password_env is not None:
        password = os.environ.get(args.password_env)
        if password is None:
            raise MqttConfigError(f"${args.password_env} is not set (--password-env)")
    elif args.username is not None:
        password = os.environ.get(PASSWORD_ENV)
    settings = BrokerSettings(
        host=host,
        port=port,
        tls=tls or args.tls,
        cafile=args.cafile,
        certfile=args.certfile,
        keyfile=args.keyfile,
        username=args.username,
        password=password,
        keepalive_s=args.keepalive,
    )
    settings.check()
    return settings


# -- topics and properties -------------------------------------------------------------------
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
        worker = topic[len(head):-len(tail)]
        return worker if worker and "/" not in worker else None
    return None


def game_from_topic(topic: str, prefix: str) -> str:
    """The ``<game>`` level of a job topic (whatever follows ``<prefix>/jobs/``)."""
    head = f"{prefix}/jobs/"
    return topic[len(head):] if topic.startswith(head) else topic


def valid_response_topic(topic: object) -> TypeGuard[str]:
    """A topic one may publish to: non-empty text, no wildcards, no NUL."""
    return isinstance(topic, str) and bool(topic) and not any(c in topic for c in "+#\x00")


def default_worker_id() -> str:
    """``<host>-<pid>``: unique per process on a machine, and per container (where the host
    name is the container's and the pid is stable across restarts)."""
    host = _ID_CHARS.sub("-", socket.gethostname()).strip("-") or "worker"
    return f"{host}-{os.getpid()}"


def new_properties(packet_type: int) -> Properties:
    """Empty MQTT 5 properties for a packet type (paho's constructor is untyped)."""
    return Properties(packet_type)  # type: ignore[no-untyped-call]


def reply_properties(correlation: bytes | None, status: ReplyStatus, worker: str) -> Properties:
    props = new_properties(PacketTypes.PUBLISH)
    if correlation is not None:
        props.CorrelationData = correlation
    props.UserProperty = [(PROP_STATUS, status.value), (PROP_WORKER, worker)]
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


# -- jobs ------------------------------------------------------------------------------------
class JobError(Exception):
    """A job refused before anything ran; becomes one ``info string error:`` reply line."""

    def __init__(self, what: str, offending: str) -> None:
        super().__init__(f"{what} ({offending})")
        self.what = what
        self.offending = offending

    def line(self) -> str:
        return error_line(self.what, printable(self.offending, 200))


@dataclass(frozen=True, slots=True)
class Job:
    """A checked job: the lines that set up the position, then its single ``go``."""

    game: str
    setup: tuple[str, ...]
    go: str
    limits: Limits
    new_game: bool = False
    """The job said ``ucinewgame``: search with an empty table (reproducible answers)."""


def parse_job(payload: bytes, game: str) -> Job:
    """Check a job's payload for ``game``; raise :class:`JobError` saying what is wrong.

    A job is a complete, finite request: ``setoption``/``position`` lines (blank lines and
    ``isready`` are tolerated, ``ucinewgame`` clears the table) and exactly one ``go``, last,
    with a limit
    that ends the search by itself.  Anything interactive (``stop``, ``go infinite``, ``uci``,
    ``quit``, ``perft`` …) has no place in a one-shot request and is refused.  ``UCI_Variant``
    comes from the topic; a job may repeat it but not contradict it.  Whether positions and
    moves are legal is for the session to say when the job runs.
    """
    if game not in GAMES:
        known = ", ".join(sorted(GAMES))
        raise JobError(f"unknown game; this worker plays {known}", game)
    if len(payload) > MAX_JOB_BYTES:
        raise JobError("job too long", f"{len(payload)} bytes, limit {MAX_JOB_BYTES}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JobError("the job is not UTF-8 text", repr(payload[:40])) from exc
    setup: list[str] = []
    go: tuple[str, Limits] | None = None
    new_game = False
    for raw in text.splitlines():
        line = raw.strip()
        command = cmd.parse_command(line)
        if go is not None and not isinstance(command, cmd.Empty):
            raise JobError("go must be the job's last command", line)
        match command:
            case cmd.Empty() | cmd.IsReady():
                pass
            case cmd.UciNewGame():
                new_game = True
            case cmd.SetOption(name=name, value=value):
                if name.casefold() == "uci_variant":
                    if (value or "").strip().casefold() != game.casefold():
                        raise JobError(f"UCI_Variant comes from the topic ({game})", line)
                    continue
                setup.append(line)
            case cmd.Position():
                setup.append(line)
            case cmd.Go(limits=limits, errors=errors):
                if errors:
                    raise JobError(errors[0], line)
                if limits.waits_for_stop:
                    raise JobError("go infinite/ponder waits for a stop a job cannot send",
                                   line)
                if not (limits.is_timed or limits.depth or limits.nodes or limits.mate):
                    raise JobError("go needs a limit (depth, nodes, movetime, mate or a clock)",
                                   line)
                go = (line, limits)
            case cmd.Invalid(reason=reason):
                raise JobError(reason, line)
            case cmd.Unknown():
                raise JobError("unknown command", line)
            case _:
                raise JobError("not allowed in a job (only setoption, position and go)", line)
    if go is None:
        raise JobError("the job has no go command", printable(text, 80) or "empty payload")
    return Job(game, tuple(setup), go[0], go[1], new_game)


INTERNAL_ERROR_PREFIX = "info string error: internal error"
"""How a session reports a failure of its own (a bug, a crashed search process), as opposed
to bad client input: the text after it may hold a traceback and the worker's file paths."""


def internal_error_line(incident: str, job: Job) -> str:
    """The one line a client gets for a job that failed inside the worker.

    It names the incident under which the worker logged the details (the traceback stays on
    the worker: it shows paths of the worker's machine and helps no client) and, as every
    error line, the client's text it is about: the job's ``go``.
    """
    return error_line(f"internal error, see the worker's log for incident {incident}", job.go)


class ReplyCollector:
    """The session's sink for one job: thins progress and keeps the terminal lines.

    ``info`` lines are kept only as the last line per MultiPV index within a depth (a line
    becomes ready for publishing once a deeper one arrives); current-move and statistics
    ticks are dropped.  Other lines pass through in order.  ``bestmove`` ends the job: the
    final reply carries the last depth's lines and the ``bestmove``.

    Internal-error lines (:data:`INTERNAL_ERROR_PREFIX`) are held back in
    :attr:`internal_errors`, never passed on: they are for the worker's log, and the job they
    belong to must end with an ``error`` reply, not with the stand-in ``bestmove`` the session
    sends after a failed search (UCI wants one for every ``go``; a job's client wants the
    truth).
    """

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.internal_errors: list[str] = []
        self.final: list[str] | None = None
        self.changed = asyncio.Event()
        self._ready: list[str] = []
        self._depth: str | None = None
        self._lines: dict[int, str] = {}

    def send(self, line: str, *, droppable: bool = False) -> None:
        if line.startswith(INTERNAL_ERROR_PREFIX):
            self.internal_errors.append(line)
            self.changed.set()
            return
        if droppable and line.startswith("info depth"):
            tokens = line.split()
            if "pv" not in tokens:
                return
            depth = tokens[2]
            multipv = int(tokens[tokens.index("multipv") + 1]) if "multipv" in tokens else 1
            if depth != self._depth:
                if self._flush():
                    self.changed.set()
                self._depth = depth
            self._lines[multipv] = line
            return
        self._flush()
        if line.startswith("bestmove"):
            self.final = [*self._ready, line]
            self._ready = []
        else:
            if line.startswith("info string error:"):
                self.errors.append(line)
            self._ready.append(line)
        self.changed.set()

    def _flush(self) -> bool:
        if not self._lines:
            return False
        self._ready.extend(self._lines[k] for k in sorted(self._lines))
        self._lines.clear()
        return True

    def take_ready(self) -> list[str]:
        """Lines ready to go out as progress (and forget them)."""
        ready, self._ready = self._ready, []
        return ready


# -- connections -----------------------------------------------------------------------------
class Backoff:
    """Reconnect delays: doubling from ``initial_s`` up to ``maximum_s``, each drawn from the
    upper half of its range so a fleet that lost its broker does not return in lockstep."""

    def __init__(self, initial_s: float, maximum_s: float,
                 rng: Callable[[], float] = random.random) -> None:
        self._initial = initial_s
        self._maximum = max(initial_s, maximum_s)
        self._rng = rng
        self._attempt = 0

    def reset(self) -> None:
        self._attempt = 0

    def next_delay(self) -> float:
        ceiling = min(self._maximum, self._initial * (1 << min(self._attempt, 30)))
        self._attempt += 1
        return ceiling * (0.5 + 0.5 * self._rng())


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

    async def publish(self, topic: str, payload: str | bytes, *, qos: int,
                      retain: bool = False, properties: Properties | None = None,
                      timeout: float = PUBLISH_TIMEOUT_S) -> bool:
        """Publish; True once the broker has it (QoS 1: acknowledged), False if the
        connection is lost or the broker does not acknowledge in time."""
        if not self.alive:
            return False
        sending = asyncio.ensure_future(
            self.client.publish(topic, payload, qos=qos, retain=retain,
                                properties=properties, timeout=timeout)
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
        if qos > 0 and self.alive:
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
        return isinstance(value, int) and value in _AUTH_FAILURES
    return False


def reason_failed(codes: object) -> int | None:
    """The first failure code in a SUBACK's reason codes, if any (``None`` when granted)."""
    if not isinstance(codes, list | tuple):
        return None
    for code in codes:
        value = getattr(code, "value", code)
        if isinstance(value, int) and value >= 0x80:
            return value
    return None


# -- the worker ------------------------------------------------------------------------------
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
    """MQTT session expiry: 0 ends the session with the connection (see the module notes)."""
    max_job_s: float = 300.0
    """A search still running after this long is told to stop (its bestmove still goes out)."""
    max_hash_mb: int = 256
    """The largest ``Hash`` a job may ask for, per concurrent job."""
    dedup_size: int = 1024
    """Recent jobs remembered to answer duplicate deliveries once."""
    backlog: int = 16
    """QoS 0 jobs held waiting for a free slot; more are dropped.  The broker's Receive
    Maximum holds back QoS 1 jobs but not QoS 0 ones, so without this bound a flood of QoS 0
    jobs would queue in the worker's memory without limit (see *Intake* in the module notes)."""
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

    def eval_files(self) -> EvalFileAccess:
        """The jobs' ``EvalFile`` policy; :class:`MqttConfigError` if the directory is
        unusable."""
        try:
            return EvalFileAccess.for_server(self.eval_file_dir)
        except ValueError as exc:
            raise MqttConfigError(f"--eval-file-dir: {exc}") from None

    def check(self) -> None:
        self.broker.check()
        check_topic_prefix(self.prefix)
        check_topic_level("group", self.group)
        check_topic_level("worker id", self.worker_id)
        if not 1 <= self.concurrency <= 65535:
            raise MqttConfigError("concurrency must be in 1..65535")
        if self.session_expiry_s < 0:
            raise MqttConfigError("session expiry must not be negative")
        if self.max_job_s <= 0 or self.shutdown_timeout_s < 0:
            raise MqttConfigError("times must be positive")
        if self.max_hash_mb < 1 or self.dedup_size < 1:
            raise MqttConfigError("max hash and dedup size must be at least 1")
        if self.backlog < 0:
            raise MqttConfigError("backlog must not be negative")
        if self.reconnect_initial_s <= 0 or self.reconnect_max_s <= 0:
            raise MqttConfigError("reconnect delays must be positive")
        self.eval_files()


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
    peak_pending: int = 0
    """The most jobs pending at once (taken in, terminal reply not yet handed to the broker):
    the bound the intake keeps, visible to tests and operators."""


@dataclass(slots=True)
class _Delivery:
    connection: BrokerConnection
    mid: int
    qos: int


@dataclass(frozen=True, slots=True)
class JobKey:
    """What makes two deliveries the same job (see *Duplicates* in the module notes).

    ``job_digest`` is a hash of the job topic and payload rather than the payload itself, so
    the LRU of recent jobs stays small however long the jobs are.
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


@dataclass(frozen=True, slots=True)
class TerminalReply:
    """A job's one terminal reply: ``done`` or ``error`` and its lines."""

    status: ReplyStatus
    payload: str


class _JobState(enum.Enum):
    RUNNING = "running"
    DONE = "done"


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
    key: JobKey | None = None
    """The key the job is remembered under; ``None`` without correlation data (such a job
    cannot be told from another, so it is never deduplicated)."""
    pending: bool = False
    """The job counts towards the worker's pending jobs (see *Intake* in the module notes)."""


class _Slot:
    """One search slot: a runner (a worker process) kept across jobs."""

    def __init__(self, factory: Callable[[int], SearchRunner]) -> None:
        self._factory = factory
        self.runner = factory(DEFAULT_HASH_MB)
        self.hash_mb = DEFAULT_HASH_MB

    def lease(self, hash_mb: int) -> SearchRunner:
        """The runner factory handed to a job's session: the slot's runner, not a new one."""
        del hash_mb  # the session starts at the default size, which the slot is reset to
        return _LeasedRunner(self)

    async def reset_after_job(self) -> None:
        if self.hash_mb != DEFAULT_HASH_MB:
            self.hash_mb = DEFAULT_HASH_MB
            await self.runner.resize_hash(DEFAULT_HASH_MB)

    async def replace(self) -> None:
        """Discard a runner whose search will not stop (its process is killed)."""
        old, self.runner = self.runner, self._factory(DEFAULT_HASH_MB)
        self.hash_mb = DEFAULT_HASH_MB
        await old.close()


class _LeasedRunner:
    """A slot's runner as one job's session sees it: closing it returns it to the pool."""

    def __init__(self, slot: _Slot) -> None:
        self._slot = slot

    async def search(self, game: Game[Any], limits: Limits, control: SearchControl,
                     on_info: InfoCallback, **options: Any) -> SearchResult:
        # Keyword options (multipv, move_overhead_ms, algorithm …) pass through unchanged.
        return await self._slot.runner.search(game, limits, control, on_info, **options)

    async def call(
        self, fn: Callable[..., T], *args: Any, control: SearchControl | None = None
    ) -> T:
        return await self._slot.runner.call(fn, *args, control=control)

    async def start(self) -> None:
        await self._slot.runner.start()

    async def resize_hash(self, hash_mb: int) -> None:
        self._slot.hash_mb = hash_mb
        await self._slot.runner.resize_hash(hash_mb)

    async def clear(self) -> None:
        await self._slot.runner.clear()

    async def close(self) -> None:
        """The pool owns the runner; the session only gives it back."""


class MqttWorker:
    """Takes jobs from the broker and answers them until :meth:`run`'s ``stop`` is set."""

    def __init__(self, config: WorkerConfig) -> None:
        config.check()
        self.config = config
        self.eval_files = config.eval_files()
        """What a job's ``EvalFile`` may read, resolved once for all jobs."""
        self.stats = WorkerStats()
        self.connected = asyncio.Event()
        """Set while connected and subscribed (tests and health checks wait on it)."""
        self._conn: BrokerConnection | None = None
        self._records: OrderedDict[JobKey, _Record] = OrderedDict()
        self._unsent: OrderedDict[int, _Record] = OrderedDict()
        self._sessions: dict[int, EngineSession] = {}
        self._slots: asyncio.Queue[_Slot] = asyncio.Queue()
        self._all_slots: list[_Slot] = []
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
    def intake_limit(self) -> int:
        """A QoS 0 job is taken only while fewer jobs than this are pending."""
        return self.config.concurrency + self.config.backlog

    # -- lifecycle ---------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set, then shut down gracefully.

        Raises :class:`FatalBrokerError` when the broker refuses the credentials or the
        subscription; every other broker trouble is retried with backoff.
        """
        config = self.config
        for _ in range(config.concurrency):
            slot = _Slot(config.runner_factory)
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
            log.info("%s", log_line("stopped", worker=config.worker_id,
                                  searched=self.stats.searched, rejected=self.stats.rejected,
                                  duplicates=self.stats.duplicates))

    async def _connect_loop(self, stop: asyncio.Event) -> None:
        config = self.config
        backoff = Backoff(config.reconnect_initial_s, config.reconnect_max_s)
        while not stop.is_set():
            try:
                if await self._connected_session(stop):
                    backoff.reset()
            except (aiomqtt.MqttError, OSError) as exc:
                # OSError: certificate files unreadable, DNS, … — may well heal; retry.
                if connect_failure_is_fatal(exc):
                    raise FatalBrokerError(f"the broker refused the login: {exc}") from exc
                log.warning("%s", log_line("broker_unavailable", broker=config.broker.url,
                                         error=str(exc) or type(exc).__name__))
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
        will = aiomqtt.Will(self._topic_status, Presence.OFFLINE.value, qos=1, retain=True,
                            properties=will_props)
        return config.broker.client(
            config.worker_id, will=will, properties=props,
            clean_start=config.session_expiry_s == 0, manual_ack=True,
        )

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
                codes = await client.subscribe(self._topic_jobs, qos=1)
                failure = reason_failed(codes)
                if failure is not None:
                    raise FatalBrokerError(
                        f"the broker refused the subscription {self._topic_jobs} "
                        f"(reason code 0x{failure:02X}; shared subscriptions need MQTT 5 "
                        "and an ACL that allows them)"
                    )
                reader = asyncio.create_task(self._read(conn), name="mqtt-reader")
                if await conn.publish(self._topic_status, Presence.ONLINE.value, qos=1,
                                      retain=True):
                    served = True
                    log.info("%s", log_line("connected", broker=config.broker.url,
                                          worker=config.worker_id,
                                          concurrency=config.concurrency,
                                          subscription=self._topic_jobs))
                    self.connected.set()
                    self._write_status_file(Presence.ONLINE)
                    self._resend_unsent()
                    waiting = asyncio.ensure_future(stop.wait())
                    try:
                        await asyncio.wait({reader, waiting},
                                           return_when=asyncio.FIRST_COMPLETED)
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
            log.warning("%s", log_line("connection_lost", broker=config.broker.url,
                                     error=conn.error or "closed"))
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
            await asyncio.wait_for(conn.client.unsubscribe(self._topic_jobs),
                                   self.config.broker.timeout_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), self.config.shutdown_timeout_s)
        self._accepting = False
        await self._stop_all_jobs()
        await self._wait_tasks()
        props = new_properties(PacketTypes.PUBLISH)
        props.MessageExpiryInterval = OFFLINE_EXPIRY_S
        await conn.publish(self._topic_status, Presence.OFFLINE.value, qos=1, retain=True,
                           properties=props)

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
                log.exception("failed to handle a message on %s", message.topic.value)
                conn.ack(message.mid, message.qos)

    def _on_message(self, conn: BrokerConnection, message: aiomqtt.Message) -> None:
        self.stats.received += 1
        topic = message.topic.value
        if message.qos == 0 and self._pending >= self.intake_limit:
            self._drop(topic)
            return
        delivery = _Delivery(conn, message.mid, message.qos)
        props = message.properties
        response_topic = response_topic_of(props)
        correlation = correlation_of(props)
        if not valid_response_topic(response_topic):
            self.stats.unanswerable += 1
            log.info("%s", log_line("unanswerable", topic=topic,
                                  reason="no usable response topic"))
            conn.ack(delivery.mid, delivery.qos)
            return
        raw = message.payload
        payload = bytes(raw) if isinstance(raw, bytes | bytearray) else str(raw or "").encode()
        key = (JobKey.of(response_topic, correlation, topic, payload)
               if correlation is not None else None)
        record = self._records.get(key) if key is not None else None
        if record is not None and key is not None:
            self.stats.duplicates += 1
            self._records.move_to_end(key)
            if delivery.qos > 0:  # a QoS 0 delivery has nothing to acknowledge
                record.deliveries.append(delivery)
            log.info("%s", log_line("duplicate", topic=topic, state=record.state.value))
            if record.state is _JobState.RUNNING:
                self._spawn(self._publish_status(record, ReplyStatus.ACCEPTED),
                            "mqtt-accepted")
            else:
                self._spawn(self._deliver(record), "mqtt-replay")
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

    def _drop(self, topic: str) -> None:
        """Drop a QoS 0 job the intake has no room for: one warning when the intake fills,
        one with the count when it has room again (a flood must not flood the log too)."""
        self.stats.dropped += 1
        if self._dropped_in_burst == 0:
            log.warning("%s", log_line("intake_full", topic=topic, pending=self._pending,
                                     action="dropping QoS 0 jobs"))
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
            log.warning("%s", log_line("qos0_dropped", count=self._dropped_in_burst,
                                     pending=self._pending))
            self._dropped_in_burst = 0

    def _remember(self, key: JobKey, record: _Record) -> None:
        records = self._records
        records[key] = record
        while len(records) > self.config.dedup_size:
            # Forget the oldest finished job; running ones stay (there are few of them).
            for old_key, old in records.items():
                if old.state is _JobState.DONE:
                    del records[old_key]
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
        log.error("%s", log_line("internal_error", incident=incident, game=job.game,
                               go=printable(job.go, 160),
                               detail=str(exc) if reported else None),
                  exc_info=None if reported else exc)
        return TerminalReply(ReplyStatus.ERROR, internal_error_line(incident, job))

    def _forget(self, record: _Record) -> None:
        if record.key is not None and self._records.get(record.key) is record:
            del self._records[record.key]

    async def _search(self, record: _Record, job: Job, slot: _Slot) -> TerminalReply:
        """Run one job in a fresh session on ``slot``; returns the terminal reply.

        Raises :class:`JobFailedError` when the session reports an internal error (its
        lines are the exception's text, for the worker's log).
        """
        collector = ReplyCollector()
        limit = self.config.max_hash_mb

        def hash_budget(mb: int) -> str | None:
            return None if mb <= limit else f"Hash above this worker's limit of {limit} MiB"

        session = EngineSession(collector, runner_factory=slot.lease, hash_budget=hash_budget,
                                eval_files=self.eval_files)
        self._sessions[id(record)] = session
        started = time.monotonic()
        try:
            if job.new_game:
                await slot.runner.clear()
            for line in (f"setoption name UCI_Variant value {job.game}", *job.setup):
                await session.handle(line)
                if collector.internal_errors:
                    raise JobFailedError(collector.internal_errors)
                if collector.errors:
                    self.stats.rejected += 1
                    log.info("%s", log_line("rejected", game=job.game,
                                          reason=printable(collector.errors[0], 160)))
                    return TerminalReply(ReplyStatus.ERROR, "\n".join(collector.errors))
            self.stats.searched += 1
            await self._publish_status(record, ReplyStatus.ACCEPTED)
            await session.handle(job.go)
            await self._follow(record, session, collector, slot)
            if collector.internal_errors:
                raise JobFailedError(collector.internal_errors)
            assert collector.final is not None
            log.debug("%s", log_line("done", game=job.game,
                                   ms=round((time.monotonic() - started) * 1000)))
            return TerminalReply(ReplyStatus.DONE, "\n".join(collector.final))
        finally:
            del self._sessions[id(record)]
            await session.close()
            await slot.reset_after_job()

    async def _follow(self, record: _Record, session: EngineSession,
                      collector: ReplyCollector, slot: _Slot) -> None:
        """Publish progress until the bestmove; enforce the job time limit."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.max_job_s
        stage = 0  # 0 searching, 1 told to stop, 2 runner replaced
        while collector.final is None:
            if collector.internal_errors and session.state is State.IDLE:
                # The session failed before it started a search: no bestmove will come,
                # and the job ends with an error whatever else might.
                raise JobFailedError(collector.internal_errors)
            try:
                await asyncio.wait_for(collector.changed.wait(),
                                       max(0.0, deadline - loop.time()))
            except TimeoutError:
                if stage == 0:
                    log.warning("%s", log_line("job_time_limit", seconds=self.config.max_job_s))
                    await session.handle("stop")
                    deadline, stage = loop.time() + STOP_GRACE_S, 1
                elif stage == 1:
                    log.error("%s", log_line("search_stuck", action="replacing the runner"))
                    await slot.replace()
                    deadline, stage = loop.time() + STOP_GRACE_S, 2
                else:
                    raise RuntimeError("the search neither stopped nor died") from None
                continue
            collector.changed.clear()
            ready = collector.take_ready()
            if ready:
                await self._publish_reply(record, ReplyStatus.INFO, "\n".join(ready), qos=0)

    # -- replies -----------------------------------------------------------------------------
    def _finish(self, record: _Record, reply: TerminalReply) -> None:
        record.state, record.reply = _JobState.DONE, reply
        self._spawn(self._deliver_first(record), "mqtt-reply")

    async def _deliver_first(self, record: _Record) -> None:
        """The first delivery of a terminal reply; the job stops counting as pending once the
        broker has the reply, or once it is parked for a resend (a bounded buffer of its own)."""
        try:
            await self._deliver(record)
        finally:
            self._release(record)

    async def _deliver(self, record: _Record) -> None:
        """Publish the terminal reply, then acknowledge every delivery of the job."""
        reply = record.reply
        assert reply is not None, "only a finished job is delivered"
        conn = self._conn
        sent = conn is not None and await self._publish_reply(
            record, reply.status, reply.payload, qos=1, conn=conn
        )
        if not sent:
            record.unsent = True
            self._unsent[id(record)] = record
            while len(self._unsent) > self.config.dedup_size:
                self._unsent.popitem(last=False)
            return
        record.unsent = False
        self._unsent.pop(id(record), None)
        deliveries, record.deliveries = record.deliveries, []
        for delivery in deliveries:
            if delivery.connection is self._conn:
                delivery.connection.ack(delivery.mid, delivery.qos)

    def _resend_unsent(self) -> None:
        for record in list(self._unsent.values()):
            self._spawn(self._deliver(record), "mqtt-resend")

    async def _publish_status(self, record: _Record, status: ReplyStatus) -> None:
        await self._publish_reply(record, status, "", qos=0)

    async def _publish_reply(self, record: _Record, status: ReplyStatus, payload: str, *,
                             qos: int, conn: BrokerConnection | None = None) -> bool:
        conn = conn or self._conn
        if conn is None:
            return False
        props = reply_properties(record.correlation, status, self.config.worker_id)
        return await conn.publish(record.response_topic, payload, qos=qos, properties=props)


# -- brudno mqtt -----------------------------------------------------------------------------
async def serve_mqtt(config: WorkerConfig, *,
                     ready: Callable[[MqttWorker], None] | None = None) -> int:
    """Run a worker until SIGTERM/SIGINT, then shut down gracefully; returns the exit code."""
    if config.runner_factory is ProcessRunner:
        await asyncio.to_thread(warm_up)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    installed = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
            installed.append(signum)
    worker = MqttWorker(config)
    if ready is not None:
        ready(worker)
    try:
        await worker.run(stop)
    except FatalBrokerError as exc:
        print(f"brudno mqtt: {exc}", file=sys.stderr)
        return 2
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    add_broker_arguments(parser)
    defaults = WorkerConfig(worker_id="x")
    group = parser.add_argument_group("worker")
    group.add_argument("--prefix", default=defaults.prefix,
                       help="topic prefix: jobs on PREFIX/jobs/<game> (default %(default)s)")
    group.add_argument("--group", default=defaults.group,
                       help="shared-subscription group; workers of one group share the jobs "
                       "(default %(default)s)")
    group.add_argument("--concurrency", type=positive_int, default=defaults.concurrency,
                       metavar="N", help="jobs searched at once, one process each (default "
                       "%(default)s; use at most the cores this worker may use)")
    group.add_argument("--backlog", type=int, default=defaults.backlog, metavar="N",
                       help="QoS 0 jobs held waiting for a free slot; more are dropped "
                       "(QoS 1 jobs never are: the broker holds them back) (default "
                       "%(default)s)")
    group.add_argument("--id", dest="worker_id", metavar="ID",
                       help="worker id: MQTT client id and presence topic (default "
                       "HOSTNAME-PID); keep it stable with --session-expiry")
    group.add_argument("--session-expiry", type=int, default=defaults.session_expiry_s,
                       metavar="SECONDS", help="keep the MQTT session (subscription and "
                       "unacknowledged jobs) this long after a disconnect (default "
                       "%(default)s: none)")
    group.add_argument("--max-job-seconds", type=float, default=defaults.max_job_s,
                       metavar="SECONDS", help="stop searches running longer than this "
                       "(default %(default)s)")
    group.add_argument("--max-hash", type=positive_int, default=defaults.max_hash_mb,
                       metavar="MIB", help="largest Hash a job may set (default %(default)s)")
    group.add_argument("--reconnect-max", type=float, default=defaults.reconnect_max_s,
                       metavar="SECONDS", help="longest wait between reconnection attempts "
                       "(default %(default)s)")
    group.add_argument("--shutdown-timeout", type=float, default=defaults.shutdown_timeout_s,
                       metavar="SECONDS", help="on SIGTERM/SIGINT, time running jobs get "
                       "before they are stopped (default %(default)s)")
    group.add_argument("--status-file", type=Path, metavar="FILE",
                       help="keep 'online' or 'offline' in this file, for health checks")
    group.add_argument("--eval-file-dir", type=Path, metavar="DIR",
                       help="jobs may load EvalFile weights from the files in DIR, and no "
                       "others (default: EvalFile refuses every file)")


def run(args: argparse.Namespace) -> int:
    preload_in_workers("brudno.cli")  # the entry module every worker imports
    log.setLevel(min(log.getEffectiveLevel(), logging.INFO))
    try:
        config = WorkerConfig(
            broker=broker_from_args(args),
            prefix=args.prefix,
            group=args.group,
            concurrency=args.concurrency,
            backlog=args.backlog,
            worker_id=args.worker_id or default_worker_id(),
            session_expiry_s=args.session_expiry,
            max_job_s=args.max_job_seconds,
            max_hash_mb=args.max_hash,
            reconnect_max_s=args.reconnect_max,
            shutdown_timeout_s=args.shutdown_timeout,
            status_file=args.status_file,
            eval_file_dir=args.eval_file_dir,
        )
        config.check()
        config.broker.ssl_context()  # a missing or bad CA file is a startup error
    except (MqttConfigError, OSError, ssl.SSLError) as exc:
        print(f"brudno mqtt: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(serve_mqtt(config))
