"""Where each engine spends its clock over a game, from the PGN of a `brudno match` run.

    python bench/time_profile.py /tmp/m16/movesleft.pgn movesleft base

For each named player: the mean depth of its moves, and its mean time a move in blocks of ten
of its own moves from the opening position on (the last block holds every move after it).
Read from the move comments `brudno match` writes (``{+0.31/7 0.171s}``: score, depth, time;
``{depth 7 0.171s}`` without a score, ``{0.171s}`` with neither); book moves have no time and
are not counted.
A time-management change is judged by a match; this shows what it changed, e.g. whether a
new plan moved time from the opening to the middlegame.
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

import chess.pgn

_TIME = re.compile(r"([0-9]+\.[0-9]+)s\b")
_DEPTH = re.compile(r"(?:/|depth )([0-9]+) ")
_BLOCK = 10
_BLOCKS = 7


def profile(path: Path, names: list[str]) -> dict[str, tuple[list[int], list[list[float]]]]:
    """Per player: the depths of its moves (where reported), and its move times by block of
    ten own timed moves."""
    found: dict[str, tuple[list[int], list[list[float]]]] = {
        name: ([], [[] for _ in range(_BLOCKS)]) for name in names
    }
    with path.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            white, black = game.headers.get("White", "?"), game.headers.get("Black", "?")
            counts = {white: 0, black: 0}
            for node in game.mainline():
                mover = white if node.parent is not None and node.parent.turn() else black
                timed = _TIME.search(node.comment)
                if mover not in found or timed is None:
                    continue
                depths, blocks = found[mover]
                blocks[min(counts[mover] // _BLOCK, _BLOCKS - 1)].append(float(timed.group(1)))
                counts[mover] += 1
                reported = _DEPTH.search(node.comment)
                if reported is not None:
                    depths.append(int(reported.group(1)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", type=Path)
    parser.add_argument("names", nargs="+", help="players as named in the PGN")
    args = parser.parse_args()
    for name, (depths, blocks) in profile(args.pgn, args.names).items():
        if not any(blocks):
            print(f"{name}: no moves with a time comment")
            continue
        times = " ".join(
            f"{i * _BLOCK}-{i * _BLOCK + _BLOCK - 1 if i < _BLOCKS - 1 else ''}: "
            f"{statistics.fmean(block):.3f}s"
            for i, block in enumerate(blocks)
            if block
        )
        depth = f"{statistics.fmean(depths):.2f}" if depths else "not reported"
        print(f"{name}: depth {depth}, time a move by own move {times}")


if __name__ == "__main__":
    main()
