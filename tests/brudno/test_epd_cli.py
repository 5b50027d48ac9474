"""``brudno epd``'s progress on stderr: plain lines when stderr is not a terminal (at every
update with ``--progress-interval 0``, so the test does not depend on time), none with
``--quiet``.  :class:`brudno.progress.SuiteProgress` itself is tested in test_progress.py."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

PROGRESS_LINE = re.compile(
    r"epd: (\d+)/(\d+) positions, solved (\d+), ([\d,]+) nodes, [\d,]+ nodes/s, \d+\.\d s"
)


@pytest.fixture
def mate_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "mates.epd"
    suite.write_text(
        '6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id "back rank";\n'
        '7k/8/5K2/6Q1/8/8/8/8 w - - bm Qg7#; id "queen";\n'
        '7k/8/5K2/6Q1/8/8/8/8 w - - bm Kg6; id "wrong on purpose";\n',
        encoding="utf-8",
    )
    return suite


def run_epd(brudno: list[str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*brudno, "epd", "--depth", "2", *arguments],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_progress_lines_on_stderr_that_is_not_a_terminal(
    brudno: list[str], mate_suite: Path
) -> None:
    done = run_epd(brudno, "--progress-interval", "0", str(mate_suite))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "solved 2/3"
    progress = [m for line in done.stderr.splitlines() if (m := PROGRESS_LINE.fullmatch(line))]
    assert progress, done.stderr
    assert all(m.group(2) == "3" for m in progress)
    positions = [int(m.group(1)) for m in progress]
    assert positions == sorted(positions) and positions[-1] == 3
    assert progress[-1].group(3) == "2"  # solved so far, at the end: the suite's result
    nodes = [int(m.group(4).replace(",", "")) for m in progress]
    assert nodes == sorted(nodes) and nodes[-1] > 0  # the engine's own node counts
    assert set(done.stderr.splitlines()) == {m.group(0) for m in progress}  # nothing else


def test_quiet_silences_progress(brudno: list[str], mate_suite: Path) -> None:
    done = run_epd(brudno, "--quiet", "--progress-interval", "0", str(mate_suite))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_bad_progress_interval_is_an_argument_error(brudno: list[str], mate_suite: Path) -> None:
    done = run_epd(brudno, "--progress-interval", "-1", str(mate_suite))
    assert done.returncode == 2
    assert "--progress-interval: must not be negative" in done.stderr
