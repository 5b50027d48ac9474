"""The parallel searcher: a :class:`~engine.search.Searcher` with a ``Threads`` setting.

With one thread it *is* the plain searcher (a private table, no other process, the same nodes
as ever: the ``bench`` signature does not move).  With ``n`` threads its table moves into
shared memory and ``n - 1`` helper processes (:mod:`engine.smp.pool`) search every position
alongside the main search, which alone owns the clock, the reports and the result:

* ``info nodes`` and ``nps`` count every process, as Stockfish's do (the helpers publish their
  counts on the scoreboard at every poll);
* when the main search ends (its time, ``stop``, its depth), the helpers are stopped through
  the scoreboard within their poll interval, so ``stop`` is as quick as with one thread;
* the move is the main search's, unless a helper completed a deeper iteration: then the
  deepest helper's line is reported and played (with MultiPV, always the main search's lines).

``Hash`` is the size of the one shared table, not per process.  Changing ``Threads`` starts or
ends helpers (and starts a fresh table); nothing is started per move.

The shared table lives in ``/dev/shm`` (:mod:`engine.shm`).  When it does not fit there,
:meth:`ParallelSearcher.set_threads` and :meth:`~ParallelSearcher.resize_hash` raise
:class:`~engine.shm.SharedMemoryFullError` after falling back to one thread with a private table
of the asked ``Hash``: the searcher stays usable, the caller tells the user.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from multiprocessing.context import SpawnContext
from typing import Any

from engine.control import SearchControl
from engine.game import Game
from engine.info import InfoCallback, SearchInfo, SearchResult, ignore_info
from engine.limits import Limits
from engine.search import SearchConfig, Searcher
from engine.shm import SharedMemoryFullError
from engine.smp.pool import HelperPool
from engine.tt import TranspositionTable

_PRODUCTION = SearchConfig()

MAX_THREADS = 64
"""The most ``Threads`` a searcher takes (lichess-bot and GUIs offer up to this)."""


class ParallelSearcher:
    """Lazy SMP over processes; not thread-safe (one search at a time, like Searcher)."""

    def __init__(
        self,
        hash_mb: int = 16,
        threads: int = 1,
        *,
        config: SearchConfig = _PRODUCTION,
        clock: Callable[[], float] = time.monotonic,
        context: SpawnContext | None = None,
    ) -> None:
        self.main = Searcher(hash_mb, config=config, clock=clock)
        self._context = context
        self._pool: HelperPool | None = None
        self._threads = 1
        self.set_threads(threads)

    @property
    def tt(self) -> TranspositionTable:
        return self.main.tt

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def helper_pids(self) -> list[int]:
        """Process ids of the live helpers (empty with one thread)."""
        return [] if self._pool is None else self._pool.pids

    def set_threads(self, threads: int) -> None:
        """Search with ``threads`` processes from now on (1..:data:`MAX_THREADS`).

        Blocks until new helpers are ready.  The table starts empty (it moves between private
        and shared memory, or is simply kept when only the number of helpers changes).
        :class:`SharedMemoryFullError`: the shared table did not fit; one thread now."""
        threads = max(1, min(MAX_THREADS, threads))
        if threads == self._threads:
            return
        hash_mb = self.tt.size_mb
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if threads == 1:
            self._go_private(hash_mb)
            return
        try:
            if not self.tt.is_shared:
                self.main.use_table(TranspositionTable(1))  # let the private table go first
                self.main.use_table(TranspositionTable(hash_mb, shared=True))
            shared = self.tt.shared
            assert shared is not None
            pool = HelperPool(threads - 1, shared, context=self._context)
        except SharedMemoryFullError:
            self._go_private(hash_mb)
            raise
        self._pool = pool
        pool.wait_ready()
        self._threads = threads

    def _go_private(self, hash_mb: int) -> None:
        """One thread: no helpers, a private table of ``hash_mb`` (the shared block goes)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self.tt.close()
        self.main.use_table(TranspositionTable(hash_mb))
        self._threads = 1

    def resize_hash(self, hash_mb: int) -> None:
        """Reallocate the table (its contents are lost); helpers attach to the new one.
        :class:`SharedMemoryFullError`: the new shared table did not fit; one thread now."""
        pool = self._pool
        if pool is None:
            self.main.resize_hash(hash_mb)
            return
        pool.wait_idle()
        try:
            self.tt.resize(hash_mb)
        except SharedMemoryFullError:
            self._go_private(hash_mb)
            raise
        shared = self.tt.shared
        assert shared is not None
        pool.attach(shared)

    def clear(self) -> None:
        """Forget everything learned (``ucinewgame``): the table, every process's history."""
        pool = self._pool
        if pool is not None:
            pool.wait_idle()
            pool.clear()
        self.main.clear()

    def close(self) -> None:
        """End the helpers and release the shared table (the searcher is done)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self.tt.close()

    def search(
        self,
        game: Game[Any],
        limits: Limits,
        *,
        config: SearchConfig | None = None,
        control: SearchControl | None = None,
        on_info: InfoCallback = ignore_info,
        multipv: int = 1,
        move_overhead_ms: int = 30,
    ) -> SearchResult:
        """Search as :meth:`Searcher.search` does, with the helpers when there are any."""
        pool = self._pool
        if pool is None:
            return self.main.search(
                game,
                limits,
                config=config,
                control=control,
                on_info=on_info,
                multipv=multipv,
                move_overhead_ms=move_overhead_ms,
            )
        if game.variant != self.main.variant:
            pool.wait_idle()  # no helper may write the old game's entries after the clear
        self.main.adopt_variant(game)
        self.tt.new_search()
        job = pool.begin(game, limits, config)

        def report(info: SearchInfo) -> None:
            # Draining the helpers' lines here keeps their pipes flowing during long searches.
            pool.lines(job)
            if info.nodes:
                nodes = info.nodes + pool.nodes(job)
                info = dataclasses.replace(
                    info, nodes=nodes, nps=nodes * 1000 // max(1, info.time_ms)
                )
            on_info(info)

        try:
            result = self.main.search(
                game,
                limits,
                config=config,
                control=control,
                on_info=report,
                multipv=multipv,
                move_overhead_ms=move_overhead_ms,
                age_table=False,
            )
        finally:
            pool.stop(job)
        nodes = result.nodes + pool.nodes(job)
        result = dataclasses.replace(result, nodes=nodes)
        deeper = [line for line in pool.lines(job) if line.depth > result.depth]
        if multipv != 1 or result.best is None or not deeper:
            return result
        best = max(deeper, key=lambda line: line.depth)
        shown = dataclasses.replace(
            best,
            nodes=nodes,
            nps=nodes * 1000 // max(1, result.time_ms),
            time_ms=result.time_ms,
            hashfull=self.tt.hashfull(),
        )
        on_info(shown)
        return dataclasses.replace(
            result,
            best=best.pv[0],
            ponder=best.pv[1] if len(best.pv) > 1 else None,
            score=best.score,
            depth=best.depth,
            pv=best.pv,
            lines=(shown,),
        )
