"""The topic tree: names built and taken apart, and the levels a setting may not hold."""

from __future__ import annotations

import pytest

from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.errors import MqttConfigError
from protocol.transports.mqtt.topics import (
    ReplyTopics,
    check_topic_prefix,
    client_reply_topic,
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


def test_replies_go_only_under_the_reply_prefixes() -> None:
    default = ReplyTopics.for_fleet("brudno")
    assert default.allowed == ("brudno/replies/",)
    assert default.permits("brudno/replies/alice/c1")
    for topic in (
        "brudno/workers/w1/status",  # a worker's presence
        "brudno/jobs/chess",  # the jobs tree: replies would come back as jobs
        "brudno/replies/",  # the prefix itself names no one
        "brudno/repliesX/a",
        "other/replies/a",
        "$SYS/broker/x",
        "brudno/replies/+",
    ):
        assert not default.permits(topic), topic
    wider = ReplyTopics.for_fleet("brudno", ("brudno/replies", "apps/chess/"))
    assert wider.allowed == ("brudno/replies/", "apps/chess/")
    assert wider.permits("apps/chess/game-7") and not wider.permits("apps/chessboard")
    everything = ReplyTopics.for_fleet("fleet", ("shared/",))
    assert not everything.permits("fleet/workers/w1/status")
    for bad in ("brudno/jobs", "brudno/workers/w1", "$share/x", "a/+/b", ""):
        with pytest.raises(MqttConfigError):
            ReplyTopics.for_fleet("brudno", (bad,))
    with pytest.raises(MqttConfigError, match="inside brudno/jobs/"):
        WorkerConfig(worker_id="w", reply_prefixes=("brudno/jobs/",)).check()


def test_a_client_reply_topic_is_keyed_on_its_user_name() -> None:
    assert client_reply_topic("brudno", "c1") == "brudno/replies/c1"
    assert client_reply_topic("brudno", "c1", "alice") == "brudno/replies/alice/c1"
    for user in ("a/b", "+", "#", ""):
        with pytest.raises(MqttConfigError):
            client_reply_topic("brudno", "c1", user)
