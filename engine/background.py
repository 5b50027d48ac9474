"""The start of a search process that runs beside the one that serves: both pools use it.

A search helper (:mod:`engine.smp.helper`) and a server's worker (``protocol.uci.workers``)
each leave their parent's process group, so a terminal's Ctrl-C or a signal to the group
reaches only the parent, which then ends them in order; and each runs nicer than its parent,
so the process that owns the clock and answers clients keeps its share of a busy machine.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["become_background_process"]


def become_background_process(niceness: int, *, batch: bool = False) -> None:
    """Leave the parent's process group and add ``niceness`` (nothing when 0 or less);
    ``batch`` also asks for ``SCHED_BATCH`` where Linux offers it (a batch process never
    preempts a waking interactive one).  Each step is skipped where the system lacks it."""
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no setpgrp (Windows)
        os.setpgrp()
    if niceness <= 0:
        return
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no nice (Windows)
        os.nice(niceness)
    policy = getattr(os, "SCHED_BATCH", None)
    if batch and policy is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, policy, os.sched_param(0))
