"""Signal handling for the commands that run until told to stop (serve, mqtt, match, uci).

SIGTERM (a supervisor, ``docker stop``) and SIGINT (Ctrl-C) must end these gracefully: stop
the searches, deliver the moves owed, close.  The handlers go on the running loop (so they
run as ordinary callbacks, never in the middle of a search) and come off again when the
command ends, whichever way it ends.  Only the application installs signal handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def handling_signals(
    callback: Callable[[], object], signals: Sequence[signal.Signals] = STOP_SIGNALS
) -> Iterator[None]:
    """Call ``callback`` on the running loop when one of ``signals`` arrives, while inside.

    Platforms (or threads) without loop signal handlers simply get none: the default
    behaviour of the signal stays, which is still a way to stop.
    """
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for signum in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, callback)
            installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


async def run_until_signal(
    body: Callable[[asyncio.Event], Coroutine[Any, Any, T]],
    signals: Sequence[signal.Signals] = STOP_SIGNALS,
) -> T:
    """Run ``body(stop)``, setting ``stop`` on the first of ``signals``; ``body`` decides
    what a graceful end is (close the server, finish the games) and returns the exit code."""
    stop = asyncio.Event()
    with handling_signals(stop.set, signals):
        return await body(stop)
