"""The ``brudno`` command.

With no subcommand (or ``brudno uci``) it is a UCI engine on stdin/stdout, which is how every
GUI and match tool starts an engine.  Other subcommands are tools around the engine.  Each
subcommand is a (configure, run) pair in :data:`SUBCOMMANDS`, so a new tool is one entry.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.game import GameError
from engine.perft import divide
from games import GAMES, get_variant
from protocol import lab
from protocol.bench import run_bench
from protocol.session import ENGINE_NAME, engine_version
from protocol.stdio import serve_stdio


@dataclass(frozen=True, slots=True)
class Subcommand:
    name: str
    help: str
    description: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# -- uci -------------------------------------------------------------------------------------
def _configure_uci(parser: argparse.ArgumentParser) -> None:
    del parser  # no options: everything is set through UCI's setoption


def _run_uci(args: argparse.Namespace) -> int:
    del args
    try:
        return asyncio.run(serve_stdio())
    except KeyboardInterrupt:
        return 130


# -- perft -----------------------------------------------------------------------------------
def _add_game_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game", default="chess", choices=sorted(GAMES), help="game (UCI_Variant name)"
    )
    parser.add_argument("--fen", help="start from this position (default: the start position)")
    parser.add_argument(
        "--chess960", action="store_true", help="chess960 castling (king takes rook)"
    )


def _configure_perft(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("depth", type=_positive_int, help="plies to count")
    _add_game_arguments(parser)


def _run_perft(args: argparse.Namespace) -> int:
    try:
        game = get_variant(args.game).new(args.fen, chess960=args.chess960)
    except GameError as exc:
        print(f"brudno perft: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    counts = divide(game, args.depth)
    elapsed = time.perf_counter() - started
    for move, count in counts:
        print(f"{move}: {count}")
    total = sum(count for _, count in counts)
    print()
    print(f"Nodes searched: {total}")
    print(f"Time (ms): {round(elapsed * 1000)}", file=sys.stderr)
    return 0


# -- bench -----------------------------------------------------------------------------------
def _configure_bench(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--depth", type=_positive_int, help="search depth (default per game)")
    parser.add_argument("--game", default="chess", choices=sorted(GAMES), help="game")
    parser.add_argument("--hash", type=_positive_int, default=16, help="hash size in MiB")


def _run_bench(args: argparse.Namespace) -> int:
    result = run_bench(args.game, args.depth, args.hash)
    for line in result.lines():
        print(line)
    return 0


SUBCOMMANDS: list[Subcommand] = [
    Subcommand(
        "uci",
        "run the UCI engine on stdin/stdout (the default)",
        "Speak UCI on stdin/stdout, as chess GUIs and match tools expect. Options are set "
        "with UCI's setoption (see the 'uci' command's option list).",
        _configure_uci,
        _run_uci,
    ),
    Subcommand(
        "perft",
        "count legal move paths (move generator test)",
        "Print the number of leaf nodes below each legal move at DEPTH plies and the total.",
        _configure_perft,
        _run_perft,
    ),
    Subcommand(
        "bench",
        "search fixed positions; print the node signature and nodes/second",
        "Search a fixed set of positions to a fixed depth. 'Nodes searched' changes only when "
        "the search changes; 'Nodes/second' measures speed.",
        _configure_bench,
        _run_bench,
    ),
    Subcommand(
        "lab",
        "compare the classic search algorithms on a game position or a synthetic tree",
        "Run minimax, alpha-beta, NegaScout, MTD(f), SSS*, DUAL*, expectiminimax, Star1/Star2 "
        "... on the same position or synthetic tree and print value, nodes, leaves, passes, "
        "time and effective branching factor per algorithm (see docs/lab.md).",
        lab.configure,
        lab.run,
    ),
]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="brudno",
        description=f"{ENGINE_NAME} {engine_version()}: a UCI engine and game-playing bot "
        "server (chess, tic-tac-toe). With no subcommand it runs the UCI engine on stdio.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {engine_version()}")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log verbosity (logs go to stderr; stdout belongs to the protocol)",
    )
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")
    for spec in SUBCOMMANDS:
        child = sub.add_parser(spec.name, help=spec.help, description=spec.description)
        spec.configure(child)
        child.set_defaults(run=spec.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    run: Callable[[argparse.Namespace], int] = getattr(args, "run", _run_uci)
    return run(args)
