"""Calibrate Brudno's playing levels on Stockfish 15.1's ``UCI_Elo`` scale (issues 15, 47).

Matches against Debian's Stockfish with ``UCI_LimitStrength`` (through
``bench/match_stockfish.py``'s runner: noob openings with both colours, Syzygy adjudication),
and Brudno against Brudno at two levels (``brudno match``, the same openings)::

    # probe: which Elo does "Skill Level" L play at?  Against Stockfish at E, a difference
    # d puts level L at E + d.  Probes place the points of games/data/chess_levels.json.
    python bench/calibrate_levels.py probe 12:1500 16:1650 20:1950 --games 100 --concurrency 2

    # verify: UCI_LimitStrength with UCI_Elo E against Stockfish at the same E: about 50%
    # at every declared point is what calibrated means (each prints its table row; with
    # --table a miss moves the level's point to E plus the difference)
    python bench/calibrate_levels.py verify 1350 1500 1650 --games 100 --concurrency 2

    # chain: below Stockfish's 1350, each level against the calibrated point above it (the
    # lowest one, or the level chained just before): its Elo is the anchor's plus the
    # difference, the errors added in quadrature
    python bench/calibrate_levels.py chain 6 3 0 --games 100 --concurrency 2

    # skill-ladder: each Skill Level against the next one; says whether any level is weaker
    # than the one below it beyond its error
    python bench/calibrate_levels.py skill-ladder 0 2 4 6 8 10 12 14 16 18 20 --games 30

``probe``, ``verify`` and ``chain`` take ``--table [FILE]``: each measured point then goes
into that calibration file (default ``games/data/chess_levels.json``, which the engine's
``UCI_Elo`` reads; a file that does not exist starts a new calibration), replacing the point
at its level; a point that would put two levels at one Elo, or make the levels not ascend
with Elo, is printed and not written.  ``verify`` plays the level the shipped file gives.
``print-table`` prints a file's table (``--docs`` writes it into README.md and
docs/playing.md, where a test checks it is the shipped file's);
``drop LEVEL...`` removes points (probes a verification superseded) and ``rechain`` places
chained points on their anchors' current points again (writing a point does that itself).  A
recalibration from scratch: probe into a new file, copy it over the shipped one once it has
two points, then verify the rungs and chain below them into the shipped file::

    python bench/calibrate_levels.py probe 8:1350 12:1650 20:1950 --table /tmp/levels.json
    cp /tmp/levels.json games/data/chess_levels.json
    python bench/calibrate_levels.py verify 1350 1500 1650 1800 --table
    python bench/calibrate_levels.py chain 6 3 0 --table
    python bench/calibrate_levels.py print-table

``--nodes N`` / ``--depth N`` (``chain``, ``skill-ladder``) play every move at that limit
instead of the clock (quick checks; a calibration is at 10+0.1).
Each match prints its result line, then one summary line::

    probe level=12 sf_elo=1500 games=100 W-D-L=40-20-40 score=50.0% elo=+0+/-62
      level_elo=1500+/-62 brudno_s_per_move=0.310
    verify uci_elo=1500 games=100 W-D-L=... score=... elo=... brudno_s_per_move=0.31
    row | 1500 | 12 | Stockfish 1500 | 100 | 40-20-40 | 50.0% | +0 +/- 62 | 62 | 2026-12-01 |
    chain level=3 anchor_level=6 anchor_elo=1200+/-70 games=100 W-D-L=... score=...
      elo=-150+/-65 level_elo=1050+/-96
    ladder lower=4 upper=6 games=30 W-D-L=... score=... elo=+120+/-110 verdict=stronger
    ladder verdict=monotone pairs=10 weaker=none

(``ladder``'s W-D-L and score are the upper level's; ``weaker`` lists the pairs where the
upper level lost beyond its error.)  ``brudno_s_per_move`` is the mean thinking time of
Brudno's moves (from the PGN's move comments; ``seconds-per-move GAMES.pgn NAME`` reads it
from any PGN).  A level must not think longer than full strength at the same clock; ``speed``
times every level and full strength on the same positions with the same clock (20 noob
openings, 8 s + 0.1 s each)::

    python bench/calibrate_levels.py speed 0 4 8 12 16 19
"""

from __future__ import annotations

import argparse
import datetime
import enum
import itertools
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chess
import chess.engine
from match_stockfish import (
    OPENINGS,
    REPO,
    SF_ELO_MAX,
    SF_ELO_MIN,
    TABLES,
    play_match,
    result_line,
    run_match,
)
from time_profile import profile

from engine.skill import FULL_STRENGTH, EloScale
from games.calibration import Calibration, Point, chain_opponent, chained, with_table
from games.chess_game.levels import CALIBRATION_PATH, CHESS_CALIBRATION

BRUDNO = f"{shlex.quote(sys.executable)} -m brudno"


class Verdict(enum.StrEnum):
    """How the upper level of a ladder pair did against the lower one."""

    STRONGER = "stronger"
    """Won beyond the error (the whole interval above 0)."""
    UNCLEAR = "unclear"
    """The interval holds 0: not told apart at this many games."""
    WEAKER = "weaker"
    """Lost beyond the error: the ladder is not monotone here."""


def verdict(lower: float | None, upper: float | None, score: float) -> Verdict:
    """The upper level's verdict from the bounds of its difference's 95% interval (``None``: a
    bound the score leaves unbounded, as 27-2-1 leaves the upper one); with neither bound,
    from the score alone (0% or 100%)."""
    if lower is None and upper is None:
        return Verdict.STRONGER if score > 0.5 else Verdict.WEAKER
    if lower is not None and lower > 0:
        return Verdict.STRONGER
    if upper is not None and upper < 0:
        return Verdict.WEAKER
    return Verdict.UNCLEAR


def ladder_pairs(levels: list[int]) -> list[tuple[int, int]]:
    """Neighbouring levels, lower first, from the given ones in ascending order."""
    ordered = sorted(set(levels))
    return list(itertools.pairwise(ordered))


def level_options(level: float, calibration: Calibration) -> list[str]:
    """The options that play ``level``: ``Skill Level`` when it is a whole number, else
    ``UCI_Elo`` at the calibrated point with that level."""
    if level == int(level):
        return [f"Skill Level={int(level)}"]
    point = calibration.point_at_level(level)
    if point is None:
        raise SystemExit(f"level {level} is neither whole nor a calibrated point")
    return ["UCI_LimitStrength=true", f"UCI_Elo={point.elo}"]


def seconds_per_move(pgn: Path, player: str) -> float | None:
    """Mean of the ``…s`` thinking times in the comments of ``player``'s moves."""
    blocks = profile(pgn, [player])[player].blocks
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
        engine_tables=False,
    )


def _limit_words(base: argparse.Namespace) -> list[str]:
    """``brudno match``'s per-move limit: ``--nodes``/``--depth`` when given, else the clock."""
    if base.nodes is not None:
        return ["--nodes", str(base.nodes)]
    if base.depth is not None:
        return ["--depth", str(base.depth)]
    return ["--tc", base.tc]


def pair_command(
    base: argparse.Namespace, first: list[str], second: list[str], names: tuple[str, str]
) -> list[str]:
    """The ``brudno match`` command of Brudno with ``first`` options against Brudno with
    ``second`` (both ``--brudno``)."""
    command = [sys.executable, "-m", "brudno", "match"]
    for options, name in ((first, names[0]), (second, names[1])):
        command += ["--engine", base.brudno, "--name", name]
        command += [word for option in options for word in ("--option", option)]
    command += [
        *_limit_words(base),
        "--games", str(base.games),
        "--concurrency", str(base.concurrency),
        "--openings", str(base.openings), "--openings-order", "random",
        "--seed", str(base.seed),
    ]  # fmt: skip
    if base.maxmoves is not None:
        command += ["--maxmoves", str(base.maxmoves)]
    if TABLES.is_dir():
        command += ["--tb", str(TABLES)]
    return command


def run_pair(
    base: argparse.Namespace, first: list[str], second: list[str], names: tuple[str, str]
) -> dict[str, Any]:
    """Play :func:`pair_command`; the first engine's pair statistics (``brudno match --json``)."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "result.json"
        command = [*pair_command(base, first, second, names), "--json", str(summary)]
        command += ["--quiet"]
        if base.pgn:
            command += ["--pgn", base.pgn]
        pair: dict[str, Any] = play_match(command, summary)["pairs"][0]
        return pair


def _elo(pair: dict[str, Any]) -> tuple[float | None, float]:
    """The first engine's difference and half its 95% interval (infinite when a bound is)."""
    if pair["elo"] is None:
        return None, float("inf")
    if pair["elo_upper"] is None or pair["elo_lower"] is None:
        return pair["elo"], float("inf")
    return pair["elo"], (pair["elo_upper"] - pair["elo_lower"]) / 2


def _wdl(pair: dict[str, Any]) -> str:
    return (
        f"games={pair['games']} W-D-L={pair['wins']}-{pair['draws']}-{pair['losses']} "
        f"score={100 * pair['score']:.1f}%"
    )


def _shown(elo: float | None, margin: float) -> str:
    return "inf" if elo is None else f"{elo:+.0f}+/-{margin:.0f}"


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


def measured_point(pair: dict[str, Any], interval: float, **placed: Any) -> Point | None:
    """The calibration point of a match (``None`` when its difference is unbounded):
    ``placed`` gives the point's ``elo``, ``level``, ``opponent``, ``opponent_elo`` and
    ``command``, ``interval`` half its 95% interval on the scale."""
    diff, margin = _elo(pair)
    if diff is None or margin == float("inf"):
        return None
    return Point(
        **placed,
        games=pair["games"],
        wins=pair["wins"],
        draws=pair["draws"],
        losses=pair["losses"],
        diff=round(diff, 1),
        margin=round(margin, 1),
        interval=round(interval, 1),
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
    )


def _record(base: argparse.Namespace, calibration: Calibration, point: Point | None) -> Calibration:
    """Print ``point``'s table row; with ``--table``, write it into the calibration file."""
    if point is None:
        print("row none (an unbounded difference is no calibration point)", flush=True)
        return calibration
    print(f"row {point.row()}", flush=True)
    if base.table is None:
        return calibration
    try:
        updated = calibration.with_point(point)
    except ValueError as exc:
        print(f"table unchanged: {exc}", flush=True)
        return calibration
    updated.write(base.table)
    print(f"table {base.table}: {len(updated.points)} points", flush=True)
    return updated


def _command() -> str:
    return shlex.join(["python", "bench/calibrate_levels.py", *sys.argv[1:]])


def probe(base: argparse.Namespace, pairs: list[tuple[int, int]]) -> None:
    calibration = _calibration(base)
    for level, sf_elo in pairs:
        result, spm = _played(base, [f"Skill Level={level}"], sf_elo)
        pair = result["pairs"][0]
        elo, margin = _elo(pair)
        placed = "unbounded" if elo is None else f"{sf_elo + elo:.0f}+/-{margin:.0f}"
        print(
            f"probe level={level} sf_elo={sf_elo} {_wdl(pair)} elo={_shown(elo, margin)} "
            f"level_elo={placed} brudno_s_per_move={_seconds(spm)}",
            flush=True,
        )
        point = measured_point(
            pair,
            margin,
            elo=round(sf_elo + (elo or 0)),
            level=level,
            opponent=f"Stockfish {sf_elo}",
            opponent_elo=sf_elo,
            command=_command(),
        )
        calibration = _record(base, calibration, point)


def verify(base: argparse.Namespace, elos: list[int]) -> None:
    """``UCI_Elo`` E against Stockfish E.  The level played is the one the engine reads from
    the shipped file at its start, which an earlier point of the same run may have moved;
    the point goes where that level measured (E plus the difference, as a probe's does):
    a verification that misses 50% moves the level's Elo, it does not confirm E."""
    calibration = _calibration(base)
    for sf_elo in elos:
        level = _shipped_scale().level(sf_elo)
        options = ["UCI_LimitStrength=true", f"UCI_Elo={sf_elo}"]
        result, spm = _played(base, options, sf_elo)
        pair = result["pairs"][0]
        elo, margin = _elo(pair)
        print(
            f"verify uci_elo={sf_elo} {_wdl(pair)} elo={_shown(elo, margin)} "
            f"brudno_s_per_move={_seconds(spm)}",
            flush=True,
        )
        point = measured_point(
            pair,
            margin,
            elo=round(sf_elo + (elo or 0)),
            level=round(level, 2),
            opponent=f"Stockfish {sf_elo}",
            opponent_elo=sf_elo,
            command=_command(),
        )
        calibration = _record(base, calibration, point)


def chain(base: argparse.Namespace, levels: list[int]) -> None:
    """Each level (highest first) against the point above it: the lowest calibrated point,
    then each level just chained."""
    calibration = _calibration(base)
    if not calibration.points:
        raise SystemExit("chain: the table has no calibrated point to anchor the chain")
    anchor = min(calibration.points, key=lambda p: p.elo)
    for level in sorted(levels, reverse=True):
        if level >= anchor.level:
            raise SystemExit(f"chain: level {level} is not below its anchor {anchor.level:g}")
        names = (chain_opponent(level), chain_opponent(anchor.level))
        pair = run_pair(
            base, [f"Skill Level={level}"], level_options(anchor.level, calibration), names
        )
        diff, margin = _elo(pair)
        elo, interval = chained(anchor, diff or 0.0, margin)
        shown = "unbounded" if diff is None else f"{elo}+/-{interval:.0f}"
        print(
            f"chain level={level} anchor_level={anchor.level:g} "
            f"anchor_elo={anchor.elo}+/-{anchor.interval:.0f} {_wdl(pair)} "
            f"elo={_shown(diff, margin)} level_elo={shown}",
            flush=True,
        )
        point = measured_point(
            pair,
            interval,
            elo=elo,
            level=level,
            opponent=names[1],
            opponent_elo=anchor.elo,
            command=_command(),
        )
        if point is None:
            raise SystemExit("chain: an unbounded difference ends the chain (more games?)")
        calibration = _record(base, calibration, point)
        anchor = point


def skill_ladder(base: argparse.Namespace, levels: list[int]) -> None:
    """Each pair of neighbouring levels, the upper one first; then the ladder's verdict."""
    weaker: list[str] = []
    pairs = ladder_pairs(levels)
    for lower, upper in pairs:
        names = (f"Brudno level {upper}", f"Brudno level {lower}")
        pair = run_pair(base, [f"Skill Level={upper}"], [f"Skill Level={lower}"], names)
        diff, margin = _elo(pair)
        said = verdict(pair["elo_lower"], pair["elo_upper"], pair["score"])
        if said is Verdict.WEAKER:
            weaker.append(f"{upper}<{lower}")
        print(
            f"ladder lower={lower} upper={upper} {_wdl(pair)} elo={_shown(diff, margin)} "
            f"verdict={said}",
            flush=True,
        )
    overall = "not-monotone" if weaker else "monotone"
    print(
        f"ladder verdict={overall} pairs={len(pairs)} weaker={','.join(weaker) or 'none'}",
        flush=True,
    )


def edit_table(base: argparse.Namespace) -> None:
    """``drop``: remove the points at the given levels (probes that verifications
    superseded); ``rechain``: place every chained point on its anchor's current point (a
    written point moves its chain itself; this mends a file written before that rule)."""
    calibration = _calibration(base)
    try:
        for level in base.levels if base.mode == "drop" else ():
            calibration = calibration.without_level(level)
        updated = calibration.rechained()
        updated.scale()
    except ValueError as exc:
        raise SystemExit(f"{base.mode}: table unchanged: {exc}") from None
    updated.write(base.table)
    print(f"table {base.table}: {len(updated.points)} points", flush=True)


DOCUMENTS = (REPO / "README.md", REPO / "docs" / "playing.md")
"""The pages that show the calibration table between its markers (a test keeps them equal)."""


def print_table(base: argparse.Namespace) -> None:
    """The documentation table of the calibration file, and its status; with ``--docs``, also
    written between the table markers of :data:`DOCUMENTS`."""
    calibration = _calibration(base)
    for row in calibration.rows():
        print(row)
    print(f"\n{calibration.status}")
    for page in DOCUMENTS if base.docs else ():
        page.write_text(with_table(page.read_text(), calibration.rows()))
        print(f"written into {page}")


NEW_STATUS = "A new calibration (bench/calibrate_levels.py); review before it ships."


def _shipped_scale() -> EloScale:
    """The ``UCI_Elo`` scale an engine started now reads (the shipped calibration file)."""
    return Calibration.read(CALIBRATION_PATH).scale()


def _calibration(base: argparse.Namespace) -> Calibration:
    """The ``--table`` file's calibration (the shipped one without it); a file that does not
    exist yet is a new calibration without points."""
    path: Path = base.table if getattr(base, "table", None) is not None else CALIBRATION_PATH
    if not path.exists():
        return Calibration(CHESS_CALIBRATION.reference, NEW_STATUS, ())
    return Calibration.read(path)


def speed(args: argparse.Namespace) -> None:
    """Mean time per move of each level and of full strength on the same positions and clock:
    the first ``--positions`` openings, each searched once per level with ``go wtime/btime``
    ``--clock-ms`` and increments ``--inc-ms``, through the real engine over UCI."""
    boards = [_board(line) for line in args.openings.read_text().splitlines() if line.strip()]
    boards = boards[: args.positions]
    clock = f"wtime {args.clock_ms} btime {args.clock_ms} winc {args.inc_ms} binc {args.inc_ms}"
    with chess.engine.SimpleEngine.popen_uci(shlex.split(args.brudno)) as engine:
        for level in [*args.levels, FULL_STRENGTH]:
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


def _level(text: str) -> int:
    try:
        level = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a level, got {text!r}") from None
    if not 0 <= level <= FULL_STRENGTH:
        raise argparse.ArgumentTypeError(f"a level is 0..{FULL_STRENGTH}, not {level}")
    return level


def _level_at(text: str) -> tuple[int, int]:
    try:
        level, elo = text.split(":")
        return _level(level), max(SF_ELO_MIN, min(SF_ELO_MAX, int(elo)))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LEVEL:ELO, got {text!r}") from None


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for name in ("probe", "verify", "chain", "skill-ladder"):
        each = sub.add_parser(name)
        if name == "probe":
            each.add_argument("points", nargs="+", type=_level_at, metavar="LEVEL:ELO")
        elif name == "verify":
            each.add_argument("points", nargs="+", type=int, metavar="ELO")
        else:
            each.add_argument("points", nargs="+", type=_level, metavar="LEVEL")
        each.add_argument("--tc", default="10+0.1")
        if name in ("chain", "skill-ladder"):  # Stockfish's UCI_Elo needs a clock
            limit = each.add_mutually_exclusive_group()
            limit.add_argument("--nodes", type=int, help="nodes per move instead of the clock")
            limit.add_argument("--depth", type=int, help="depth per move instead of the clock")
            each.add_argument("--maxmoves", type=int, help="a draw after N moves (quick checks)")
        each.add_argument("--games", type=int, default=100 if name != "skill-ladder" else 30)
        each.add_argument("--concurrency", type=int, default=1)
        each.add_argument("--openings", type=Path, default=OPENINGS)
        each.add_argument("--seed", type=int, default=1)
        each.add_argument("--brudno", default=BRUDNO)
        each.add_argument("--pgn", help="append every game to this file")
        if name != "skill-ladder":
            each.add_argument(
                "--table",
                type=Path,
                nargs="?",
                const=CALIBRATION_PATH,
                metavar="FILE",
                help="write each measured point into this calibration file "
                f"(default {CALIBRATION_PATH.relative_to(REPO)})",
            )
    table = sub.add_parser("print-table", help="the documentation table of a calibration file")
    table.add_argument("--table", type=Path, default=CALIBRATION_PATH, metavar="FILE")
    table.add_argument(
        "--docs", action="store_true", help="also write it into README.md and docs/playing.md"
    )
    drop = sub.add_parser("drop", help="remove the points at these levels from a table")
    drop.add_argument("levels", nargs="+", type=float, metavar="LEVEL")
    rechain = sub.add_parser("rechain", help="place chained points on their anchors again")
    for each in (drop, rechain):
        each.add_argument("--table", type=Path, default=CALIBRATION_PATH, metavar="FILE")
    fast = sub.add_parser("speed", help="time per move of each level against full strength")
    fast.add_argument("levels", nargs="+", type=int, metavar="LEVEL")
    fast.add_argument("--positions", type=int, default=20)
    fast.add_argument("--clock-ms", type=int, default=8000)
    fast.add_argument("--inc-ms", type=int, default=100)
    fast.add_argument("--openings", type=Path, default=OPENINGS)
    fast.add_argument("--brudno", default=BRUDNO)
    spm = sub.add_parser("seconds-per-move", help="mean move time of a player in a PGN")
    spm.add_argument("pgn", type=Path)
    spm.add_argument("player")
    return parser


def main() -> int:
    args = parser().parse_args()
    if args.mode == "probe":
        probe(args, args.points)
    elif args.mode == "verify":
        verify(args, args.points)
    elif args.mode == "chain":
        chain(args, args.points)
    elif args.mode == "skill-ladder":
        skill_ladder(args, args.points)
    elif args.mode == "print-table":
        print_table(args)
    elif args.mode in ("drop", "rechain"):
        edit_table(args)
    elif args.mode == "speed":
        speed(args)
    else:
        value = seconds_per_move(args.pgn, args.player)
        print(f"seconds_per_move player={args.player} value={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
