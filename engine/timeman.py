"""How long to think: a pure function from the ``go`` limits to a time budget.

No clock is read here, so the allocation can be tested with tables of clocks; the search reads
its own injectable monotonic clock and compares elapsed time against the budget.

Two numbers come out, both relative to the moment the clock starts running for this move (the
search start, or the ``ponderhit``):

* ``soft_ms``: do not *start* another iteration after this (the search may scale it by how
  unstable the best move is, but never beyond ``hard_ms``);
* ``hard_ms``: abort the running iteration now and play the last completed result.

The rules, for the side's remaining time ``t``, increment ``inc`` and overhead ``o``:

* ``movetime m``: soft = hard = ``m - o`` (at least :data:`MIN_MS`);
* with ``movestogo n``: soft = ``t / (n + 1) + 3/4·inc``, hard up to ``t·min(0.9, 2/(n+1))``
  (but at least 0.4·t, and at most 5·soft);
* otherwise (sudden death or increment): soft = ``t / h + 3/4·inc`` with a horizon ``h`` of 30
  moves early in the game, 25 later; hard = ``min(5·soft, 0.4·t + 3/4·inc)``.

Then ``hard <= t - o`` always holds, except that neither number drops below :data:`MIN_MS`
(a zero or negative clock still gets a move, as fast as the search can produce one), and
``soft <= hard``.  When both a clock and ``movetime`` are given, the smaller budget wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.limits import Limits

MIN_MS = 2.0
"""Floor for both budgets: enough for a depth-1 search in a small game, never zero."""

_EARLY_PLIES = 40
_EARLY_HORIZON = 30
_LATE_HORIZON = 25
_HARD_FACTOR = 5.0
_HARD_SHARE = 0.4
_INC_SHARE = 0.75


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
        soft = t / (movestogo + 1) + _INC_SHARE * inc
        share = max(_HARD_SHARE, min(0.9, 2.0 / (movestogo + 1)))
        hard = min(_HARD_FACTOR * soft, share * t + _INC_SHARE * inc)
    else:
        horizon = _EARLY_HORIZON if ply < _EARLY_PLIES else _LATE_HORIZON
        soft = t / horizon + _INC_SHARE * inc
        hard = min(_HARD_FACTOR * soft, _HARD_SHARE * t + _INC_SHARE * inc)
    hard = max(MIN_MS, min(hard, t - overhead))
    soft = max(MIN_MS, min(soft, hard))
    return TimeBudget(soft, hard)
