"""The tally of a match: each game's record, W/D/L and pair counts per pair of engines, the
faults per engine, and the lines that report them.

The runner adds each finished game here (:meth:`MatchResult.add`); the numbers the lines
show (Elo, LOS, SPRT) are :mod:`brudno.arena.stats`' pure functions of these counts.  The
lines serve both the progress on stderr during the match and the report at its end.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from brudno.arena.referee import Outcome
from brudno.arena.schedule import GameJob
from brudno.arena.stats import (
    Sprt,
    SprtState,
    elo_estimate,
    elo_estimate_pentanomial,
    los,
)

__all__ = [
    "EngineErrors",
    "Fault",
    "GameRecord",
    "MatchResult",
    "PairStats",
    "sprt_line",
]


class Fault(enum.StrEnum):
    """What an engine did wrong to lose a game (the per-engine counters)."""

    TIME = "time"
    ILLEGAL = "illegal"
    CRASH = "crash"


@dataclass(frozen=True, slots=True)
class GameRecord:
    job: GameJob
    outcome: Outcome
    plies: int
    fault: tuple[int, Fault] | None
    """(engine index, what it did) when the game was lost by a fault, else None."""
    pgn: str


@dataclass(slots=True)
class EngineErrors:
    time_losses: int = 0
    illegal_moves: int = 0
    crashes: int = 0

    def add(self, fault: Fault) -> None:
        match fault:
            case Fault.TIME:
                self.time_losses += 1
            case Fault.ILLEGAL:
                self.illegal_moves += 1
            case Fault.CRASH:
                self.crashes += 1

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
    _open_pairs: dict[Hashable, float] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    def add(self, job: GameJob, outcome: Outcome) -> None:
        self.record(job.pair, outcome.white_points, first_white=job.white == self.first)

    def record(self, pair: Hashable, white_points: float, *, first_white: bool) -> None:
        """One game: White's points, whether ``first`` had White, and the pair it belongs to
        (the two games of an opening with colours swapped); a pair's second game adds the
        pair to the pentanomial counts."""
        points = white_points if first_white else 1.0 - white_points
        if points == 1.0:
            self.wins += 1
        elif points == 0.0:
            self.losses += 1
        else:
            self.draws += 1
        self.white_points += white_points
        partner = self._open_pairs.pop(pair, None)
        if partner is None:
            self._open_pairs[pair] = points
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

    @classmethod
    def empty(cls, engines: int) -> MatchResult:
        """Nothing played yet between ``engines`` engines (their names come when they start)."""
        return cls(
            names=[""] * engines,
            pairs={(a, b): PairStats(a, b) for a, b in itertools.combinations(range(engines), 2)},
            errors=[EngineErrors() for _ in range(engines)],
        )

    def add(self, record: GameRecord) -> PairStats:
        """Count a finished game; returns the tally of the pair that played it."""
        job = record.job
        stats = self.pairs[(min(job.white, job.black), max(job.white, job.black))]
        stats.add(job, record.outcome)
        self.games += 1
        if record.fault is not None:
            index, fault = record.fault
            self.errors[index].add(fault)
        return stats

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
