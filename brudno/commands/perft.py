"""``brudno perft DEPTH``: count the leaf nodes below each legal move (a move generator test).

The counts of well-known positions are published, so a wrong count points at the move
generator; ``divide``'s per-move lines say which move's subtree is wrong.
"""

from __future__ import annotations

import argparse
import sys
import time

from brudno.argtypes import positive_int
from engine.game import GameError
from engine.perft import divide
from games.registry import GAMES, get_variant

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("depth", type=positive_int, help="plies to count")
    parser.add_argument(
        "--game", default="chess", choices=sorted(GAMES), help="game (UCI_Variant name)"
    )
    parser.add_argument("--fen", help="start from this position (default: the start position)")
    parser.add_argument(
        "--chess960", action="store_true", help="chess960 castling (king takes rook)"
    )


def run(args: argparse.Namespace) -> int:
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
    print(f"Time (ms): {round(elapsed * 1000)}", file=sys.stderr)  # varies: not with the counts
    return 0
