"""Calibrate Brudno's playing levels on Stockfish 15.1's ``UCI_Elo`` scale (issue 15).

Two kinds of match, each Brudno against Debian's Stockfish with ``UCI_LimitStrength`` (through
``bench/match_stockfish.py``'s runner: noob openings with both colours, Syzygy adjudication)::

    # probe: which Elo does "Skill Level" L play at?  Against Stockfish at E, a difference
    # d puts level L at E + d.  Probes place the points of games/chess_game/levels.py.
    python bench/calibrate_levels.py probe 0:1350 6:1500 12:1650 --games 40 --concurrency 2

    # verify: UCI_LimitStrength with UCI_Elo E against Stockfish at the same E: about 50%
    # at every declared point is what calibrated means (the README's table is these lines)
    python bench/calibrate_levels.py verify 1350 1500 1650 1800 --games 60 --concurrency 2

Each match prints ``match_stockfish.py``'s result line, then one summary line::

    probe level=6 sf_elo=1500 games=40 score=47.5% elo=-17+/-98 level_elo=1483+/-98
      brudno_s_per_move=0.031
    verify uci_elo=1500 games=60 W-D-L=25-8-27 score=48.3% elo=-12+/-80 brudno_s_per_move=0.05

``brudno_s_per_move`` is the mean thinking time of Brudno's moves (from the PGN's move
comments; ``seconds-per-move GAMES.pgn NAME`` reads it from any PGN).  A level must not think
longer than full strength at the same clock; games of different lengths are no fair
comparison, so ``speed`` times every level and full strength on the same positions with the
same clock (20 noob openings, 8 s + 0.1 s each)::

    python bench/calibrate_levels.py speed 0 4 8 12 16 19
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chess
import chess.engine
from match_stockfish import OPENINGS, SF_ELO_MAX, SF_ELO_MIN, result_line, run_match
from time_profile import profile


def seconds_per_move(pgn: Path, player: str) -> float | None:
    """Mean of the ``…s`` thinking times in the comments of ``player``'s moves."""
    _, blocks = profile(pgn, [player])[player]
    times = [seconds for block in blocks for seconds in block]
    return sum(times) / len(times) if times else None


def _args_for(base: argparse.Namespace, options: list[str], pgn: str) -> argparse.Namespace:
    """``match_stockfish``'s namespace for one match with Brudno's ``options``."""
    return argparse.Namespace(
        brudno=base.brudno,
        brudno_option=options,
        tc=base.tc,
        games=base.games,
        concurrency=base.concurrency,
        openings=base.openings,
        seed=base.seed,
        pgn=pgn,
    )


def _elo(pair: dict[str, Any]) -> tuple[float | None, float]:
    """Brudno's difference and half its 95% interval (infinite when a bound is)."""
    if pair["elo"] is None:
        return None, float("inf")
    if pair["elo_upper"] is None or pair["elo_lower"] is None:
        return pair["elo"], float("inf")
    return pair["elo"], (pair["elo_upper"] - pair["elo_lower"]) / 2


def _played(base: argparse.Namespace, options: list[str], sf_elo: int) -> tuple[Any, float | None]:
    with tempfile.TemporaryDirectory() as tmp:
        pgn = str(Path(tmp) / "games.pgn")
        args = _args_for(base, options, pgn)
        result = run_match(args, sf_elo)
        print(result_line(args, sf_elo, result), flush=True)
        if base.pgn:
            with open(base.pgn, "a") as out:
                out.write(Path(pgn).read_text())
        return result, seconds_per_move(Path(pgn), "Brudno")


def probe(base: argparse.Namespace, pairs: list[tuple[int, int]]) -> None:
    for level, sf_elo in pairs:
        result, spm = _played(base, [f"Skill Level={level}"], sf_elo)
        pair = result["pairs"][0]
        elo, margin = _elo(pair)
        placed = "unbounded" if elo is None else f"{sf_elo + elo:.0f}+/-{margin:.0f}"
        shown = "inf" if elo is None else f"{elo:+.0f}+/-{margin:.0f}"
        print(
            f"probe level={level} sf_elo={sf_elo} games={pair['games']} "
            f"W-D-L={pair['wins']}-{pair['draws']}-{pair['losses']} "
            f"score={100 * pair['score']:.1f}% elo={shown} level_elo={placed} "
            f"brudno_s_per_move={_seconds(spm)}",
            flush=True,
        )


def verify(base: argparse.Namespace, elos: list[int]) -> None:
    for sf_elo in elos:
        options = ["UCI_LimitStrength=true", f"UCI_Elo={sf_elo}"]
        result, spm = _played(base, options, sf_elo)
        pair = result["pairs"][0]
        elo, margin = _elo(pair)
        shown = "inf" if elo is None else f"{elo:+.0f}+/-{margin:.0f}"
        print(
            f"verify uci_elo={sf_elo} games={pair['games']} "
            f"W-D-L={pair['wins']}-{pair['draws']}-{pair['losses']} "
            f"score={100 * pair['score']:.1f}% elo={shown} "
            f"brudno_s_per_move={_seconds(spm)}",
            flush=True,
        )


def speed(args: argparse.Namespace) -> None:
    """Mean time per move of each level and of full strength on the same positions and clock:
    the first ``--positions`` openings, each searched once per level with ``go wtime/btime``
    ``--clock-ms`` and increments ``--inc-ms``, through the real engine over UCI."""
    boards = [_board(line) for line in args.openings.read_text().splitlines() if line.strip()]
    boards = boards[: args.positions]
    clock = f"wtime {args.clock_ms} btime {args.clock_ms} winc {args.inc_ms} binc {args.inc_ms}"
    with chess.engine.SimpleEngine.popen_uci(shlex.split(args.brudno)) as engine:
        for level in [*args.levels, 20]:
            engine.configure({"Skill Level": level})
            seconds: list[float] = []
            for board in boards:
                started = time.monotonic()
                engine.play(board, _limit(args))
                seconds.append(time.monotonic() - started)
            print(
                f"speed level={level} positions={len(seconds)} clock=({clock}) "
                f"mean_s={sum(seconds) / len(seconds):.3f} max_s={max(seconds):.3f}",
                flush=True,
            )


def _board(line: str) -> chess.Board:
    """A line of an openings file: a FEN, or an EPD with operations."""
    try:
        return chess.Board(line.strip())
    except ValueError:
        return chess.Board.from_epd(line)[0]


def _limit(args: argparse.Namespace) -> chess.engine.Limit:
    clock = args.clock_ms / 1000
    inc = args.inc_ms / 1000
    return chess.engine.Limit(white_clock=clock, black_clock=clock, white_inc=inc, black_inc=inc)


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _level_at(text: str) -> tuple[int, int]:
    try:
        level, elo = text.split(":")
        return int(level), max(SF_ELO_MIN, min(SF_ELO_MAX, int(elo)))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LEVEL:ELO, got {text!r}") from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for name in ("probe", "verify"):
        each = sub.add_parser(name)
        if name == "probe":
            each.add_argument("points", nargs="+", type=_level_at, metavar="LEVEL:ELO")
        else:
            each.add_argument("points", nargs="+", type=int, metavar="ELO")
        each.add_argument("--tc", default="10+0.1")
        each.add_argument("--games", type=int, default=40)
        each.add_argument("--concurrency", type=int, default=1)
        each.add_argument("--openings", type=Path, default=OPENINGS)
        each.add_argument("--seed", type=int, default=1)
        each.add_argument("--brudno", default=f"{shlex.quote(sys.executable)} -m brudno")
        each.add_argument("--pgn", help="append every game to this file")
    fast = sub.add_parser("speed", help="time per move of each level against full strength")
    fast.add_argument("levels", nargs="+", type=int, metavar="LEVEL")
    fast.add_argument("--positions", type=int, default=20)
    fast.add_argument("--clock-ms", type=int, default=8000)
    fast.add_argument("--inc-ms", type=int, default=100)
    fast.add_argument("--openings", type=Path, default=OPENINGS)
    fast.add_argument("--brudno", default=f"{shlex.quote(sys.executable)} -m brudno")
    spm = sub.add_parser("seconds-per-move", help="mean move time of a player in a PGN")
    spm.add_argument("pgn", type=Path)
    spm.add_argument("player")
    args = parser.parse_args()
    if args.mode == "probe":
        probe(args, args.points)
    elif args.mode == "verify":
        verify(args, args.points)
    elif args.mode == "speed":
        speed(args)
    else:
        value = seconds_per_move(args.pgn, args.player)
        print(f"seconds_per_move player={args.player} value={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
