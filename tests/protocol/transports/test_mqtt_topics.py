"""The topic tree: names built and taken apart, and the levels a setting may not hold."""

from __future__ import annotations

import pytest

from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.errors import MqttConfigError
from protocol.transports.mqtt.topics import (
    check_topic_prefix,
    game_from_topic,
    jobs_filter,
    status_topic,
    valid_response_topic,
    worker_from_status_topic,
)


def test_topics() -> None:
    assert jobs_filter("brudno", "bots") == "$share/bots/brudno/jobs/#"
    assert status_topic("fleet/eu", "w-1") == "fleet/eu/workers/w-1/status"
    assert worker_from_status_topic("fleet/eu/workers/w-1/status", "fleet/eu") == "w-1"
    assert worker_from_status_topic("fleet/eu/workers/a/b/status", "fleet/eu") is None
    assert worker_from_status_topic("other/workers/w-1/status", "fleet/eu") is None
    assert game_from_topic("brudno/jobs/tictactoe", "brudno") == "tictactoe"
    assert game_from_topic("brudno/jobs/chess/extra", "brudno") == "chess/extra"
    assert valid_response_topic("clients/me/replies")
    for bad in ("", "a/+/b", "a/#", None, b"bytes", "nul\x00"):
        assert not valid_response_topic(bad)
    for bad_prefix in ("", "/brudno", "brudno/", "a/+", "a//b"):
        with pytest.raises(MqttConfigError):
            check_topic_prefix(bad_prefix)
    with pytest.raises(MqttConfigError):
        WorkerConfig(group="a/b", worker_id="w").check()
    with pytest.raises(MqttConfigError):
        WorkerConfig(worker_id="a+b").check()
    with pytest.raises(MqttConfigError):
        WorkerConfig(worker_id="w", concurrency=0).check()
