"""Fixtures of the container tests: the images (built once per run) and a :class:`Docker`
per test that removes its containers and networks afterwards.  The tests are marked
``container`` (``pytestmark``): the default ``python -m pytest`` leaves them out; ``.ci/run``
runs them, and they fail, never skip, without a Docker daemon."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.container.docker_cli import Docker, images, require_daemon


@pytest.fixture(scope="session")
def built_images() -> tuple[str, str]:
    require_daemon()
    return images()


@pytest.fixture
def docker_env(built_images: tuple[str, str]) -> Iterator[Docker]:
    image, broker_image = built_images
    env = Docker(image, broker_image)
    try:
        yield env
    finally:
        env.close()
