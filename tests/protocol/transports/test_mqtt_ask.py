"""The ask client against a real Mosquitto: what it knows of the workers' presence."""

from __future__ import annotations

import pytest

from protocol.transports.mqtt.ask import AskOptions, NoWorkerOnlineError
from tests.support.mosquitto_fixture import HANG_TIMEOUT, Mosquitto, ask_client, running_worker
from tests.support.tcp_helpers import ensure_warm


async def test_the_ask_client_knows_who_is_online(mosquitto: Mosquitto, mqtt_prefix: str) -> None:
    await ensure_warm()
    async with ask_client(mosquitto, mqtt_prefix) as ask:
        assert await ask.online_workers() == []
        with pytest.raises(NoWorkerOnlineError, match="no worker is online"):
            await ask.ask(
                "chess", "go depth 1", timeout=HANG_TIMEOUT, options=AskOptions(require_worker=True)
            )
    async with (
        running_worker(mosquitto, mqtt_prefix) as worker,
        ask_client(mosquitto, mqtt_prefix) as ask,
    ):
        worker_id = worker.config.worker_id
        assert await ask.online_workers() == [worker_id]
        answer = await ask.ask(
            "chess", "go depth 1", timeout=HANG_TIMEOUT, options=AskOptions(require_worker=True)
        )
        assert answer.worker == worker_id and not answer.error
    async with ask_client(mosquitto, mqtt_prefix) as ask:
        assert await ask.online_workers() == []
        assert ask.workers == {worker_id: "offline"}
