"""A background search process leaves its parent's process group and runs nicer.

Both pools start their processes through ``engine.background`` (the Lazy SMP helpers and the
server's workers): a Ctrl-C or a signal to the server's group must not reach them, and they
must not take the CPU from the process that owns the clock.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.connection import Connection

import pytest

from engine.background import become_background_process


def _report(conn: Connection, niceness: int, batch: bool) -> None:
    become_background_process(niceness, batch=batch)
    conn.send((os.getpgid(0), os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)))
    conn.close()


def _start(niceness: int, batch: bool) -> tuple[int, int, int]:
    context = multiprocessing.get_context("spawn")
    parent_end, child_end = context.Pipe(duplex=False)
    process = context.Process(target=_report, args=(child_end, niceness, batch))
    process.start()
    child_end.close()
    report: tuple[int, int, int] = parent_end.recv()
    process.join()
    assert process.exitcode == 0
    assert report[0] == process.pid  # a process group of its own
    return report


@pytest.mark.parametrize("batch", [False, True])
def test_a_background_process_has_its_own_group_and_runs_nicer(batch: bool) -> None:
    _, nice, policy = _start(5, batch)
    assert nice == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)
    assert policy == (os.SCHED_BATCH if batch else os.sched_getscheduler(0))


def test_no_niceness_leaves_the_priority_alone() -> None:
    _, nice, policy = _start(0, True)
    assert nice == os.getpriority(os.PRIO_PROCESS, 0)
    assert policy == os.sched_getscheduler(0)
