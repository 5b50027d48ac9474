"""A game's level calibration as data: the measured points its ``UCI_Elo`` scale is built from.

Each :class:`Point` is one match: the level, the Elo it was placed at, its opponent (a
reference engine at a known Elo, or an already-calibrated level of our own for a chained
point), the games and W-D-L, the difference with half its 95% interval, the interval on the
scale (a chained point's adds up its anchors' errors), the date and the command that played
it.  :class:`Calibration` is the JSON file (``games/data/chess_levels.json`` for chess):
:meth:`Calibration.scale` is the :class:`~engine.skill.EloScale` the ``UCI_Elo`` option is
declared over, and :meth:`Point.row` the documentation table's row.  One source of truth:
the engine, the option's range and the table all read this file.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from engine.skill import MIN_POINTS, EloScale

__all__ = [
    "TABLE_END",
    "TABLE_HEADER",
    "TABLE_START",
    "Calibration",
    "Point",
    "chain_opponent",
    "chained",
    "with_table",
]

TABLE_HEADER = (
    "| UCI_Elo | level | against | games | W-D-L | score | difference (95%) | +/- on the scale "
    "| date |",
    "|---|---|---|---|---|---|---|---|---|",
)
"""The documentation table's header; its rows are :meth:`Point.row`."""

TABLE_START = "<!-- calibration table: games/data/chess_levels.json -->"
TABLE_END = "<!-- end of calibration table -->"
"""The markers around the table in a Markdown page (README.md and docs/playing.md)."""


def with_table(text: str, rows: tuple[str, ...]) -> str:
    """``text`` with the lines between its table markers replaced by ``rows``; a text without
    exactly one pair of markers, in order, raises ``ValueError``."""
    ends = text.count(TABLE_START), text.count(TABLE_END)
    if ends != (1, 1) or text.index(TABLE_END) < text.index(TABLE_START):
        raise ValueError("the page needs one table start marker and one end marker after it")
    head, rest = text.split(TABLE_START)
    _, tail = rest.split(TABLE_END)
    return f"{head}{TABLE_START}\n" + "\n".join(rows) + f"\n{TABLE_END}{tail}"


@dataclass(frozen=True, slots=True)
class Point:
    """One calibrated level: ``level`` plays at ``elo``, measured by one match."""

    elo: int
    level: float
    opponent: str
    """Who the level played: ``Stockfish 1500`` or ``Brudno level 8`` (a chained point)."""
    opponent_elo: int
    games: int
    wins: int
    draws: int
    losses: int
    diff: float
    """The level's Elo minus its opponent's, from the match."""
    margin: float
    """Half the 95% interval of :attr:`diff`."""
    interval: float
    """Half the 95% interval of :attr:`elo` on the scale (a chain's errors added up)."""
    date: str
    command: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.wins + self.draws + self.losses != self.games or self.games <= 0:
            raise ValueError(f"level {self.level}: W-D-L does not add up to {self.games} games")

    @property
    def score(self) -> Fraction:
        """The level's share of the points (a draw is half)."""
        return Fraction(2 * self.wins + self.draws, 2 * self.games)

    def row(self) -> str:
        """This point's line in the documentation table (columns of :data:`TABLE_HEADER`)."""
        percent = _half_up(self.score * 1000) / 10
        level = f"{self.level:g}"
        return (
            f"| {self.elo} | {level} | {self.opponent} | {self.games} | "
            f"{self.wins}-{self.draws}-{self.losses} | {percent:.1f}% | "
            f"{round(self.diff):+d} +/- {self.margin:.0f} | {self.interval:.0f} | {self.date} |"
        )


def _half_up(value: Fraction) -> int:
    return math.floor(value + Fraction(1, 2))


_CHAIN_OPPONENT = "Brudno level "


def chain_opponent(level: float) -> str:
    """The :attr:`Point.opponent` of a level chained to our own ``level``."""
    return f"{_CHAIN_OPPONENT}{level:g}"


def _anchor_level(point: Point) -> float | None:
    """The level ``point`` was chained to, ``None`` for a point measured against a reference."""
    if not point.opponent.startswith(_CHAIN_OPPONENT):
        return None
    try:
        return float(point.opponent.removeprefix(_CHAIN_OPPONENT))
    except ValueError:  # not a level's name: nothing to follow
        return None


def chained(anchor: Point, diff: float, margin: float) -> tuple[int, float]:
    """The Elo and interval of a level measured ``diff +/- margin`` against ``anchor``: the
    anchor's Elo plus the difference, the errors added in quadrature."""
    return round(anchor.elo + diff), math.hypot(anchor.interval, margin)


@dataclass(frozen=True, slots=True)
class Calibration:
    """A game's calibration file: the reference scale, what state it is in, the points."""

    reference: str
    """Whose Elo scale (``Stockfish 15.1 UCI_Elo at 10+0.1``)."""
    status: str
    """What the points are worth now (for instance, measured on levels since changed)."""
    points: tuple[Point, ...]

    def scale(self) -> EloScale:
        """The ``UCI_Elo`` scale of these points (raises when they do not ascend)."""
        ordered = sorted(self.points, key=lambda p: p.elo)
        return EloScale(tuple((p.elo, p.level) for p in ordered), reference=self.reference)

    def point_at_level(self, level: float) -> Point | None:
        return next((p for p in self.points if p.level == level), None)

    def with_point(self, point: Point) -> Calibration:
        """These points with ``point`` in place of any at its level, in Elo order, and the
        points chained below it moved with it (:meth:`rechained`); raises ``ValueError``
        when another level has its Elo or the result is no scale (levels not ascending with
        Elo): which measurement to keep is then a person's call."""
        kept = [p for p in self.points if p.level != point.level]
        clash = next((p for p in kept if p.elo == point.elo), None)
        if clash is not None:
            raise ValueError(f"level {clash.level:g} is at Elo {point.elo} already")
        merged = replace(self, points=tuple(sorted([*kept, point], key=lambda p: p.elo)))
        merged = merged.rechained()
        if len(merged.points) >= MIN_POINTS:  # a new file's first point is no scale yet
            merged.scale()
        return merged

    def without_level(self, level: float) -> Calibration:
        """These points less the one at ``level`` (a probe a verification superseded);
        raises ``ValueError`` when there is none, or a point is chained to it."""
        if self.point_at_level(level) is None:
            raise ValueError(f"no point at level {level:g}")
        below = next((p for p in self.points if _anchor_level(p) == level), None)
        if below is not None:
            raise ValueError(f"level {below.level:g} is chained to level {level:g}")
        return replace(self, points=tuple(p for p in self.points if p.level != level))

    def rechained(self) -> Calibration:
        """Each chained point placed again on its anchor's current point: a chain measured a
        difference to a level of ours, so when that level's point moves (a verification
        remeasured it), the points below it move by as much, their errors added up anew."""
        by_level = {p.level: p for p in self.points}
        placed: dict[float, Point] = {}

        def place(point: Point, seen: frozenset[float]) -> Point:
            if point.level in placed:
                return placed[point.level]
            anchor_level = _anchor_level(point)
            anchor = by_level.get(anchor_level) if anchor_level is not None else None
            if anchor is not None and anchor.level not in seen:
                anchor = place(anchor, seen | {point.level})
                elo, interval = chained(anchor, point.diff, point.margin)
                # Rounded as a measured point's figures are written (a tenth).
                point = replace(
                    point, elo=elo, interval=round(interval, 1), opponent_elo=anchor.elo
                )
            placed[point.level] = point
            return point

        points = [place(p, frozenset()) for p in self.points]
        return replace(self, points=tuple(sorted(points, key=lambda p: p.elo)))

    def rows(self) -> tuple[str, ...]:
        """The documentation table: header and one row per point, in Elo order."""
        ordered = sorted(self.points, key=lambda p: p.elo)
        return (*TABLE_HEADER, *(p.row() for p in ordered))

    def dumps(self) -> str:
        body = {
            "reference": self.reference,
            "status": self.status,
            "points": [asdict(p) for p in self.points],
        }
        return json.dumps(body, indent=2) + "\n"

    @classmethod
    def loads(cls, text: str) -> Calibration:
        data: dict[str, Any] = json.loads(text)
        points = tuple(Point(**point) for point in data["points"])
        return cls(reference=data["reference"], status=data["status"], points=points)

    @classmethod
    def read(cls, path: Path) -> Calibration:
        return cls.loads(path.read_text())

    def write(self, path: Path) -> None:
        path.write_text(self.dumps())
