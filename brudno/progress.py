"""The progress display of long runs over positions (``brudno epd``, ``brudno solve``), and the
two options every such command offers for it.

A run that prints its results only at the end (``brudno epd`` without ``--verbose``) or
whose first position takes the solver minutes prints nothing for that long, which looks like
a hang.  This module shows how far it has got, on stderr, where it never mixes with the
results on stdout.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import NoReturn, TextIO

from tqdm import tqdm

from brudno.argtypes import seconds

__all__ = [
    "BAR_REFRESH",
    "PROGRESS_INTERVAL",
    "SuiteProgress",
    "add_progress_arguments",
    "progress_for",
]

PROGRESS_INTERVAL = 5.0
"""Seconds between two progress lines when stderr is not a terminal (a log file, CI)."""
BAR_REFRESH = 0.5
"""Seconds between two redraws of a terminal's progress bar between positions."""


class SuiteProgress:
    """How far a run over positions has got, on stderr: positions done (of how many, when
    known), solved so far, nodes, nodes per second and the time elapsed.

    On a terminal this is a tqdm bar redrawn in place and wiped at the end; anywhere else (a
    log file, CI, a pipe) a plain line every ``interval`` seconds, because in-place redraws
    would make a log one endless line, and runs shorter than the interval write nothing, so
    scripts keep a quiet stderr.  ``stream=None`` silences it.  Used from one thread.
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        stream: TextIO | None,
        interval: float = PROGRESS_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.solved = 0
        self.nodes = 0
        self._stream = stream
        self._interval = interval
        self._clock = clock
        self._started = self._last = clock()
        self._bar: tqdm[NoReturn] | None = None
        if stream is not None and stream.isatty():
            self._bar = tqdm(
                total=total,
                desc=label,
                unit="pos",
                file=stream,
                leave=False,
                dynamic_ncols=True,
                mininterval=BAR_REFRESH,
            )

    def update(self, nodes: int) -> None:
        """The run's node count so far (called often: it only looks at the clock)."""
        self.nodes = nodes
        self._show(self._clock())

    def finished(self, solved: bool, nodes: int | None = None) -> None:
        """One more position is done (``solved`` or not); ``nodes``: the run's count now."""
        self.done += 1
        self.solved += solved
        if nodes is not None:
            self.nodes = nodes
        now = self._clock()
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(now), refresh=False)
            self._bar.update(1)  # tqdm redraws when its own interval allows
        else:
            self._show(now)

    def write(self, text: str, file: TextIO) -> None:
        """Print a line to ``file`` without tearing the bar (both may be the terminal)."""
        if self._bar is not None:
            tqdm.write(text, file=file)
            file.flush()
        else:
            print(text, file=file, flush=True)

    def close(self) -> None:
        """Remove the bar (the results follow); a log keeps its lines.  Silent afterwards."""
        self._stream = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def line(self, now: float | None = None) -> str:
        """``epd: 12/300 positions, solved 10, 1,234,567 nodes, 45,678 nodes/s, 27.0 s``."""
        now = self._clock() if now is None else now
        done = self.done if self.total is None else f"{self.done}/{self.total}"
        return f"{self.label}: {done} positions, {self._counts(now)}, {now - self._started:.1f} s"

    def _counts(self, now: float) -> str:
        elapsed = now - self._started
        nps = round(self.nodes / elapsed) if elapsed > 0 else 0
        return f"solved {self.solved}, {self.nodes:,} nodes, {nps:,} nodes/s"

    def _show(self, now: float) -> None:
        if self._stream is None:
            return
        if self._bar is not None:
            if now - self._last >= BAR_REFRESH:
                self._last = now
                self._bar.set_postfix_str(self._counts(now))
            return
        if now - self._last >= self._interval:
            self._last = now
            self._stream.write(self.line(now) + "\n")
            self._stream.flush()


def add_progress_arguments(parser: argparse.ArgumentParser) -> None:
    """``--progress-interval`` and ``--quiet``, alike for every command that shows a
    :class:`SuiteProgress` (``args.progress_interval``, ``args.quiet``)."""
    parser.add_argument(
        "--progress-interval",
        type=seconds,
        default=PROGRESS_INTERVAL,
        metavar="SECONDS",
        help="seconds between progress lines on stderr when it is not a terminal "
        f"(default {PROGRESS_INTERVAL:g}; 0: at every update)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")


def progress_for(args: argparse.Namespace, label: str, total: int | None) -> SuiteProgress:
    """The :class:`SuiteProgress` that :func:`add_progress_arguments`' options ask for."""
    return SuiteProgress(
        label,
        total,
        stream=None if args.quiet else sys.stderr,
        interval=args.progress_interval,
    )
