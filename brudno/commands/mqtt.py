"""``brudno mqtt``: a worker of an MQTT bot fleet (:mod:`protocol.transports.mqtt`).

Usage (containers and scripts depend on this interface)::

    brudno mqtt [--broker URL] [--username USER] [--password-env VAR | --password-file F]
                [--tls] [--cafile F] [--certfile F] [--keyfile F] [--keepalive S]
                [--prefix P] [--group G] [--concurrency N] [--backlog N] [--id ID]
                [--reply-prefix P ...] [--dedup-kib KIB]
                [--session-expiry S] [--max-job-seconds S] [--max-hash MIB]
                [--reconnect-max S] [--shutdown-timeout S] [--status-file F]
                [--eval-file-dir DIR] [--syzygy-dir DIR] [--book-dir DIR]
                [--metrics-port PORT] [--metrics-host HOST] [--auth-max-penalty S]
                [--token T | --token-file F | --token-env VAR]
                [--metrics-token T | --metrics-token-file F | --metrics-token-env VAR]

This module turns the command line and the environment into a
:class:`~protocol.transports.mqtt.config.WorkerConfig` and runs the worker until SIGTERM or
SIGINT (:func:`brudno.signals.run_until_signal`), which finish the running jobs and take the
worker offline.  The broker options are shared with ``brudno mqtt-ask``
(:mod:`brudno.commands.mqtt_ask`), so both read credentials the same way.

Environment: ``$BRUDNO_MQTT_BROKER`` is the default ``--broker`` (handy in containers);
``$BRUDNO_MQTT_PASSWORD`` the default password.  A password is never a command-line argument:
command lines are visible to every user of the machine.

Exit status: 0 after a graceful shutdown; 2 for bad settings, or when the broker refuses the
login or the subscription (retrying cannot fix either; every other broker trouble is retried).
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import logging
import os
import ssl
import sys
from pathlib import Path

from brudno.argtypes import positive_int
from brudno.commands.serve import TOKEN_ENV, resolve_token
from brudno.monitoring import add_auth_penalty_argument, add_metrics_arguments, http_config
from brudno.signals import run_until_signal
from protocol.transports.http.config import HttpConfig, HttpConfigError
from protocol.transports.http.service import serve_mqtt_monitored
from protocol.transports.mqtt import worker as mqtt_worker
from protocol.transports.mqtt.broker import BrokerSettings, parse_broker_url
from protocol.transports.mqtt.config import WorkerConfig, default_worker_id
from protocol.transports.mqtt.errors import FatalBrokerError, MqttConfigError
from protocol.transports.mqtt.worker import serve_mqtt, warm_up_runners
from protocol.uci.workers import preload_in_workers

BROKER_ENV = "BRUDNO_MQTT_BROKER"
"""Environment variable with the default ``--broker`` URL (handy in containers)."""
PASSWORD_ENV = "BRUDNO_MQTT_PASSWORD"
"""Environment variable the broker password is read from by default (never a CLI argument:
command lines are visible to every user of the machine).  The broker URL's error message
(:func:`~protocol.transports.mqtt.broker.parse_broker_url`) names it too."""


class ExitStatus(enum.IntEnum):
    STOPPED = 0
    """Shut down gracefully (SIGTERM or SIGINT)."""
    REFUSED = 2
    """Bad settings, or a broker that refuses the login or the subscription."""


def add_broker_arguments(parser: argparse.ArgumentParser) -> None:
    """The broker options shared by ``brudno mqtt`` and ``brudno mqtt-ask``."""
    group = parser.add_argument_group("broker")
    group.add_argument(
        "--broker",
        default=os.environ.get(BROKER_ENV, "mqtt://127.0.0.1:1883"),
        metavar="URL",
        help=f"mqtt://HOST:PORT, or mqtts://HOST:PORT for TLS (default ${BROKER_ENV} or "
        "%(default)s)",
    )
    group.add_argument("--username", help="user name to log in with")
    group.add_argument(
        "--password-env",
        metavar="VAR",
        help=f"environment variable holding the password (default {PASSWORD_ENV}, when set)",
    )
    group.add_argument(
        "--password-file",
        type=Path,
        metavar="FILE",
        help="read the password from this file (e.g. a container secret)",
    )
    group.add_argument("--tls", action="store_true", help="connect with TLS (as mqtts://)")
    group.add_argument(
        "--cafile",
        type=Path,
        metavar="FILE",
        help="CA certificates to verify the broker with (default: system CAs)",
    )
    group.add_argument(
        "--certfile",
        type=Path,
        metavar="FILE",
        help="client certificate (PEM) for brokers that require one",
    )
    group.add_argument(
        "--keyfile",
        type=Path,
        metavar="FILE",
        help="private key of --certfile, if not in the same file",
    )
    group.add_argument(
        "--keepalive",
        type=int,
        default=30,
        metavar="SECONDS",
        help="MQTT keep-alive; a dead peer is noticed after ~1.5x this (default %(default)s)",
    )


def broker_from_args(args: argparse.Namespace) -> BrokerSettings:
    """Build and check :class:`BrokerSettings`; raises :class:`MqttConfigError`.

    The password comes from ``--password-file``, else the variable ``--password-env`` names
    (which must then be set), else ``$BRUDNO_MQTT_PASSWORD`` when a user name is given.
    """
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


def configure(parser: argparse.ArgumentParser) -> None:
    add_broker_arguments(parser)
    defaults = WorkerConfig(worker_id="x")
    group = parser.add_argument_group("worker")
    group.add_argument(
        "--prefix",
        default=defaults.prefix,
        help="topic prefix: jobs on PREFIX/jobs/<game> (default %(default)s)",
    )
    group.add_argument(
        "--group",
        default=defaults.group,
        help="shared-subscription group; workers of one group share the jobs (default %(default)s)",
    )
    group.add_argument(
        "--concurrency",
        type=positive_int,
        default=defaults.concurrency,
        metavar="N",
        help="jobs searched at once, one process each (default "
        "%(default)s; use at most the cores this worker may use)",
    )
    group.add_argument(
        "--backlog",
        type=int,
        default=defaults.backlog,
        metavar="N",
        help="QoS 0 jobs held waiting for a free slot; more are dropped "
        "(QoS 1 jobs never are: the broker holds them back) (default "
        "%(default)s)",
    )
    group.add_argument(
        "--reply-prefix",
        dest="reply_prefixes",
        action="append",
        default=[],
        metavar="P",
        help="publish replies only under this topic prefix (repeatable; default "
        "PREFIX/replies/); never under PREFIX/jobs/ or PREFIX/workers/",
    )
    group.add_argument(
        "--dedup-kib",
        type=positive_int,
        default=defaults.dedup_bytes // 1024,
        metavar="KIB",
        help="memory for recent jobs and their replies, answering duplicates (default %(default)s)",
    )
    group.add_argument(
        "--id",
        dest="worker_id",
        metavar="ID",
        help="worker id: MQTT client id and presence topic (default "
        "HOSTNAME-PID); keep it stable with --session-expiry",
    )
    group.add_argument(
        "--session-expiry",
        type=int,
        default=defaults.session_expiry_s,
        metavar="SECONDS",
        help="keep the MQTT session (subscription and "
        "unacknowledged jobs) this long after a disconnect (default "
        "%(default)s: none)",
    )
    group.add_argument(
        "--max-job-seconds",
        type=float,
        default=defaults.max_job_s,
        metavar="SECONDS",
        help="stop searches running longer than this (default %(default)s)",
    )
    group.add_argument(
        "--max-hash",
        type=positive_int,
        default=defaults.max_hash_mb,
        metavar="MIB",
        help="largest Hash a job may set (default %(default)s)",
    )
    group.add_argument(
        "--max-threads",
        type=positive_int,
        default=defaults.max_threads,
        help="most Threads (search processes) a job gets (default %(default)s)",
    )
    group.add_argument(
        "--max-total-threads",
        type=positive_int,
        default=None,
        help="Threads of the jobs searching at once, each counted at least once "
        "(default: the cores, or --concurrency if more)",
    )
    group.add_argument(
        "--reconnect-max",
        type=float,
        default=defaults.reconnect_max_s,
        metavar="SECONDS",
        help="longest wait between reconnection attempts (default %(default)s)",
    )
    group.add_argument(
        "--shutdown-timeout",
        type=float,
        default=defaults.shutdown_timeout_s,
        metavar="SECONDS",
        help="on SIGTERM/SIGINT, time running jobs get "
        "before they are stopped (default %(default)s)",
    )
    group.add_argument(
        "--status-file",
        type=Path,
        metavar="FILE",
        help="keep 'online' or 'offline' in this file, for health checks",
    )
    group.add_argument(
        "--eval-file-dir",
        type=Path,
        metavar="DIR",
        help="jobs may load EvalFile weights from the files in DIR, and no "
        "others (default: EvalFile refuses every file)",
    )
    group.add_argument(
        "--syzygy-dir",
        type=Path,
        metavar="DIR",
        help="jobs may use Syzygy tablebases from the directories in DIR: SyzygyPath "
        "names them relative to it, . for DIR itself (default: SyzygyPath refuses "
        "every directory)",
    )
    group.add_argument(
        "--book-dir",
        type=Path,
        metavar="DIR",
        help="jobs may open BookFile opening books from the files in DIR, and no "
        "others (default: BookFile refuses every file)",
    )
    add_metrics_arguments(parser)
    add_auth_penalty_argument(parser)
    monitoring = parser.add_argument_group(
        "monitoring token (needed with --metrics-host beyond loopback)"
    )
    monitoring.add_argument(
        "--token",
        help=f"guards /metrics and the status page; prefer --token-file or ${TOKEN_ENV}",
    )
    monitoring.add_argument("--token-file", type=Path, help="read the token from this file")
    monitoring.add_argument(
        "--token-env",
        default=TOKEN_ENV,
        metavar="NAME",
        help="environment variable holding the token (default %(default)s)",
    )


def worker_config(args: argparse.Namespace) -> WorkerConfig:
    """The worker's settings from the command line, checked (including that the TLS files
    can be read: a missing or bad CA file is a startup error, not a reconnect loop)."""
    config = WorkerConfig(
        broker=broker_from_args(args),
        prefix=args.prefix,
        group=args.group,
        concurrency=args.concurrency,
        backlog=args.backlog,
        reply_prefixes=tuple(args.reply_prefixes),
        dedup_bytes=args.dedup_kib * 1024,
        worker_id=args.worker_id or default_worker_id(),
        session_expiry_s=args.session_expiry,
        max_job_s=args.max_job_seconds,
        max_hash_mb=args.max_hash,
        max_threads=args.max_threads,
        max_total_threads=args.max_total_threads,
        reconnect_max_s=args.reconnect_max,
        shutdown_timeout_s=args.shutdown_timeout,
        status_file=args.status_file,
        eval_file_dir=args.eval_file_dir,
        syzygy_dir=args.syzygy_dir,
        book_dir=args.book_dir,
    )
    config.check()
    config.broker.ssl_context()
    return config


def run(args: argparse.Namespace) -> int:
    preload_in_workers("brudno.cli")  # the entry module every worker imports
    # The worker's event lines are its operators' record; show them at the default level.
    worker_log = logging.getLogger(mqtt_worker.__name__)
    worker_log.setLevel(min(worker_log.getEffectiveLevel(), logging.INFO))
    try:
        config = worker_config(args)
        http = http_config(
            args,
            resolve_token(args.token, args.token_file, args.token_env),
            resolve_token(args.metrics_token, args.metrics_token_file, args.metrics_token_env),
        )
        if http is not None:
            http.check()
    except (MqttConfigError, HttpConfigError, OSError, ssl.SSLError) as exc:
        print(f"brudno mqtt: {exc}", file=sys.stderr)
        return ExitStatus.REFUSED
    return asyncio.run(serve(config, http))


async def serve(config: WorkerConfig, http: HttpConfig | None = None) -> ExitStatus:
    """Warm up the search processes, then serve until SIGTERM/SIGINT (with the monitoring
    HTTP server beside the worker when ``http`` is given).

    The handlers go on after the warm-up, as before the move to this module: until then a
    signal keeps its default effect (the process ends), there being no job yet to finish.
    """
    await warm_up_runners(config)
    try:
        if http is None:
            await run_until_signal(lambda stop: serve_mqtt(config, stop))
        else:
            await run_until_signal(lambda stop: serve_mqtt_monitored(config, http, stop))
    except FatalBrokerError as exc:
        print(f"brudno mqtt: {exc}", file=sys.stderr)
        return ExitStatus.REFUSED
    return ExitStatus.STOPPED
