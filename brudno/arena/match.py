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

``--option`` and ``--name`` apply to the ``--engine`` before them.  With more than two
engines every pair plays (a round robin) and ``--games`` is per pair.  Each opening is played
twice, once with each engine as white; without ``--openings`` every pair starts from the
standard position.

The clock is kept by the runner, as cutechess and fastchess keep it: each side has its time
left; an engine is told both clocks (``wtime``/``btime``, increments, ``movestogo``), the time
from sending ``go`` to reading ``bestmove`` is charged to it, the increment is added after the
move, and a move that arrives later than the time left plus ``--timemargin`` is a loss on time
(it is not played; the runner stops waiting at that moment).  With ``--movetime`` a move later
than the move time plus the margin is a loss on time too.  An illegal move, or none, loses;
an engine that exits or closes its output loses the game and is restarted for the next one.
These are counted per engine and printed with the results.

Games end by the rules (checkmate, stalemate, insufficient material, third repetition, fifty
moves for chess; the game adapter's own rules for other variants) or by optional adjudication,
checked after every move with the engine's last reported score from its own point of view (a
mate score counts as beyond any threshold):

* ``--draw movenumber=N movecount=M score=S``: from move N on, a draw once both engines'
  scores have stayed within S centipawns of zero for M consecutive moves each (2M plies);
* ``--resign movecount=M score=S``: an engine loses once its own score has been S or more
  centipawns below zero for M consecutive moves (``twosided=true``: and its opponent's at
  least S above zero for its last M moves);
* ``--maxmoves N``: a draw when move N+1 would start;
* ``--tb DIR``: chess positions that Syzygy tables in DIR cover are decided by the tables
  (cursed wins and blessed losses are draws, as the fifty-move rule makes them).

``--pgn FILE`` appends each game as it finishes, with the tags Event, Site, Date, Round (the
game's number in the schedule), White, Black, Result, Variant (not for chess), FEN and SetUp
(when the opening is a position), TimeControl, Termination (``normal``, ``time forfeit``,
``rules infraction``, ``abandoned``, ``adjudication``), PlyCount, GameStartTime,
GameDuration and OpeningSource (book file and entry); book moves carry ``{book}``, engine
moves ``{score/depth time}``, and the last comment says why the game ended.

Progress goes to stderr (a line per finished game, the score every ``--report-every``
games); the results go to stdout: W/D/L and score per pair, the Elo difference with its 95%
interval (logistic model, normal approximation: :mod:`brudno.arena.stats`), LOS, the pentanomial
pair counts and the SPRT state, and per engine the time losses, illegal moves and crashes.
With ``--sprt`` (two engines) the match stops scheduling games once the test decides; games
already running finish and count.  Ctrl-C stops the match and prints what was played.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import itertools
import json
import math
import platform
import re
import shlex
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import chess
import chess.syzygy

from brudno.arena.openings import Opening, OpeningError, load_openings
from brudno.arena.players import (
    EngineConfig,
    EngineCrashError,
    EngineIllegalMoveError,
    EngineStartError,
    EngineTimeoutError,
    GoLimits,
    MoveReply,
    Player,
    PlayerError,
    start_player,
)
from brudno.arena.referee import (
    COLOUR_NAMES,
    ChessReferee,
    Outcome,
    Referee,
    Termination,
    format_pgn,
    make_referee,
)
from brudno.arena.stats import (
    Sprt,
    SprtDecision,
    SprtState,
    elo_estimate,
    elo_estimate_pentanomial,
    los,
)
from brudno.argtypes import non_negative_int, positive_int
from engine.game import GameError, IllegalMoveError
from games.registry import GAMES

__all__ = [
    "DrawRule",
    "EngineErrors",
    "GameJob",
    "GameRecord",
    "Match",
    "MatchError",
    "MatchResult",
    "MatchSettings",
    "PairStats",
    "ResignRule",
    "TimeControl",
    "configure",
    "run",
    "schedule",
]

DEFAULT_TIMEMARGIN_MS = 50


class MatchError(ValueError):
    """A match that cannot be set up: bad arguments, an engine that does not start."""


# -- time control ----------------------------------------------------------------------------
_TC_RE = re.compile(
    r"^(?:(?P<moves>\d+)/)?(?P<base>(?:\d+:)?\d+(?:\.\d+)?)(?:\+(?P<inc>\d+(?:\.\d+)?))?$"
)


@dataclass(frozen=True, slots=True)
class TimeControl:
    """``[MOVES/]BASE[+INC]``: BASE seconds (or ``M:SS``) for every MOVES moves (or for the
    whole game), plus INC seconds after each move; kept in milliseconds."""

    base_ms: int
    inc_ms: int = 0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        match = _TC_RE.match(text.strip())
        if match is None:
            raise ValueError(f"time control must look like 10+0.1, 40/60 or 1:30+1, not {text!r}")
        base_text = match["base"]
        minutes, _, seconds = base_text.rpartition(":")
        base = float(seconds) + 60.0 * float(minutes or 0)
        moves = int(match["moves"]) if match["moves"] else None
        if moves == 0:
            raise ValueError("the number of moves per period must be at least 1")
        inc = float(match["inc"] or 0)
        if base <= 0:
            raise ValueError(f"the base time must be positive: {text!r}")
        return cls(round(base * 1000), round(inc * 1000), moves)

    def text(self) -> str:
        """The PGN TimeControl form: ``40/60``, ``10+0.1``, ``300``."""
        base = _seconds_text(self.base_ms)
        out = f"{self.moves}/{base}" if self.moves else base
        return f"{out}+{_seconds_text(self.inc_ms)}" if self.inc_ms else out


def _seconds_text(ms: int) -> str:
    return f"{ms / 1000:g}"


# -- adjudication ----------------------------------------------------------------------------
def _rule_words(words: Sequence[str], names: Sequence[str], what: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or name not in names:
            raise ValueError(f"{what}: expected {'=, '.join(names)}=, got {word!r}")
        values[name] = value
    return values


def _int_field(values: dict[str, str], name: str, what: str, minimum: int = 0) -> int:
    try:
        value = int(values[name])
    except KeyError:
        raise ValueError(f"{what} needs {name}=") from None
    except ValueError:
        raise ValueError(f"{what}: {name} must be an integer, not {values[name]!r}") from None
    if value < minimum:
        raise ValueError(f"{what}: {name} must be at least {minimum}")
    return value


@dataclass(frozen=True, slots=True)
class DrawRule:
    movenumber: int
    movecount: int
    score: int

    @classmethod
    def parse(cls, words: Sequence[str]) -> DrawRule:
        values = _rule_words(words, ("movenumber", "movecount", "score"), "--draw")
        return cls(
            _int_field(values, "movenumber", "--draw"),
            _int_field(values, "movecount", "--draw", 1),
            _int_field(values, "score", "--draw"),
        )


@dataclass(frozen=True, slots=True)
class ResignRule:
    movecount: int
    score: int
    twosided: bool = False

    @classmethod
    def parse(cls, words: Sequence[str]) -> ResignRule:
        values = _rule_words(words, ("movecount", "score", "twosided"), "--resign")
        twosided = values.get("twosided", "false").lower()
        if twosided not in ("true", "false"):
            raise ValueError(f"--resign: twosided must be true or false, not {twosided!r}")
        return cls(
            _int_field(values, "movecount", "--resign", 1),
            _int_field(values, "score", "--resign", 1),
            twosided == "true",
        )


def _reply_score(reply: MoveReply) -> float | None:
    """The mover's score in centipawns; a mate is ±inf (beyond every threshold)."""
    if reply.mate is not None:
        return math.inf if reply.mate > 0 else -math.inf
    return None if reply.cp is None else float(reply.cp)


class Adjudicator:
    """The optional score-based rules, fed one engine move at a time."""

    def __init__(self, draw: DrawRule | None, resign: ResignRule | None) -> None:
        self._draw = draw
        self._resign = resign
        self._quiet_plies = 0
        self._losing = [0, 0]
        self._winning = [0, 0]

    def after_move(self, side: int, reply: MoveReply, fullmove: int) -> Outcome | None:
        """Judge after ``side`` moved with ``reply``; ``fullmove`` is the move number now."""
        score = _reply_score(reply)
        draw = self._draw
        if draw is not None:
            within = score is not None and abs(score) <= draw.score
            self._quiet_plies = self._quiet_plies + 1 if within else 0
            if fullmove >= draw.movenumber and self._quiet_plies >= 2 * draw.movecount:
                return Outcome.draw(Termination.ADJUDICATION, "Draw by adjudication")
        resign = self._resign
        if resign is not None:
            losing = score is not None and score <= -resign.score
            winning = score is not None and score >= resign.score
            self._losing[side] = self._losing[side] + 1 if losing else 0
            self._winning[side] = self._winning[side] + 1 if winning else 0
            other = 1 - side
            if self._losing[side] >= resign.movecount and (
                not resign.twosided or self._winning[other] >= resign.movecount
            ):
                return Outcome.win(
                    other, Termination.ADJUDICATION, f"{COLOUR_NAMES[other]} wins by adjudication"
                )
        return None


def _tablebase_outcome(tablebase: chess.syzygy.Tablebase, board: chess.Board) -> Outcome | None:
    if chess.popcount(board.occupied) > 7 or board.castling_rights:
        return None
    try:
        wdl = tablebase.probe_wdl(board)
    except (KeyError, IndexError, OSError, chess.syzygy.MissingTableError):
        return None
    side = 0 if board.turn == chess.WHITE else 1
    if wdl == 2:
        winner = side
    elif wdl == -2:
        winner = 1 - side
    else:
        return Outcome.draw(Termination.ADJUDICATION, "Draw by adjudication: SyzygyTB")
    return Outcome.win(
        winner, Termination.ADJUDICATION, f"{COLOUR_NAMES[winner]} wins by adjudication: SyzygyTB"
    )


# -- schedule, records, statistics ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play.  ``pair`` is shared by the two games of an opening between the same
    two engines (colours swapped), which is what the pentanomial statistics count."""

    number: int
    white: int
    black: int
    opening: Opening
    pair: int


def schedule(engines: int, games: int, openings: Sequence[Opening]) -> list[GameJob]:
    """Every pair of engines plays ``games`` games: opening k is played by each pair twice
    (the lower-numbered engine white first), openings in the given order, pairs interleaved
    so that a partial match is balanced across pairs."""
    if engines < 2:
        raise MatchError("a match needs at least two engines")
    if not openings:
        raise MatchError("no openings")
    pairings = list(itertools.combinations(range(engines), 2))
    jobs: list[GameJob] = []
    rounds = (games + 1) // 2
    pair_id = 0
    for k in range(rounds):
        opening = openings[k % len(openings)]
        for a, b in pairings:
            colours = [(a, b), (b, a)] if 2 * k + 1 < games else [(a, b)]
            for white, black in colours:
                jobs.append(GameJob(len(jobs) + 1, white, black, opening, pair_id))
            pair_id += 1
    return jobs


class Fault:
    """What an engine did wrong to lose a game (the per-engine counters)."""

    TIME = "time"
    ILLEGAL = "illegal"
    CRASH = "crash"


@dataclass(frozen=True, slots=True)
class GameRecord:
    job: GameJob
    outcome: Outcome
    plies: int
    fault: tuple[int, str] | None
    """(engine index, Fault kind) when the game was lost by a fault, else None."""
    pgn: str


@dataclass(slots=True)
class EngineErrors:
    time_losses: int = 0
    illegal_moves: int = 0
    crashes: int = 0

    def text(self) -> str:
        return (
            f"{self.time_losses} time losses, {self.illegal_moves} illegal moves, "
            f"{self.crashes} crashes"
        )


@dataclass(slots=True)
class PairStats:
    """Results of engine ``first`` against engine ``second``, from ``first``'s point of view."""

    first: int
    second: int
    wins: int = 0
    draws: int = 0
    losses: int = 0
    white_points: float = 0.0
    ptnml: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    _open_pairs: dict[int, float] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    def add(self, job: GameJob, outcome: Outcome) -> None:
        points = outcome.white_points if job.white == self.first else 1.0 - outcome.white_points
        if points == 1.0:
            self.wins += 1
        elif points == 0.0:
            self.losses += 1
        else:
            self.draws += 1
        self.white_points += outcome.white_points
        partner = self._open_pairs.pop(job.pair, None)
        if partner is None:
            self._open_pairs[job.pair] = points
        else:
            self.ptnml[round(2 * (partner + points))] += 1

    def lines(self, names: Sequence[str], sprt: Sprt | None) -> list[str]:
        a, b = names[self.first], names[self.second]
        n = self.games
        out = [
            f"{a} vs {b}: {n} games, W {self.wins} D {self.draws} L {self.losses}, "
            f"score {100 * self.score:.1f}%",
        ]
        if n:
            estimate = elo_estimate(self.wins, self.draws, self.losses)
            out.append(
                f"Elo difference: {estimate.text()} (95%), "
                f"LOS: {100 * los(self.wins, self.losses):.1f}%, "
                f"draw ratio: {100 * self.draws / n:.1f}%, white score: "
                f"{100 * self.white_points / n:.1f}%"
            )
        pairs = sum(self.ptnml)
        if pairs:
            pent = elo_estimate_pentanomial(self.ptnml)
            out.append(
                f"Ptnml(0-2): [{', '.join(map(str, self.ptnml))}], pair Elo {pent.text()} (95%)"
            )
        if sprt is not None:
            out.append(sprt_line(sprt, self.sprt_state(sprt)))
        return out

    def sprt_state(self, sprt: Sprt) -> SprtState:
        """Pentanomial once there are pairs (the test's proper form), trinomial before."""
        if sum(self.ptnml):
            return sprt.pentanomial(self.ptnml)
        return sprt.trinomial(self.wins, self.draws, self.losses)


def sprt_line(sprt: Sprt, state: SprtState) -> str:
    return (
        f"SPRT ({sprt.text()}, {state.model}): LLR {state.llr:.2f} "
        f"({100 * state.progress:.1f}%), bounds [{state.lower:.2f}, {state.upper:.2f}]: "
        f"{state.decision.value}"
    )


@dataclass(slots=True)
class MatchResult:
    names: list[str]
    pairs: dict[tuple[int, int], PairStats]
    errors: list[EngineErrors]
    games: int = 0
    interrupted: bool = False
    sprt: SprtState | None = None
    elapsed: float = 0.0

    def standings(self) -> list[tuple[int, float, int]]:
        """(engine, points, games) best first, for round robins."""
        points = [0.0] * len(self.names)
        games = [0] * len(self.names)
        for stats in self.pairs.values():
            points[stats.first] += stats.wins + 0.5 * stats.draws
            points[stats.second] += stats.losses + 0.5 * stats.draws
            games[stats.first] += stats.games
            games[stats.second] += stats.games
        order = sorted(range(len(self.names)), key=lambda i: -points[i] / max(1, games[i]))
        return [(i, points[i], games[i]) for i in order]

    def to_json(self, sprt: Sprt | None) -> dict[str, Any]:
        pairs = []
        for stats in self.pairs.values():
            estimate = elo_estimate(stats.wins, stats.draws, stats.losses)
            entry: dict[str, Any] = {
                "first": self.names[stats.first],
                "second": self.names[stats.second],
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
                    "model": state.model,
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
                for name, errors in zip(self.names, self.errors, strict=True)
            ],
            "pairs": pairs,
            "games": self.games,
            "interrupted": self.interrupted,
            "seconds": round(self.elapsed, 3),
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


# -- the match -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class MatchSettings:
    engines: tuple[EngineConfig, ...]
    games: int = 2
    variant: str = "chess"
    tc: TimeControl | None = None
    movetime_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None
    timemargin_ms: int = DEFAULT_TIMEMARGIN_MS
    openings: tuple[Opening, ...] = (Opening(None, (), "start position"),)
    concurrency: int = 1
    draw: DrawRule | None = None
    resign: ResignRule | None = None
    maxmoves: int | None = None
    tablebase: str | None = None
    sprt: Sprt | None = None
    event: str = "Brudno match"
    site: str = field(default_factory=platform.node)
    report_every: int = 10

    def __post_init__(self) -> None:
        if len(self.engines) < 2:
            raise MatchError("give --engine at least twice")
        if self.games < 1:
            raise MatchError("--games must be at least 1")
        if self.concurrency < 1:
            raise MatchError("--concurrency must be at least 1")
        if (
            self.tc is None
            and self.movetime_ms is None
            and self.depth is None
            and (self.nodes is None)
        ):
            raise MatchError("give a limit: --tc, --movetime, --depth or --nodes")
        if self.tc is not None and self.movetime_ms is not None:
            raise MatchError("--tc and --movetime exclude each other")
        if self.sprt is not None and len(self.engines) != 2:
            raise MatchError("--sprt compares exactly two engines")
        if self.variant not in GAMES:
            raise MatchError(f"unknown variant {self.variant!r} (known: {', '.join(GAMES)})")
        if self.tablebase is not None and self.variant != "chess":
            raise MatchError("--tb adjudicates chess only")

    def time_control_tag(self) -> str:
        """PGN TimeControl: the clock, ``1/S`` for a fixed time per move, ``-`` for none."""
        if self.tc is not None:
            return self.tc.text()
        if self.movetime_ms is not None:
            return f"1/{_seconds_text(self.movetime_ms)}"
        return "-"

    def limits_text(self) -> str:
        parts = []
        if self.tc is not None:
            parts.append(f"tc {self.tc.text()}")
        if self.movetime_ms is not None:
            parts.append(f"movetime {self.movetime_ms} ms")
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes}")
        return ", ".join(parts)


class Match:
    """Runs a match: ``await Match(settings, ...).run()`` returns the :class:`MatchResult`.

    Workers (``concurrency`` of them) take games from the schedule in order; each keeps its
    own engine processes, reused from game to game (``ucinewgame`` in between) and replaced
    after a crash or a hang.  Results are recorded on the event loop's one thread, so the
    statistics, the PGN file and the progress lines need no locking.
    """

    def __init__(
        self,
        settings: MatchSettings,
        *,
        pgn: TextIO | None = None,
        progress: TextIO | None = sys.stderr,
    ) -> None:
        self.settings = settings
        self._pgn = pgn
        self._progress = progress
        self._jobs = schedule(len(settings.engines), settings.games, settings.openings)
        self._next = 0
        self._stopping = False
        self._tablebase: chess.syzygy.Tablebase | None = None
        n = len(settings.engines)
        self.result = MatchResult(
            names=[""] * n,
            pairs={(a, b): PairStats(a, b) for a, b in itertools.combinations(range(n), 2)},
            errors=[EngineErrors() for _ in range(n)],
        )
        self._spare: dict[int, Player] = {}
        self._workers: list[asyncio.Task[None]] = []

    @property
    def jobs(self) -> list[GameJob]:
        return self._jobs

    def stop(self) -> None:
        """Schedule no more games (games being played finish)."""
        self._stopping = True

    def interrupt(self) -> None:
        """Stop now: games being played are abandoned and not counted."""
        self._stopping = True
        self.result.interrupted = True
        for task in self._workers:
            task.cancel()

    async def run(self) -> MatchResult:
        started = time.monotonic()
        settings = self.settings
        if settings.tablebase is not None:
            try:
                self._tablebase = chess.syzygy.open_tablebase(settings.tablebase)
            except OSError as exc:
                raise MatchError(f"cannot open tablebases in {settings.tablebase}: {exc}") from None
        try:
            await self._start_engines()
            try:
                async with asyncio.TaskGroup() as group:
                    count = min(settings.concurrency, len(self._jobs))
                    self._workers = [
                        group.create_task(self._worker(i), name=f"match-worker-{i}")
                        for i in range(count)
                    ]
            except* MatchError as errors:  # an engine that cannot be restarted ends the match
                raise errors.exceptions[0] from None
        finally:
            for player in self._spare.values():
                await player.close()
            self._spare.clear()
            if self._tablebase is not None:
                self._tablebase.close()
            self.result.elapsed = time.monotonic() - started
        return self.result

    async def _start_engines(self) -> None:
        """Start each engine once before any game: a bad command or option stops the match
        here, and the ``id name`` answers name the players (made unique if two agree)."""
        names: list[str] = []
        for index, config in enumerate(self.settings.engines):
            try:
                player = await start_player(config, self.settings.variant)
            except EngineStartError as exc:
                raise MatchError(str(exc)) from None
            self._spare[index] = player
            names.append(_unique_name(player.name, names))
        self.result.names = names

    def _take_job(self) -> GameJob | None:
        if self._stopping or self._next >= len(self._jobs):
            return None
        job = self._jobs[self._next]
        self._next += 1
        return job

    async def _player(self, pool: dict[int, Player], index: int) -> Player:
        player = pool.get(index)
        if player is not None and player.alive:
            return player
        if player is not None:
            await player.close()
        spare = self._spare.pop(index, None)
        if spare is not None:
            pool[index] = spare
            return spare
        try:
            player = await start_player(self.settings.engines[index], self.settings.variant)
        except EngineStartError as exc:
            raise MatchError(f"cannot restart {self.result.names[index]}: {exc}") from None
        pool[index] = player
        return player

    async def _worker(self, worker: int) -> None:
        pool: dict[int, Player] = {}
        try:
            while (job := self._take_job()) is not None:
                white = await self._player(pool, job.white)
                black = await self._player(pool, job.black)
                record = await self._play(job, (white, black))
                self._record(record)
        finally:
            for player in pool.values():
                await player.close()

    # -- one game ------------------------------------------------------------------------
    async def _play(self, job: GameJob, players: tuple[Player, Player]) -> GameRecord:
        settings = self.settings
        indices = (job.white, job.black)
        names = self.result.names
        started_at = dt.datetime.now()
        started = time.monotonic()
        referee = make_referee(settings.variant, job.opening)
        comments: list[str | None] = ["book"] * len(referee.notation())
        tc = settings.tc
        clock = [float(tc.base_ms), float(tc.base_ms)] if tc else [0.0, 0.0]
        togo: list[int | None] = [tc.moves, tc.moves] if tc and tc.moves else [None, None]
        adjudicator = Adjudicator(settings.draw, settings.resign)
        outcome: Outcome | None = None
        fault: tuple[int, str] | None = None

        for side in (0, 1):
            try:
                await players[side].new_game()
            except PlayerError as exc:
                # Outside the clock a silent engine is a stalled connection, not a time loss.
                failure = exc if isinstance(exc, EngineCrashError) else PlayerError(str(exc))
                outcome, fault = self._fault_outcome(side, failure, indices)
                await players[side].close()
                break

        plies = 0
        while outcome is None:
            outcome = referee.outcome() or self._rules_adjudication(referee)
            if outcome is not None:
                break
            side = referee.turn
            limits = self._limits(clock, togo[side])
            timeout = self._timeout(clock[side])
            try:
                reply = await players[side].go(referee.position(), limits, timeout)
            except PlayerError as exc:
                outcome, fault = self._fault_outcome(side, exc, indices)
                if isinstance(exc, EngineTimeoutError) and not await players[side].recover():
                    await players[side].close()
                break
            late = self._late(reply.elapsed * 1000.0, clock[side])
            if late:
                outcome = Outcome.win(
                    1 - side, Termination.TIME_FORFEIT, f"{COLOUR_NAMES[side]} loses on time"
                )
                fault = (indices[side], Fault.TIME)
                break
            try:
                referee.play(reply.move)
            except (IllegalMoveError, GameError):
                outcome = Outcome.win(
                    1 - side,
                    Termination.RULES_INFRACTION,
                    f"{COLOUR_NAMES[side]} makes an illegal move: {reply.move}",
                )
                fault = (indices[side], Fault.ILLEGAL)
                break
            plies += 1
            if tc is not None:
                clock[side] = max(0.0, clock[side] - reply.elapsed * 1000.0) + tc.inc_ms
                moves_left = togo[side]
                if moves_left is not None:
                    moves_left -= 1
                    if moves_left == 0:
                        clock[side] += tc.base_ms
                        moves_left = tc.moves
                    togo[side] = moves_left
            comments.append(_move_comment(reply))
            outcome = adjudicator.after_move(side, reply, referee.fullmove)

        duration = time.monotonic() - started
        tags = [
            ("Event", settings.event),
            ("Site", settings.site or "?"),
            ("Date", started_at.strftime("%Y.%m.%d")),
            ("Round", str(job.number)),
            ("White", names[job.white]),
            ("Black", names[job.black]),
            ("Result", outcome.result),
        ]
        start_fen = referee.start_fen()
        if settings.variant != "chess":
            tags.append(("Variant", settings.variant))
        if start_fen is not None:
            tags += [("FEN", start_fen), ("SetUp", "1")]
        tags += [
            ("TimeControl", settings.time_control_tag()),
            ("Termination", outcome.termination),
            ("PlyCount", str(len(referee.notation()))),
            ("GameStartTime", started_at.isoformat(timespec="seconds")),
            ("GameDuration", _duration_text(duration)),
            ("OpeningSource", job.opening.label),
        ]
        pgn = format_pgn(tags, referee, comments, outcome.result, outcome.reason)
        return GameRecord(job, outcome, plies, fault, pgn)

    def _fault_outcome(
        self, side: int, exc: PlayerError, indices: tuple[int, int]
    ) -> tuple[Outcome, tuple[int, str]]:
        colour = COLOUR_NAMES[side]
        if isinstance(exc, EngineTimeoutError):
            reason = f"{colour} loses on time"
            termination, kind = Termination.TIME_FORFEIT, Fault.TIME
        elif isinstance(exc, EngineIllegalMoveError):
            reason = f"{colour} makes an illegal move: {exc.text}"
            termination, kind = Termination.RULES_INFRACTION, Fault.ILLEGAL
        else:  # EngineCrashError, or a stall outside the clock (ucinewgame)
            verb = "disconnects" if isinstance(exc, EngineCrashError) else "'s connection stalls"
            reason = f"{colour} {verb}".replace(" '", "'")
            termination, kind = Termination.ABANDONED, Fault.CRASH
        return Outcome.win(1 - side, termination, reason), (indices[side], kind)

    def _rules_adjudication(self, referee: Referee) -> Outcome | None:
        settings = self.settings
        if settings.maxmoves is not None and referee.fullmove > settings.maxmoves:
            return Outcome.draw(Termination.ADJUDICATION, "Draw by adjudication: maximum moves")
        if self._tablebase is not None and isinstance(referee, ChessReferee):
            return _tablebase_outcome(self._tablebase, referee.board)
        return None

    def _limits(self, clock: list[float], movestogo: int | None) -> GoLimits:
        settings = self.settings
        tc = settings.tc
        if tc is None:
            return GoLimits(
                movetime=settings.movetime_ms, depth=settings.depth, nodes=settings.nodes
            )
        inc = tc.inc_ms or None
        return GoLimits(
            wtime=round(clock[0]),
            btime=round(clock[1]),
            winc=inc,
            binc=inc,
            movestogo=movestogo,
            depth=settings.depth,
            nodes=settings.nodes,
        )

    def _allowed_ms(self, clock_ms: float) -> float | None:
        settings = self.settings
        if settings.tc is not None:
            return clock_ms + settings.timemargin_ms
        if settings.movetime_ms is not None:
            return settings.movetime_ms + settings.timemargin_ms
        return None

    def _timeout(self, clock_ms: float) -> float | None:
        allowed = self._allowed_ms(clock_ms)
        return None if allowed is None else allowed / 1000.0

    def _late(self, elapsed_ms: float, clock_ms: float) -> bool:
        allowed = self._allowed_ms(clock_ms)
        return allowed is not None and elapsed_ms > allowed

    # -- bookkeeping ---------------------------------------------------------------------
    def _record(self, record: GameRecord) -> None:
        job = record.job
        result = self.result
        key = (min(job.white, job.black), max(job.white, job.black))
        stats = result.pairs[key]
        stats.add(job, record.outcome)
        result.games += 1
        if record.fault is not None:
            index, kind = record.fault
            errors = result.errors[index]
            if kind == Fault.TIME:
                errors.time_losses += 1
            elif kind == Fault.ILLEGAL:
                errors.illegal_moves += 1
            else:
                errors.crashes += 1
        if self._pgn is not None:
            self._pgn.write(record.pgn + "\n")
            self._pgn.flush()
        sprt = self.settings.sprt
        if sprt is not None:
            state = stats.sprt_state(sprt)
            result.sprt = state
            if state.decision is not SprtDecision.CONTINUE and not self._stopping:
                self.stop()
                self._say(f"SPRT: {state.decision.value}; finishing the games in progress")
        self._report_game(record, stats)

    def _say(self, line: str) -> None:
        if self._progress is not None:
            print(line, file=self._progress, flush=True)

    def _report_game(self, record: GameRecord, stats: PairStats) -> None:
        if self._progress is None:
            return
        names = self.result.names
        job = record.job
        total = len(self._jobs)
        self._say(
            f"Game {job.number}/{total} {names[job.white]} vs {names[job.black]}: "
            f"{record.outcome.result} {{{record.outcome.reason}}} "
            f"[{self.result.games} finished]"
        )
        every = self.settings.report_every
        if every > 0 and (self.result.games % every == 0 or self.result.games == total):
            for line in stats.lines(names, self.settings.sprt):
                self._say(f"  {line}")


def _unique_name(name: str, taken: Sequence[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when an engine already has it."""
    if name not in taken:
        return name
    return next(f"{name} ({k})" for k in itertools.count(2) if f"{name} ({k})" not in taken)


def _move_comment(reply: MoveReply) -> str:
    """cutechess's per-move comment: ``+0.35/12 0.521s`` (score in pawns, depth, time)."""
    if reply.mate is not None:
        score = f"{'+' if reply.mate > 0 else '-'}M{abs(reply.mate)}"
    elif reply.cp is not None:
        score = f"{reply.cp / 100:+.2f}"
    else:
        score = None
    head = score if score is not None else ""
    if reply.depth is not None:
        head = f"{head}/{reply.depth}" if head else f"depth {reply.depth}"
    return f"{head} {reply.elapsed:.3f}s".strip()


def _duration_text(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


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
    if len(names) > 2:
        out.append("Standings:")
        for rank, (index, points, games) in enumerate(result.standings(), 1):
            pct = 100 * points / games if games else 0.0
            out.append(f"  {rank}. {names[index]}: {points:g}/{games} ({pct:.1f}%)")
    for name, errors in zip(names, result.errors, strict=True):
        out.append(f"{name}: {errors.text()}")
    return out


# -- command line ----------------------------------------------------------------------------
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
            engines[-1]["options"].append(_name_value(parser, text))
        else:
            engines[-1]["name"] = text
        namespace.engines = engines


def _name_value(parser: argparse.ArgumentParser, text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        parser.error(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()






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
    books.add_argument("--openings-order", choices=["sequential", "random"], default="sequential")
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
    each = [_split_option(text) for text in args.each_option]
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
                    variant=args.variant,
                    order=args.openings_order,
                    start=args.openings_start,
                    seed=args.seed,
                    plies=args.openings_plies,
                )
            )
        except OpeningError as exc:
            raise MatchError(str(exc)) from None
    else:
        openings = (Opening(None, (), "start position"),)
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


def _split_option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise MatchError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


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
        loop = asyncio.get_running_loop()
        handled = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, match.interrupt)
                handled.append(signum)
        try:
            return await match.run()
        finally:
            for signum in handled:
                loop.remove_signal_handler(signum)


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
                json.dumps(result.to_json(settings.sprt), indent=2) + "\n", encoding="utf-8"
            )
        except OSError as exc:
            print(f"brudno match: cannot write {args.json}: {exc}", file=sys.stderr)
            return 2
    return 130 if result.interrupted else 0
