"""Playing levels: weaker play that looks like a weaker player's, never slower.

A level is a number from 0 (weakest) up to, not including, :data:`FULL_STRENGTH` (the normal
search).  It caps the depth (:attr:`Skill.depth`; quiescence still resolves captures) and
reads its clock as :data:`TIME_SHARE` of the real one, so it never thinks longer than full
strength; and it draws one of the :data:`CANDIDATES` best root moves (MultiPV) with a
probability falling off exponentially with the score lost (:attr:`Skill.temperature`, in the
game's score unit), never one worse than :attr:`Skill.max_loss`: a mate it has seen, it plays.

The draw uses a :class:`random.Random` seeded by :attr:`Skill.seed` (reproducible) or by the
operating system.  A GUI that asked for one line sees one line, the played move's line comes
last, and ``ponder`` is the reply in that line.  :class:`EloScale` maps ``UCI_Elo`` to a level
by linear interpolation between measured points; only a measured range is declared.

Why, and the calibration: docs/playing.md, *Playing levels*.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.info import InfoCallback, SearchInfo, SearchResult
from engine.limits import Limits
from engine.score import value_of

__all__ = [
    "CANDIDATES",
    "FULL_STRENGTH",
    "EloScale",
    "Skill",
    "choose_line",
    "search_at_level",
]

FULL_STRENGTH = 20
"""``Skill Level`` 20 is the normal search (as Stockfish's scale, whose GUIs show 0..20)."""
CANDIDATES = 4
"""Root moves a level chooses among (the MultiPV it searches)."""
TIME_SHARE = 0.75
"""A level reads its clock as this share of the real one.  Its four-line iterations are
longer than full strength's one-line ones, so its last iteration overshoots the soft budget
further; without this, the top levels thought about 15% longer per move than full strength
at the same clock (``bench/calibrate_levels.py speed``)."""
MIN_POINTS = 2
"""An Elo scale is measured at two levels at least (one point gives no slope)."""


@dataclass(frozen=True, slots=True)
class Skill:
    """A playing level below full strength: ``0 <= level < FULL_STRENGTH`` (fractional
    levels interpolate, which is what an Elo scale between two measured points needs)."""

    level: float
    seed: int | None = None
    """Seeds the draw among the candidates (tests, reproducible games); ``None``: the
    operating system's entropy, a new game every time."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.level < FULL_STRENGTH:
            raise ValueError(f"a level is in [0, {FULL_STRENGTH}), not {self.level}")

    @property
    def depth(self) -> int:
        """The deepest iteration: 1 at levels 0-2, one more every three levels (7 at 18)."""
        return 1 + int(self.level) // 3

    @property
    def temperature(self) -> float:
        """How far apart (score units) two candidates' chances are ``e`` times apart."""
        return 10.0 + 6.0 * (FULL_STRENGTH - self.level)

    @property
    def max_loss(self) -> int:
        """A candidate scored this much below the best is never played."""
        return round(40 + 20 * (FULL_STRENGTH - self.level))

    def limits(self, limits: Limits) -> Limits:
        """``limits`` with this level's depth cap (a smaller ``go depth`` stays) and its clock
        read as :data:`TIME_SHARE` of the real one."""
        depth = self.depth if limits.depth is None else min(limits.depth, self.depth)
        return replace(
            limits,
            depth=depth,
            wtime=_share(limits.wtime),
            btime=_share(limits.btime),
            winc=_share(limits.winc),
            binc=_share(limits.binc),
            movetime=_share(limits.movetime),
        )


def _share(ms: int | None) -> int | None:
    """:data:`TIME_SHARE` of a time in milliseconds (``None``: not given, stays so)."""
    return None if ms is None else int(ms * TIME_SHARE)


def choose_line(lines: Sequence[SearchInfo], skill: Skill, rng: random.Random) -> int:
    """The index of the line to play among ``lines`` (best first, each with a score).

    Each line ``i`` has weight ``exp(-(best - score_i) / temperature)``; lines more than
    ``max_loss`` below the best have none.  The first line always has weight 1, so there is
    always a choice.
    """
    scores = [value_of(line.score) if line.score is not None else None for line in lines]
    top = scores[0]
    if top is None:
        return 0
    weights: list[float] = []
    for score in scores:
        loss = top - score if score is not None else skill.max_loss + 1
        weights.append(0.0 if loss > skill.max_loss else math.exp(-loss / skill.temperature))
    return rng.choices(range(len(lines)), weights=weights)[0]


Search = Callable[[Limits, int, InfoCallback], SearchResult]
"""``(limits, multipv, on_info) -> result``: the search a level weakens."""


def search_at_level(
    search: Search, limits: Limits, skill: Skill, *, multipv: int, on_info: InfoCallback
) -> SearchResult:
    """Search with ``skill``'s caps and :data:`CANDIDATES` lines, then play a drawn one.

    ``on_info`` sees the lines the caller asked for (``multipv``), then, when the drawn move
    is not the first line's, that move's line as line 1: the last line reported is the move
    played.  The result's ``best``, ``ponder``, ``score`` and ``pv`` are the drawn line's.
    """
    shown = max(1, multipv)

    def report(info: SearchInfo) -> None:
        if info.multipv <= shown or not info.pv:
            on_info(info)

    result = search(skill.limits(limits), max(shown, CANDIDATES), report)
    lines = tuple(line for line in result.lines if line.pv)
    if not lines or result.best is None:
        return result
    chosen = lines[choose_line(lines, skill, random.Random(skill.seed))]
    kept = tuple(line for line in result.lines if line.multipv <= shown)
    if chosen.pv[0] == result.best:
        return replace(result, lines=kept)
    played = replace(chosen, multipv=1)
    on_info(played)
    return replace(
        result,
        best=chosen.pv[0],
        ponder=chosen.pv[1] if len(chosen.pv) > 1 else None,
        score=chosen.score,
        pv=chosen.pv,
        lines=kept,
    )


@dataclass(frozen=True, slots=True)
class EloScale:
    """A game's ``UCI_Elo`` scale: ``(elo, level)`` points measured by matches, ascending in
    both; between two points the level is interpolated linearly, outside them clamped (the
    option's declared range is :attr:`lowest`..:attr:`highest`, so a GUI offers no more)."""

    points: tuple[tuple[int, float], ...]
    reference: str
    """Whose Elo scale the points were measured on (for the README and ``info string``)."""

    def __post_init__(self) -> None:
        if len(self.points) < MIN_POINTS:
            raise ValueError("an Elo scale needs at least two measured points")
        for (elo_a, level_a), (elo_b, level_b) in itertools.pairwise(self.points):
            if not (elo_a < elo_b and level_a < level_b):
                raise ValueError("Elo scale points must ascend in Elo and in level")
        if self.points[-1][1] >= FULL_STRENGTH:
            raise ValueError("an Elo scale's levels are below full strength")

    @property
    def lowest(self) -> int:
        return self.points[0][0]

    @property
    def highest(self) -> int:
        return self.points[-1][0]

    def skill(self, elo: int) -> Skill:
        """The level that plays at ``elo`` on this scale (clamped to the measured range)."""
        points = self.points
        if elo <= points[0][0]:
            return Skill(points[0][1])
        for (elo_a, level_a), (elo_b, level_b) in itertools.pairwise(points):
            if elo <= elo_b:
                return Skill(level_a + (level_b - level_a) * (elo - elo_a) / (elo_b - elo_a))
        return Skill(points[-1][1])
