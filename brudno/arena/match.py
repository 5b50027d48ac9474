"""Playing a match: UCI engines against each other, game after game, several at once.

``brudno match``'s command line is :mod:`brudno.commands.match`; this module plays the games
it schedules (:mod:`brudno.arena.schedule`: every pair, each opening with both colours).  The
runner keeps the clock as cutechess and fastchess do (:mod:`brudno.arena.clock`): a move later
than the time left (or the move time) plus ``--timemargin`` loses on time and is not played;
an illegal move or none loses; an engine that exits loses the game and is restarted.  Games
end by the rules (:mod:`brudno.arena.referee`) or by optional adjudication
(:mod:`brudno.arena.adjudication`: draw, resign, move cap, Syzygy tables).  ``--pgn`` appends
each game as it finishes.  With ``--sprt`` no game is scheduled once the test decides (running
ones finish and count); an interrupt stops at once and the finished games are the result
(:mod:`brudno.arena.results`).

The rules in full (clock, adjudication, PGN tags): docs/development.md, *Match rules and
statistics*.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import sys
import time
from collections.abc import Sequence
from typing import TextIO

import chess.syzygy

from brudno.arena.adjudication import Adjudicator, max_moves_outcome, tablebase_outcome
from brudno.arena.clock import GameClock
from brudno.arena.players import (
    EngineCrashError,
    EngineIllegalMoveError,
    EngineStartError,
    EngineTimeoutError,
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
from brudno.arena.results import Fault, GameRecord, MatchResult, PairStats
from brudno.arena.schedule import GameJob, schedule
from brudno.arena.settings import MatchError, MatchSettings
from brudno.arena.stats import SprtDecision
from engine.game import GameError, IllegalMoveError

__all__ = ["Match"]


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
        self.result = MatchResult.empty(len(settings.engines))
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
        clock = GameClock(
            settings.tc,
            movetime_ms=settings.movetime_ms,
            depth=settings.depth,
            nodes=settings.nodes,
            timemargin_ms=settings.timemargin_ms,
        )
        adjudicator = Adjudicator(settings.draw, settings.resign)
        outcome: Outcome | None = None
        fault: tuple[int, Fault] | None = None
        forfeit = await self._new_game(players, indices)
        if forfeit is not None:
            outcome, fault = forfeit

        plies = 0
        while outcome is None:
            outcome = referee.outcome() or self._rules_adjudication(referee)
            if outcome is not None:
                break
            side = referee.turn
            try:
                reply = await players[side].go(
                    referee.position(), clock.limits(side), clock.timeout(side)
                )
            except PlayerError as exc:
                outcome, fault = self._fault_outcome(side, exc, indices)
                if isinstance(exc, EngineTimeoutError) and not await players[side].recover():
                    await players[side].close()
                break
            if clock.is_late(side, reply.elapsed):
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
            clock.charge(side, reply.elapsed)
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

    async def _new_game(
        self, players: tuple[Player, Player], indices: tuple[int, int]
    ) -> tuple[Outcome, tuple[int, Fault]] | None:
        """Tell both engines a game starts; the forfeit if one of them fails to answer."""
        for side in (0, 1):
            try:
                await players[side].new_game()
            except PlayerError as exc:
                # Outside the clock a silent engine is a stalled connection, not a time loss.
                failure = exc if isinstance(exc, EngineCrashError) else PlayerError(str(exc))
                forfeit = self._fault_outcome(side, failure, indices)
                await players[side].close()
                return forfeit
        return None

    def _fault_outcome(
        self, side: int, exc: PlayerError, indices: tuple[int, int]
    ) -> tuple[Outcome, tuple[int, Fault]]:
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
        outcome = max_moves_outcome(referee.fullmove, self.settings.maxmoves)
        if outcome is not None:
            return outcome
        if self._tablebase is not None and isinstance(referee, ChessReferee):
            return tablebase_outcome(self._tablebase, referee.board)
        return None

    # -- bookkeeping ---------------------------------------------------------------------
    def _record(self, record: GameRecord) -> None:
        result = self.result
        stats = result.add(record)
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
