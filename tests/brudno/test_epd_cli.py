"""``brudno epd``'s progress on stderr: plain lines when stderr is not a terminal (at every
update with ``--progress-interval 0``, so the test does not depend on time), none with
``--quiet``; and :class:`SuiteProgress` itself, with a clock the test moves: silent before
its interval, a tqdm bar on a terminal."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pytest

from brudno.arena.epd import SuiteProgress

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


def test_suite_progress_lines_wait_for_their_interval() -> None:
    now = [100.0]
    stream = io.StringIO()
    progress = SuiteProgress("epd", 300, stream=stream, interval=5.0, clock=lambda: now[0])
    progress.update(1000)
    now[0] = 104.0
    progress.finished(True, 2000)
    assert stream.getvalue() == ""  # a run shorter than the interval says nothing
    now[0] = 110.0
    progress.update(50_000)
    assert (
        stream.getvalue() == "epd: 1/300 positions, solved 1, 50,000 nodes, 5,000 nodes/s, 10.0 s\n"
    )
    now[0] = 112.0
    progress.finished(False, 60_000)
    assert stream.getvalue().count("\n") == 1  # the next line waits five seconds more
    assert progress.line() == "epd: 2/300 positions, solved 1, 60,000 nodes, 5,000 nodes/s, 12.0 s"
    progress.close()


def test_suite_progress_without_a_total_counts_positions() -> None:
    stream = io.StringIO()
    progress = SuiteProgress("solve", None, stream=stream, interval=0, clock=lambda: 1.0)
    progress.finished(True, 10)
    assert stream.getvalue() == "solve: 1 positions, solved 1, 10 nodes, 0 nodes/s, 0.0 s\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_suite_progress_draws_a_bar_on_a_terminal() -> None:
    now = [0.0]
    terminal = Terminal()
    out = io.StringIO()
    progress = SuiteProgress("epd", 4, stream=terminal, interval=60, clock=lambda: now[0])
    assert terminal.getvalue().startswith("\repd:")  # the bar, drawn at once
    now[0] = 2.0
    progress.update(1234)  # on a terminal the bar's own pace applies, not the interval
    drawn = terminal.getvalue()
    assert "\n" not in drawn  # redrawn in place, never a log line
    assert "0/4" in drawn and "solved 0, 1,234 nodes, 617 nodes/s" in drawn
    progress.write("1/4 ok   WAC.001", out)
    assert out.getvalue() == "1/4 ok   WAC.001\n"
    progress.close()
    assert terminal.getvalue().endswith("\r")  # the bar is wiped, not left behind


def test_no_stream_no_output() -> None:
    progress = SuiteProgress("epd", 2, stream=None, interval=0)
    progress.update(5)
    progress.finished(True, 5)
    assert (progress.done, progress.solved, progress.nodes) == (1, 1, 5)
    progress.close()
