"""The image's one HEALTHCHECK fits each thing the image runs (brudno/commands/healthcheck.py).

The server mode is in test_server_image.py; here the fleet worker (healthy while its status
file says online, unhealthy once the broker is gone) and the plain stdio engine.
"""

from __future__ import annotations

import pytest

from tests.container.docker_cli import Container, Docker, docker

pytestmark = pytest.mark.container

STATUS_FILE = "/tmp/brudno-worker.status"


def start_broker(env: Docker, network: str, *publish: str) -> Container:
    return env.run("--network", network, *publish, image=env.broker_image)


def worker_command(broker: Container, worker_id: str, *extra: str) -> tuple[str, ...]:
    return (
        "mqtt",
        "--broker",
        f"mqtt://{broker.name}:1883",
        "--id",
        worker_id,
        "--status-file",
        STATUS_FILE,
        "--reconnect-max",
        "1",
        *extra,
    )


def test_a_worker_is_healthy_while_online_and_unhealthy_without_its_broker(
    docker_env: Docker,
) -> None:
    network = docker_env.network()
    broker = start_broker(docker_env, network)
    worker = docker_env.run(
        "--network", network, "--read-only", "--tmpfs", "/tmp",
        command=worker_command(broker, "health-w1"),
    )  # fmt: skip
    worker.wait_health("healthy")
    assert "worker: online" in worker.health_log()

    docker("stop", broker.name)  # the broker goes away; the worker keeps retrying
    worker.wait_health("unhealthy")
    assert "worker: offline" in worker.health_log()


def test_the_stdio_engine_is_healthy_while_it_runs(docker_env: Docker) -> None:
    engine = docker_env.run("-i", command=("uci",))  # -i: its stdin stays open
    engine.wait_health("healthy")
    assert "brudno uci is running" in engine.health_log()
