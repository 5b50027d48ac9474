"""What the main search and its helper processes tell each other over their pipes.

Typed dataclasses (pickled by :mod:`multiprocessing`), dispatched with ``match``.  Steering
that must act within a poll interval (stop) goes through the
:class:`~engine.smp.scoreboard.Scoreboard` instead, never through a pipe that a busy helper
only reads between searches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.info import SearchInfo
from engine.limits import Limits
from engine.search import SearchConfig
from engine.tt import SharedTable


# -- to a helper ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HelperSearch:
    """Search ``game`` until the scoreboard stops ``job`` (or ``limits`` are met)."""

    job: int
    game: Any
    limits: Limits
    config: SearchConfig | None


@dataclass(frozen=True, slots=True)
class HelperAttach:
    """The table was reallocated (``Hash``): attach to the new block."""

    table: SharedTable


@dataclass(frozen=True, slots=True)
class HelperClear:
    """``ucinewgame``: forget the move-ordering memory (the main process clears the table)."""


@dataclass(frozen=True, slots=True)
class HelperExit:
    """End the process."""


ToHelper = HelperSearch | HelperAttach | HelperClear | HelperExit


# -- from a helper -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HelperReady:
    """Started, attached to the table, waiting for work."""


@dataclass(frozen=True, slots=True)
class HelperLine:
    """An iteration the helper completed for ``job``: its first line (exact score, PV)."""

    job: int
    info: SearchInfo


@dataclass(frozen=True, slots=True)
class HelperIdle:
    """Done with everything sent before (a search ended, a clear or attach applied)."""

    job: int


@dataclass(frozen=True, slots=True)
class HelperFailed:
    """The search of ``job`` raised; ``description`` has the type, text and traceback."""

    job: int
    description: str


FromHelper = HelperReady | HelperLine | HelperIdle | HelperFailed
