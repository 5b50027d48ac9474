"""``brudno ping HOST:PORT``: does a ``brudno serve`` answer ``isready``? (the health check)

Exit status: 0 on ``readyok``; 1 when the server is unreachable, silent, refuses the token or
wants one that was not given; 2 for a bad address or token file; 3 when it is up but refuses
the session for lack of capacity.  ``--accept-busy`` turns 3 into 0: an orchestrator must not
restart a server for being busy.  The options are ``brudno connect``'s
(:func:`brudno.commands.connect.add_client_arguments`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from brudno.commands.connect import ExitStatus, add_client_arguments, client_target
from protocol.transports.connect import PING_TIMEOUT_S, PingStatus, ping

EXIT_STATUS = {
    PingStatus.READY: ExitStatus.OK,
    PingStatus.BUSY: ExitStatus.BUSY,
    PingStatus.TOKEN_REQUIRED: ExitStatus.FAILED,
    PingStatus.FAILED: ExitStatus.FAILED,
}
"""What each outcome means to a script.  A missing token is a failure, never "busy"."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_client_arguments(parser)
    parser.add_argument(
        "--timeout",
        type=float,
        default=PING_TIMEOUT_S,
        metavar="SECONDS",
        help="fail when no readyok arrives in time (default %(default)s)",
    )
    parser.add_argument(
        "--accept-busy",
        action="store_true",
        help="exit 0 also when the server is up but refuses the session "
        "because it is full (for health checks)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    target = client_target(args, "ping")
    if target is None:
        return ExitStatus.USAGE
    status, message = asyncio.run(
        ping(target.host, target.port, token=target.token, timeout=args.timeout, tls=target.tls)
    )
    if status is PingStatus.TOKEN_REQUIRED:
        # The library cannot know where this command looks for a token; we can name it.
        message += f"; set {args.token_env} or pass --token-file (or --token)"
    code = EXIT_STATUS[status]
    if code == ExitStatus.BUSY and args.accept_busy:
        code = ExitStatus.OK
    if code != ExitStatus.OK:
        print(f"brudno ping: {message}", file=sys.stderr)
    elif not args.quiet:
        print(message)
    return code
