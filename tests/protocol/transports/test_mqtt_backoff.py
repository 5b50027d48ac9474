"""Reconnection delays."""

from __future__ import annotations

from protocol.transports.mqtt.backoff import Backoff


def test_backoff_doubles_to_its_ceiling_and_starts_over() -> None:
    low = Backoff(0.5, 4.0, rng=lambda: 0.0)
    assert [low.next_delay() for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    high = Backoff(0.5, 4.0, rng=lambda: 1.0)
    assert [high.next_delay() for _ in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    high.reset()
    assert high.next_delay() == 0.5
