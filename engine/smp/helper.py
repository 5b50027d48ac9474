"""A Lazy SMP helper process: searches what the main search searches, for the shared table.

Started once when ``Threads`` grows and kept, it attaches to the shared table and scoreboard,
says :class:`~engine.smp.messages.HelperReady`, then serves
:class:`~engine.smp.messages.HelperSearch` jobs with an ordinary
:class:`~engine.search.Searcher`: no clock, stopped through
the scoreboard, publishing its nodes at every poll, skipping iterations as Stockfish 8's
helpers do, reporting each completed iteration.  It runs :data:`HELPER_NICENESS` below the main
search and dies with its parent.  Why, with the measurements: docs/search.md, *Lazy SMP
helpers*.
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
