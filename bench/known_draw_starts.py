"""Openings for a match that tests the evaluation's known draws: positions some plies before a
played game first reached one (a bare king holding rook pawns, with or without the wrong
bishop; ``games.chess_game.evaluation.known_draw``).

    python bench/known_draw_starts.py starts.epd /tmp/m16/*.pgn --plies 12 --plies 20

Such endings are rare (about one game in a hundred), so a self-play SPRT from ordinary openings
would need tens of thousands of games to see a rule that only decides them; a match from
these positions, each played with both colours, asks the rule's question directly: does the
side that knows the draw avoid it when it is ahead and steer into it when it is behind?
Positions already drawn by the rule are left out; duplicates count once.  Prints the number
of positions written on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import chess
import chess.pgn

from games.chess_game.evaluation import known_draw


def starts(path: Path, plies: int) -> set[str]:
    """EPDs ``plies`` before each game of ``path`` first reached a known draw."""
    found: set[str] = set()
    with path.open(encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            before: list[str] = []
            for move in game.mainline_moves():
                before.append(board.fen())
                board.push(move)
                if known_draw(board):
                    if len(before) >= plies:
                        start = chess.Board(before[-plies])
                        if not known_draw(start):
                            found.add(start.epd())
                    break
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the EPD file to write")
    parser.add_argument("pgn", type=Path, nargs="+", help="games to search")
    parser.add_argument(
        "--plies",
        type=int,
        action="append",
        help="how far back to start (repeat for several starts per game; default 12)",
    )
    args = parser.parse_args()
    found: set[str] = set()
    for path in args.pgn:
        for plies in args.plies or [12]:
            found |= starts(path, plies)
    args.out.write_text("".join(f"{epd}\n" for epd in sorted(found)), encoding="utf-8")
    print(f"{len(args.pgn)} files, {len(found)} positions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
