"""The monitoring options ``brudno serve`` and ``brudno mqtt`` share: ``--metrics-port`` and
``--metrics-host`` → :class:`~protocol.transports.http.config.HttpConfig`.

Monitoring is off unless ``--metrics-port`` is given.  The host follows the game port's
rule: loopback without a token; any other address only with one (the service's token:
``brudno serve``'s own, or the one ``brudno mqtt`` reads from the same sources).
"""

from __future__ import annotations

import argparse
import logging

from protocol.transports.http import server as http_server
from protocol.transports.http.config import HttpConfig
from protocol.transports.tls import ServerTls

DEFAULT_METRICS_HOST = "127.0.0.1"


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


def http_config(
    args: argparse.Namespace, token: str | None, tls: ServerTls | None = None
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
        tls=tls,
        max_connections=args.metrics_max_connections,
        keepalive_timeout_s=args.metrics_idle_timeout,
    )
