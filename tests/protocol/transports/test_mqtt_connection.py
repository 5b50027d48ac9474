"""Reading the broker's answers: which SUBACK reason codes are refusals."""

from __future__ import annotations

from protocol.transports.mqtt.connection import reason_failed


def test_subscription_reason_codes() -> None:
    assert reason_failed([1]) is None
    assert reason_failed([0x9E]) == 0x9E
    assert reason_failed((0, 0x87)) == 0x87
