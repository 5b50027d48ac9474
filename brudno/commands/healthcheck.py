"""``brudno healthcheck``: the container image's one health check, whatever brudno runs there.

It finds the container's brudno process (PID 1, or the first brudno below it, as under
``tini``; or the process ``--pid`` names), reads that process's command line with brudno's own
parser and checks what it runs:

* ``serve``: the server answers ``isready`` on its port, with the token from the server's own
  sources, over TLS when it serves TLS (on loopback, unverified: the certificate names the
  public host); a full server is healthy (as ``brudno ping --accept-busy``);
* ``mqtt``: the worker's ``--status-file`` says ``online``; without one, its ``/readyz``
  (``--metrics-port``) answers 200; without either, the worker is alive;
* anything else (the stdio engine, a tool): the process is alive.

Exit status 0 when healthy, 1 when not (Docker's convention); one line on stdout says why.
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from brudno.cli import DEFAULT_SUBCOMMAND, SUBCOMMANDS, build_parser
from brudno.commands.serve import resolve_token
from protocol.transports.connect import PING_TIMEOUT_S, PingStatus, ping
from protocol.transports.mqtt.wire import Presence
from protocol.transports.tls import loopback_self_check_context

PROC = Path("/proc")
INIT_PID = 1
COMMAND = "brudno"
LOOPBACK = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
"""Where to reach a service bound to a wildcard address from inside its own container."""


class Health(enum.IntEnum):
    """The exit statuses Docker's ``HEALTHCHECK`` understands."""

    HEALTHY = 0
    UNHEALTHY = 1


@dataclass(frozen=True, slots=True)
class Verdict:
    health: Health
    reason: str


@dataclass(frozen=True, slots=True)
class BrudnoProcess:
    """A running brudno: its process id and the arguments after the ``brudno`` command."""

    pid: int
    arguments: list[str]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pid",
        type=int,
        help="check this brudno process (default: the container's, found from PID 1 down)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=PING_TIMEOUT_S,
        metavar="SECONDS",
        help="give a server or a worker's /readyz this long to answer (default %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    found = find_brudno() if args.pid is None else _brudno_process(args.pid)
    verdict = (
        Verdict(Health.UNHEALTHY, "no brudno process runs here")
        if found is None
        else check(found, args.timeout)
    )
    print(f"brudno healthcheck: {verdict.reason}")
    return verdict.health


def find_brudno() -> BrudnoProcess | None:
    """The shallowest process from PID 1 down (breadth first) whose command is brudno,
    this health check excepted."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (parent := _parent_pid(entry)) is not None:
            children.setdefault(parent, []).append(int(entry.name))
    queue = [INIT_PID]
    while queue:
        pid = queue.pop(0)
        if pid != os.getpid() and (arguments := _brudno_arguments(pid)) is not None:
            return BrudnoProcess(pid, arguments)
        queue.extend(sorted(children.get(pid, [])))
    return None


def _brudno_process(pid: int) -> BrudnoProcess | None:
    arguments = _brudno_arguments(pid)
    return None if arguments is None else BrudnoProcess(pid, arguments)


def _parent_pid(entry: Path) -> int | None:
    try:
        stat = (entry / "stat").read_text()
    except OSError:  # it ended meanwhile
        return None
    state, parent = stat.rpartition(")")[2].split()[:2]  # the name in (...) may hold spaces
    return None if state == "Z" else int(parent)


def _brudno_arguments(pid: int) -> list[str] | None:
    """The arguments after ``brudno`` when the process runs it (directly, or as the script
    of a Python interpreter), else ``None``."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    argv = [os.fsdecode(part) for part in raw.split(b"\0")[:-1]]
    for index, word in enumerate(argv[:2]):
        if Path(word).name == COMMAND:
            return argv[index + 1 :]
    return None


def check(process: BrudnoProcess, timeout: float) -> Verdict:
    """Whether ``process`` does its job, judged by what its command line says it runs."""
    names = {spec.name for spec in SUBCOMMANDS}
    command = next((arg for arg in process.arguments if arg in names), DEFAULT_SUBCOMMAND)
    try:
        args = build_parser(only=command).parse_args(process.arguments)
    except SystemExit:
        return Verdict(Health.UNHEALTHY, f"cannot read the command line of process {process.pid}")
    if command == "serve":
        return _check_server(args, timeout)
    if command == "mqtt":
        return _check_worker(process, args, timeout)
    return Verdict(Health.HEALTHY, f"brudno {command} is running (process {process.pid})")


def _check_server(args: argparse.Namespace, timeout: float) -> Verdict:
    if args.port == 0:
        return Verdict(Health.UNHEALTHY, "the server's port is random (--port 0): give it one")
    try:
        token = resolve_token(args.token, args.token_file, args.token_env)
    except OSError as exc:
        return Verdict(Health.UNHEALTHY, f"cannot read the server's token file: {exc}")
    host = LOOPBACK.get(args.host, args.host)
    tls = None if args.tls_cert is None else loopback_self_check_context()
    status, message = asyncio.run(ping(host, args.port, token=token, timeout=timeout, tls=tls))
    healthy = status in (PingStatus.READY, PingStatus.BUSY)
    return Verdict(Health.HEALTHY if healthy else Health.UNHEALTHY, f"server: {message}")


def _check_worker(process: BrudnoProcess, args: argparse.Namespace, timeout: float) -> Verdict:
    if args.status_file is not None:
        path = PROC / str(process.pid) / "cwd" / args.status_file  # as the worker names it
        try:
            presence = path.read_text(encoding="utf-8").strip()
        except OSError:
            return Verdict(Health.UNHEALTHY, f"worker: no status file {args.status_file} yet")
        healthy = presence == Presence.ONLINE
        return Verdict(Health.HEALTHY if healthy else Health.UNHEALTHY, f"worker: {presence}")
    if args.metrics_port:
        host = LOOPBACK.get(args.metrics_host, args.metrics_host)
        url = f"http://{f'[{host}]' if ':' in host else host}:{args.metrics_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as reply:
                return Verdict(Health.HEALTHY, f"worker: {reply.read().decode().strip()}")
        except urllib.error.HTTPError as exc:
            return Verdict(Health.UNHEALTHY, f"worker: {exc.read().decode().strip()}")
        except OSError as exc:
            return Verdict(Health.UNHEALTHY, f"worker: /readyz unreachable: {exc}")
    return Verdict(
        Health.HEALTHY, "worker is running (give it --status-file to check it is online)"
    )
