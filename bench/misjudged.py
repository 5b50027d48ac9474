"""Positions an engine misjudged in the games it lost, replayed with Stockfish as the judge.

    python bench/misjudged.py ladder2200.pgn Brudno [--gap 2.0] [--depth 22] [--time 0.3]

For each game the named player lost: the first of its moves where its own score (the move
comment `brudno match` writes, ``{+0.31/12 0.250s}``) was within a pawn of level or better
(-0.5 or more) while the opponent's last comment claimed ``--gap`` pawns or more for itself,
with queens or rooks still on the board (a middlegame, where a search's horizon hides most).
Each such position is searched again: by ``--engine`` (default: this checkout's Brudno) for
``--time`` seconds and by Stockfish 15.1 at ``--depth``; one line each::

    game 4 move 18 black r2q1rk1/... own +0.00 brudno +16 stockfish -207 18...axb4 19. axb4 Bc8

(scores in centipawns from the player's side, Stockfish's principal variation).  Reading the
lines says what the evaluation misses (row 114 of docs/strength.md found king attacks in 9
of 13).  ``--limit`` caps the number of positions.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lost_leads import own_score, player_outcome

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Misjudged:
    """A position before one of the player's moves in a game it lost."""

    game: int
    board: chess.Board
    own: float
    """The player's own score there, in pawns."""


def misjudged(pgn: Path, name: str, gap: float) -> Iterator[Misjudged]:
    with pgn.open() as handle:
        number = 0
        while (game := chess.pgn.read_game(handle)) is not None:
            number += 1
            played = player_outcome(game, name)
            if played is None or played[1] != "lost":
                continue
            side = played[0]
            claim: float | None = None
            board = game.board()  # before each move: one board played along, not replayed
            for node in game.mainline():
                score = own_score(node.comment)
                if score is not None and board.turn != side:
                    claim = score
                elif score is not None and claim is not None and claim >= gap and score >= -0.5:
                    middlegame = board.queens | board.rooks
                    if middlegame:
                        yield Misjudged(number, board.copy(stack=False), score)
                        break
                board.push(node.move)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", type=Path)
    parser.add_argument("name", help="the player as named in the PGN")
    parser.add_argument("--gap", type=float, default=2.0, help="the opponent's claim (pawns)")
    parser.add_argument("--depth", type=int, default=22, help="Stockfish's depth")
    parser.add_argument("--time", type=float, default=0.3, help="the engine's seconds")
    parser.add_argument("--engine", default=f"{sys.executable} -m brudno")
    parser.add_argument("--limit", type=int, default=0, help="at most this many (0: all)")
    args = parser.parse_args()
    stockfish_path = shutil.which("stockfish") or "/usr/games/stockfish"
    with (
        chess.engine.SimpleEngine.popen_uci(shlex.split(args.engine), cwd=REPO) as engine,
        chess.engine.SimpleEngine.popen_uci(stockfish_path) as stockfish,
    ):
        engine.configure({"Hash": 16})
        for count, case in enumerate(misjudged(args.pgn, args.name, args.gap), start=1):
            board = case.board
            mine = engine.analyse(board, chess.engine.Limit(time=args.time))
            judged = stockfish.analyse(board, chess.engine.Limit(depth=args.depth))
            pov = board.turn
            print(
                f"game {case.game} move {board.fullmove_number} "
                f"{'white' if pov else 'black'} {board.fen()} own {case.own:+.2f} "
                f"brudno {mine['score'].pov(pov).score(mate_score=10000):+d} "
                f"stockfish {judged['score'].pov(pov).score(mate_score=10000):+d} "
                f"{board.variation_san(judged.get('pv', [])[:10])}",
                flush=True,
            )
            if count == args.limit:
                break


if __name__ == "__main__":
    main()
