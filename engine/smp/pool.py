"""The main search's side of Lazy SMP: the helper processes, started once and kept.

:class:`HelperPool` starts ``n`` helpers (:mod:`engine.smp.helper`) with the ``spawn`` start
method: a fresh interpreter inherits no threads, locks or file descriptors from the process
that starts it (the stdio engine's event loop, a server's worker), so a helper holds no copy
of anyone's pipe and sees end-of-file the moment its parent goes.  Spawning costs an import of
the engine (a few hundred milliseconds), paid once when ``Threads`` is set, not per move.

Per search: :meth:`begin` sends the position to every live helper, :meth:`stop` stops them
through the scoreboard, :meth:`lines` collects the iterations they completed (drained without
blocking, also while the main search runs, so a helper never waits on a full pipe).  A helper
that died (killed, out of memory) is noticed at the latest by the next :meth:`begin`, which
starts a replacement without waiting for it: the search goes on with the others meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext
from multiprocessing.process import BaseProcess
from typing import Any

from engine.info import SearchInfo
from engine.limits import Limits
from engine.search import SearchConfig
from engine.smp import messages as msg
from engine.smp.helper import helper_main
from engine.smp.scoreboard import Scoreboard
from engine.tt import SharedTable

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 30.0
"""How long :meth:`HelperPool.wait_ready` waits for helpers to start (a loaded machine)."""
IDLE_TIMEOUT_S = 5.0
"""How long :meth:`HelperPool.wait_idle` waits for helpers to finish what they were sent."""
HELPER_PROCESS_MB = 32
"""Memory a helper process costs besides the shared table: an interpreter with the engine and
python-chess imported holds about 17 MiB of its own after a search (measured as ``RssAnon``
on CPython 3.11), plus its move-ordering memory and the file pages it maps; servers charge
this per helper against their memory limit."""
EXIT_GRACE_S = 1.0
"""How long :meth:`HelperPool.close` waits for a helper to exit before killing it."""


@dataclass(slots=True)
class _Helper:
    index: int
    process: BaseProcess
    conn: Connection
    ready: bool = False
    idle: bool = True
    alive: bool = True
    best: SearchInfo | None = None
    best_job: int = 0
    failures: list[str] = field(default_factory=list)


class HelperPool:
    """``n`` helper processes sharing ``table`` with the process that owns this pool."""

    def __init__(self, n: int, table: SharedTable, *, context: SpawnContext | None = None) -> None:
        self._context = context or multiprocessing.get_context("spawn")
        self._table = table
        self._board = Scoreboard.create(n)
        self._job = 0
        self._helpers = [self._start(i) for i in range(n)]
        self.restarts = 0
        """Helpers started again after they died."""

    @property
    def size(self) -> int:
        return len(self._helpers)

    @property
    def pids(self) -> list[int]:
        """Process ids of the helpers alive now."""
        return [h.process.pid for h in self._helpers if h.alive and h.process.pid is not None]

    def _start(self, index: int) -> _Helper:
        parent_conn, child_conn = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=helper_main,
            args=(child_conn, index, self._table, self._board.handle, os.getpid()),
            name=f"brudno-helper-{index + 1}",
            daemon=True,
        )
        process.start()
        child_conn.close()
        return _Helper(index, process, parent_conn)

    # -- messages ------------------------------------------------------------------------------
    def _send(self, helper: _Helper, message: msg.ToHelper) -> None:
        if not helper.alive:
            return
        try:
            helper.conn.send(message)
        except OSError:
            self._died(helper, "its pipe broke")

    def _died(self, helper: _Helper, why: str) -> None:
        if not helper.alive:
            return
        helper.alive = False
        helper.idle = True
        with contextlib.suppress(OSError):
            helper.conn.close()
        log.warning("search helper %s ended (%s)", helper.process.pid, why)

    def _drain(self, helper: _Helper, timeout: float = 0.0) -> None:
        """Read what ``helper`` sent, waiting up to ``timeout`` for the first message."""
        conn = helper.conn
        try:
            if not helper.alive or not conn.poll(timeout):
                return
            while helper.alive and conn.poll():
                self._receive(helper, conn.recv())
        except (EOFError, OSError):
            self._died(helper, "it closed its pipe")

    def _receive(self, helper: _Helper, message: msg.FromHelper) -> None:
        match message:
            case msg.HelperReady():
                helper.ready = True
            case msg.HelperLine(job=job, info=info):
                if job == self._job and (helper.best_job != job or _deeper(info, helper.best)):
                    helper.best, helper.best_job = info, job
            case msg.HelperIdle(job=job):
                if job in {0, self._job}:
                    helper.idle = True
            case msg.HelperFailed(job=job, description=description):
                log.error("search helper %s failed: %s", helper.process.pid, description)
                if job == self._job:
                    helper.idle = True

    def _wait_all(self, done: Any, timeout: float) -> bool:
        """Drain until ``done(helper)`` holds for every live helper, or ``timeout`` passes."""
        end = time.monotonic() + timeout
        while True:
            waiting = [h for h in self._helpers if h.alive and not done(h)]
            if not waiting:
                return True
            left = end - time.monotonic()
            if left <= 0:
                return False
            for conn in wait([h.conn for h in waiting], left):
                helper = next(h for h in waiting if h.conn is conn)
                self._drain(helper)
            for helper in waiting:
                if helper.alive and not helper.process.is_alive():
                    self._died(helper, f"exit code {helper.process.exitcode}")

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> bool:
        """Block until every helper has started (or ``timeout``); False if some have not."""
        return self._wait_all(lambda h: h.ready, timeout)

    def wait_idle(self, timeout: float = IDLE_TIMEOUT_S) -> bool:
        """Block until every helper is done with what it was sent (or ``timeout``)."""
        return self._wait_all(lambda h: h.idle, timeout)

    # -- a search ------------------------------------------------------------------------------
    def begin(self, game: Any, limits: Limits, config: SearchConfig | None) -> int:
        """Send every helper the position; returns the job number to steer it by."""
        self._revive()
        self._job += 1
        job = msg.HelperSearch(self._job, game, limits, config)
        for helper in self._helpers:
            helper.idle = False
            self._send(helper, job)
        if not all(h.alive for h in self._helpers):
            # Killed after _revive looked but before the send reached it (the kernel tears a
            # process down in its own time): replaced now, not a whole search later.
            for helper in self._revive():
                helper.idle = False
                self._send(helper, job)
        return self._job

    def nodes(self, job: int) -> int:
        """Nodes the helpers have searched for ``job`` so far."""
        return self._board.nodes(job)

    def stop(self, job: int) -> None:
        """Stop every helper's search of ``job`` (they notice within a poll interval)."""
        self._board.stop(job)

    def lines(self, job: int) -> list[SearchInfo]:
        """The deepest completed iteration of each helper for ``job`` (read without waiting)."""
        found = []
        for helper in self._helpers:
            self._drain(helper)
            if helper.best_job == job and helper.best is not None:
                found.append(helper.best)
        return found

    def _revive(self) -> list[_Helper]:
        """Replace dead helpers (not waited for: they join the search when they are ready);
        returns the replacements."""
        started = []
        for i, helper in enumerate(self._helpers):
            self._drain(helper)
            if helper.alive and not helper.process.is_alive():
                self._died(helper, f"exit code {helper.process.exitcode}")
            if not helper.alive:
                if helper.process.is_alive():  # its pipe broke, yet it runs: of no use now
                    helper.process.kill()
                    helper.process.join(EXIT_GRACE_S)
                with contextlib.suppress(ValueError):
                    helper.process.join(0)
                    helper.process.close()
                self._helpers[i] = self._start(i)
                started.append(self._helpers[i])
                self.restarts += 1
        return started

    # -- between searches ----------------------------------------------------------------------
    def attach(self, table: SharedTable) -> None:
        """Move every helper to a reallocated table (``Hash`` changed)."""
        self._table = table
        self.wait_idle()
        for helper in self._helpers:
            helper.idle = False
            self._send(helper, msg.HelperAttach(table))
        self.wait_idle()

    def clear(self) -> None:
        """``ucinewgame``: the helpers forget their move-ordering memory."""
        for helper in self._helpers:
            helper.idle = False
            self._send(helper, msg.HelperClear())
        self.wait_idle()

    def close(self) -> None:
        """End every helper (asked first, killed after :data:`EXIT_GRACE_S`) and reap it."""
        self._board.stop(self._job)
        for helper in self._helpers:
            self._send(helper, msg.HelperExit())
        end = time.monotonic() + EXIT_GRACE_S
        for helper in self._helpers:
            process = helper.process
            process.join(max(0.0, end - time.monotonic()))
            if process.exitcode is None:
                process.kill()
                process.join(EXIT_GRACE_S)
            with contextlib.suppress(OSError):
                helper.conn.close()
            helper.alive = False
            with contextlib.suppress(ValueError):
                process.close()
        self._board.close()


def _deeper(info: SearchInfo, than: SearchInfo | None) -> bool:
    return than is None or info.depth >= than.depth
