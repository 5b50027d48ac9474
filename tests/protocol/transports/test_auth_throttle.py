"""The brute-force limit on its own, with an injected clock: free failures, penalties that
double up to the maximum, per address (IPv6 per /64), forgiven after a success or a quiet
spell, and bounded memory (the ports' tests: tests/brudno/test_auth_cli.py)."""

from __future__ import annotations

import pytest

from protocol.transports.auth_throttle import AuthThrottle, ThrottlePolicy

POLICY = ThrottlePolicy(free_failures=3, first_penalty_s=1.0, max_penalty_s=8.0, max_addresses=4)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_penalties_begin_after_the_free_failures_and_double_to_the_maximum() -> None:
    clock = Clock()
    throttle = AuthThrottle(POLICY, clock)
    free = [throttle.failed("10.0.0.1") for _ in range(3)]
    assert [f.penalty_s for f in free] == [0, 0, 0] and all(f.report for f in free)
    assert throttle.blocked_for("10.0.0.1") == 0
    penalties = []
    for _ in range(6):
        failure = throttle.failed("10.0.0.1")
        penalties.append((failure.penalty_s, failure.report))
        assert throttle.blocked_for("10.0.0.1") == failure.penalty_s
        clock.now += failure.penalty_s  # the attacker waits out each penalty
    # Only the failure that starts the penalties is reported: one log line per burst.
    assert penalties == [(1, True), (2, False), (4, False), (8, False), (8, False), (8, False)]
    assert throttle.blocked_for("10.0.0.2") == 0  # another address is not affected


def test_a_success_or_a_quiet_spell_forgives() -> None:
    clock = Clock()
    throttle = AuthThrottle(POLICY, clock)
    for _ in range(5):
        throttle.failed("10.0.0.1")
    assert throttle.blocked_for("10.0.0.1") == 2.0
    clock.now += 2.0
    throttle.succeeded("10.0.0.1")
    assert throttle.failed("10.0.0.1").penalty_s == 0  # free failures again
    for _ in range(4):
        throttle.failed("10.0.0.1")
    clock.now += 2 * POLICY.max_penalty_s
    assert throttle.blocked_for("10.0.0.1") == 0 and len(throttle) == 0
    assert throttle.failed("10.0.0.1").failures == 1


def test_ipv6_counts_per_64_and_memory_is_bounded() -> None:
    clock = Clock()
    throttle = AuthThrottle(POLICY, clock)
    for suffix in range(3):
        throttle.failed(f"2001:db8:0:1::{suffix + 1}")  # one /64, three hosts
    assert throttle.failed("2001:db8:0:1::99").penalty_s == 1.0
    assert throttle.blocked_for("2001:db8:0:1:ffff::1") > 0
    assert throttle.blocked_for("2001:db8:0:2::1") == 0
    for n in range(100):
        throttle.failed(f"10.1.{n // 256}.{n % 256}")
    assert len(throttle) == POLICY.max_addresses


def test_policy_is_checked() -> None:
    with pytest.raises(ValueError, match="penalties"):
        AuthThrottle(ThrottlePolicy(first_penalty_s=5, max_penalty_s=1))
    with pytest.raises(ValueError, match="max_addresses"):
        AuthThrottle(ThrottlePolicy(max_addresses=0))
