"""compose.yaml's ``shm_size`` follows docs/deploy.md's formulas (issue 44).

``Threads`` > 1 tables live in ``/dev/shm``, 64 MiB in Docker unless ``shm_size`` says more:
the server's must hold every ``Hash`` its memory budget admits, a worker's the largest
``Hash`` of each job it runs at once.  The formulas are read from the document and the
options from the services' commands (through the real argument parser), so changing either
without the other fails here; the formulas' extra MiB must cover the margin a new table
leaves free (:data:`engine.shm.MARGIN_BYTES`).
"""

from __future__ import annotations

import json
import re

from brudno.cli import build_parser
from engine.shm import MARGIN_BYTES
from tests.brudno.test_serve_compose import _mebibytes, _service
from tests.support.paths import REPO

SERVER_FORMULA = re.compile(r"`shm_size` \u2265 `--max-memory-mb` \+ (\d+) MiB")
WORKER_FORMULA = re.compile(r"`shm_size` \u2265 `--max-hash` \u00d7 `--concurrency` \+ (\d+) MiB")


def _documented(formula: re.Pattern[str]) -> int:
    deploy = " ".join((REPO / "docs" / "deploy.md").read_text().split())
    found = formula.search(deploy)
    assert found, f"docs/deploy.md no longer states {formula.pattern!r}"
    extra = int(found[1])
    assert extra << 20 >= MARGIN_BYTES + (1 << 20), "the margin and the scoreboards must fit"
    return extra


def _command_and_shm(name: str) -> tuple[list[str], float]:
    service = _service((REPO / "compose.yaml").read_text(), name)
    command = re.search(r"command:\s*(\[[^\]]*\])", service)
    assert command, f"the {name} service has no command list"
    size = re.search(r"^\s*shm_size:\s*(\S+)", service, re.MULTILINE)
    assert size, f"the {name} service has no shm_size"
    return json.loads(command[1]), _mebibytes(size[1])


def test_the_servers_shm_size_holds_its_memory_budget() -> None:
    command, shm = _command_and_shm("brudno")
    args = build_parser().parse_args(command)
    needed = args.max_memory_mb + _documented(SERVER_FORMULA)
    assert needed <= shm < needed * 1.25, (shm, needed)
    assert f"`shm_size: {shm:.0f}m`" in (REPO / "docs" / "deploy.md").read_text()


def test_the_workers_shm_size_holds_its_jobs_tables() -> None:
    command, shm = _command_and_shm("worker")
    args = build_parser().parse_args(command)
    needed = args.max_hash * args.concurrency + _documented(WORKER_FORMULA)
    assert needed <= shm < needed * 1.25, (shm, needed)
    assert f"`shm_size: {shm:.0f}m`" in (REPO / "docs" / "deploy.md").read_text()
