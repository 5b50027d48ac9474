"""Playing levels: weaker play that looks like a weaker player's, never slower.

A level is a number from 0 (weakest) up to, not including, :data:`FULL_STRENGTH` (the normal
search).  Every step up searches more and draws less, so strength is monotone by construction:

- a node budget (:attr:`Skill.nodes`, per searched line) growing by :data:`NODE_GROWTH` a
  level from :data:`NODES_AT_ZERO`; a depth cap only at the bottom (:attr:`Skill.depth`);
  quiescence still resolves captures, and an iteration of depth 1 always completes;
- below :data:`DRAW_ENDS`, a draw among the :data:`CANDIDATES` best root moves (MultiPV, the
  budget times the lines) with a probability falling off exponentially with the score lost
  (:attr:`Skill.temperature`), never one worse than :attr:`Skill.max_loss`; both shrink
  linearly to nothing at :data:`DRAW_ENDS`, from where a level searches one line as full
  strength does.  A mate it has seen, it plays.

A level never thinks longer than full strength: the budget only shortens the search, and a
level that searches several lines reads its clock as :data:`TIME_SHARE` of the real one.
The draw uses a :class:`random.Random` seeded by :attr:`Skill.seed` and the candidate moves
(reproducible, new at every move) or by the operating system.  A GUI that asked for one line
sees one line, the played move's line comes last, and ``ponder`` is the reply in that line.
:class:`EloScale` maps ``UCI_Elo`` to a level by linear interpolation between measured
points; only a measured range is declared.

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
    "DRAW_ENDS",
    "FULL_STRENGTH",
    "MIN_POINTS",
    "NODES_AT_ZERO",
    "NODE_GROWTH",
    "EloScale",
    "Search",
    "Skill",
    "choose_line",
    "search_at_level",
]

FULL_STRENGTH = 20
"""``Skill Level`` 20 is the normal search (as Stockfish's scale, whose GUIs show 0..20)."""
CANDIDATES = 4
"""Root moves a level that draws chooses among (the MultiPV it searches)."""
DRAW_ENDS = 16.0
"""From this level up there is no draw: one line, the best move, as full strength."""
NODES_AT_ZERO = 400
"""Level 0's node budget per searched line (with its depth cap of 1 it rarely needs it)."""
NODE_GROWTH = 1.33
"""The budget's factor per level: level 19 gets about 90,000 nodes, near what full strength
searches a move at 10+0.1 (level 20 has no budget)."""
DEPTH_CAPS = (1, 1, 2, 2, 3, 3)
"""The deepest iteration of levels 0, 1, ... (the bottom only; above, the budget alone)."""
TEMPERATURE_AT_ZERO = 120.0
"""Level 0's temperature (score units); it falls linearly to 0 at :data:`DRAW_ENDS`."""
MAX_LOSS_AT_ZERO = 250.0
"""Level 0's largest loss a drawn move may have (below a minor piece: a piece the level sees
hanging it never gives away); it falls linearly to 0 at :data:`DRAW_ENDS`."""
TIME_SHARE = 0.75
"""A level that searches several lines reads its clock as this share of the real one: its
iterations are longer than full strength's one-line ones, so its last iteration overshoots
the soft budget further (without this, the old depth-capped levels thought about 15% longer
per move than full strength at the same clock, ``bench/calibrate_levels.py speed``).  A
one-line level is full strength's search stopped earlier, and reads the real clock."""
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
    def depth(self) -> int | None:
        """The deepest iteration at the bottom levels (:data:`DEPTH_CAPS`), else ``None``."""
        step = int(self.level)
        return DEPTH_CAPS[step] if step < len(DEPTH_CAPS) else None

    @property
    def draws(self) -> bool:
        """Whether this level draws among :data:`CANDIDATES` lines (below :data:`DRAW_ENDS`)."""
        return self.level < DRAW_ENDS

    @property
    def lines(self) -> int:
        """Root lines this level searches: :data:`CANDIDATES` while it draws, else one."""
        return CANDIDATES if self.draws else 1

    @property
    def nodes(self) -> int:
        """The node budget of a move at this level's own :attr:`lines`."""
        return self.budget(self.lines)

    def budget(self, lines: int) -> int:
        """The node budget of a move searching ``lines`` root lines: :data:`NODES_AT_ZERO`
        times :data:`NODE_GROWTH` to the level, per line (so a level searching four lines,
        for its draw or a GUI's MultiPV, reaches about the depth one line of it would)."""
        return round(NODES_AT_ZERO * math.pow(NODE_GROWTH, self.level)) * lines

    @property
    def temperature(self) -> float:
        """How far apart (score units) two candidates' chances are ``e`` times apart;
        0 from :data:`DRAW_ENDS` (no draw)."""
        return TEMPERATURE_AT_ZERO * max(0.0, 1.0 - self.level / DRAW_ENDS)

    @property
    def max_loss(self) -> int:
        """A candidate scored more than this below the best is never played."""
        return round(MAX_LOSS_AT_ZERO * max(0.0, 1.0 - self.level / DRAW_ENDS))

    def limits(self, limits: Limits, multipv: int = 1) -> Limits:
        """``limits`` with this level's node budget for its lines or the ``multipv`` a GUI
        asked for, whichever are more, and its depth cap (a smaller ``go nodes`` or ``go
        depth`` stays), its clock read as :data:`TIME_SHARE` of the real one when it draws."""
        cap = self.depth
        depth = limits.depth if cap is None else min(limits.depth or cap, cap)
        budget = self.budget(max(multipv, self.lines))
        nodes = budget if limits.nodes is None else min(limits.nodes, budget)
        capped = replace(limits, depth=depth, nodes=nodes)
        if not self.draws:
            return capped
        return replace(
            capped,
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
    always a choice; at temperature 0 it is the only one.
    """
    scores = [value_of(line.score) if line.score is not None else None for line in lines]
    top = scores[0]
    if top is None or skill.temperature <= 0.0:
        return 0
    weights: list[float] = []
    for score in scores:
        loss = top - score if score is not None else skill.max_loss + 1
        weights.append(0.0 if loss > skill.max_loss else math.exp(-loss / skill.temperature))
    return rng.choices(range(len(lines)), weights=weights)[0]


def _draw_source(seed: int | None, lines: Sequence[SearchInfo]) -> random.Random:
    """The draw's random source: the operating system's entropy without a seed; with one, a
    source seeded by it and the candidates' first moves, so a reproducible game draws anew
    at every move (one ``Random(seed)`` a move would take the same quantile every time)."""
    if seed is None:
        return random.Random()
    return random.Random(f"{seed} {' '.join(line.pv[0] for line in lines)}")


Search = Callable[[Limits, int, InfoCallback], SearchResult]
"""``(limits, multipv, on_info) -> result``: the search a level weakens."""


def search_at_level(
    search: Search, limits: Limits, skill: Skill, *, multipv: int, on_info: InfoCallback
) -> SearchResult:
    """Search with ``skill``'s limits and lines, then play a drawn one.

    ``on_info`` sees the lines the caller asked for (``multipv``), then, when the drawn move
    is not the first line's, that move's line as line 1: the last line reported is the move
    played.  The result's ``best``, ``ponder``, ``score`` and ``pv`` are the drawn line's.
    When the level's budget ended the search before depth 1 completed, depth 1 is searched
    without it (a level always sees the captures its first ply allows).
    """
    shown = max(1, multipv)

    def report(info: SearchInfo) -> None:
        if info.multipv <= shown or not info.pv:
            on_info(info)

    capped = skill.limits(limits, shown)
    result = search(capped, max(shown, skill.lines), report)
    if result.depth < 1 and result.best is not None and capped.nodes != limits.nodes:
        result = search(replace(capped, nodes=None, depth=1), max(shown, skill.lines), report)
    lines = tuple(line for line in result.lines if line.pv)
    if not lines or result.best is None:
        return result
    chosen = lines[choose_line(lines, skill, _draw_source(skill.seed, lines))]
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
    option's declared range is :attr:`lowest`..:attr:`highest`, so a GUI offers no more).
    The top point may be :data:`FULL_STRENGTH` itself (the full-strength engine's own rating)."""

    points: tuple[tuple[int, float], ...]
    reference: str
    """Whose Elo scale the points were measured on (for the README and ``info string``)."""

    def __post_init__(self) -> None:
        if len(self.points) < MIN_POINTS:
            raise ValueError("an Elo scale needs at least two measured points")
        for (elo_a, level_a), (elo_b, level_b) in itertools.pairwise(self.points):
            if not (elo_a < elo_b and level_a < level_b):
                raise ValueError("Elo scale points must ascend in Elo and in level")
        if self.points[0][1] < 0 or self.points[-1][1] > FULL_STRENGTH:
            raise ValueError(f"an Elo scale's levels are in [0, {FULL_STRENGTH}]")

    @property
    def lowest(self) -> int:
        return self.points[0][0]

    @property
    def highest(self) -> int:
        return self.points[-1][0]

    def level(self, elo: int) -> float:
        """The level that plays at ``elo`` on this scale (clamped to the measured range)."""
        points = self.points
        if elo <= points[0][0]:
            return points[0][1]
        for (elo_a, level_a), (elo_b, level_b) in itertools.pairwise(points):
            if elo <= elo_b:
                return level_a + (level_b - level_a) * (elo - elo_a) / (elo_b - elo_a)
        return points[-1][1]

    def skill(self, elo: int) -> Skill | None:
        """:meth:`level` as a :class:`Skill`; ``None`` at full strength."""
        level = self.level(elo)
        return None if level >= FULL_STRENGTH else Skill(level)
