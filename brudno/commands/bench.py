"""``brudno bench``: search fixed positions to a fixed depth; print the node signature and
the speed (what the numbers mean: :mod:`protocol.uci.bench`)."""

from __future__ import annotations

import argparse

from brudno.argtypes import positive_int
from games.registry import GAMES
from protocol.uci.bench import run_bench

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--depth", type=positive_int, help="search depth (default per game)")
    parser.add_argument("--game", default="chess", choices=sorted(GAMES), help="game")
    parser.add_argument("--hash", type=positive_int, default=16, help="hash size in MiB")


def run(args: argparse.Namespace) -> int:
    result = run_bench(args.game, args.depth, args.hash)
    for line in result.lines():
        print(line)
    return 0
