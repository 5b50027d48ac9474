"""The Docker command line, as the container tests drive it: images, containers, networks.

Every call goes through the real ``docker`` client to the real daemon.  The images are the
ones ``.ci/run`` builds (docs/deploy.md, "Container"): a base made from Debian's packages by
``docker/make-base-image`` unless ``BRUDNO_TEST_PYTHON_IMAGE`` names another, and the project's
Dockerfile built on it.  :func:`images` makes missing base images and builds the Dockerfile
(a cached build is quick, and a stale image would test old code) unless ``BRUDNO_TEST_IMAGE``
names an image built already (``.ci/run`` builds it as a step of its own).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.paths import REPO

DOCKER_TIMEOUT_S = 600.0
"""Only a hang fails: an image build on a loaded 2-core machine takes minutes."""
HEALTH_TIMEOUT_S = 120.0
HEALTH_INTERVAL = "1s"
"""The image's own check, run every second instead of every 30 s so the tests need not wait."""
PYTHON_BASE = os.environ.get("BRUDNO_TEST_PYTHON_IMAGE", "brudno-base/python:3.11-bookworm")
MOSQUITTO_BASE = os.environ.get("BRUDNO_TEST_MOSQUITTO_IMAGE", "brudno-base/mosquitto:2-bookworm")
PREBUILT_IMAGE = os.environ.get("BRUDNO_TEST_IMAGE")
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


class DockerError(AssertionError):
    """A docker command failed; the message holds its output."""


def docker(*args: str, check: bool = True, timeout: float = DOCKER_TIMEOUT_S) -> str:
    """Run ``docker ARGS``; its stdout (stripped).  With ``check``, a failure raises."""
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise DockerError(f"docker {' '.join(args)} -> {done.returncode}\n{done.stderr}")
    return done.stdout.strip()


def require_daemon() -> None:
    """Raise (never skip) when no Docker daemon answers: these tests exist to run it."""
    try:
        docker("info", "--format", "{{.ServerVersion}}", timeout=60)
    except (OSError, DockerError) as exc:
        raise DockerError(f"no Docker daemon answers (start dockerd; see .ci/run): {exc}") from exc


def _exists(image: str) -> bool:
    return bool(docker("images", "-q", image))


def images() -> tuple[str, str]:
    """The tags of the Brudno image and the broker image, built if needed."""
    script = str(REPO / "docker" / "make-base-image")
    extra = ["--ca-bundle", str(CA_BUNDLE)] if CA_BUNDLE.is_file() else []
    for target, tag in (("python", PYTHON_BASE), ("mosquitto", MOSQUITTO_BASE)):
        if not _exists(tag):
            subprocess.run(
                [script, target, "--tag", tag, *extra], check=True, timeout=DOCKER_TIMEOUT_S
            )
    if PREBUILT_IMAGE is not None:
        if not _exists(PREBUILT_IMAGE):
            raise DockerError(f"BRUDNO_TEST_IMAGE={PREBUILT_IMAGE} does not exist")
        return PREBUILT_IMAGE, MOSQUITTO_BASE
    image = "brudno:test"
    subprocess.run(
        ["docker", "build", "-q", "--build-arg", f"PYTHON_IMAGE={PYTHON_BASE}", "-t", image, "."],
        cwd=REPO,
        check=True,
        timeout=DOCKER_TIMEOUT_S,
        env={**os.environ, "DOCKER_BUILDKIT": "0"},  # Debian's docker.io has no buildx
        stdout=subprocess.DEVNULL,
    )
    return image, MOSQUITTO_BASE


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Container:
    """One running container, named uniquely; :meth:`remove` when done."""

    name: str

    def inspect(self, template: str) -> str:
        return docker("inspect", "--format", template, self.name)

    @property
    def health(self) -> str:
        return self.inspect("{{if .State.Health}}{{.State.Health.Status}}{{end}}")

    def health_log(self) -> str:
        return self.inspect("{{json .State.Health}}")

    def wait_health(self, wanted: str, timeout: float = HEALTH_TIMEOUT_S) -> None:
        """Wait until Docker reports ``wanted`` (``healthy``/``unhealthy``); only a hang fails."""
        end = time.monotonic() + timeout
        while (status := self.health) != wanted:
            if time.monotonic() > end or self.inspect("{{.State.Running}}") != "true":
                raise AssertionError(
                    f"{self.name} is {status!r}, not {wanted!r}: {self.health_log()}\n{self.logs()}"
                )
            time.sleep(0.5)

    def exec(self, *command: str) -> str:
        return docker("exec", self.name, *command)

    def logs(self) -> str:
        done = subprocess.run(
            ["docker", "logs", self.name], capture_output=True, text=True, timeout=60, check=False
        )
        return done.stdout + done.stderr

    def exit_code(self) -> int:
        return int(self.inspect("{{.State.ExitCode}}"))

    def remove(self) -> None:
        docker("rm", "-f", "-v", self.name, check=False)


@dataclass
class Docker:
    """Starts containers and networks for one test and removes them all afterwards."""

    image: str
    broker_image: str
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    containers: list[Container] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)

    def run(self, *args: str, image: str | None = None, command: tuple[str, ...] = ()) -> Container:
        """``docker run -d`` with the token in the environment and the check every second."""
        container = Container(f"brudno-test-{uuid.uuid4().hex[:10]}")
        self.containers.append(container)
        docker(
            "run",
            "-d",
            "--name",
            container.name,
            "--health-interval",
            HEALTH_INTERVAL,
            "-e",
            f"BRUDNO_TOKEN={self.token}",
            *args,
            image or self.image,
            *command,
        )
        return container

    def network(self) -> str:
        name = f"brudno-test-{uuid.uuid4().hex[:10]}"
        docker("network", "create", name)
        self.networks.append(name)
        return name

    def close(self) -> None:
        for container in reversed(self.containers):
            container.remove()
        for network in self.networks:
            docker("network", "rm", network, check=False)


def published_port(container: Container, port: int) -> int:
    """The host port (on loopback) that ``port`` of ``container`` is published on."""
    mapping = json.loads(container.inspect("{{json .NetworkSettings.Ports}}"))
    return int(mapping[f"{port}/tcp"][0]["HostPort"])
