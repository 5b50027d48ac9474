"""How a player's moves lose, judged by Stockfish: average centipawn loss and blunder rate.

Issue 15 asks that a playing level be weak like a weaker player (plausible moves, mistakes it
did not see) rather than like dice (a random piece thrown away now and then).  This script
puts a number on it: for every move of each player in the PGN files it compares Stockfish's
evaluation before the move with the one after it (both at a fixed depth, from the mover's
side), and prints per player and opponent::

    quality player=Brudno opponent="Stockfish 1500" moves=1234 acpl=87 blunders=4.1%
      mistakes=9.0% best_or_equal=41.2%

``acpl`` is the mean loss in centipawns (each capped at 1000, mates as 1000), ``blunders`` the
share of moves losing 300 or more, ``mistakes`` 100 to 299.  Stockfish's own limited levels,
played in the same games, are a reference for "weak the way an engine's level is".  Run on
the calibration games::

    python bench/level_quality.py /tmp/probe.pgn --depth 10
"""

from __future__ import annotations

import argparse
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine
import chess.pgn

CAP = 1000
BLUNDER = 300
MISTAKE = 100


@dataclass(slots=True)
class Tally:
    losses: list[int] = field(default_factory=list)

    def line(self, player: str, opponent: str) -> str:
        n = len(self.losses)
        if n == 0:
            return f'quality player={player} opponent="{opponent}" moves=0'
        blunders = sum(1 for x in self.losses if x >= BLUNDER)
        mistakes = sum(1 for x in self.losses if MISTAKE <= x < BLUNDER)
        best = sum(1 for x in self.losses if x <= 0)
        return (
            f'quality player={player} opponent="{opponent}" moves={n} '
            f"acpl={sum(self.losses) / n:.0f} blunders={100 * blunders / n:.1f}% "
            f"mistakes={100 * mistakes / n:.1f}% best_or_equal={100 * best / n:.1f}%"
        )


def evaluate(engine: chess.engine.SimpleEngine, board: chess.Board, depth: int) -> int:
    """Stockfish's score for the side to move, clamped to +/-CAP (mates at the cap)."""
    if board.is_game_over():
        outcome = board.outcome()
        if outcome is None or outcome.winner is None:
            return 0
        return CAP if outcome.winner == board.turn else -CAP
    info = engine.analyse(board, chess.engine.Limit(depth=depth))
    score = info["score"].pov(board.turn).score(mate_score=CAP)
    assert score is not None
    return max(-CAP, min(CAP, score))


def judge(files: list[Path], depth: int) -> dict[tuple[str, str], Tally]:
    stockfish = shutil.which("stockfish") or "/usr/games/stockfish"
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    with chess.engine.SimpleEngine.popen_uci(stockfish) as engine:
        engine.configure({"Threads": 1, "Hash": 32})
        for path in files:
            with path.open() as handle:
                while (game := chess.pgn.read_game(handle)) is not None:
                    names = {chess.WHITE: game.headers["White"], chess.BLACK: game.headers["Black"]}
                    board = game.board()
                    before = evaluate(engine, board, depth)
                    for move in game.mainline_moves():
                        mover = board.turn
                        board.push(move)
                        after = evaluate(engine, board, depth)
                        loss = max(0, min(CAP, before + after))  # after is the opponent's view
                        tallies[(names[mover], names[not mover])].losses.append(loss)
                        before = after
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+", type=Path)
    parser.add_argument("--depth", type=int, default=10, help="Stockfish's depth per position")
    args = parser.parse_args()
    for (player, opponent), tally in sorted(judge(args.pgn, args.depth).items()):
        print(tally.line(player, opponent), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
