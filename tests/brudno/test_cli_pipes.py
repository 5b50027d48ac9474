"""A reader that closes the pipe early (``brudno lab | head -1``) ends every subcommand
quietly: exit status 141 (128 + SIGPIPE, as a shell shows for ``yes | head -1``) and no
traceback on stderr.

Most cases give the command a pipe whose read end is already closed, so its very first write
fails whatever the timing.  ``solve -`` is driven line by line instead, which closes the pipe
after the first line of output as ``head -1`` does, and still fails the next write for sure.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest

EXIT_BROKEN_PIPE = 141


def run_into_closed_pipe(command: list[str], *, cwd: Path | None = None) -> tuple[int, str]:
    """Run ``command`` with stdout a pipe nobody reads any more; (exit status, stderr)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=120,
            cwd=cwd,
        )
    finally:
        os.close(write_end)
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    "arguments",
    [
        ["lab", "--tree", "3:4"],
        ["lab", "--tree", "2:3", "--csv"],
        ["perft", "2"],
        ["bench", "--game", "tictactoe", "--depth", "2"],
        ["solve", "4455"],
        ["solve", "--game", "grundy", "7"],
    ],
    ids=" ".join,
)
def test_a_closed_stdout_ends_the_command_quietly(brudno: list[str], arguments: list[str]) -> None:
    status, stderr = run_into_closed_pipe([*brudno, *arguments])
    assert "Traceback" not in stderr
    assert "BrokenPipeError" not in stderr  # not even as "Exception ignored" at exit
    assert status == EXIT_BROKEN_PIPE


def test_epd_verbose_into_a_closed_pipe(brudno: list[str], tmp_path: Path) -> None:
    """The per-position lines are printed from inside the event loop (a task group), where
    the error arrives wrapped in an exception group; the engine processes are still shut."""
    suite = tmp_path / "mates.epd"
    suite.write_text(
        '6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id "back rank";\n'
        '7k/8/5K2/6Q1/8/8/8/8 w - - bm Qg7#; id "queen";\n',
        encoding="utf-8",
    )
    status, stderr = run_into_closed_pipe([*brudno, "epd", "--verbose", "--depth", "1", str(suite)])
    assert "Traceback" not in stderr
    assert "BrokenPipeError" not in stderr
    assert status == EXIT_BROKEN_PIPE


def test_solve_stops_quietly_when_the_reader_leaves_after_the_first_line(
    brudno: list[str],
) -> None:
    process = subprocess.Popen(
        [*brudno, "solve", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    try:
        process.stdin.write("4455\n")
        process.stdin.flush()
        assert process.stdout.readline() == "position   4455\n"
        process.stdout.close()  # what `head -1` does after its line
        with contextlib.suppress(BrokenPipeError):  # it may already have gone
            process.stdin.write("44455554221\n")
            process.stdin.close()
        status = process.wait(timeout=60)
        stderr = process.stderr.read()
    finally:
        process.kill()
        process.wait()
    assert "Traceback" not in stderr
    assert status == EXIT_BROKEN_PIPE


def test_help_into_a_closed_pipe(brudno: list[str]) -> None:
    """argparse drops a help text it cannot write; the command still ends without a word."""
    status, stderr = run_into_closed_pipe([*brudno, "--help"])
    assert stderr == ""
    assert status in (0, EXIT_BROKEN_PIPE)
