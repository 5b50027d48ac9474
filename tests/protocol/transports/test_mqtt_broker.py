"""Broker settings: URLs, the URL a setting shows, and a broker with TLS and passwords."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import chess
import pytest

from protocol.transports.mqtt.ask import AskClient
from protocol.transports.mqtt.broker import BrokerSettings, parse_broker_url
from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.errors import FatalBrokerError, MqttConfigError
from protocol.transports.mqtt.worker import MqttWorker
from tests.support.mosquitto_fixture import (
    HANG_TIMEOUT,
    Mosquitto,
    running_worker,
    secure_mosquitto,
    unique_prefix,
)
from tests.support.tcp_helpers import ensure_warm


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mqtt://broker.example:1884", ("broker.example", 1884, False)),
        ("mqtt://broker.example", ("broker.example", 1883, False)),
        ("tcp://10.0.0.5:1883", ("10.0.0.5", 1883, False)),
        ("mqtts://hivemq.cloud", ("hivemq.cloud", 8883, True)),
        ("ssl://emqx.local:8884", ("emqx.local", 8884, True)),
        ("127.0.0.1:1999", ("127.0.0.1", 1999, False)),
        ("localhost", ("localhost", 1883, False)),
        ("mqtt://[::1]:1883", ("::1", 1883, False)),
    ],
)
def test_broker_urls(url: str, expected: tuple[str, int, bool]) -> None:
    assert parse_broker_url(url) == expected


@pytest.mark.parametrize(
    "url",
    ["http://x:1883", "mqtt://", "mqtt://x:99999", "mqtt://user:pw@x:1883", "mqtt://x/path"],
)
def test_bad_broker_urls(url: str) -> None:
    with pytest.raises(MqttConfigError):
        parse_broker_url(url)


def test_broker_settings_show_their_url() -> None:
    assert BrokerSettings("h", 1884).url == "mqtt://h:1884"
    assert BrokerSettings("::1", 8883, tls=True).url == "mqtts://[::1]:8883"


@pytest.fixture
def secure_broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with secure_mosquitto(tmp_path) as broker:
        yield broker


async def test_tls_with_a_password(secure_broker: Mosquitto, tmp_path: Path) -> None:
    await ensure_warm()
    mqtt_prefix = unique_prefix()
    good = secure_broker.settings(
        tls=True, cafile=tmp_path / "ca.pem", username="bot", password="correct horse"
    )
    async with (
        running_worker(secure_broker, mqtt_prefix, broker=good) as worker,
        AskClient(good, prefix=mqtt_prefix) as ask,
    ):
        answer = await ask.ask("chess", "go depth 2", timeout=HANG_TIMEOUT)
        assert chess.Move.from_uci(answer.bestmove or "") in chess.Board().legal_moves
        assert answer.worker == worker.config.worker_id

    # Wrong password: the worker gives up at once (retrying cannot fix it).
    wrong = WorkerConfig(
        broker=secure_broker.settings(
            tls=True, cafile=tmp_path / "ca.pem", username="bot", password="wrong"
        ),
        prefix=mqtt_prefix,
        worker_id="intruder",
    )
    with pytest.raises(FatalBrokerError, match="refused the login"):
        await asyncio.wait_for(MqttWorker(wrong).run(asyncio.Event()), HANG_TIMEOUT)

    # Without our CA the broker's certificate is not trusted.
    with pytest.raises(aiomqtt.MqttError):
        untrusted = secure_broker.settings(tls=True, username="bot", password="correct horse")
        async with AskClient(untrusted, prefix=mqtt_prefix):
            pass
