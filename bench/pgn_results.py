"""W/D/L, Elo with its interval, pentanomial and SPRT of one engine against another, from the
PGN files of one or more `brudno match` runs (a match continued in another run, or several).

    python bench/pgn_results.py threads2 threads1 /tmp/sprt_t2b.pgn /tmp/m14/t2c.pgn \\
        --sprt elo0=0 elo1=30 alpha=0.05 beta=0.05

Prints the same lines as `brudno match` (brudno/arena/results.py formats both).  Games are
paired as the match plays them: the two games of one opening with colours swapped, in file
order (a pair cut off by the end of a run counts in W/D/L but not in the pentanomial).  Only
continue a run with the same engines, options and time control: the combined figures are then
those of one longer match.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import chess.pgn

from brudno.arena.results import PairStats
from brudno.arena.stats import Sprt

POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def tally(first: str, second: str, files: list[Path]) -> PairStats:
    """``first``'s results against ``second`` in ``files``."""
    stats = PairStats(first=0, second=1)
    for path in files:
        with path.open() as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                headers = game.headers
                white_points = POINTS.get(headers.get("Result", "*"))
                players = {headers.get("White"), headers.get("Black")}
                if white_points is None or players != {first, second}:
                    continue
                opening = headers.get("OpeningSource") or headers.get("FEN", "startpos")
                stats.record((path, opening), white_points, first_white=headers["White"] == first)
    return stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("pgn", nargs="+", type=Path)
    parser.add_argument("--sprt", nargs="+", metavar="KEY=VALUE")
    args = parser.parse_args()
    stats = tally(args.first, args.second, args.pgn)
    sprt = Sprt.parse(args.sprt) if args.sprt else None
    for line in stats.lines([args.first, args.second], sprt):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
