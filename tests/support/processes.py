"""Which processes exist: for tests that check nothing outlives the session that started it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def _stat(pid: int) -> tuple[str, int] | None:
    """``(state, parent pid)`` of a live process, ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            after_name = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return after_name[0], int(after_name[1])


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent does not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` in the process tree."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[0] != "Z":
                parents[int(entry)] = stat[1]
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def is_search_helper(pid: int) -> bool:
    """A Lazy SMP helper: a ``spawn``-started interpreter (not the resource tracker)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ")
    except (FileNotFoundError, ProcessLookupError):
        return False
    return b"spawn_main" in command


def wait_until(condition: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes (only a hang fails)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
