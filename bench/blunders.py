"""Where an engine's lost games went wrong: its moves that Stockfish says drop the score.

    python bench/blunders.py GAMES.pgn [--engine Brudno] [--depth 12] [--drop 150]

For every game ``--engine`` (a substring of the White/Black name) lost, Stockfish analyses
the position before and after each of that engine's moves at ``--depth``.  A move counts as a
blunder when the score from the mover's side falls by ``--drop`` centipawns or more, starting
from a position that was not already lost (above -400).  One line per blunder (game, move
number, the move played, Stockfish's move, the scores, the FEN), then a summary that sorts
Stockfish's better moves into captures, checks and quiet moves::

    blunders=62 lost_games=40 better_move: quiet=51 capture=8 check=3

Mostly quiet better moves mean that the played move lost to something a few plies deep (a
horizon error, which depth cures) more than that a capture was missed.  Needs Debian's
``stockfish``; about 2.5 minutes for 40 games at depth 12 on one core.
"""

from __future__ import annotations

import argparse
import shutil
from collections import Counter
from pathlib import Path

import chess
import chess.engine
import chess.pgn

MATE_CP = 3000
"""A mate counts as this many centipawns, so that a drop into a mate is a large drop."""
LOST_ALREADY_CP = -400


def score_cp(info: chess.engine.InfoDict, side: chess.Color) -> int:
    score = info.get("score")
    if score is None:
        raise SystemExit("stockfish returned no score")
    return score.pov(side).score(mate_score=MATE_CP) or 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", type=Path)
    parser.add_argument("--engine", default="Brudno", help="part of the engine's PGN name")
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--drop", type=int, default=150, help="centipawns that make a blunder")
    args = parser.parse_args()
    found = shutil.which("stockfish") or "/usr/games/stockfish"
    kinds: Counter[str] = Counter()
    lost_games = 0
    limit = chess.engine.Limit(depth=args.depth)
    with (
        chess.engine.SimpleEngine.popen_uci(found) as stockfish,
        args.pgn.open(encoding="utf-8") as pgn,
    ):
        stockfish.configure({"Threads": 1, "Hash": 64})
        while (game := chess.pgn.read_game(pgn)) is not None:
            ours = chess.WHITE if args.engine in game.headers.get("White", "") else chess.BLACK
            if game.headers.get("Result") != ("0-1" if ours == chess.WHITE else "1-0"):
                continue
            lost_games += 1
            board = game.board()
            for node in game.mainline():
                if board.turn == ours:
                    # A new game per position (ucinewgame): no hash carried over, so a
                    # rerun finds the same blunders.
                    before = stockfish.analyse(board, limit, game=object())
                    best = before.get("pv", [node.move])[0]
                    was = score_cp(before, ours)
                    after_board = board.copy(stack=False)
                    after_board.push(node.move)
                    after = stockfish.analyse(after_board, limit, game=object())
                    now = score_cp(after, ours)
                    if was - now >= args.drop and was > LOST_ALREADY_CP:
                        kind = (
                            "capture"
                            if board.is_capture(best)
                            else "check"
                            if board.gives_check(best)
                            else "quiet"
                        )
                        kinds[kind] += 1
                        print(
                            f"{game.headers.get('Round', '?')} {board.fullmove_number} "
                            f"played={board.san(node.move)} better={board.san(best)} "
                            f"{was}->{now} {kind} {board.fen()}",
                            flush=True,
                        )
                board.push(node.move)
    print(
        f"blunders={sum(kinds.values())} lost_games={lost_games} better_move: "
        + " ".join(f"{kind}={kinds[kind]}" for kind in ("quiet", "capture", "check"))
    )


if __name__ == "__main__":
    main()
