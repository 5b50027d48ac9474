"""What a match is to be: its engines, limits, openings and rules, checked as one value.

:class:`MatchSettings` is what ``brudno match`` makes of its command line and what
:class:`brudno.arena.match.Match` plays; scripts and tests build one directly.  It refuses a
match that cannot be played before any engine starts (:class:`MatchError`), naming the
command-line option at fault, since that is where a person fixes it.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field

from brudno.arena.adjudication import DrawRule, ResignRule
from brudno.arena.clock import DEFAULT_TIMEMARGIN_MS, TimeControl, seconds_text
from brudno.arena.openings import Opening
from brudno.arena.players import EngineConfig
from brudno.arena.stats import Sprt
from games.registry import GAMES

__all__ = ["MIN_ENGINES", "SPRT_ENGINES", "START_POSITION", "MatchError", "MatchSettings"]

MIN_ENGINES = 2
"""The fewest engines a match is played between."""
SPRT_ENGINES = 2
"""The SPRT tests one engine against exactly one other."""

START_POSITION = Opening(None, (), "start position")
"""The one opening of a match without ``--openings``: every variant's standard start."""


class MatchError(ValueError):
    """A match that cannot be set up: bad arguments, an engine that does not start."""


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
    openings: tuple[Opening, ...] = (START_POSITION,)
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
        if len(self.engines) < MIN_ENGINES:
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
        if self.sprt is not None and len(self.engines) != SPRT_ENGINES:
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
            return f"1/{seconds_text(self.movetime_ms)}"
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
