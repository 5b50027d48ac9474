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
* otherwise the clock is planned over a horizon of ``h`` moves (``movestogo`` if given, at
  most 50; else 30 moves early in the game, 25 later) with Stockfish's reserve: the usable
  time is ``u = t + inc·(h - 1) - o·(h + 2)``, the clock plus the increments still to come
  minus one overhead for every move of the horizon and two more.  soft = ``u / h`` (``u /
  (n + 1)`` with ``movestogo n``, so the last move before the control is not starved), and
  without ``movestogo`` at most a tenth of the clock;
* hard = ``min(5·soft, s·t + 3/4·inc)`` with a share ``s`` of 0.4 (with ``movestogo n``:
  ``min(0.9, max(0.4, 2/(n + 1)))``).

The reserve is what keeps a fast game from being lost on time: as the clock falls toward
``o·(h + 2) - inc·(h - 1)`` the plan shrinks to nothing and the engine answers at once,
living on the increment, instead of spending a fixed share of a clock that can no longer
absorb a late reply (a garbage collection, a busy core, a slow pipe).  When the increment
is large against the overhead (10+0.1) that reserve is negative, and the engine would think
the clock down to about one increment (measured: 120 ms left at move 150 of a 10+0.1 game,
then one late reply lost it); the tenth-of-the-clock cap (Stockfish caps at a fifth, but
spends less beyond its plan than our iterations do) keeps half a second or more in hand.

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
_MAX_HORIZON = 50
_HARD_FACTOR = 5.0
_HARD_SHARE = 0.4
_SOFT_SHARE = 0.1
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
