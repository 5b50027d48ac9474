"""The servers' budgets for ``Threads``: cores (:class:`ThreadBudget`, shared by TCP and MQTT)
and the memory each search helper costs (:meth:`MemoryBudget.reserve_helpers`, TCP)."""

from __future__ import annotations

import pytest

from engine.smp.pool import HELPER_PROCESS_MB
from protocol.transports.tcp.memory import MemoryBudget
from protocol.transports.thread_budget import ThreadBudget


def test_helper_cost_is_the_documented_figure() -> None:
    # The TCP test of the memory reason (Hash 16 + one helper = 48 MiB) relies on it.
    assert HELPER_PROCESS_MB == 32


# -- ThreadBudget ------------------------------------------------------------------------------
def test_a_request_within_both_limits_is_granted_in_full() -> None:
    budget = ThreadBudget(total=8, max_threads=4)
    assert budget.request("a", 3) == (3, "")
    assert budget.held("a") == 3
    assert budget.used == 3


def test_the_per_session_cap_cuts_a_request_down_and_says_so() -> None:
    budget = ThreadBudget(total=16, max_threads=2)
    granted, why = budget.request("a", 8)
    assert granted == 2
    assert why == "this server allows at most 2 per session"
    assert budget.held("a") == 2
    assert budget.used == 2


def test_the_total_is_shared_between_sessions() -> None:
    budget = ThreadBudget(total=5, max_threads=4)
    assert budget.request("a", 4) == (4, "")
    granted, why = budget.request("b", 3)
    assert granted == 1  # only one of the five is left
    assert why == "this server's 5 threads are shared by its sessions and 4 are in use"
    assert budget.used == 5
    assert (budget.held("a"), budget.held("b")) == (4, 1)


def test_the_total_grants_what_is_left_when_some_is() -> None:
    budget = ThreadBudget(total=6, max_threads=4)
    budget.request("a", 3)
    granted, why = budget.request("b", 4)
    assert granted == 3
    assert why == "this server's 6 threads are shared by its sessions and 3 are in use"
    assert budget.used == 6


def test_the_per_session_reason_is_given_only_when_the_cap_is_what_bound() -> None:
    # Asking beyond max_threads, but the total binds tighter: the total is the reason.
    budget = ThreadBudget(total=4, max_threads=3)
    budget.request("a", 2)
    granted, why = budget.request("b", 8)
    assert granted == 2
    assert why == "this server's 4 threads are shared by its sessions and 2 are in use"


def test_a_session_always_keeps_at_least_one_thread() -> None:
    budget = ThreadBudget(total=2, max_threads=2)
    assert budget.request("a", 2) == (2, "")
    granted, why = budget.request("b", 2)
    assert granted == 1
    assert "2 are in use" in why
    # Even beyond the total (the number of sessions is bounded elsewhere).
    granted, _ = budget.request("c", 2)
    assert granted == 1
    assert budget.used == 4
    # Asking for one is never cut down, however full the budget.
    assert budget.request("d", 1) == (1, "")


def test_a_new_request_replaces_what_the_session_held() -> None:
    budget = ThreadBudget(total=4, max_threads=4)
    assert budget.request("a", 4) == (4, "")
    # Its own four do not count against it: asking again for four is granted in full.
    assert budget.request("a", 4) == (4, "")
    assert budget.used == 4
    # Going down frees the rest for others.
    assert budget.request("a", 1) == (1, "")
    assert budget.used == 1
    assert budget.request("b", 3) == (3, "")
    assert budget.used == 4
    # Going up again is limited by what the others now hold.
    granted, why = budget.request("a", 4)
    assert granted == 1
    assert "3 are in use" in why
    assert budget.used == 4


def test_release_frees_the_session_threads() -> None:
    budget = ThreadBudget(total=3, max_threads=3)
    budget.request("a", 3)
    assert budget.request("b", 2)[0] == 1
    budget.release("a")
    assert budget.used == 1  # b's one
    assert budget.held("a") == 1  # a session that holds nothing counts its main search
    assert budget.request("b", 2) == (2, "")
    assert budget.used == 2
    budget.release("b")
    budget.release("b")  # idempotent
    budget.release("never-seen")
    assert budget.used == 0


def test_held_is_one_for_a_session_that_asked_for_nothing() -> None:
    budget = ThreadBudget(total=4, max_threads=2)
    assert budget.held("nobody") == 1
    assert budget.used == 0


@pytest.mark.parametrize(("total", "max_threads"), [(0, 1), (1, 0), (-3, 2)])
def test_limits_below_one_are_refused(total: int, max_threads: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ThreadBudget(total, max_threads)


# -- MemoryBudget.reserve_helpers ------------------------------------------------------------
def test_helpers_are_charged_on_top_of_the_hash() -> None:
    memory = MemoryBudget(limit_mb=200)
    assert memory.admit("a", 16)
    assert memory.reserve_helpers("a", 3) == 3
    assert memory.used_mb == 16 + 3 * HELPER_PROCESS_MB


def test_only_the_helpers_that_fit_are_reserved() -> None:
    memory = MemoryBudget(limit_mb=48)
    assert memory.admit("a", 16)
    assert memory.reserve_helpers("a", 2) == 1  # 32 MiB left: room for one helper
    assert memory.used_mb == 48
    assert memory.reserve_helpers("a", 2) == 1  # asking again: the same one, not fewer
    assert memory.used_mb == 48


def test_no_helper_fits_when_the_hash_fills_the_limit() -> None:
    memory = MemoryBudget(limit_mb=47)
    assert memory.admit("a", 16)
    assert memory.reserve_helpers("a", 4) == 0  # 31 MiB free: less than one helper
    assert memory.used_mb == 16
    assert memory.reserve_helpers("a", 0) == 0
    assert memory.used_mb == 16


def test_helper_reservations_replace_each_other_and_count_other_sessions() -> None:
    memory = MemoryBudget(limit_mb=16 + 16 + 3 * HELPER_PROCESS_MB)
    assert memory.admit("a", 16)
    assert memory.admit("b", 16)
    assert memory.reserve_helpers("a", 2) == 2
    assert memory.reserve_helpers("b", 3) == 1  # a's two helpers are held
    assert memory.used_mb == memory.limit_mb
    assert memory.reserve_helpers("a", 0) == 0  # a goes back to Threads 1
    assert memory.used_mb == 32 + HELPER_PROCESS_MB
    assert memory.reserve_helpers("b", 3) == 3
    assert memory.used_mb == memory.limit_mb


def test_helpers_leave_less_room_for_hash_and_sessions() -> None:
    memory = MemoryBudget(limit_mb=100)
    assert memory.admit("a", 16)
    assert memory.reserve_helpers("a", 2) == 2  # 16 + 64 = 80
    assert memory.used_mb == 80
    assert not memory.admit("b", 21)  # 101 would exceed 100
    assert memory.admit("b", 20)
    assert memory.used_mb == 100
    refusal = memory.request("a", 17)
    assert refusal is not None and refusal.startswith("Hash 17 MiB exceeds")
    assert memory.used_mb == 100  # refused: nothing changed


def test_release_frees_the_hash_and_the_helpers() -> None:
    memory = MemoryBudget(limit_mb=200)
    assert memory.admit("a", 16)
    assert memory.admit("b", 8)
    memory.reserve_helpers("a", 2)
    memory.reserve_helpers("b", 1)
    assert memory.used_mb == 24 + 3 * HELPER_PROCESS_MB
    memory.release("a")
    assert memory.used_mb == 8 + HELPER_PROCESS_MB
    memory.release("b")
    assert memory.used_mb == 0
