"""``brudno connect HOST:PORT``: a UCI engine on stdin/stdout that forwards to ``brudno serve``.

GUIs and match tools only know how to launch local processes; pointed at this command they
use a remote server (:func:`protocol.transports.connect.bridge` does the forwarding).  Also
the client options ``brudno ping`` shares: the address and where the token comes from (the
same sources as the server's, :func:`brudno.commands.serve.resolve_token`), so a token never
has to appear on a command line.

Exit status: 0 when the client said ``quit`` or ended its input; 1 when the server could not
be reached or went away first; 2 for a bad address or an unreadable token file; 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path

from brudno.commands.serve import TOKEN_ENV, resolve_token
from protocol.transports.connect import (
    CONNECT_TIMEOUT_S,
    AddressError,
    BridgeConfig,
    BridgeError,
    bridge,
    parse_address,
)
from protocol.transports.tcp.wire import DEFAULT_PORT
from protocol.transports.tls import TlsError, client_context


class ExitStatus(enum.IntEnum):
    """The exit statuses of ``brudno connect`` and ``brudno ping`` (one set, so a script
    reads both alike)."""

    OK = 0
    FAILED = 1
    USAGE = 2
    BUSY = 3
    """``brudno ping``: the server answered, but refused a session (full / out of memory)."""
    INTERRUPTED = 130
    """128 + SIGINT: Ctrl-C ended the bridge."""


def add_client_arguments(parser: argparse.ArgumentParser) -> None:
    """The address and token options every client of ``brudno serve`` takes."""
    parser.add_argument(
        "address",
        metavar="HOST:PORT",
        help=f"the server (port {DEFAULT_PORT} if omitted; [::1]:PORT for IPv6)",
    )
    parser.add_argument(
        "--token",
        help=f"the server's token (prefer --token-file or "
        f"${TOKEN_ENV}: command lines are visible to other users)",
    )
    parser.add_argument("--token-file", type=Path, help="read the token from this file")
    parser.add_argument(
        "--token-env",
        default=TOKEN_ENV,
        metavar="NAME",
        help="environment variable holding the token (default %(default)s)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="speak TLS; the server's certificate and host name are verified against the "
        "system's trust store (or --cafile)",
    )
    parser.add_argument(
        "--cafile",
        type=Path,
        metavar="FILE",
        help="verify the server against the CA certificates in FILE (implies --tls)",
    )


@dataclass(frozen=True, slots=True)
class ClientTarget:
    """Where a client connects, with what token, over TLS or not."""

    host: str
    port: int
    token: str | None
    tls: ssl.SSLContext | None


def client_target(args: argparse.Namespace, prog: str) -> ClientTarget | None:
    """The target named by the client options, or ``None`` after saying on stderr why
    there is none (the caller exits with :attr:`ExitStatus.USAGE`)."""
    try:
        host, port = parse_address(args.address)
        token = resolve_token(args.token, args.token_file, args.token_env)
        tls = client_context(args.cafile) if args.tls or args.cafile is not None else None
    except (AddressError, TlsError) as exc:
        print(f"brudno {prog}: {exc}", file=sys.stderr)
        return None
    except OSError as exc:
        print(f"brudno {prog}: cannot read the token file: {exc}", file=sys.stderr)
        return None
    return ClientTarget(host, port, token, tls)


def configure(parser: argparse.ArgumentParser) -> None:
    add_client_arguments(parser)
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=CONNECT_TIMEOUT_S,
        metavar="SECONDS",
        help="give up connecting after this long",
    )


def run(args: argparse.Namespace) -> int:
    target = client_target(args, "connect")
    if target is None:
        return ExitStatus.USAGE
    try:
        asyncio.run(
            bridge(
                BridgeConfig(
                    target.host,
                    target.port,
                    token=target.token,
                    timeout=args.connect_timeout,
                    tls=target.tls,
                ),
                stdout=sys.stdout.buffer,
            )
        )
    except BridgeError as exc:
        print(f"brudno connect: {exc}", file=sys.stderr)
        return ExitStatus.FAILED
    except KeyboardInterrupt:
        return ExitStatus.INTERRUPTED
    return ExitStatus.OK
