"""A Lazy SMP helper process: searches what the main search searches, for the shared table.

A helper is started once (when ``Threads`` grows) and kept: it attaches to the shared table and
the scoreboard, says :class:`~engine.smp.messages.HelperReady`, and then serves one message at
a time from its pipe.  For a :class:`~engine.smp.messages.HelperSearch` it runs an ordinary
:class:`~engine.search.Searcher` on the position, with no clock (the main search owns the
time) and these differences:

* it stops when the scoreboard says its job is stopped, checked at every poll (about 5 ms),
  so helpers stop within the search's usual stop latency;
* it publishes its node count to the scoreboard at every poll;
* it skips some iterations, following Stockfish 8's pattern (``SkipSize``/``SkipPhase`` in
  its ``search.cpp``): helper ``i`` skips depth ``d`` when
  ``(d + ply + phase[i]) // size[i]`` is odd, so at any moment the helpers are spread over
  the next few depths instead of all searching the one the main search is on;
* it reports each completed iteration's first line, so that the main search can play a
  deeper helper's move.

It runs at a lower priority than the main search (:data:`HELPER_NICENESS`): with no more
processes than cores that changes nothing, each has a core of its own; with more (``Threads
4`` on two cores, or a loaded machine) the main search, which owns the clock and the move,
keeps a core's worth of time and the helpers share what is left, instead of all of them
slowing it down equally.  Measured: on two cores, Threads 4 without this lost to Threads 1
(96 games, -32.7 +/- 58) although its nodes/s were 2.29 times as many: the main search got
half a core, and Lazy SMP gains only as fast as the main search deepens.

It dies with its parent: between searches the pipe's end-of-file ends it, and during a search
its control notices that its parent process is gone.  It leaves its parent's process group, so
a terminal's Ctrl-C reaches only the main process, which then ends its helpers in order.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection

from engine.background import become_background_process
from engine.control import SearchControl
from engine.info import Bound, SearchInfo
from engine.limits import Limits
from engine.search import Searcher
from engine.smp import messages as msg
from engine.smp.scoreboard import Scoreboard, ScoreboardHandle
from engine.tt import SharedTable, TranspositionTable

HELPER_NICENESS = 5
"""How much nicer (lower priority) than its parent a helper runs: Linux gives a niceness-0
process about three times the CPU share of a niceness-5 one on a shared core."""

SKIP_SIZE = (1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4)
SKIP_PHASE = (0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7)
"""Stockfish 8's depth-skipping pattern for its helper threads, indexed by helper."""


def skips(helper: int, ply: int, depth: int) -> bool:
    """Whether helper ``helper`` (0-based) leaves iteration ``depth`` to the others."""
    i = helper % len(SKIP_SIZE)
    return ((depth + ply + SKIP_PHASE[i]) // SKIP_SIZE[i]) % 2 == 1


class HelperControl(SearchControl):
    """Stopped when the scoreboard stops the job, or when the parent process is gone."""

    __slots__ = ("_board", "_job", "_parent")

    def __init__(self, board: Scoreboard, job: int, parent: int) -> None:
        super().__init__()
        self._board = board
        self._job = job
        self._parent = parent

    @property
    def stopped(self) -> bool:
        return self._board.stopped(self._job) or os.getppid() != self._parent


def helper_limits(limits: Limits) -> Limits:
    """What a helper searches for: the main search's depth, mate and root moves, no clock and
    no node limit (the main search owns both and stops the helpers)."""
    return Limits(
        depth=limits.depth, mate=limits.mate, infinite=True, searchmoves=limits.searchmoves
    )


def helper_main(
    conn: Connection, index: int, table: SharedTable, board: ScoreboardHandle, parent: int
) -> None:
    """Entry point of helper ``index`` (0-based): serve ``conn`` until told to exit."""
    become_background_process(HELPER_NICENESS)
    searcher = Searcher(table=TranspositionTable.attach(table))
    helper = _Helper(conn, index, parent, Scoreboard.attach(board), searcher)
    try:
        conn.send(msg.HelperReady())
        helper.serve()
    except OSError:
        return  # the pipe broke: the parent is gone
    finally:
        helper.searcher.tt.close()
        helper.scoreboard.close()
        with contextlib.suppress(OSError):
            conn.close()


@dataclass(slots=True)
class _Helper:
    """What one helper process holds: its pipe, its place, the shared words, its searcher."""

    conn: Connection
    index: int
    parent: int
    scoreboard: Scoreboard
    searcher: Searcher

    def serve(self) -> None:
        """One message at a time, until :class:`~engine.smp.messages.HelperExit` or EOF."""
        conn, searcher = self.conn, self.searcher
        while True:
            try:
                message: msg.ToHelper = conn.recv()
            except (EOFError, OSError):
                return  # the parent is gone
            match message:
                case msg.HelperSearch() as job:
                    self.search(job)
                    conn.send(msg.HelperIdle(job.job))
                case msg.HelperAttach(table=new_table):
                    searcher.tt.close()
                    searcher.use_table(TranspositionTable.attach(new_table))
                    conn.send(msg.HelperIdle(0))
                case msg.HelperClear():
                    searcher.clear()
                    conn.send(msg.HelperIdle(0))
                case msg.HelperExit():
                    return

    def search(self, job: msg.HelperSearch) -> None:
        scoreboard, index, conn = self.scoreboard, self.index, self.conn
        if scoreboard.stopped(job.job):
            return  # stopped before this helper got to it
        scoreboard.begin(index, job.job)
        ply = job.game.ply

        def report(info: SearchInfo) -> None:
            exact = info.bound is Bound.EXACT and info.score is not None
            if exact and info.pv and info.multipv == 1:
                conn.send(msg.HelperLine(job.job, info))

        def count(nodes: int) -> None:
            scoreboard.count(index, nodes)

        try:
            result = self.searcher.search(
                job.game,
                helper_limits(job.limits),
                config=job.config,
                control=HelperControl(scoreboard, job.job, self.parent),
                on_info=report,
                skip_depth=lambda depth: skips(index, ply, depth),
                on_nodes=count,
            )
            scoreboard.count(index, result.nodes)
        except Exception as exc:
            description = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
            conn.send(msg.HelperFailed(job.job, description))
