"""``brudno tune``: Texel tuning of the chess evaluation, in two rerunnable steps.

Usage (scripts depend on this interface)::

    brudno tune games --out GAMES.pgn [--count N] [--nodes N] [--plies P] [--seed S]
                      [--openings FILE ...] [--data-dir DIR] [--stockfish PATH]
    brudno tune data --out FILE.epd [--positions N] [--games FILE.pgn|FILE.epd ...]
                     [--data-dir DIR] [--depth D] [--plies P] [--seed S] [--stockfish PATH]
                     [--played GAMES.pgn ... [--result-weight W] [--game-evals]]
    brudno tune fit DATA.epd [--out WEIGHTS.json] [--weights START.json]
                    [--iterations N] [--learning-rate R] [--k K] [--l2 LAMBDA]
                    [--l2-for PATTERN=LAMBDA ...] [--holdout N] [--validate DATA.epd]
                    [--freeze PREFIX ...]

``games`` appends fast Stockfish self-play games at varied openings to a PGN file
(:mod:`brudno.arena.tuning_games`): the independent games by the tens of thousands that
``data --played`` needs.  ``data`` writes a labelled data set (:mod:`brudno.arena.tuning_data`
says how the positions are sampled and labelled: quiet positions from the shared openings,
or with ``--played`` from the games of PGN files such as ``brudno match --pgn`` or ``tune
games`` write; Stockfish at ``go depth D``, the side to move's win probability, blended with
the game's result by ``--result-weight``; ``--game-evals`` takes the engine's score from the
games' own ``[%eval]`` comments instead, which ``tune games`` records: no second search).

``fit`` reads such a file, computes each position's features with the chess adapter, fits K
and then the weights (:mod:`engine.tune`), writes a flat weights JSON in the format of
``games/data/chess_weights.json`` (integers, the starting table's order) and prints the error
before and after.  Hundreds of weights fitted to a few thousand positions also fit the
sample's noise: ``--holdout N`` leaves every Nth position out of the fit and reports the
error on those, ``--validate`` reports it on another file (made from other games), and
``--l2`` pulls the weights toward the starting table (``--l2-for`` with another strength
for some of them).  It never overwrites the shipped
weights unless told to: a change of strength needs a match (``brudno match``) before it is
adopted.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from brudno.arena.tuning_data import (
    DATA_DIR_ENV,
    DEFAULT_STOCKFISH,
    OPENINGS_SUBDIR,
    DataConfig,
    TuneDataError,
    generate,
    read_data,
)
from brudno.arena.tuning_games import GamesConfig, GamesSummary, play_games
from brudno.argtypes import fraction, non_negative_int, positive_int
from engine.eval import LinearEvaluator
from engine.tune import FitConfig, Sample, TuneResult, mean_squared_error, tune
from games.chess_game import DEFAULT_WEIGHTS_PATH

__all__ = ["configure", "run"]

_MIN_HOLDOUT = 2
"""The smallest ``--holdout`` N but 0: every Nth position is kept out, and every 1st is all."""


def _write_weights(path: Path, weights: dict[str, int]) -> None:
    path.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")


# -- command line ----------------------------------------------------------------------------
def _add_data_dir(step: argparse.ArgumentParser) -> None:
    step.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help=f"the shared data directory, holding {OPENINGS_SUBDIR} (default: ${DATA_DIR_ENV}, "
        "else ../shared/data from the current directory, else beside the source checkout)",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    steps = parser.add_subparsers(dest="step", metavar="STEP", required=True)
    games = steps.add_parser("games", help="play Stockfish self-play games for 'data --played'")
    games.add_argument("--out", type=Path, required=True, help="PGN file to append games to")
    games.add_argument("--count", type=positive_int, default=1000, help="games to play")
    games.add_argument("--nodes", type=positive_int, default=2000, help="Stockfish nodes a move")
    games.add_argument(
        "--plies", type=non_negative_int, default=4, help="most random quiet plies after an opening"
    )
    games.add_argument("--seed", type=int, default=1, help="seed of the starts")
    games.add_argument(
        "--openings",
        type=Path,
        action="append",
        help="opening file (PGN or EPD), repeatable (default: the shared openings)",
    )
    _add_data_dir(games)
    games.add_argument("--stockfish", default=DEFAULT_STOCKFISH, help="playing engine command")

    data = steps.add_parser("data", help="make a labelled data set (Stockfish evaluations)")
    data.add_argument("--out", type=Path, required=True, help="data file to write (FEN ; target)")
    data.add_argument("--positions", type=positive_int, default=2000, help="positions wanted")
    data.add_argument(
        "--games",
        type=Path,
        action="append",
        help="opening file (PGN or EPD), repeatable (default: the shared openings)",
    )
    _add_data_dir(data)
    data.add_argument("--depth", type=positive_int, default=6, help="Stockfish depth per label")
    data.add_argument(
        "--plies", type=non_negative_int, default=8, help="most random quiet plies added"
    )
    data.add_argument("--seed", type=int, default=1, help="sampling seed")
    data.add_argument("--stockfish", default=DEFAULT_STOCKFISH, help="labelling engine command")
    data.add_argument(
        "--played",
        type=Path,
        action="append",
        metavar="GAMES.pgn",
        help="sample the quiet positions along these played games instead (repeatable)",
    )
    data.add_argument(
        "--result-weight",
        type=fraction,
        default=0.0,
        metavar="W",
        help="with --played: target = (1-W)*engine + W*game result (1: results only, no engine)",
    )
    data.add_argument(
        "--game-evals",
        action="store_true",
        help="with --played: the engine's score is the one the game recorded for the position "
        "([%%eval], as 'tune games' writes), not a new search; positions without one are left out",
    )

    fit = steps.add_parser("fit", help="fit the weights to a data set; write a weights JSON")
    fit.add_argument("data", type=Path, help="data file (FEN ; target lines)")
    fit.add_argument(
        "--out", type=Path, default=Path("chess_weights_tuned.json"), help="weights to write"
    )
    fit.add_argument(
        "--weights", type=Path, default=DEFAULT_WEIGHTS_PATH, help="starting weights JSON"
    )
    fit.add_argument("--iterations", type=non_negative_int, default=500, help="Adam iterations")
    fit.add_argument("--learning-rate", type=float, default=2.0, help="largest step (cp)")
    fit.add_argument("--k", type=float, help="logistic K (default: fitted on the start weights)")
    fit.add_argument(
        "--l2",
        type=float,
        default=0.0,
        metavar="LAMBDA",
        help="pull each weight toward its start value: adds LAMBDA * sum of squared changes",
    )
    fit.add_argument(
        "--l2-for",
        type=_pattern_strength,
        action="append",
        default=[],
        metavar="PATTERN=LAMBDA",
        help="another LAMBDA for the weights whose names match PATTERN (shell-style, * crosses "
        "dots; repeatable, the last match counts; e.g. 'king.mg.danger.*=1e-9' for rare "
        "one-hot features, which a LAMBDA that suits common ones holds at their start)",
    )
    fit.add_argument(
        "--holdout",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="keep every Nth position out of the fit and report the error on them (0: none)",
    )
    fit.add_argument(
        "--validate",
        type=Path,
        metavar="DATA",
        help="report the error on this data file too: positions from other games than the "
        "fitted ones (every Nth position of one file shares its games with the rest)",
    )
    fit.add_argument(
        "--freeze",
        action="append",
        default=[],
        metavar="PREFIX",
        help="keep the weights whose names start with PREFIX (repeatable; e.g. psqt. to fit "
        "only the scalar terms, which few positions can fit without overfitting)",
    )


def _pattern_strength(text: str) -> tuple[str, float]:
    """``PATTERN=LAMBDA`` of ``--l2-for``."""
    pattern, sep, strength = text.rpartition("=")
    try:
        value = float(strength)
    except ValueError:
        value = -1.0
    if not sep or not pattern or not value >= 0.0:
        raise argparse.ArgumentTypeError(f"expected PATTERN=LAMBDA with LAMBDA >= 0, not {text!r}")
    return pattern, value


def _source_options(args: argparse.Namespace) -> list[str]:
    """The ``--data-dir`` and ``--stockfish`` of a command line, where they are not defaults."""
    parts = []
    if args.data_dir is not None:
        parts += ["--data-dir", str(args.data_dir)]
    if args.stockfish != DEFAULT_STOCKFISH:
        parts += ["--stockfish", args.stockfish]
    return parts


def _summary(summary: GamesSummary) -> str:
    return (
        f"games {summary.games} (+{summary.white_wins} ={summary.draws} -{summary.black_wins}"
        f" for White), plies {summary.plies}"
    )


def _run_games(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    parts = ["brudno", "tune", "games", "--out", str(args.out), "--count", str(args.count)]
    parts += ["--nodes", str(args.nodes), "--plies", str(args.plies), "--seed", str(args.seed)]
    for path in args.openings or ():
        parts += ["--openings", str(path)]
    parts += _source_options(args)

    def progress(summary: GamesSummary) -> None:
        if summary.games % 100 == 0:
            print(_summary(summary), file=sys.stderr, flush=True)

    config = GamesConfig(
        count=args.count,
        nodes=args.nodes,
        plies=args.plies,
        seed=args.seed,
        openings=args.openings,
        data_dir=args.data_dir,
        stockfish=args.stockfish,
        command=shlex.join(parts),
    )
    summary = play_games(args.out, config, progress=progress)
    print(_summary(summary))
    print(f"time {time.perf_counter() - started:.1f} s")
    return 0


def _run_data(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    parts = ["brudno", "tune", "data", "--out", str(args.out)]
    parts += ["--positions", str(args.positions)]
    if not args.game_evals:  # the games' own evaluations need no search
        parts += ["--depth", str(args.depth)]
    if not args.played:  # played games are taken as played: no random plies
        parts += ["--plies", str(args.plies)]
    parts += ["--seed", str(args.seed)]
    for path in args.games or ():
        parts += ["--games", str(path)]
    parts += _source_options(args)
    for path in args.played or ():
        parts += ["--played", str(path)]
    if args.result_weight:
        parts += ["--result-weight", f"{args.result_weight:g}"]
    if args.game_evals:
        parts += ["--game-evals"]
    command = shlex.join(parts)
    count = generate(
        args.out,
        DataConfig(
            positions=args.positions,
            depth=args.depth,
            plies=args.plies,
            seed=args.seed,
            games=args.games,
            played=args.played,
            result_weight=args.result_weight,
            game_evals=args.game_evals,
            data_dir=args.data_dir,
            stockfish=args.stockfish,
            command=command,
        ),
    )
    print(f"positions {count}")
    print(f"time {time.perf_counter() - started:.1f} s")
    return 0


def _report(result: TuneResult, skipped: int) -> list[str]:
    return [
        f"samples {result.samples} (skipped {skipped} not quiet), weights tuned {result.tuned}",
        f"K {result.k:.4f}",
        f"error before {result.error_before:.6f}",
        f"error after {result.error_after:.6f}",
    ]


def _error_line(
    label: str, samples: Sequence[Sample], start: Mapping[str, float], result: TuneResult
) -> str:
    """The error on positions the fit did not see, with the start and the fitted weights."""
    before = mean_squared_error(samples, start, result.k)
    after = mean_squared_error(samples, result.weights, result.k)
    return f"{label} {len(samples)} error before {before:.6f} after {after:.6f}"


def _run_fit(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    samples, skipped = read_data(args.data)
    try:
        start = LinearEvaluator.from_json(args.weights)
    except (OSError, ValueError) as exc:
        raise TuneDataError(f"cannot read weights {args.weights}: {exc}") from None

    def progress(iteration: int, error: float) -> None:
        print(f"iteration {iteration} error {error:.6f}", file=sys.stderr)

    held: list[Sample] = []
    if args.holdout:
        if args.holdout < _MIN_HOLDOUT:
            raise TuneDataError("--holdout must be 0 or at least 2")
        held = samples[args.holdout - 1 :: args.holdout]
        samples = [s for i, s in enumerate(samples, 1) if i % args.holdout]
    config = FitConfig(
        iterations=args.iterations,
        learning_rate=args.learning_rate,
        k=args.k,
        regularization=args.l2,
        regularization_for=args.l2_for,
        frozen={name for name in start.weights if name.startswith(tuple(args.freeze))},
    )
    result = tune(samples, start.weights, config, progress=progress)
    _write_weights(args.out, result.weights)
    for line in _report(result, skipped):
        print(line)
    if held:
        print(_error_line("holdout", held, start.weights, result))
    if args.validate is not None:
        print(_error_line("validation", read_data(args.validate)[0], start.weights, result))
    print(f"wrote {args.out} in {time.perf_counter() - started:.1f} s")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        step = {"games": _run_games, "data": _run_data, "fit": _run_fit}[args.step]
        return step(args)
    except (TuneDataError, ValueError) as exc:
        print(f"brudno tune: {exc}", file=sys.stderr)
        return 2
