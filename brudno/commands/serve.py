"""``brudno serve``: many UCI sessions over TCP, one per connection (the container's entry point).

Command line and environment → :class:`~protocol.transports.tcp.config.ServerConfig` →
:func:`~protocol.transports.tcp.server.serve_until`, stopped by SIGTERM or SIGINT (a
supervisor, ``docker stop``, Ctrl-C) through :func:`brudno.signals.run_until_signal`.  The
server itself is in :mod:`protocol.transports.tcp`; what it does with each setting, and why,
is in the docstring of :mod:`protocol.transports.tcp.server`.

The token is read from, in order: ``--token``, ``--token-file``, the variable named by
``--token-env`` (``BRUDNO_TOKEN``), or the file that ``<NAME>_FILE`` names.  The variable and
the file keep it out of process listings; the ``_FILE`` form is how container secrets arrive.
``brudno connect`` and ``brudno ping`` read the same sources, so a health check run beside the
server finds the same token.

Monitoring (``--metrics-port``, off by default): Prometheus metrics, health probes and a live
status page on an HTTP port of their own (:mod:`protocol.transports.http`), under the same
token rule as the game port: ``--metrics-host`` beyond loopback needs the token, which then
guards the metrics and the page; ``--metrics-token`` (``$BRUDNO_METRICS_TOKEN``) replaces it
there with an operator token.  ``--auth-max-penalty`` bounds the brute-force limit both ports
share.

TLS (``--tls-cert`` and ``--tls-key``): one certificate for the game port and the HTTP port,
re-read on SIGHUP (new connections get the new pair, open ones keep theirs; a pair that does
not load is logged and the old one kept).

Exit status: 0 after a graceful shutdown; 1 when an address cannot be bound; 2 for a
configuration the server refuses (a public address without a token, an unreadable token file,
a certificate and key that cannot be loaded).
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import logging
import os
import signal
import sys
from pathlib import Path

from brudno.argtypes import positive_int, positive_seconds
from brudno.monitoring import add_auth_penalty_argument, add_metrics_arguments, http_config
from brudno.signals import handling_signals, run_until_signal
from protocol.transports.auth_throttle import ThrottlePolicy
from protocol.transports.http.config import HttpConfigError
from protocol.transports.http.service import serve_tcp_monitored
from protocol.transports.tcp import server as tcp_server
from protocol.transports.tcp.config import ServerConfig, ServerConfigError, TokenRequiredError
from protocol.transports.tls import ServerTls, TlsError, TlsFiles
from protocol.transports.tls import log as tls_log
from protocol.uci.workers import preload_in_workers

TOKEN_ENV = "BRUDNO_TOKEN"
"""Environment variable a token is read from, so it stays out of process listings."""


class ExitStatus(enum.IntEnum):
    """``brudno serve``'s exit statuses (documented above; scripts and supervisors read them)."""

    OK = 0
    CANNOT_LISTEN = 1
    BAD_CONFIG = 2


def configure(parser: argparse.ArgumentParser) -> None:
    defaults = ServerConfig()
    parser.add_argument(
        "--host",
        default=defaults.host,
        help="address to bind (default: loopback; others require a token)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=defaults.port,
        help=f"TCP port (default {defaults.port}; 0 picks a free one)",
    )
    parser.add_argument(
        "--max-sessions",
        type=positive_int,
        default=defaults.max_sessions,
        help="concurrent sessions; with a token, only authenticated clients "
        "count (default %(default)s)",
    )
    parser.add_argument(
        "--max-pending-auth",
        type=positive_int,
        default=defaults.max_pending_auth,
        metavar="N",
        help="connections that have not sent 'auth' yet; when full, the "
        "oldest is closed to make room (default %(default)s)",
    )
    parser.add_argument(
        "--max-pending-per-address",
        type=positive_int,
        default=defaults.max_pending_per_address,
        metavar="N",
        help="of those, per client address (IPv6: per /64); behind a proxy "
        "raise it to --max-pending-auth (default %(default)s)",
    )
    parser.add_argument(
        "--auth-timeout",
        type=positive_seconds,
        default=defaults.auth_timeout_s,
        metavar="SECONDS",
        help="close a connection that has not authenticated after this long (default %(default)s)",
    )
    parser.add_argument(
        "--max-memory-mb",
        type=positive_int,
        default=defaults.max_memory_mb,
        help="total Hash of all sessions, plus their search helpers' processes, in MiB "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--max-threads",
        type=positive_int,
        default=defaults.max_threads,
        help="most Threads (search processes) one session gets (default: half the cores, "
        "here %(default)s)",
    )
    parser.add_argument(
        "--max-total-threads",
        type=positive_int,
        default=defaults.max_total_threads,
        help="Threads of all sessions together, each counted at least once; extra threads "
        "are granted within it (default: the cores, here %(default)s)",
    )
    parser.add_argument(
        "--token",
        help=f"shared secret clients send as 'auth <token>'; "
        f"prefer --token-file or ${TOKEN_ENV} (command lines are visible "
        "to other users)",
    )
    parser.add_argument(
        "--token-file", type=Path, help="read the token from this file (e.g. a container secret)"
    )
    parser.add_argument(
        "--token-env",
        default=TOKEN_ENV,
        metavar="NAME",
        help="environment variable holding the token (default %(default)s)",
    )
    add_auth_penalty_argument(parser)
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=defaults.idle_timeout_s,
        metavar="SECONDS",
        help="close sessions idle this long; 0 = never (default %(default)s)",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=defaults.max_line_bytes,
        help="longest input line accepted",
    )
    parser.add_argument(
        "--shutdown-timeout",
        type=float,
        default=defaults.shutdown_timeout_s,
        metavar="SECONDS",
        help="on SIGTERM/SIGINT, time given to searches "
        "and clients before connections are cut (default %(default)s)",
    )
    parser.add_argument(
        "--no-connection-log", action="store_true", help="do not log connection events to stderr"
    )
    parser.add_argument(
        "--eval-file-dir",
        type=Path,
        metavar="DIR",
        help="clients may load EvalFile weights from the files in DIR, and "
        "no others (default: EvalFile refuses every file)",
    )
    parser.add_argument(
        "--syzygy-dir",
        type=Path,
        metavar="DIR",
        help="clients may use Syzygy tablebases from the directories in DIR: SyzygyPath "
        "names them relative to it, . for DIR itself (default: SyzygyPath refuses "
        "every directory)",
    )
    parser.add_argument(
        "--book-dir",
        type=Path,
        metavar="DIR",
        help="clients may open BookFile opening books from the files in DIR, and "
        "no others (default: BookFile refuses every file)",
    )
    parser.add_argument(
        "--max-connections",
        type=positive_int,
        default=defaults.max_connections,
        metavar="N",
        help="open connections on the game port; one more cuts the oldest connection that "
        "has not authenticated (default %(default)s)",
    )
    tls = parser.add_argument_group("TLS (both ports; off unless --tls-cert is given)")
    tls.add_argument("--tls-cert", type=Path, metavar="FILE", help="PEM certificate chain")
    tls.add_argument("--tls-key", type=Path, metavar="FILE", help="PEM private key")
    tls.add_argument(
        "--tls-handshake-timeout",
        type=positive_seconds,
        default=defaults.tls_handshake_timeout_s,
        metavar="SECONDS",
        help="cut a connection that has not completed its TLS handshake (default %(default)s)",
    )
    add_metrics_arguments(parser)


def server_tls(args: argparse.Namespace) -> ServerTls | None:
    """The certificate both ports serve, or ``None`` without ``--tls-cert``;
    :class:`TlsError` when the pair is incomplete or cannot be loaded."""
    if args.tls_cert is None and args.tls_key is None:
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise TlsError("--tls-cert and --tls-key go together")
    return ServerTls(TlsFiles(args.tls_cert, args.tls_key))


def resolve_token(token: str | None, token_file: Path | None, token_env: str) -> str | None:
    """The token from the first source given: the option, the file, the variable
    ``token_env``, or the file named by ``<token_env>_FILE`` (how container secrets arrive;
    it lets the health check find the same token as the server).  ``OSError`` when a file
    cannot be read."""
    if token is not None:
        return token
    if token_file is None:
        value = os.environ.get(token_env)
        if value:
            return value
        named = os.environ.get(f"{token_env}_FILE")
        if not named:
            return None
        token_file = Path(named)
    return token_file.read_text(encoding="utf-8").strip()


def server_config(
    args: argparse.Namespace, token: str | None, tls: ServerTls | None = None
) -> ServerConfig:
    """The parsed options as the server's configuration (unchecked).  An idle timeout of 0
    means "never", and a negative shutdown timeout is none at all."""
    return ServerConfig(
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        max_pending_auth=args.max_pending_auth,
        max_pending_per_address=args.max_pending_per_address,
        auth_timeout_s=args.auth_timeout,
        max_memory_mb=args.max_memory_mb,
        max_threads=args.max_threads,
        max_total_threads=args.max_total_threads,
        token=token,
        auth_throttle=ThrottlePolicy.up_to(args.auth_max_penalty),
        idle_timeout_s=args.idle_timeout if args.idle_timeout > 0 else None,
        max_line_bytes=args.max_line_bytes,
        shutdown_timeout_s=max(0.0, args.shutdown_timeout),
        eval_file_dir=args.eval_file_dir,
        syzygy_dir=args.syzygy_dir,
        book_dir=args.book_dir,
        max_connections=args.max_connections,
        tls=tls,
        tls_handshake_timeout_s=args.tls_handshake_timeout,
    )


def _refusal(exc: ServerConfigError) -> str:
    """The library's complaint, plus where this command takes a token from when that is
    what is missing (the library knows nothing of options or environment variables)."""
    if isinstance(exc, TokenRequiredError):
        return f"{exc}: pass --token, --token-file or set {TOKEN_ENV}"
    return str(exc)


def run(args: argparse.Namespace) -> int:
    # Every worker imports the entry module anyway; the fork server preloading it makes
    # each new worker ready at once.  Before the server starts: later it changes nothing.
    preload_in_workers("brudno.cli")
    if not args.no_connection_log:
        for events in (tcp_server.log, tls_log):
            events.setLevel(min(events.getEffectiveLevel(), logging.INFO))
    try:
        token = resolve_token(args.token, args.token_file, args.token_env)
        operator_token = resolve_token(
            args.metrics_token, args.metrics_token_file, args.metrics_token_env
        )
    except OSError as exc:
        print(f"brudno serve: cannot read the token file: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    try:
        tls = server_tls(args)
    except TlsError as exc:
        print(f"brudno serve: TLS: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    config = server_config(args, token, tls)
    http = http_config(args, token, operator_token, tls)
    try:
        config.check()
        if http is not None:
            http.check()
    except ServerConfigError as exc:
        print(f"brudno serve: {_refusal(exc)}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    except HttpConfigError as exc:
        print(
            f"brudno serve: --metrics-host: {exc}: pass --token, --token-file or set {TOKEN_ENV}",
            file=sys.stderr,
        )
        return ExitStatus.BAD_CONFIG

    async def until_signalled(stop: asyncio.Event) -> int:
        asyncio.get_running_loop().set_exception_handler(tcp_server.log_accept_errors)
        renewal = (lambda: None) if tls is None else tls.renew
        with handling_signals(renewal, (signal.SIGHUP,)):
            if http is None:
                await tcp_server.serve_until(config, stop)
            else:
                await serve_tcp_monitored(config, http, stop)
        return ExitStatus.OK

    try:
        return asyncio.run(run_until_signal(until_signalled))
    except OSError as exc:
        print(f"brudno serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return ExitStatus.CANNOT_LISTEN
