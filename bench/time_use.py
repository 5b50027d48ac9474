"""How each engine of a match spent its clock: seconds used over its first moves, and the
clock left when the game ended, from the move times that `brudno match` writes in its PGN
comments (``{+0.14/13 0.507s}``).

    python bench/time_use.py /work/runs/ladder2150.pgn --first 20

Prints, per player: games, the mean time used over its first ``--first`` moves of each game
(from the opening's position on), and the median and least clock left at the end (the
starting clock plus one increment a move, minus the time used).  Games without a
``TimeControl`` of the form ``base+inc`` are skipped.
"""

from __future__ import annotations

import argparse
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

_MOVE_TIME = re.compile(r"(\d+(?:\.\d+)?)s\b")


@dataclass
class ClockUse:
    """One player's time figures over the games read."""

    first_moves: list[float] = field(default_factory=list)
    left_at_end: list[float] = field(default_factory=list)


def move_seconds(comment: str) -> float:
    """The time a move took, from its comment (0 when the comment gives none)."""
    found = _MOVE_TIME.search(comment)
    return float(found.group(1)) if found else 0.0


def read_clock_use(paths: list[Path], first: int) -> dict[str, ClockUse]:
    """Each player's time used over its first ``first`` moves and clock left, per game."""
    players: dict[str, ClockUse] = {}
    for path in paths:
        with path.open() as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                control = game.headers.get("TimeControl", "")
                base, plus, inc = control.partition("+")
                if not plus:
                    continue
                used: dict[chess.Color, list[float]] = {chess.WHITE: [], chess.BLACK: []}
                board = game.board()
                for node in game.mainline():
                    used[board.turn].append(move_seconds(node.comment))
                    board.push(node.move)
                for color, header in ((chess.WHITE, "White"), (chess.BLACK, "Black")):
                    times = used[color]
                    use = players.setdefault(game.headers.get(header, "?"), ClockUse())
                    use.first_moves.append(sum(times[:first]))
                    use.left_at_end.append(float(base) + float(inc) * len(times) - sum(times))
    return players


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+", type=Path)
    parser.add_argument("--first", type=int, default=20, help="moves counted as the first")
    args = parser.parse_args()
    for name, use in sorted(read_clock_use(args.pgn, args.first).items()):
        print(
            f"{name}: {len(use.first_moves)} games, "
            f"first {args.first} moves {statistics.mean(use.first_moves):.2f} s, "
            f"left at the end median {statistics.median(use.left_at_end):.2f} s, "
            f"least {min(use.left_at_end):.2f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
