"""``brudno mqtt-ask``: publish one job to an MQTT bot fleet and print the reply.

Usage (scripts depend on this interface)::

    brudno mqtt-ask [broker options of brudno mqtt] [--prefix P] [--game G]
                    [--fen FEN] [--moves MOVE...] [--option NAME=VALUE]...
                    [--movetime MS | --depth N | --nodes N | --go 'go ...'] [--job FILE|-]
                    [--timeout S] [--retry-after S] [--quiet]

The job is built from ``--fen``/``--moves``/``--option`` and the limit, or read from
``--job``; :class:`~protocol.transports.mqtt.ask.AskClient` publishes it (re-sending it when
its worker is lost) and this command prints the reply lines as they come: the progress
``info`` lines and the ``bestmove`` line, or with ``--quiet`` only the terminal lines.
When no worker announces ``online`` it says so at once instead of waiting for ``--timeout``.

Exit status (:class:`ExitStatus`): 0 on ``bestmove``; 1 when the job is refused or failed
inside the worker (its ``info string error:`` line says which); 2 on bad arguments; 3 when
no worker is online, no answer comes within ``--timeout`` or the broker is unreachable;
130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import aiomqtt

from brudno.commands.mqtt import add_broker_arguments, broker_from_args
from games.registry import GAMES
from protocol.transports.mqtt.ask import (
    DEFAULT_RETRY_AFTER_S,
    DEFAULT_TIMEOUT_S,
    AskClient,
    AskOptions,
    AskTimeoutError,
    NoWorkerOnlineError,
    build_job,
)
from protocol.transports.mqtt.broker import BrokerSettings
from protocol.transports.mqtt.errors import FatalBrokerError, MqttConfigError
from protocol.transports.mqtt.topics import DEFAULT_PREFIX

log = logging.getLogger(__name__)


class ExitStatus(enum.IntEnum):
    BESTMOVE = 0
    REFUSED = 1
    """The job was refused, or failed inside the worker (an ``error`` reply)."""
    BAD_ARGUMENTS = 2
    NO_ANSWER = 3
    """No worker online, no answer within the timeout, or the broker unreachable."""
    INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class Question:
    """One ``mqtt-ask`` run: what to ask, of which fleet, and how to show the answer."""

    broker: BrokerSettings
    prefix: str
    game: str
    job: str
    timeout_s: float
    retry_after_s: float | None
    """Re-send a job no worker accepted within this long; ``None`` never."""
    quiet: bool
    """Print only the terminal reply's lines, not the progress."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_broker_arguments(parser)
    parser.add_argument(
        "--prefix", default=DEFAULT_PREFIX, help="topic prefix of the fleet (default %(default)s)"
    )
    parser.add_argument(
        "--game",
        default="chess",
        choices=sorted(GAMES),
        help="game (UCI_Variant name; the job topic's last level)",
    )
    parser.add_argument("--fen", help="position to search (default: the start position)")
    parser.add_argument(
        "--moves",
        nargs="+",
        default=[],
        metavar="MOVE",
        help="moves played from the position, in UCI notation",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setoption for the job (repeatable), e.g. MultiPV=3",
    )
    limit = parser.add_argument_group("search limit (default: --movetime 1000)")
    limit.add_argument("--movetime", type=int, metavar="MS", help="search this many ms")
    limit.add_argument("--depth", type=int, help="search to this depth")
    limit.add_argument("--nodes", type=int, help="search this many nodes")
    limit.add_argument(
        "--go",
        metavar="'go …'",
        help="a complete go command instead, e.g. 'go wtime 60000 btime 60000'",
    )
    parser.add_argument(
        "--job",
        type=Path,
        metavar="FILE",
        help="send this file's UCI text as the job ('-': stdin) instead of "
        "building one from --fen/--moves/--option and the limit",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="give up after this long (default %(default)s)",
    )
    parser.add_argument(
        "--retry-after",
        type=float,
        default=DEFAULT_RETRY_AFTER_S,
        metavar="SECONDS",
        help="re-send a job no worker accepted within this long; 0 never (default %(default)s)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="print only the terminal reply, not the progress lines"
    )


def job_from_args(args: argparse.Namespace) -> str:
    """The job text ``mqtt-ask`` sends; raises :class:`MqttConfigError` for bad arguments."""
    if args.job is not None:
        if str(args.job) == "-":
            return sys.stdin.read()
        try:
            return Path(args.job).read_text(encoding="utf-8")
        except OSError as exc:
            raise MqttConfigError(f"cannot read the job file: {exc}") from None
    options = []
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise MqttConfigError(f"--option wants NAME=VALUE, got {item!r}")
        options.append((name.strip(), value.strip()))
    if args.go is not None:
        go = args.go
    else:
        parts = [
            f"{key} {value}"
            for key, value in (
                ("movetime", args.movetime),
                ("depth", args.depth),
                ("nodes", args.nodes),
            )
            if value is not None
        ]
        go = "go " + " ".join(parts) if parts else "go movetime 1000"
    return build_job(fen=args.fen, moves=tuple(args.moves), options=tuple(options), go=go)


async def ask_once(question: Question) -> ExitStatus:
    """Ask, printing the reply lines as :attr:`Question.quiet` says; the exit status."""
    quiet = question.quiet

    def show(line: str) -> None:
        if not quiet:
            print(line, flush=True)

    async with AskClient(question.broker, prefix=question.prefix) as client:
        answer = await client.ask(
            question.game,
            question.job,
            timeout=question.timeout_s,
            options=AskOptions(
                retry_after=question.retry_after_s, on_line=show, require_worker=True
            ),
        )
    if quiet:
        shown = (
            answer.errors
            if answer.error
            else tuple(line for line in answer.lines if line.startswith("bestmove"))
        )
        for line in shown:
            print(line, flush=True)
    log.info("answered by %s after %d send(s)", answer.worker, answer.sends)
    return ExitStatus.REFUSED if answer.error else ExitStatus.BESTMOVE


def run(args: argparse.Namespace) -> int:
    try:
        broker = broker_from_args(args)
        job = job_from_args(args)
        broker.ssl_context()
    except (MqttConfigError, OSError) as exc:
        print(f"brudno mqtt-ask: {exc}", file=sys.stderr)
        return ExitStatus.BAD_ARGUMENTS
    question = Question(
        broker=broker,
        prefix=args.prefix,
        game=args.game,
        job=job,
        timeout_s=args.timeout,
        retry_after_s=args.retry_after if args.retry_after > 0 else None,
        quiet=args.quiet,
    )
    try:
        return asyncio.run(ask_once(question))
    except (AskTimeoutError, NoWorkerOnlineError) as exc:
        print(f"brudno mqtt-ask: {exc}", file=sys.stderr)
        return ExitStatus.NO_ANSWER
    except (aiomqtt.MqttError, FatalBrokerError) as exc:
        print(f"brudno mqtt-ask: cannot reach the broker at {broker.url}: {exc}", file=sys.stderr)
        return ExitStatus.NO_ANSWER
    except KeyboardInterrupt:
        return ExitStatus.INTERRUPTED
