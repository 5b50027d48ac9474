"""What a session's runner and its worker process say to each other over their pipe.

Frozen dataclasses, pickled by :mod:`multiprocessing`, dispatched with ``match`` on their
type: a field is read by name, never as ``message[6]``, and mypy checks every send.  Every
job carries the ``seq`` the parent's future waits on; replies name it back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.game import Game
from engine.info import SearchInfo
from engine.limits import Limits
from engine.shm import ShmShortage
from engine.skill import Skill


# -- parent → worker: jobs, run one at a time in order ---------------------------------------
@dataclass(frozen=True, slots=True)
class SearchJob:
    seq: int
    game: Game[Any]
    limits: Limits
    multipv: int
    move_overhead_ms: int
    pondering: bool
    sent_at: float
    """``time.monotonic()`` when the session asked: the dispatch delay is charged to the move."""
    algorithm: str
    skill: Skill | None
    """A playing level below full strength, or ``None`` (:mod:`engine.skill`)."""


@dataclass(frozen=True, slots=True)
class CallJob:
    """Any other long job (perft, bench): ``fn(*args)``, with ``control=`` when stoppable."""

    seq: int
    fn: Callable[..., object]
    args: tuple[Any, ...]
    stoppable: bool


@dataclass(frozen=True, slots=True)
class ResizeHash:
    seq: int
    hash_mb: int


@dataclass(frozen=True, slots=True)
class ClearHash:
    seq: int


@dataclass(frozen=True, slots=True)
class SetThreads:
    """``setoption name Threads``: start or end the worker's search helpers."""

    seq: int
    threads: int


Job = SearchJob | CallJob | ResizeHash | ClearHash | SetThreads


# -- parent → worker: steering, acted on at once by the worker's listener thread -------------
@dataclass(frozen=True, slots=True)
class Stop:
    seq: int


@dataclass(frozen=True, slots=True)
class PonderHit:
    seq: int


@dataclass(frozen=True, slots=True)
class Exit:
    """Finish the job in hand, then end the process."""


ToWorker = Job | Stop | PonderHit | Exit


# -- worker → parent -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Info:
    seq: int
    info: SearchInfo


@dataclass(frozen=True, slots=True)
class Done:
    seq: int
    value: object


@dataclass(frozen=True, slots=True)
class Failed:
    """The job raised: type, message and traceback, for the server's log (not the client)."""

    seq: int
    description: str


@dataclass(frozen=True, slots=True)
class OutOfSharedMemory:
    """The job (``Threads``, ``Hash``) needed a shared table that does not fit in
    ``/dev/shm``; the worker searches with one thread now."""

    seq: int
    shortage: ShmShortage


FromWorker = Info | Done | Failed | OutOfSharedMemory
