"""What a search tells the world: progress reports and its final result.

The search never prints (DESIGN.md convention 1).  It calls an :data:`InfoCallback` with
immutable :class:`SearchInfo` records and returns a :class:`SearchResult`; the protocol layer
decides how (and whether) to format them.  Moves are carried as text in the game's notation so
these records can cross thread and process boundaries without the game objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from engine.score import Reported


class Bound(StrEnum):
    """Whether a reported score is exact or only a bound (aspiration fail-high/low); the
    values are UCI's words for the bounds."""

    EXACT = "exact"
    LOWER = "lowerbound"
    UPPER = "upperbound"


@dataclass(frozen=True, slots=True)
class SearchInfo:
    """One progress report.

    Either a line report (``pv`` non-empty, ``score`` set), a ``currmove`` report, or a plain
    statistics tick (only counters set).  ``wdl`` is per mille (win, draw, loss) when the game
    can estimate it.
    """

    depth: int
    seldepth: int = 0
    multipv: int = 1
    score: Reported | None = None
    bound: Bound = Bound.EXACT
    nodes: int = 0
    nps: int = 0
    time_ms: int = 0
    hashfull: int = 0
    tbhits: int = 0
    """Positions found in endgame tablebases so far (UCI's ``tbhits``)."""
    pv: tuple[str, ...] = ()
    currmove: str | None = None
    currmovenumber: int | None = None
    wdl: tuple[int, int, int] | None = None
    string: str | None = None


InfoCallback = Callable[[SearchInfo], None]


def ignore_info(_info: SearchInfo) -> None:
    """An :data:`InfoCallback` for callers that do not want progress."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of one ``go``.

    ``best`` is ``None`` only when the root has no legal move (UCI ``bestmove 0000``).
    ``pv`` holds the principal variation of the last completed iteration (first line when
    MultiPV > 1); ``lines`` holds every MultiPV line of that iteration, best first.
    """

    best: str | None
    ponder: str | None
    score: Reported | None
    depth: int
    nodes: int
    time_ms: int
    pv: tuple[str, ...] = ()
    lines: tuple[SearchInfo, ...] = field(default_factory=tuple)
    cutoffs: int = 0
    """Beta cut-offs below the root, and how many of them came from the first move tried:
    the share measures move ordering (a well-ordered search cuts on the first move > 90 %)."""
    first_cutoffs: int = 0
