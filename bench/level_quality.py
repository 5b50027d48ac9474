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
played in the same games, are a reference for "weak the way an engine's level is".

``one_move`` sorts the blunders by how they lose: the share of them after which the opponent
can win material outright in one move (a capture that wins at least :data:`HUNG_GAIN`
centipawns by static exchange: a piece left en prise, moved or not) or mate at once.  A
person's level loses to tactics a few moves deep; a level whose blunders are mostly
``one_move`` is throwing pieces away.  ``--only NAME`` keeps only the games of that player
(repeatable).  Run on the calibration games::

    python bench/level_quality.py /tmp/probe.pgn --depth 10
    python bench/level_quality.py skill.pgn --depth 8 --only "Brudno level 0"
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

from games.chess_game.adapter import from_fen

CAP = 1000
BLUNDER = 300
MISTAKE = 100
HUNG_GAIN = 200
"""A capture that wins this much by static exchange takes a piece for at most a pawn."""


@dataclass(slots=True)
class Tally:
    losses: list[int] = field(default_factory=list)
    one_move: int = 0
    """Blunders that left material winnable in one move, or a mate in one."""

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
            f"mistakes={100 * mistakes / n:.1f}% best_or_equal={100 * best / n:.1f}% "
            f"one_move={100 * self.one_move / blunders if blunders else 0.0:.0f}%"
        )


def loses_in_one(board: chess.Board) -> bool:
    """Can the side to move win a piece outright (by static exchange) or mate at once?"""
    game = from_fen(board.fen())
    if any(game.see_ge(move, HUNG_GAIN) for move in game.noisy_moves()):
        return True
    for move in board.legal_moves:
        board.push(move)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return True
    return False


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


def judge(files: list[Path], depth: int, only: list[str]) -> dict[tuple[str, str], Tally]:
    stockfish = shutil.which("stockfish") or "/usr/games/stockfish"
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    with chess.engine.SimpleEngine.popen_uci(stockfish) as engine:
        engine.configure({"Threads": 1, "Hash": 32})
        for path in files:
            with path.open() as handle:
                while (game := chess.pgn.read_game(handle)) is not None:
                    names = {chess.WHITE: game.headers["White"], chess.BLACK: game.headers["Black"]}
                    if only and not set(only) & set(names.values()):
                        continue
                    board = game.board()
                    before = evaluate(engine, board, depth)
                    for move in game.mainline_moves():
                        mover = board.turn
                        board.push(move)
                        after = evaluate(engine, board, depth)
                        loss = max(0, min(CAP, before + after))  # after is the opponent's view
                        tally = tallies[(names[mover], names[not mover])]
                        tally.losses.append(loss)
                        if loss >= BLUNDER and not board.is_game_over() and loses_in_one(board):
                            tally.one_move += 1
                        before = after
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+", type=Path)
    parser.add_argument("--depth", type=int, default=10, help="Stockfish's depth per position")
    parser.add_argument("--only", action="append", default=[], help="only the games of this player")
    args = parser.parse_args()
    for (player, opponent), tally in sorted(judge(args.pgn, args.depth, args.only).items()):
        print(tally.line(player, opponent), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
