"""Games for Texel tuning: many fast, independent Stockfish self-play games at varied openings.

A linear evaluation fitted to positions from a few thousand games learns those games (positions
of one game share its result and most of its features), so the data needs games by the tens of
thousands; Brudno's own games cost seconds each, Stockfish at a few thousand nodes a move plays
one in well under a second, and at that budget it still plays far better than the evaluation
being fitted, so a game's result says something true about its positions.

:func:`play_games` picks each game's start from the opening files (a seeded choice of file and
entry, as :mod:`brudno.arena.tuning_data` reads them), adds 0..P seeded random quiet plies so
that repeated openings still diverge, and lets one Stockfish play both sides at ``go nodes N``
(one thread, a new game per game: Stockfish is deterministic at a node budget, so the variety
comes from the starts).  Stockfish's score of every position it moved from is written beside
that position as a ``[%eval]`` comment: a free label for ``tune data --game-evals``, searched
at the game's node budget, that costs no second search.  A game ends by the rules (checkmate,
stalemate, insufficient material, threefold repetition, fifty moves), or is adjudicated: won
once the mover's score is at least :data:`RESIGN_CP` for :data:`RESIGN_PLIES` plies in a row
(both sides agreeing), drawn once it stays within :data:`DRAW_CP` for :data:`DRAW_PLIES`
plies after :data:`DRAW_AFTER`, or at :data:`MAX_PLIES`.  Adjudication only cuts play
whose result is no longer in doubt.  Each game is appended to the PGN file as soon as it ends
(with its start as ``FEN``), so a run cut short still leaves every finished game usable by
``tune data --played``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from brudno.arena.tuning_data import (
    DEFAULT_STOCKFISH,
    TuneDataError,
    add_quiet_plies,
    opening_entries,
    opening_files,
    reference_engine,
    start_board,
)

__all__ = [
    "DRAW_AFTER",
    "DRAW_CP",
    "DRAW_PLIES",
    "MAX_PLIES",
    "RESIGN_CP",
    "RESIGN_PLIES",
    "GamesConfig",
    "GamesSummary",
    "game_outcome",
    "play_games",
]

RESIGN_CP = 1000
"""A score (centipawns, the mover's view) that decides a game once both sides agree on it."""
RESIGN_PLIES = 4
"""How many plies in a row the score must stay decisive (two moves by each side)."""
DRAW_CP = 10
"""A score (centipawns) that calls a long game a draw once it stays within it..."""
DRAW_PLIES = 8
"""...for this many plies in a row (four moves by each side)..."""
DRAW_AFTER = 80
"""...after this many plies of play (fishtest adjudicates draws alike)."""
UNUSABLE_STARTS = 1000
"""Starts in a row that are unusable (bad, or already over) before the openings are refused."""
MAX_PLIES = 400
"""Plies played from the start before a game is called a draw."""


@dataclass(frozen=True, slots=True)
class GamesSummary:
    """What a run wrote: games by White's result, and plies played (openings not counted)."""

    white_wins: int
    draws: int
    black_wins: int
    plies: int

    @property
    def games(self) -> int:
        return self.white_wins + self.draws + self.black_wins

    def counted(self, result: str, plies: int) -> GamesSummary:
        """This summary with one more game: its PGN result and the plies it took."""
        return GamesSummary(
            self.white_wins + (result == "1-0"),
            self.draws + (result == "1/2-1/2"),
            self.black_wins + (result == "0-1"),
            self.plies + plies,
        )


def _mover_cp(info: chess.engine.InfoDict) -> int | None:
    score = info.get("score")
    if score is None:
        return None
    return score.relative.score(mate_score=100_000)


Evaluation = tuple[chess.engine.PovScore, int | None] | None
"""Stockfish's score of a position it moved from and the depth it reached (None: no score)."""


def game_outcome(board: chess.Board) -> chess.Outcome | None:
    """``board.outcome(claim_draw=True)`` for the position on the board itself, at a sixth of
    its cost: python-chess's claim also tries every legal move for a repetition it could reach
    (1.8 ms a ply at move 30, against 0.3 ms here), which Stockfish's next move settles anyway."""
    outcome = board.outcome()
    if outcome is not None:
        return outcome
    if board.is_fifty_moves():
        return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
    if board.is_repetition(3):
        return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
    return None


def _play_one(
    engine: chess.engine.SimpleEngine,
    board: chess.Board,
    nodes: int,
    number: int,
    evaluations: list[Evaluation],
) -> tuple[str, str, int]:
    """Play ``board`` out; return (result, termination, plies played).  ``evaluations``
    gets the score of each position moved from, in order (the first is the start's)."""
    decisive = 0  # plies in a row with a decisive score; its sign says for whom
    level = 0  # plies in a row with a level score
    for plies in range(MAX_PLIES):
        outcome = game_outcome(board)
        if outcome is not None:
            return outcome.result(), outcome.termination.name.lower(), plies
        result = engine.play(
            board,
            chess.engine.Limit(nodes=nodes),
            info=chess.engine.INFO_BASIC | chess.engine.INFO_SCORE,
            game=number,
        )
        if result.move is None:
            raise TuneDataError(f"Stockfish gave no move in {board.fen()}")
        score = result.info.get("score")
        evaluations.append(None if score is None else (score, result.info.get("depth")))
        cp = _mover_cp(result.info)
        white_cp = None if cp is None else (cp if board.turn == chess.WHITE else -cp)
        board.push(result.move)
        if white_cp is None or abs(white_cp) < RESIGN_CP:
            decisive = 0
        else:
            sign = 1 if white_cp > 0 else -1
            decisive = decisive + sign if decisive * sign > 0 else sign
        if abs(decisive) >= RESIGN_PLIES:
            return ("1-0" if decisive > 0 else "0-1"), "adjudicated win", plies + 1
        level = level + 1 if white_cp is not None and abs(white_cp) <= DRAW_CP else 0
        if level >= DRAW_PLIES and plies + 1 >= DRAW_AFTER:
            return "1/2-1/2", "adjudicated draw", plies + 1
    return "1/2-1/2", "adjudicated draw", MAX_PLIES


def _annotate(game: chess.pgn.Game, evaluations: Sequence[Evaluation]) -> None:
    """Record each score where the position it scores stands: ``[%eval]`` (White's view, as
    python-chess reads it back with ``eval()``) on the start and after each move, so that
    ``tune data --game-evals`` labels the positions without a second search."""
    nodes: list[chess.pgn.GameNode] = [game, *game.mainline()]
    for node, evaluation in zip(nodes, evaluations, strict=False):
        if evaluation is not None:
            node.set_eval(evaluation[0], evaluation[1])


def _start(
    rng: random.Random, files: Sequence[Path], entries: Sequence[Sequence[int | str]], plies: int
) -> chess.Board:
    """A seeded start: an opening entry plus 0..``plies`` random quiet plies, not yet over."""
    for _ in range(UNUSABLE_STARTS):
        index = rng.randrange(len(files))
        if not entries[index]:
            continue
        board = start_board(files[index], rng.choice(entries[index]))
        if board is None:
            continue
        add_quiet_plies(board, rng, plies)
        if game_outcome(board) is None:
            return board
    names = ", ".join(str(path) for path in files)
    raise TuneDataError(f"no usable start in {UNUSABLE_STARTS} tries from {names}")


@dataclass(frozen=True, slots=True)
class GamesConfig:
    """What ``brudno tune games`` plays: how many games, at how many Stockfish nodes a move,
    from which openings (else the shared ones, found from ``data_dir``) extended by up to
    ``plies`` random quiet plies, with which seed; ``command`` is recorded in each game."""

    count: int
    nodes: int
    plies: int = 4
    seed: int = 1
    openings: Sequence[Path] | None = None
    data_dir: Path | None = None
    stockfish: str = DEFAULT_STOCKFISH
    command: str = ""


def play_games(
    out: Path,
    config: GamesConfig,
    *,
    progress: Callable[[GamesSummary], None] | None = None,
) -> GamesSummary:
    """Append ``config.count`` Stockfish self-play games to the PGN file ``out``; say what
    was played.

    Each game starts at a seeded entry of a seeded opening file plus 0..``plies`` random
    quiet plies.
    """
    count, nodes, plies, seed = config.count, config.nodes, config.plies, config.seed
    stockfish, command = config.stockfish, config.command
    rng = random.Random(seed)
    files = opening_files(config.openings, config.data_dir)
    entries = [opening_entries(path) for path in files]
    summary = GamesSummary(0, 0, 0, 0)
    with reference_engine(stockfish) as engine, out.open("a", encoding="utf-8") as handle:
        name = f"{engine.id.get('name', stockfish)} nodes {nodes}"
        while summary.games < count:
            start = _start(rng, files, entries, plies)
            board = chess.Board(start.fen())  # the game starts here: its PGN's FEN
            evaluations: list[Evaluation] = []
            result, termination, game_plies = _play_one(
                engine, board, nodes, summary.games, evaluations
            )
            summary = summary.counted(result, game_plies)
            game = chess.pgn.Game.from_board(board)
            _annotate(game, evaluations)
            game.headers["Event"] = "brudno tune games"
            game.headers["Round"] = str(summary.games)
            game.headers["White"] = game.headers["Black"] = name
            game.headers["Result"] = result
            game.headers["Termination"] = termination
            if command:
                game.headers["Annotator"] = command
            print(game, file=handle, end="\n\n", flush=True)
            if progress is not None:
                progress(summary)
    return summary
