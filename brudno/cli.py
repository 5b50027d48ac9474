"""The ``brudno`` command.

With no subcommand (or ``brudno uci``) it is a UCI engine on stdin/stdout, which is how every
GUI and match tool starts an engine.  Other subcommands are tools around the engine.  Each
subcommand is a (configure, run) pair in :data:`SUBCOMMANDS`, so a new tool is one entry.
Their modules are imported only when that subcommand runs: a GUI that starts ``brudno``
(or ``brudno connect``) should not pay for the MQTT client or the match runner.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from games.registry import GAMES
from protocol.uci.session import ENGINE_NAME, engine_version

Configure = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], int]


@dataclass(frozen=True, slots=True)
class Subcommand:
    """One ``brudno`` subcommand: its name and texts, and where its two functions live.

    ``configure`` and ``run`` are ``"module:function"`` strings, imported only when the
    subcommand is chosen: naming a function here would import its module (and everything it
    needs) for every other subcommand too, plain ``brudno`` included.
    """

    name: str
    help: str
    description: str
    configure: str
    """``"module:function"`` that adds the subcommand's arguments to its parser."""
    run: str
    """``"module:function"`` that runs it with the parsed arguments; returns the exit status."""

    def load(self) -> tuple[Configure, Run]:
        configure: Configure = _resolve(self.configure)
        run: Run = _resolve(self.run)
        return configure, run


def _resolve(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


DEFAULT_SUBCOMMAND = "uci"
"""What plain ``brudno`` runs: GUIs start an engine without arguments."""

SUBCOMMANDS: list[Subcommand] = [
    Subcommand(
        "uci",
        "run the UCI engine on stdin/stdout (the default)",
        "Speak UCI on stdin/stdout, as chess GUIs and match tools expect. Options are set "
        "with UCI's setoption (see the 'uci' command's option list).",
        "brudno.commands.uci:configure",
        "brudno.commands.uci:run",
    ),
    Subcommand(
        "perft",
        "count legal move paths (move generator test)",
        "Print the number of leaf nodes below each legal move at DEPTH plies and the total.",
        "brudno.commands.perft:configure",
        "brudno.commands.perft:run",
    ),
    Subcommand(
        "bench",
        "search fixed positions; print the node signature and nodes/second",
        "Search a fixed set of positions to a fixed depth. 'Nodes searched' changes only when "
        "the search changes; 'Nodes/second' measures speed.",
        "brudno.commands.bench:configure",
        "brudno.commands.bench:run",
    ),
    Subcommand(
        "lab",
        "compare the classic search algorithms on a game position or a synthetic tree",
        "Run minimax, alpha-beta, NegaScout, MTD(f), SSS*, DUAL*, expectiminimax, Star1/Star2 "
        "... on the same position or synthetic tree and print value, nodes, leaves, passes, "
        "time and effective branching factor per algorithm (see docs/lab.md).",
        "brudno.commands.lab:configure",
        "brudno.commands.lab:run",
    ),
    Subcommand(
        "serve",
        "serve many UCI sessions over TCP (the container's entry point)",
        "Listen for TCP connections; each is one UCI session with its own position, options "
        "and hash table, searching in its own worker process. Binds to loopback unless given "
        "a token (see docs/deploy.md). SIGTERM/SIGINT shut down gracefully.",
        "brudno.commands.serve:configure",
        "brudno.commands.serve:run",
    ),
    Subcommand(
        "connect",
        "a UCI engine on stdio that forwards to a remote 'brudno serve'",
        "Bridge stdin/stdout to a Brudno server, so a GUI (which launches local engines) can "
        "use a remote one. Point the GUI at 'brudno connect HOST:PORT'.",
        "brudno.commands.connect:configure",
        "brudno.commands.connect:run",
    ),
    Subcommand(
        "ping",
        "check that a 'brudno serve' answers isready (health check)",
        "Send isready to a Brudno server; exit 0 on readyok, 1 when unreachable or silent, "
        "3 when up but full (0 with --accept-busy).",
        "brudno.commands.ping:configure",
        "brudno.commands.ping:run",
    ),
    Subcommand(
        "healthcheck",
        "the container's health check: is the brudno running here doing its job?",
        "Find the container's brudno process and check it by what it runs: a server answers "
        "isready, a worker is online (its --status-file or /readyz), anything else is alive. "
        "Exit 0 when healthy, 1 when not.",
        "brudno.commands.healthcheck:configure",
        "brudno.commands.healthcheck:run",
    ),
    Subcommand(
        "mqtt",
        "a worker of an MQTT bot fleet: take jobs from a broker, publish the answers",
        "Connect to an MQTT 5 broker, take UCI jobs from PREFIX/jobs/<game> through a shared "
        "subscription and publish info lines and bestmove to each job's response topic "
        "(see docs/deploy.md). SIGTERM/SIGINT finish the running jobs and go offline.",
        "brudno.commands.mqtt:configure",
        "brudno.commands.mqtt:run",
    ),
    Subcommand(
        "mqtt-ask",
        "publish one job to an MQTT bot fleet and print the reply",
        "Publish a job (position and limit) to PREFIX/jobs/<game> and print the info lines "
        "and bestmove a worker answers with. Exit 0 on bestmove, 1 when the job is refused, "
        "2 on bad arguments, 3 when no answer comes or the broker is unreachable.",
        "brudno.commands.mqtt_ask:configure",
        "brudno.commands.mqtt_ask:run",
    ),
    Subcommand(
        "match",
        "play UCI engines against each other: W/D/L, Elo, LOS, SPRT, PGN",
        "Play two or more UCI engines (round robin) under a clock kept by the runner, from "
        "EPD/PGN openings with colours swapped, several games at once; print W/D/L, score, "
        "Elo with its 95 percent interval, LOS, optional SPRT, and time losses / illegal moves / "
        "crashes per engine (see the module docstring of brudno/arena/match.py).",
        "brudno.commands.match:configure",
        "brudno.commands.match:run",
    ),
    Subcommand(
        "epd",
        "run an EPD test suite (bm/am) against Brudno or any UCI engine",
        "Search each position of an EPD suite and check the move against its bm/am "
        "operations; print per-position results with --verbose, the time used, and "
        "'solved S/T' as the last line.",
        "brudno.commands.epd:configure",
        "brudno.commands.epd:run",
    ),
    Subcommand(
        "solve",
        "solve a Connect Four (or Grundy's game) position exactly: score, best moves, nodes",
        "Prove the game-theoretic value of a position (cfour: a column string such as 4453 or "
        "a FEN; score 22 minus the winner's stone count, 0 for a draw, negative for a loss) "
        "and print it with every best move, a PV, nodes and time; --json for one object per "
        "position, '-' to read positions (or 'moves score' test-set lines) from stdin.",
        "brudno.commands.solve:configure",
        "brudno.commands.solve:run",
    ),
    Subcommand(
        "tune",
        "Texel-tune the chess evaluation: make a labelled data set, fit the weights",
        "'tune data' samples quiet positions from opening files and labels them with "
        "Stockfish's evaluation as a win probability; 'tune fit' fits K and then the linear "
        "weights to such a file and writes a weights JSON (see brudno/commands/tune.py).",
        "brudno.commands.tune:configure",
        "brudno.commands.tune:run",
    ),
    Subcommand(
        "book",
        "make a Polyglot opening book from PGN games (for OwnBook/BookFile)",
        "'book build GAMES.pgn --out BOOK.bin' counts the moves of the games' first plies by "
        "position and writes the frequent ones, weighted by their results, as a Polyglot book "
        "(see brudno/commands/book.py).",
        "brudno.commands.book:configure",
        "brudno.commands.book:run",
    ),
]


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
"""``--log-level`` values (given in any case; stored upper-case, as :mod:`logging` names them)."""


def _games_text() -> str:
    """Every registered game for ``brudno --help``, from the registry (:data:`games.registry.GAMES`)
    rather than written out, so a new game cannot be left out of the help: each game's
    description up to its first parenthesis or colon, and the name ``UCI_Variant`` and
    ``--game`` take, e.g. ``Connect Four 7x6 (cfour)``."""
    named = []
    for name, variant in GAMES.items():
        title = variant.description.split(" (")[0].split(":")[0].strip() or name
        named.append(title if title == name else f"{title} ({name})")
    if len(named) <= 1:
        return "".join(named)
    return ", ".join(named[:-1]) + " and " + named[-1]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line.  With ``only``, just that subcommand's module is loaded (the
    others are listed by name and help, which is all ``brudno --help`` shows)."""
    parser = argparse.ArgumentParser(
        prog="brudno",
        description=f"{ENGINE_NAME} {engine_version()}: a UCI engine and game-playing bot "
        f"server for {_games_text()}. With no subcommand it runs the UCI engine on stdio.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {engine_version()}")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,  # "debug" and "DEBUG" alike: a case difference is not a user error
        choices=LOG_LEVELS,
        help="log verbosity, any case (logs go to stderr; stdout belongs to the protocol)",
    )
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")
    for spec in SUBCOMMANDS:
        child = sub.add_parser(spec.name, help=spec.help, description=spec.description)
        if only is None or spec.name == only:
            configure, run = spec.load()
            configure(child)
            child.set_defaults(run=run)
    return parser


def _subcommand(name: str) -> Subcommand:
    return next(spec for spec in SUBCOMMANDS if spec.name == name)


def _chosen_subcommand(argv: Sequence[str]) -> str:
    names = {spec.name for spec in SUBCOMMANDS}
    return next((arg for arg in argv if arg in names), DEFAULT_SUBCOMMAND)


EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: the status a shell shows for a program that a closed pipe ended
(``yes | head -1``), so ``set -o pipefail`` scripts can still tell the output was cut short."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the subcommand ``argv`` names and return its exit status.

    A reader that goes away early (``brudno lab | head -1``) ends every subcommand here, once,
    the standard way: Python ignores SIGPIPE, so the next write to the closed pipe raises
    BrokenPipeError wherever it happens (also inside an event loop's task group, hence
    ``except*``); the output nobody reads is dropped and the run ends with
    :data:`EXIT_BROKEN_PIPE` and no traceback.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    status = 0
    broken = False
    try:
        status = _run(argv)
        sys.stdout.flush()  # a reader that left shows up here, not in the exit-time flush
    except* BrokenPipeError:
        broken = True
    if broken:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    return status


def _run(argv: Sequence[str]) -> int:
    args = build_parser(only=_chosen_subcommand(argv)).parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    run: Run | None = getattr(args, "run", None)
    if run is None:  # no subcommand: the UCI engine, which build_parser(only="uci") loaded
        run = _subcommand(DEFAULT_SUBCOMMAND).load()[1]
    return run(args)


def _discard_stdout() -> None:
    """Point file descriptor 1 at the null device.  Python flushes ``sys.stdout`` once more
    at exit, and the bytes still buffered for the closed pipe would raise again there, where
    nothing can catch it ("Exception ignored ... BrokenPipeError" on stderr)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real descriptor behind sys.stdout (tests, embedding)
        pass
    finally:
        os.close(devnull)
