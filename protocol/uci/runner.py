"""Where searches run: off the event loop, one at a time per session.

The session never searches (DESIGN.md): it hands a position and limits to a runner and awaits
the result, while the event loop keeps answering ``isready`` and ``stop``.  The runner owns
the :class:`~engine.search.Searcher` and so the session's transposition table.

:class:`ThreadRunner` uses one worker thread per session.  CPython's GIL still lets the event
loop run between the search's bytecodes (the switch interval is 5 ms), which is what stdio
needs; transports that serve many sessions at once can supply a runner backed by worker
processes instead, behind the same interface.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from engine.control import SearchControl
from engine.game import Game
from engine.info import InfoCallback, SearchResult
from engine.lab.classic import ClassicSearcher
from engine.limits import Limits
from engine.search import ABLATIONS
from engine.skill import Skill, search_at_level
from engine.smp.searcher import ParallelSearcher
from games.registry import GAMES

T = TypeVar("T")

PRODUCTION = "pvs"
"""The ``Algorithm`` value of the production :class:`Searcher` (the default)."""


def run_search(
    searcher: ParallelSearcher,
    algorithm: str,
    game: Game[Any],
    limits: Limits,
    *,
    control: SearchControl,
    on_info: InfoCallback,
    multipv: int,
    move_overhead_ms: int,
    skill: Skill | None = None,
) -> SearchResult:
    """Run one search with the algorithm the session chose (blocking; call it off the loop).

    ``skill`` is a playing level below full strength (:mod:`engine.skill`): the search is
    capped and the move drawn among the best few; a game's exact solver is not asked then
    (it would play perfectly).

    The production searcher keeps its TT between searches, also when an ablation runs
    (:data:`~engine.search.ABLATIONS`: the production search with one heuristic switched); a
    classic algorithm is a reference implementation for comparison and gets a fresh table
    of the same size each time.  A game with an exact solver (Connect Four) gets the first
    word with the production algorithm: when it proves the value within its budget, that is
    the answer (exact mate scores).
    """
    if skill is not None:

        def weakened(capped: Limits, lines: int, report: InfoCallback) -> SearchResult:
            return run_search(
                searcher,
                algorithm,
                game,
                capped,
                control=control,
                on_info=report,
                multipv=lines,
                move_overhead_ms=move_overhead_ms,
            )

        return search_at_level(weakened, limits, skill, multipv=multipv, on_info=on_info)
    solver = GAMES[game.variant].solve if game.variant in GAMES else None
    if solver is not None and algorithm == PRODUCTION and multipv == 1:
        solved = solver(game, limits, control, on_info, move_overhead_ms=move_overhead_ms)
        if solved is not None:
            return solved
    ablation = ABLATIONS.get(algorithm)
    if algorithm != PRODUCTION and ablation is None:
        return ClassicSearcher(algorithm, searcher.tt.size_mb).search(
            game,
            limits,
            control=control,
            on_info=on_info,
            multipv=multipv,
            move_overhead_ms=move_overhead_ms,
        )
    # An ablation is this search's config: same table and history, only the one switch differs.
    return searcher.search(
        game,
        limits,
        config=ablation,
        control=control,
        on_info=on_info,
        multipv=multipv,
        move_overhead_ms=move_overhead_ms,
    )


class SearchRunner(Protocol):
    async def search(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        on_info: InfoCallback,
        *,
        multipv: int,
        move_overhead_ms: int,
        algorithm: str = PRODUCTION,
        skill: Skill | None = None,
    ) -> SearchResult:
        """Search ``game`` (which the runner may mutate: pass a copy) and return the result.

        ``on_info`` is called on the event loop's thread, in the order the search reported.
        ``algorithm`` is the ``Algorithm`` option: the production searcher or a classic one.
        ``skill`` is a playing level below full strength (``None``: full strength).
        """
        ...

    async def call(
        self, fn: Callable[..., T], *args: Any, control: SearchControl | None = None
    ) -> T:
        """Run any other long job (perft, bench) off the event loop.

        With ``control``, the job is stoppable: ``fn`` is called with a ``control`` keyword
        (in a worker process, a local control that the runner stops when ``control`` is).
        """
        ...

    async def start(self) -> None:
        """Get ready for the first job now (a worker process starts here, not at the first
        ``go``, whose clock would pay for it); a no-op where there is nothing to start."""
        ...

    async def resize_hash(self, hash_mb: int) -> None:
        """A new table of ``hash_mb`` MiB; :class:`~engine.shm.SharedMemoryFullError` as for
        :meth:`set_threads` when it is shared."""
        ...

    async def set_threads(self, threads: int) -> None:
        """Search with ``threads`` processes from now on (Lazy SMP helpers start or end).
        :class:`~engine.shm.SharedMemoryFullError`: their shared table did not fit in shared
        memory, and the runner searches with one thread."""
        ...

    async def clear(self) -> None: ...

    async def close(self) -> None: ...


class ThreadRunner:
    """A :class:`SearchRunner` with one dedicated worker thread and one searcher (whose
    Lazy SMP helpers, with ``Threads`` above 1, are processes of their own)."""

    def __init__(self, hash_mb: int = 16) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="brudno-search"
        )
        self._searcher = ParallelSearcher(hash_mb)

    async def search(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        on_info: InfoCallback,
        *,
        multipv: int,
        move_overhead_ms: int,
        algorithm: str = PRODUCTION,
        skill: Skill | None = None,
    ) -> SearchResult:
        loop = asyncio.get_running_loop()

        def report(info: Any) -> None:
            # Called on the worker thread; hop to the loop so the session stays single-threaded.
            loop.call_soon_threadsafe(on_info, info)

        return await loop.run_in_executor(
            self._executor,
            functools.partial(
                run_search,
                self._searcher,
                algorithm,
                game,
                limits,
                control=control,
                on_info=report,
                multipv=multipv,
                move_overhead_ms=move_overhead_ms,
                skill=skill,
            ),
        )

    async def call(
        self, fn: Callable[..., T], *args: Any, control: SearchControl | None = None
    ) -> T:
        job = (
            functools.partial(fn, *args)
            if control is None
            else functools.partial(fn, *args, control=control)
        )
        return await asyncio.get_running_loop().run_in_executor(self._executor, job)

    async def start(self) -> None:
        """Nothing to start: the thread exists from the constructor on."""

    async def resize_hash(self, hash_mb: int) -> None:
        await self.call(self._searcher.resize_hash, hash_mb)

    async def set_threads(self, threads: int) -> None:
        await self.call(self._searcher.set_threads, threads)

    async def clear(self) -> None:
        await self.call(self._searcher.clear)

    async def close(self) -> None:
        """End the search helpers (the session has settled: the thread is idle), then the
        thread."""
        try:
            await self.call(self._searcher.close)
        finally:
            self._executor.shutdown(wait=False, cancel_futures=True)
