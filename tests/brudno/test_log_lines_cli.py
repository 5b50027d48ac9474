"""Log lines that client text cannot forge: a real ``brudno mqtt`` worker behind a real
Mosquitto logs a job's topic, chosen by whoever publishes it, with its control characters
escaped (the escaping itself: tests/protocol/transports/test_events.py)."""

from __future__ import annotations

import re
from pathlib import Path

import aiomqtt
from paho.mqtt.packettypes import PacketTypes

from protocol.transports.mqtt.topics import jobs_topic
from protocol.transports.mqtt.wire import new_properties
from tests.support.http_helpers import wait_for_file_line
from tests.support.mosquitto_fixture import Mosquitto, WorkerProcess, ask_client

FORGED = "x\u2028event=forged session=s1\u2029red"


async def test_a_topic_with_control_characters_cannot_forge_a_worker_log_line(
    mosquitto: Mosquitto, mqtt_prefix: str, brudno: list[str], tmp_path: Path
) -> None:
    worker = WorkerProcess(brudno, mosquitto, mqtt_prefix, "log-w1", tmp_path)
    try:
        async with ask_client(mosquitto, mqtt_prefix) as ask:
            await ask.wait_workers(1, 60.0)
        async with aiomqtt.Client(
            "127.0.0.1", mosquitto.port, protocol=aiomqtt.ProtocolVersion.V5
        ) as client:
            props = new_properties(PacketTypes.PUBLISH)
            props.ResponseTopic = f"{mqtt_prefix}/replies/log-test"
            props.CorrelationData = b"forged"
            await client.publish(
                jobs_topic(mqtt_prefix, FORGED), b"go depth 1", qos=1, properties=props
            )
        await wait_for_file_line(worker.log_path, re.compile(r"event=rejected "))
    finally:
        worker.close()
    log = worker.log_text()
    # str.splitlines() (and many log shippers) break lines at U+2028 and U+2029 too.
    assert not any(line.startswith("event=forged") for line in log.splitlines()), log
    assert "\u2028" not in log and "\u2029" not in log, log
    assert "x\\u2028event=forged session=s1\\u2029red" in log, log
