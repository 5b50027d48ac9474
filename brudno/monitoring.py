"""The monitoring options ``brudno serve`` and ``brudno mqtt`` share: ``--metrics-port`` and
``--metrics-host`` → :class:`~protocol.transports.http.config.HttpConfig`.

Monitoring is off unless ``--metrics-port`` is given.  The host follows the game port's
rule: loopback without a token; any other address only with one (the service's token:
``brudno serve``'s own, or the one ``brudno mqtt`` reads from the same sources).  The
operator token (``--metrics-token``, ``--metrics-token-file``, ``$BRUDNO_METRICS_TOKEN``),
when set, replaces it on this port, so players cannot read the metrics or the page.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from brudno.argtypes import positive_seconds
from protocol.transports.auth_throttle import DEFAULT_MAX_PENALTY_S, ThrottlePolicy
from protocol.transports.http import server as http_server
from protocol.transports.http.config import HttpConfig
from protocol.transports.tls import ServerTls

DEFAULT_METRICS_HOST = "127.0.0.1"
METRICS_TOKEN_ENV = "BRUDNO_METRICS_TOKEN"
"""Environment variable the operator token is read from (``<NAME>_FILE``: a file naming it)."""


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("monitoring (off unless --metrics-port is given)")
    group.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve /metrics (Prometheus), /healthz, /readyz and the live status page / on "
        "this HTTP port (0 picks a free one)",
    )
    group.add_argument(
        "--metrics-host",
        default=DEFAULT_METRICS_HOST,
        metavar="HOST",
        help="address of the HTTP port (default: loopback; others require a token, which "
        "then guards /metrics and the page)",
    )
    group.add_argument(
        "--metrics-token",
        metavar="TOKEN",
        help="operator token: when set, only it opens /metrics and the page (the game token "
        f"does not); prefer --metrics-token-file or ${METRICS_TOKEN_ENV}",
    )
    group.add_argument(
        "--metrics-token-file", type=Path, metavar="FILE", help="read the operator token from FILE"
    )
    group.add_argument(
        "--metrics-token-env",
        default=METRICS_TOKEN_ENV,
        metavar="NAME",
        help="environment variable holding the operator token (default %(default)s)",
    )
    group.add_argument(
        "--metrics-max-connections",
        type=int,
        default=HttpConfig().max_connections,
        metavar="N",
        help="open connections on the HTTP port; one more closes the oldest idle one "
        "(default %(default)s)",
    )
    group.add_argument(
        "--metrics-idle-timeout",
        type=float,
        default=HttpConfig().keepalive_timeout_s,
        metavar="SECONDS",
        help="close an HTTP connection with no request in progress after this long "
        "(default %(default)s)",
    )


def add_auth_penalty_argument(parser: argparse.ArgumentParser) -> None:
    """``--auth-max-penalty``: the brute-force limit's longest block."""
    parser.add_argument(
        "--auth-max-penalty",
        type=positive_seconds,
        default=DEFAULT_MAX_PENALTY_S,
        metavar="SECONDS",
        help="after repeated wrong tokens a client address is blocked for penalties "
        "doubling up to this; the right token works again this long after an attack "
        "stops (default %(default)s)",
    )


def http_config(
    args: argparse.Namespace,
    token: str | None,
    operator_token: str | None = None,
    tls: ServerTls | None = None,
) -> HttpConfig | None:
    """The HTTP server's settings (unchecked), or ``None`` when monitoring is off; ``tls``
    makes it HTTPS (``brudno serve --tls-cert``: the game port's certificate)."""
    if args.metrics_port is None:
        return None
    events = http_server.log
    events.setLevel(min(events.getEffectiveLevel(), logging.INFO))  # its address line
    return HttpConfig(
        host=args.metrics_host,
        port=args.metrics_port,
        token=token,
        operator_token=operator_token,
        auth_throttle=ThrottlePolicy.up_to(args.auth_max_penalty),
        tls=tls,
        max_connections=args.metrics_max_connections,
        keepalive_timeout_s=args.metrics_idle_timeout,
    )
