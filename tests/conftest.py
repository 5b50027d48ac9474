"""Shared fixtures: where the test data lives and how to start the real `brudno` process."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mosquitto_fixture import Mosquitto, WorkerProcess, unique_prefix
from tests.support.paths import DATA


def brudno_command() -> list[str]:
    """The installed `brudno` console script (tests drive the real command, not a module)."""
    scripts = Path(sysconfig.get_path("scripts"))
    for candidate in (scripts / "brudno", Path(sys.executable).parent / "brudno"):
        if candidate.exists():
            return [str(candidate)]
    found = shutil.which("brudno")
    if found is None:
        pytest.fail("the brudno command is not installed: run `python -m pip install -e .[test]`")
    return [found]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.fail(f"test data not found at {DATA} (shared/ must sit beside the repository)")
    return DATA


@pytest.fixture(scope="session")
def brudno() -> list[str]:
    return brudno_command()


# -- MQTT: a real Mosquitto broker (tests/support/mosquitto_fixture.py) --------------------


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


@pytest.fixture
def fleet() -> Iterator[list[WorkerProcess]]:
    """Worker processes started by a test; whatever is left is killed afterwards."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.close()
