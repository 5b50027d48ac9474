"""``brudno uci`` (and plain ``brudno``): the engine on stdin/stdout, as GUIs start it.

Options are set through UCI's ``setoption``, so the command line has none.  This is the
command GUIs and match tools launch for every game, so it imports only what the stdio session
needs: its start-up time is every game's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from brudno.signals import handling_signals
from protocol.transports.stdio import serve_stdio

__all__ = ["EXIT_INTERRUPTED", "configure", "run"]

EXIT_INTERRUPTED = 130
"""128 + SIGINT: a second Ctrl-C that interrupted a session which did not finish."""


def configure(parser: argparse.ArgumentParser) -> None:
    del parser  # no options: everything is set through UCI's setoption


def run(args: argparse.Namespace) -> int:
    """The engine on stdio.  The first Ctrl-C (SIGINT) or a SIGTERM acts as ``quit``: the
    search stops, its ``bestmove`` is printed and the process exits 0; a second SIGINT
    interrupts for real (exit 130), for a session that does not finish."""
    del args
    try:
        return asyncio.run(_serve())
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _serve() -> int:
    quit_now = asyncio.Event()
    with handling_signals(quit_now.set, (signal.SIGTERM,)), contextlib.ExitStack() as first:

        def first_interrupt() -> None:
            quit_now.set()
            # Off again, so the next Ctrl-C is Python's KeyboardInterrupt: a real interrupt.
            first.close()

        first.enter_context(handling_signals(first_interrupt, (signal.SIGINT,)))
        return await serve_stdio(interrupt=quit_now)
