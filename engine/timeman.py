"""How long to think: a pure function from the ``go`` limits to a time budget, and the
:class:`Deadline` that every searcher checks it with.

:func:`allocate` reads no clock (so it is tested with tables of clocks) and returns ``soft_ms``
(start no new iteration after it; the search may stretch it up to ``hard_ms``) and ``hard_ms``
(abort the running iteration), both counted from the search start or ``ponderhit``.  ``movetime
m`` gives ``m`` minus the overhead; a clock is planned over a horizon of moves with Stockfish's
reserve, at most a tenth of the clock without ``movestogo``.  Always ``soft <= hard``, and with
a clock ``t`` also ``hard <= t - overhead``, except that neither drops below :data:`MIN_MS` (a
zero or negative clock still gets a move); with both a clock and ``movetime`` the smaller
budget wins.  :class:`Deadline` compares the searcher's injectable monotonic clock with the
budget, so the production search and the classic algorithms stop by the same rules.

The formulas and why the reserve: docs/search.md, *Time management*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.control import SearchControl
from engine.limits import Limits

MIN_MS = 2.0
"""Floor for both budgets: enough for a depth-1 search in a small game, never zero."""

_EARLY_PLIES = 40
_EARLY_HORIZON = 30
_LATE_HORIZON = 25
_MAX_HORIZON = 50
_HARD_FACTOR = 5.0
_HARD_SHARE = 0.4
_SOFT_SHARE = 0.1
_INC_SHARE = 0.75
_STABLE_SCALE = 0.6
_UNSTABLE_SCALE = 0.9
_MAX_SCALE = 2.0
"""The soft budget is scaled by ``min(2, 0.6 + 0.9 * instability)``
(see :meth:`Deadline.soft_reached`)."""
_FALLING_CP = 100
_FALLING_MAX = 1.0
"""A score that fell by ``f`` centipawns scales the soft budget by ``1 + min(1, f / 100)``."""


@dataclass(frozen=True, slots=True)
class TimeBudget:
    """Milliseconds from the moment the clock starts running for this move."""

    soft_ms: float
    hard_ms: float


def allocate(limits: Limits, side: int, ply: int, overhead_ms: int) -> TimeBudget | None:
    """The budget for one move, or ``None`` when time does not bound the search.

    ``side`` picks the clock (0 = first player), ``ply`` is the game's half-move count (early
    moves get a longer horizon), ``overhead_ms`` is what communication costs per move.
    """
    if limits.infinite:
        return None
    overhead = max(0, overhead_ms)
    budgets: list[TimeBudget] = []
    if limits.movetime is not None:
        t = max(MIN_MS, float(limits.movetime - overhead))
        budgets.append(TimeBudget(t, t))
    remaining, inc = limits.clock(side)
    if remaining is not None:
        budgets.append(_clock_budget(remaining, max(0, inc), limits.movestogo, ply, overhead))
    if not budgets:
        return None
    return TimeBudget(min(b.soft_ms for b in budgets), min(b.hard_ms for b in budgets))


def _clock_budget(
    remaining: int, inc: int, movestogo: int | None, ply: int, overhead: int
) -> TimeBudget:
    t = float(max(0, remaining))
    if movestogo is not None and movestogo > 0:
        horizon = min(movestogo, _MAX_HORIZON)
        moves_left = horizon + 1
        share = max(_HARD_SHARE, min(0.9, 2.0 / (movestogo + 1)))
        cap = t  # the clock is refilled after the control: no reserve to keep
    else:
        horizon = _EARLY_HORIZON if ply < _EARLY_PLIES else _LATE_HORIZON
        moves_left = horizon
        share = _HARD_SHARE
        cap = _SOFT_SHARE * t
    usable = max(0.0, t + inc * (horizon - 1) - overhead * (horizon + 2))
    soft = min(usable / moves_left, cap)
    hard = min(_HARD_FACTOR * soft, share * t + _INC_SHARE * inc)
    hard = max(MIN_MS, min(hard, t - overhead))
    soft = max(MIN_MS, min(soft, hard))
    return TimeBudget(soft, hard)


class Deadline:
    """One search's clock: the soft and hard limits of its :class:`TimeBudget`.

    Times count from when this move's clock started: the search start, or the ``ponderhit``;
    while ``control.pondering`` the clock does not run and nothing is reached.  A search with a
    single legal reply in timed play needs one completed iteration (it has a move and a
    score to report), and not a node more.

    Why one object: every searcher (:mod:`engine.driver` for all of them, and the production
    node functions between their polls) asks the same two questions, so the rules live here
    once instead of in each searcher's copy.
    """

    __slots__ = ("_clock", "_completed", "_control", "_single_reply", "_start", "budget")

    def __init__(
        self,
        budget: TimeBudget | None,
        *,
        start: float,
        clock: Callable[[], float],
        control: SearchControl,
    ) -> None:
        self.budget = budget
        self._start = start
        self._clock = clock
        self._control = control
        self._single_reply = False
        self._completed = False

    @property
    def timed(self) -> bool:
        """Whether time bounds this search at all (``False``: nothing is ever reached)."""
        return self.budget is not None

    def single_reply(self) -> None:
        """The root has one legal move: stop as soon as one iteration is complete."""
        self._single_reply = self.budget is not None

    def iteration_completed(self) -> None:
        """An iteration finished: from now on there is a move to play."""
        self._completed = True

    def clock_start(self) -> float | None:
        """When this move's clock started, or ``None`` while pondering (clock ignored)."""
        if self._control.pondering:
            return None
        hit = self._control.ponderhit_at
        return self._start if hit is None else hit

    def hard_reached(self, now: float) -> bool:
        """Abort the running iteration now?  ``now`` is a reading of the search's clock."""
        budget = self.budget
        if budget is None:
            return False
        base = self.clock_start()
        if base is None:
            return False
        if self._single_reply and self._completed:
            return True
        return (now - base) * 1000.0 >= budget.hard_ms

    def soft_reached(self, instability: float = 0.0, falling: int = 0) -> bool:
        """Between iterations: is it too late to start another one?

        ``instability`` measures how often the best move changed lately (each change adds 1,
        halved every iteration): a stable search stops at 0.6 of the soft budget, an
        unstable one goes on up to twice it, never beyond the hard budget.  ``falling`` is
        how many centipawns the score dropped lately: trouble found late is where more
        time pays (the search may yet find the way out), so it stretches the budget too.
        """
        budget = self.budget
        if budget is None:
            return False
        base = self.clock_start()
        if base is None:
            return False
        if self._single_reply:
            return True
        soft = budget.soft_ms
        if soft < budget.hard_ms:
            scale = _STABLE_SCALE + _UNSTABLE_SCALE * instability
            if falling > 0:
                scale *= 1.0 + min(_FALLING_MAX, falling / _FALLING_CP)
            scale = min(_MAX_SCALE, scale)
            soft = min(budget.hard_ms, soft * scale)
        return (self._clock() - base) * 1000.0 >= soft
