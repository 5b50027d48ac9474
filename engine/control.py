"""The thread-safe handle through which a session steers a running search.

The search runs on a worker thread (or process) and polls this object about every 1,024
nodes; the session calls :meth:`stop` and :meth:`ponderhit` from the event loop.  Only
``threading.Event`` and a float cross the boundary, so polling costs one attribute read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from enum import StrEnum


class ControlEvent(StrEnum):
    """What a :class:`SearchControl` tells its listeners."""

    STOP = "stop"
    PONDERHIT = "ponderhit"


ControlListener = Callable[[ControlEvent], None]


class SearchControl:
    __slots__ = ("_clock", "_listeners", "_ponderhit_at", "_stop", "pondering")

    def __init__(self, *, pondering: bool = False, clock: Callable[[], float] = time.monotonic):
        self._stop = threading.Event()
        self._clock = clock
        self._ponderhit_at: float | None = None
        self._listeners: list[ControlListener] = []
        self.pondering = pondering
        """True until ``ponderhit``: the clock does not run while pondering."""

    def add_listener(self, listener: ControlListener) -> None:
        """Call ``listener(ControlEvent.STOP)`` / ``listener(ControlEvent.PONDERHIT)`` when
        those happen (a :class:`ControlEvent` is a ``str``: ``"stop"``, ``"ponderhit"``).

        For runners whose search lives elsewhere (a worker process) and must be told,
        rather than poll this object."""
        self._listeners.append(listener)

    def stop(self) -> None:
        """Ask the search to finish now; it returns the last completed iteration's move."""
        self._stop.set()
        for listener in self._listeners:
            listener(ControlEvent.STOP)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def ponderhit(self) -> None:
        """The opponent played the expected move: from now on the clock runs normally."""
        self._ponderhit_at = self._clock()
        self.pondering = False
        for listener in self._listeners:
            listener(ControlEvent.PONDERHIT)

    @property
    def ponderhit_at(self) -> float | None:
        """Monotonic time of the ``ponderhit`` (the search restarts its time budget there)."""
        return self._ponderhit_at

    def wait(self, timeout: float | None = None) -> bool:
        """Block until stopped (used by searches that finished early under infinite/ponder)."""
        return self._stop.wait(timeout)
