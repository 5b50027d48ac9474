"""Fixtures for the MQTT transport tests (the broker itself lives in mosquitto_fixture.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mosquitto_fixture import Mosquitto, unique_prefix


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """One broker for the whole test session (tests keep apart by topic prefix)."""
    broker = Mosquitto(tmp_path_factory.mktemp("mosquitto"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def fresh_mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A broker of the test's own, with persistence, for tests that restart it."""
    broker = Mosquitto(tmp_path, persistence=True)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def mqtt_prefix() -> str:
    return unique_prefix()
