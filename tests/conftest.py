"""Shared fixtures: where the test data lives and how to start the real `brudno` process."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


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
