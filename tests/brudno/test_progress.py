"""The progress display of runs over positions (:class:`SuiteProgress`), with a clock the test
moves: silent before its interval, a tqdm bar on a terminal."""

from __future__ import annotations

import io

from brudno.progress import SuiteProgress


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
