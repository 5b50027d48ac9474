"""``brudno match``: play UCI engines against each other and measure the difference.

Usage (scripts depend on this interface)::

    brudno match --engine "CMD [ARGS]" [--name N] [--option NAME=VALUE ...]
                 --engine "CMD [ARGS]" [--name N] [--option NAME=VALUE ...] [--engine ...]
                 [--each-option NAME=VALUE ...] [--variant chess|tictactoe|...]
                 [--games N] [--tc [MOVES/]BASE[+INC] | --movetime MS] [--depth N] [--nodes N]
                 [--timemargin MS] [--openings FILE [--openings-order sequential|random]
                 [--openings-start N] [--openings-plies N] [--seed N]] [--concurrency N]
                 [--pgn FILE] [--draw movenumber=N movecount=N score=CP]
                 [--resign movecount=N score=CP [twosided=true]] [--maxmoves N] [--tb DIR]
                 [--sprt elo0=0 elo1=10 alpha=0.05 beta=0.05] [--json FILE] [--event NAME]
                 [--report-every N] [--quiet]

What each option means for the games (clock, adjudication, PGN tags) is in
:mod:`brudno.arena.match`; this module turns the command line into a
:class:`~brudno.arena.settings.MatchSettings`, plays it, and prints.

Progress goes to stderr (a line per finished game, the score every ``--report-every``
games); the results go to stdout: W/D/L and score per pair, the Elo difference with its 95%
interval (logistic model, normal approximation: :mod:`brudno.arena.stats`), LOS, the
pentanomial pair counts and the SPRT state, and per engine the time losses, illegal moves and
crashes.  Ctrl-C (or SIGTERM) stops the match and prints what was played (exit 130).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from brudno.arena.adjudication import DrawRule, ResignRule
from brudno.arena.clock import DEFAULT_TIMEMARGIN_MS, TimeControl
from brudno.arena.match import Match
from brudno.arena.openings import OpeningError, OpeningOrder, OpeningSelection, load_openings
from brudno.arena.players import EngineConfig
from brudno.arena.results import MatchResult
from brudno.arena.settings import START_POSITION, MatchError, MatchSettings
from brudno.arena.stats import Sprt, elo_estimate, los
from brudno.argtypes import name_value, non_negative_int, positive_int
from brudno.signals import handling_signals
from games.registry import GAMES

__all__ = [
    "configure",
    "report_lines",
    "result_json",
    "run",
    "run_match",
    "settings_from_args",
]

_STANDINGS_FROM = 3
"""The fewest engines for which the report ranks them (two have just their pair's lines)."""


class _EngineAction(argparse.Action):
    """``--engine CMD`` starts a new engine; ``--option``/``--name`` amend the last one."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        engines: list[dict[str, Any]] = getattr(namespace, "engines", None) or []
        text = str(values)
        if self.dest == "engines":
            try:
                command = shlex.split(text)
            except ValueError as exc:
                parser.error(f"--engine {text!r}: {exc}")
            if not command:
                parser.error("--engine needs a command")
            engines.append({"command": command, "options": [], "name": None})
        elif not engines:
            parser.error(f"{option_string} must follow the --engine it configures")
        elif self.dest == "engine_option":
            try:
                engines[-1]["options"].append(name_value(text))
            except argparse.ArgumentTypeError as exc:
                parser.error(str(exc))
        else:
            engines[-1]["name"] = text
        namespace.engines = engines


def configure(parser: argparse.ArgumentParser) -> None:
    engines = parser.add_argument_group("engines")
    engines.add_argument(
        "--engine",
        dest="engines",
        action=_EngineAction,
        metavar="CMD",
        help="an engine's command line (quoted; give it twice or more)",
    )
    engines.add_argument(
        "--option",
        dest="engine_option",
        action=_EngineAction,
        metavar="NAME=VALUE",
        help="a UCI option for the engine before it (repeatable)",
    )
    engines.add_argument(
        "--name",
        dest="engine_name",
        action=_EngineAction,
        metavar="NAME",
        help="display name of that engine",
    )
    engines.add_argument(
        "--each-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a UCI option for every engine (repeatable)",
    )
    games = parser.add_argument_group("games")
    games.add_argument(
        "--variant", default="chess", choices=sorted(GAMES), help="the game (UCI_Variant)"
    )
    games.add_argument(
        "--games", type=positive_int, default=2, help="games per pair of engines (default 2)"
    )
    games.add_argument("--tc", help="clock: [MOVES/]SECONDS[+INC], e.g. 10+0.1, 40/60, 1:00+1")
    games.add_argument("--movetime", type=positive_int, metavar="MS", help="fixed time per move")
    games.add_argument("--depth", type=positive_int, help="depth limit per move")
    games.add_argument("--nodes", type=positive_int, help="node limit per move")
    games.add_argument(
        "--timemargin",
        type=non_negative_int,
        default=DEFAULT_TIMEMARGIN_MS,
        metavar="MS",
        help=f"lateness forgiven before a loss on time (default {DEFAULT_TIMEMARGIN_MS})",
    )
    games.add_argument("--concurrency", type=positive_int, default=1, help="games at once")
    books = parser.add_argument_group("openings")
    books.add_argument("--openings", metavar="FILE", help="EPD/FEN lines or PGN games")
    books.add_argument(
        "--openings-order",
        choices=[order.value for order in OpeningOrder],
        default=OpeningOrder.SEQUENTIAL.value,
    )
    books.add_argument("--openings-start", type=positive_int, default=1, metavar="N")
    books.add_argument(
        "--openings-plies", type=non_negative_int, metavar="N", help="cut PGN openings"
    )
    books.add_argument("--seed", type=int, default=0, help="seed for --openings-order random")
    adjudication = parser.add_argument_group("adjudication")
    adjudication.add_argument(
        "--draw", nargs="+", metavar="KEY=VALUE", help="movenumber=N movecount=N score=CP"
    )
    adjudication.add_argument(
        "--resign",
        nargs="+",
        metavar="KEY=VALUE",
        help="movecount=N score=CP [twosided=true]",
    )
    adjudication.add_argument("--maxmoves", type=positive_int, metavar="N", help="draw after N")
    adjudication.add_argument("--tb", metavar="DIR", help="Syzygy tablebases (chess)")
    output = parser.add_argument_group("output")
    output.add_argument(
        "--sprt", nargs="+", metavar="KEY=VALUE", help="elo0=0 elo1=10 alpha=0.05 beta=0.05"
    )
    output.add_argument("--pgn", metavar="FILE", help="append the games to FILE")
    output.add_argument("--json", metavar="FILE", help="write the results as JSON")
    output.add_argument("--event", default="Brudno match", help="PGN Event tag")
    output.add_argument(
        "--report-every",
        type=non_negative_int,
        default=10,
        metavar="N",
        help="print the score every N games (0: never)",
    )
    output.add_argument("--quiet", action="store_true", help="no progress on stderr")


def settings_from_args(args: argparse.Namespace) -> MatchSettings:
    """Everything the command line says, checked (raises MatchError)."""
    try:
        each = [name_value(text) for text in args.each_option]
    except argparse.ArgumentTypeError as exc:
        raise MatchError(str(exc)) from None
    engines = tuple(
        EngineConfig(
            tuple(spec["command"]),
            tuple(each) + tuple(spec["options"]),
            spec["name"],
        )
        for spec in (getattr(args, "engines", None) or [])
    )
    try:
        tc = TimeControl.parse(args.tc) if args.tc else None
        draw = DrawRule.parse(args.draw) if args.draw else None
        resign = ResignRule.parse(args.resign) if args.resign else None
        sprt = Sprt.parse(args.sprt) if args.sprt else None
    except ValueError as exc:
        raise MatchError(str(exc)) from None
    if args.openings:
        try:
            openings = tuple(
                load_openings(
                    args.openings,
                    (args.games + 1) // 2,
                    OpeningSelection(
                        variant=args.variant,
                        order=args.openings_order,
                        start=args.openings_start,
                        seed=args.seed,
                        plies=args.openings_plies,
                    ),
                )
            )
        except OpeningError as exc:
            raise MatchError(str(exc)) from None
    else:
        openings = (START_POSITION,)
    return MatchSettings(
        engines=engines,
        games=args.games,
        variant=args.variant,
        tc=tc,
        movetime_ms=args.movetime,
        depth=args.depth,
        nodes=args.nodes,
        timemargin_ms=args.timemargin,
        openings=openings,
        concurrency=args.concurrency,
        draw=draw,
        resign=resign,
        maxmoves=args.maxmoves,
        tablebase=args.tb,
        sprt=sprt,
        event=args.event,
        report_every=args.report_every,
    )


async def run_match(
    settings: MatchSettings, *, pgn_path: str | None = None, progress: TextIO | None = sys.stderr
) -> MatchResult:
    """Play the match (Ctrl-C / SIGTERM interrupt it cleanly) and return the result."""
    with contextlib.ExitStack() as stack:
        pgn = None
        if pgn_path is not None:
            try:
                pgn = stack.enter_context(Path(pgn_path).open("a", encoding="utf-8"))
            except OSError as exc:
                raise MatchError(f"cannot write {pgn_path}: {exc}") from None
        match = Match(settings, pgn=pgn, progress=progress)
        with handling_signals(match.interrupt):
            return await match.run()


def report_lines(result: MatchResult, settings: MatchSettings) -> list[str]:
    """The final results (stdout)."""
    names = result.names
    out = [
        f"Match of {len(names)} engines, {settings.variant}, {settings.limits_text()}: "
        f"{result.games} games in {result.elapsed:.1f} s"
        + (" (interrupted)" if result.interrupted else "")
    ]
    for stats in result.pairs.values():
        out += stats.lines(names, settings.sprt)
    if len(names) >= _STANDINGS_FROM:
        out.append("Standings:")
        for rank, (index, points, games) in enumerate(result.standings(), 1):
            pct = 100 * points / games if games else 0.0
            out.append(f"  {rank}. {names[index]}: {points:g}/{games} ({pct:.1f}%)")
    for name, errors in zip(names, result.errors, strict=True):
        out.append(f"{name}: {errors.text()}")
    return out


def result_json(result: MatchResult, sprt: Sprt | None) -> dict[str, Any]:
    """``--json``'s object: per engine its faults, per pair the counts and statistics."""
    pairs = []
    for stats in result.pairs.values():
        estimate = elo_estimate(stats.wins, stats.draws, stats.losses)
        entry: dict[str, Any] = {
            "first": result.names[stats.first],
            "second": result.names[stats.second],
            "games": stats.games,
            "wins": stats.wins,
            "draws": stats.draws,
            "losses": stats.losses,
            "score": stats.score,
            "elo": _finite(estimate.elo),
            "elo_lower": _finite(estimate.lower),
            "elo_upper": _finite(estimate.upper),
            "los": los(stats.wins, stats.losses),
            "ptnml": list(stats.ptnml),
        }
        if sprt is not None:
            state = stats.sprt_state(sprt)
            entry["sprt"] = {
                "elo0": sprt.elo0,
                "elo1": sprt.elo1,
                "alpha": sprt.alpha,
                "beta": sprt.beta,
                "model": state.model.value,
                "llr": state.llr,
                "lower": state.lower,
                "upper": state.upper,
                "decision": state.decision.value,
            }
        pairs.append(entry)
    return {
        "engines": [
            {
                "name": name,
                "time_losses": errors.time_losses,
                "illegal_moves": errors.illegal_moves,
                "crashes": errors.crashes,
            }
            for name, errors in zip(result.names, result.errors, strict=True)
        ],
        "pairs": pairs,
        "games": result.games,
        "interrupted": result.interrupted,
        "seconds": round(result.elapsed, 3),
    }


def _finite(value: float) -> float | None:
    """JSON has no infinity: an Elo of ±inf (a score of 0 or 100%) is written as null."""
    return value if math.isfinite(value) else None


def run(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
        result = asyncio.run(
            run_match(settings, pgn_path=args.pgn, progress=None if args.quiet else sys.stderr)
        )
    except MatchError as exc:
        print(f"brudno match: {exc}", file=sys.stderr)
        return 2
    for line in report_lines(result, settings):
        print(line)
    if args.json:
        try:
            Path(args.json).write_text(
                json.dumps(result_json(result, settings.sprt), indent=2) + "\n", encoding="utf-8"
            )
        except OSError as exc:
            print(f"brudno match: cannot write {args.json}: {exc}", file=sys.stderr)
            return 2
    return 130 if result.interrupted else 0
