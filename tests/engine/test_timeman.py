"""Time allocation: a pure function of the clocks, checked with tables and properties; and
the Deadline that every searcher checks it with, on a hand-driven clock."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.control import SearchControl
from engine.limits import Limits
from engine.timeman import MIN_MS, Deadline, TimeBudget, allocate


def test_untimed_searches_have_no_budget() -> None:
    assert allocate(Limits(), 0, 0, 30) is None
    assert allocate(Limits(depth=8, nodes=1000, mate=3), 0, 0, 30) is None
    assert allocate(Limits(infinite=True, wtime=1000, btime=1000), 0, 0, 30) is None
    # Only the opponent's clock given: this side is untimed.
    assert allocate(Limits(btime=5000), 0, 0, 30) is None


@pytest.mark.parametrize(
    ("limits", "side", "ply", "expected"),
    [
        # movetime: all of it minus the overhead, floored.
        (Limits(movetime=1000), 0, 0, TimeBudget(970, 970)),
        (Limits(movetime=10), 0, 0, TimeBudget(MIN_MS, MIN_MS)),
        # Sudden death, early: (remaining - 32 overheads) / 30; hard = 5·soft.
        (Limits(wtime=60_000, btime=1), 0, 0, TimeBudget(1968, 9840)),
        # The other side's clock is read for black; later in the game the horizon is 25.
        (Limits(wtime=1, btime=60_000), 1, 80, TimeBudget(2367.6, 11_838)),
        # Increment: the 29 increments to come join the plan.
        (Limits(wtime=60_000, winc=1000), 0, 0, TimeBudget(88_040 / 30, 5 * 88_040 / 30)),
        # 1 s + 10 ms (the fastest control we support): the reserve leaves 330 ms to plan.
        (Limits(wtime=1000, winc=10), 0, 0, TimeBudget(11, 55)),
        # 2 s + 20 ms late in a game: 400 ms left is close to the reserve, so almost no plan.
        (Limits(wtime=400, winc=20), 0, 100, TimeBudget(2.8, 14)),
        # movestogo: (remaining - (n + 2) overheads) / (n + 1).
        (Limits(wtime=30_000, movestogo=9), 0, 10, TimeBudget(2967, 12_000)),
        # Last move before the time control: half the time, hard up to 90 % minus overhead.
        (Limits(wtime=10_000, movestogo=1), 0, 10, TimeBudget(4955, 9000)),
        # Increment larger than the clock: a tenth of the clock; the bank grows.
        (Limits(wtime=100, winc=2000), 0, 0, TimeBudget(10, 50)),
        # 10 s + 100 ms late in a long game with 300 ms left: a tenth, not (t + 24 inc) / 25.
        (Limits(wtime=300, winc=100), 0, 200, TimeBudget(30, 150)),
        # Zero and negative clocks still get a (tiny) budget: a move at once.
        (Limits(wtime=0), 0, 0, TimeBudget(MIN_MS, MIN_MS)),
        (Limits(wtime=-500, winc=100), 0, 0, TimeBudget(MIN_MS, MIN_MS)),
        # Both a clock and movetime: whichever is smaller.
        (Limits(wtime=60_000, movetime=500), 0, 0, TimeBudget(470, 470)),
        (Limits(wtime=3000, movetime=5000), 0, 0, TimeBudget(68, 340)),
    ],
)
def test_allocation_table(limits: Limits, side: int, ply: int, expected: TimeBudget) -> None:
    budget = allocate(limits, side, ply, 30)
    assert budget is not None
    assert budget.soft_ms == pytest.approx(expected.soft_ms)
    assert budget.hard_ms == pytest.approx(expected.hard_ms)


def test_more_time_means_more_budget() -> None:
    budgets = [allocate(Limits(wtime=t), 0, 20, 30) for t in (1000, 10_000, 100_000)]
    softs = [b.soft_ms for b in budgets if b is not None]
    assert softs == sorted(softs) and len(set(softs)) == 3


@settings(max_examples=250, derandomize=True)
@given(
    remaining=st.integers(min_value=-10_000, max_value=10_000_000),
    inc=st.none() | st.integers(min_value=0, max_value=100_000),
    movestogo=st.none() | st.integers(min_value=1, max_value=100),
    movetime=st.none() | st.integers(min_value=0, max_value=1_000_000),
    side=st.integers(min_value=0, max_value=1),
    ply=st.integers(min_value=0, max_value=600),
    overhead=st.integers(min_value=0, max_value=1000),
)
def test_budget_never_exceeds_the_clock(  # noqa: PLR0917 - one argument per strategy
    remaining: int,
    inc: int | None,
    movestogo: int | None,
    movetime: int | None,
    side: int,
    ply: int,
    overhead: int,
) -> None:
    clocks = {"wtime": remaining, "winc": inc} if side == 0 else {"btime": remaining, "binc": inc}
    limits = Limits(movestogo=movestogo, movetime=movetime, **clocks)  # type: ignore[arg-type]
    budget = allocate(limits, side, ply, overhead)
    assert budget is not None
    assert MIN_MS <= budget.soft_ms <= budget.hard_ms
    assert budget.hard_ms <= max(remaining - overhead, MIN_MS)
    if movetime is not None:
        assert budget.hard_ms <= max(movetime - overhead, MIN_MS)


@pytest.mark.parametrize(
    ("clock_ms", "inc_ms", "latency_ms"),
    [(1000, 10, 5), (2000, 20, 10), (10_000, 100, 10), (3000, 200, 10), (60_000, 0, 10)],
)
@pytest.mark.parametrize("overrun", [1.0, 2.0])
def test_a_long_game_keeps_a_reserve(
    clock_ms: int, inc_ms: int, latency_ms: int, overrun: float
) -> None:
    """Spend the soft budget (or twice it, as an unstable search may, up to the hard limit)
    plus a reply latency below the increment on each of 300 moves: the clock never falls
    below the Move Overhead, so a late reply of twice the overhead still does not lose on
    time; with an increment of 100 ms or more at least four increments stay in hand.
    (Sudden death cannot stay above it forever: there the plan only has to reach the floor
    before the clock does.)"""
    overhead = 30
    clock = float(clock_ms)
    lowest = clock
    for move in range(300):
        budget = allocate(Limits(wtime=int(clock), winc=inc_ms), 0, 2 * move, overhead)
        assert budget is not None
        clock += inc_ms - min(budget.hard_ms, overrun * budget.soft_ms) - latency_ms
        lowest = min(lowest, clock)
        if inc_ms == 0 and budget.soft_ms == MIN_MS:
            break
    assert lowest >= overhead
    if inc_ms >= 100:
        assert lowest >= 4 * inc_ms


# -- the deadline --------------------------------------------------------------------------------
class HandClock:
    """A clock that shows what the test sets: ``at(ms)`` is that long after the start."""

    START = 100.0

    def __init__(self) -> None:
        self.now = self.START

    def __call__(self) -> float:
        return self.now

    def at(self, ms: float) -> float:
        self.now = self.START + ms / 1000.0
        return self.now


def deadline(
    budget: TimeBudget | None, *, pondering: bool = False
) -> tuple[Deadline, HandClock, SearchControl]:
    clock = HandClock()
    control = SearchControl(pondering=pondering, clock=clock)
    return Deadline(budget, start=clock(), clock=clock, control=control), clock, control


def test_an_untimed_deadline_is_never_reached() -> None:
    d, clock, _ = deadline(None)
    now = clock.at(10**9)
    d.single_reply()
    d.iteration_completed()
    assert not d.timed
    assert not d.hard_reached(now)
    assert not d.soft_reached()


def test_hard_and_soft_limits_count_from_the_start() -> None:
    d, clock, _ = deadline(TimeBudget(100, 500))
    clock.at(59)
    assert not d.soft_reached(0.0)
    clock.at(61)  # a stable search stops at 0.6 of the soft budget
    assert d.soft_reached(0.0)
    assert not d.soft_reached(1.0)  # an unstable one goes on, to 1.5 times it
    clock.at(151)
    assert d.soft_reached(1.0)
    assert not d.soft_reached(5.0)  # never more than twice it
    assert not d.hard_reached(clock.at(201))
    assert d.soft_reached(5.0)
    assert not d.hard_reached(clock.at(499))
    assert d.hard_reached(clock.at(501))


def test_equal_budgets_are_not_scaled() -> None:
    """``movetime``: soft = hard, and the instability cannot stretch the soft limit."""
    d, clock, _ = deadline(TimeBudget(40, 40))
    clock.at(39)
    assert not d.soft_reached(0.0)
    now = clock.at(41)
    assert d.soft_reached(0.0) and d.soft_reached(3.0) and d.hard_reached(now)


def test_the_clock_does_not_run_while_pondering() -> None:
    d, clock, control = deadline(TimeBudget(100, 500), pondering=True)
    now = clock.at(10_000)
    assert d.timed
    assert d.clock_start() is None
    assert not d.hard_reached(now) and not d.soft_reached()
    control.ponderhit()
    assert d.clock_start() == now
    assert not d.hard_reached(clock.at(10_499))
    assert d.hard_reached(clock.at(10_501))


def test_a_single_reply_needs_one_iteration() -> None:
    d, clock, _ = deadline(TimeBudget(1000, 5000))
    d.single_reply()
    assert not d.hard_reached(clock.now)  # no move to play yet
    d.iteration_completed()
    assert d.hard_reached(clock.now)
    assert d.soft_reached()


def test_a_falling_score_stretches_the_soft_limit_within_the_hard_one() -> None:
    d, clock, _ = deadline(TimeBudget(100, 500))
    clock.at(61)
    assert d.soft_reached(0.0, falling=0)
    assert d.soft_reached(0.0, falling=-300)  # a rising score changes nothing
    assert not d.soft_reached(0.0, falling=50)  # 0.6 * 1.5 of the budget
    clock.at(91)
    assert d.soft_reached(0.0, falling=50)
    assert not d.soft_reached(0.0, falling=500)  # at most doubled: 0.6 * 2
    clock.at(121)
    assert d.soft_reached(0.0, falling=500)
    assert not d.soft_reached(5.0, falling=500)  # never past twice the budget
    clock.at(201)
    assert d.soft_reached(5.0, falling=500)
