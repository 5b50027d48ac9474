"""A :class:`~protocol.uci.runner.SearchRunner` whose searches run in a worker process.

One worker per session (started by :meth:`ProcessRunner.start`, reused), from a ``forkserver``
(``spawn`` elsewhere; :func:`warm_up` starts it early), holding the session's searcher and
table.  The wire is a pipe of the typed messages of :mod:`protocol.uci.worker_messages`;
``stop`` and ``ponderhit`` act within the search's poll interval.  A worker that dies fails its
job with :class:`WorkerDiedError` (the session still answers a legal ``bestmove``) and the next
job starts a fresh one; a worker whose parent died exits.  Workers leave the server's process
group.  Why processes, the start method and the signals: docs/design.md, *Search worker
processes*.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

from engine.background import become_background_process
from engine.control import ControlEvent, SearchControl
from engine.emergency import emergency_move
from engine.game import Game
from engine.info import Bound, InfoCallback, SearchInfo, SearchResult
from engine.limits import Limits
from engine.shm import SharedMemoryFullError, ShmPlace, ShmShortage
from engine.skill import Skill
from engine.smp.searcher import ParallelSearcher
from engine.timeman import TimeBudget, allocate
from protocol.uci import worker_messages as msg
from protocol.uci.runner import PRODUCTION, run_search

if TYPE_CHECKING:
    from multiprocessing.context import ForkServerContext, SpawnContext

    WorkerContext: TypeAlias = ForkServerContext | SpawnContext

log = logging.getLogger(__name__)

T = TypeVar("T")

WORKER_NICE = 10
"""Niceness added to each worker (which also runs as SCHED_BATCH where Linux offers it): under
full load the event loop, which answers ``isready`` and ``stop`` and forwards ``bestmove``,
must win the CPU over the searches it serves.  Workers only compete with each other at equal
priority, so this costs a search nothing unless something else wants the CPU."""

EXIT_GRACE_S = 2.0
"""How long :meth:`ProcessRunner.close` waits for a worker to exit before killing it."""

MAX_LAG_MS = 1000
"""Cap on the dispatch delay a search charges to its clock (guards against clock oddities)."""

WATCHDOG_GRACE_S = 0.05
"""How long past a timed search's hard deadline, or past a ``stop``, the parent waits for the
worker's answer before answering itself from the last completed iteration it reported.

The worker notices its deadline only when it gets the CPU; with every core busy that can be
tens of milliseconds late.  The event loop is what answers ``isready`` at once anyway, so it
also guarantees ``bestmove`` on time: the move is the same one the worker would play (the
last completed iteration's), just not waited for.  A worker so starved that it has not
completed even one iteration gets the session's emergency move (the best by a one-ply look,
:func:`~engine.emergency.emergency_move`), announced to the client with ``info string``: a
weak move beats a lost game on time.
That only happens far beyond the cores' capacity (e.g. 16 searches per core at 300 ms)."""

_PRELOAD = ["protocol.uci.workers", "games.registry"]
"""Imported once by the fork server, so workers are forked with them loaded.  The games are
needed to unpickle positions; the application adds its main module with
:func:`preload_in_workers` (multiprocessing re-runs the parent's main script in each worker)."""
_context_lock = threading.Lock()
_context: WorkerContext | None = None


class WorkerError(RuntimeError):
    """Base class for failures of the worker process, as seen by the session."""


class WorkerDiedError(WorkerError):
    """The worker process ended while a job was pending (killed, crashed, out of memory)."""


class WorkerJobError(WorkerError):
    """The job raised inside the worker; the message carries its type, text and traceback."""


def preload_in_workers(*modules: str) -> None:
    """Have the fork server import ``modules`` too: the application names its entry module,
    which every worker would import anyway.  Only a speed-up, so once the fork server runs
    (a second server in the same process, as tests start) a late call changes nothing."""
    with _context_lock:
        if _context is None:
            _PRELOAD.extend(m for m in modules if m not in _PRELOAD)


def worker_context() -> WorkerContext:
    """The multiprocessing context workers are started from (forkserver, else spawn)."""
    global _context
    with _context_lock:
        if _context is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                forkserver = multiprocessing.get_context("forkserver")
                forkserver.set_forkserver_preload(_PRELOAD)
                _context = forkserver
            else:
                _context = multiprocessing.get_context("spawn")
        return _context


def warm_up() -> None:
    """Start the fork server and let it import the engine now, not on the first search.

    Blocking for about as long as importing the engine takes; call it before serving.  It
    forks one throwaway worker, which returns once the fork server has finished preloading.
    """
    sweep_shared_memory()  # what workers of a killed server left behind
    process = worker_context().Process(target=_ready, name="brudno-warm-up", daemon=True)
    process.start()
    process.join()
    process.close()


def _ready() -> None:
    """The throwaway worker of :func:`warm_up`: being started at all is its whole job."""


# -- the worker process ----------------------------------------------------------------------
class _WorkerState:
    """What the listener thread shares with the job loop: the live searches' controls."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.controls: dict[int, SearchControl] = {}

    def control(self, seq: int) -> SearchControl | None:
        with self.lock:
            return self.controls.get(seq)

    def stop_all(self) -> None:
        with self.lock:
            controls = list(self.controls.values())
        for control in controls:
            control.stop()


@dataclass(frozen=True, slots=True)
class _Queued:
    """A job waiting for the worker's main thread, with the control that steers it (made by
    the listener on arrival, so a ``stop`` that comes while the job waits is not lost)."""

    job: msg.Job
    control: SearchControl | None


def _listen(conn: Connection, jobs: queue.SimpleQueue[_Queued | None], state: _WorkerState) -> None:
    """Worker-side receiver: steer running searches at once, queue everything else."""
    try:
        while True:
            message: msg.ToWorker = conn.recv()
            match message:
                case msg.Stop(seq=seq):
                    if (control := state.control(seq)) is not None:
                        control.stop()
                case msg.PonderHit(seq=seq):
                    if (control := state.control(seq)) is not None:
                        control.ponderhit()
                case msg.Exit():
                    return
                case msg.SearchJob() | msg.CallJob(stoppable=True):
                    control = SearchControl(
                        pondering=isinstance(message, msg.SearchJob) and message.pondering
                    )
                    with state.lock:
                        state.controls[message.seq] = control
                    jobs.put(_Queued(message, control))
                case _:
                    jobs.put(_Queued(message, None))
    except (EOFError, OSError):
        return  # the parent is gone
    finally:
        state.stop_all()
        jobs.put(None)


def _worker_main(conn: Connection, hash_mb: int, nice: int) -> None:
    """Entry point of a worker process: run jobs one at a time until told to exit."""
    # Out of the server's process group (signals meant for the server do not reach the
    # searches it must still collect moves from), nicer and batch-scheduled.
    become_background_process(nice, batch=True)
    # Daemonic for the server (ended if the server exits without closing it), but it starts
    # search helpers, which multiprocessing refuses a daemonic process; the rule guards
    # against orphans, and helpers end on their own when this process's pipe to them ends.
    multiprocessing.current_process().daemon = False
    searcher = ParallelSearcher(hash_mb)  # one thread: the parent sends Threads as a job
    jobs: queue.SimpleQueue[_Queued | None] = queue.SimpleQueue()
    state = _WorkerState()
    listener = threading.Thread(
        target=_listen, args=(conn, jobs, state), name="brudno-worker-listener", daemon=True
    )
    listener.start()
    try:
        while (queued := jobs.get()) is not None:
            seq = queued.job.seq
            try:
                value = _run_job(searcher, conn, queued)
            except OSError:
                return  # the pipe broke while reporting: the parent is gone
            except SharedMemoryFullError as exc:
                conn.send(msg.OutOfSharedMemory(seq, exc.shortage))
                continue
            except Exception as exc:
                description = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
                conn.send(msg.Failed(seq, description))
                continue
            finally:
                if queued.control is not None:
                    with state.lock:
                        state.controls.pop(seq, None)
            try:
                conn.send(msg.Done(seq, value))
            except OSError:
                return
            except Exception as exc:  # the value would not pickle
                conn.send(msg.Failed(seq, f"{type(exc).__name__}: {exc}"))
    except OSError:
        return
    finally:
        searcher.close()
        with contextlib.suppress(OSError):
            conn.close()


def _run_job(searcher: ParallelSearcher, conn: Connection, queued: _Queued) -> object:
    match queued.job:
        case msg.SearchJob() as job:
            # Time spent between the session's call and now (pickling, a worker's first
            # start, a busy machine) is charged to the move like transport latency.
            lag_ms = int(min(MAX_LAG_MS, max(0.0, (time.monotonic() - job.sent_at) * 1000.0)))
            seq = job.seq
            assert queued.control is not None

            def report(info: SearchInfo) -> None:
                conn.send(msg.Info(seq, info))

            return run_search(
                searcher,
                job.algorithm,
                job.game,
                job.limits,
                control=queued.control,
                on_info=report,
                multipv=job.multipv,
                move_overhead_ms=job.move_overhead_ms + lag_ms,
                skill=job.skill,
            )
        case msg.CallJob(fn=fn, args=args, stoppable=True):
            return fn(*args, control=queued.control)
        case msg.CallJob(fn=fn, args=args):
            return fn(*args)
        case msg.ResizeHash(hash_mb=hash_mb):
            searcher.resize_hash(hash_mb)
            return None
        case msg.ClearHash():
            searcher.clear()
            return None
        case msg.SetThreads(threads=threads):
            searcher.set_threads(threads)
            return None


# -- the parent side -------------------------------------------------------------------------
@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[Any]
    on_info: InfoCallback | None


class _Worker:
    """One live worker process and the parent's end of its pipe."""

    def __init__(
        self, process: BaseProcess, conn: Connection, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.process = process
        self.conn = conn
        self.loop = loop
        self.pending: dict[int, _Pending] = {}
        self.alive = True
        self.shortage: ShmShortage | None = None
        """Set while the worker runs one thread because the table for the runner's
        ``Threads`` did not fit in shared memory when it was started again."""
        self._send_lock = threading.Lock()
        loop.add_reader(conn.fileno(), self.drain)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def send(self, message: msg.ToWorker) -> None:
        if not self.alive:
            raise WorkerDiedError("the worker process has ended")
        try:
            with self._send_lock:
                self.conn.send(message)
        except OSError as exc:
            self.died(f"pipe to the worker broke: {exc}")
            raise WorkerDiedError("the worker process has ended") from exc

    def drain(self) -> None:
        """Handle what the worker has sent: its answers, or the end of its pipe (which marks
        it dead).  The loop calls it when the pipe is readable; the watchdog calls it too,
        before answering for the worker, in case the loop has not got to the pipe yet."""
        try:
            while self.alive and self.conn.poll():
                self._dispatch(self.conn.recv())
        except (EOFError, OSError):
            self.died("the worker closed its pipe")
        except Exception:
            # A message that does not unpickle cannot be matched to its job: end the worker
            # (its jobs fail over to the session's fallback answer) rather than hang them.
            log.exception("unreadable message from worker %s", self.pid)
            self.died("it sent an unreadable message")

    def _dispatch(self, message: msg.FromWorker) -> None:
        if isinstance(message, msg.Info):
            pending = self.pending.get(message.seq)
            if pending is not None and pending.on_info is not None:
                try:
                    pending.on_info(message.info)
                except Exception:
                    log.exception("info callback failed")
            return
        pending = self.pending.pop(message.seq, None)
        if pending is None or pending.future.done():
            return
        match message:
            case msg.Done(value=value):
                pending.future.set_result(value)
            case msg.Failed(description=description):
                pending.future.set_exception(WorkerJobError(description))
            case msg.OutOfSharedMemory(shortage=shortage):
                pending.future.set_exception(SharedMemoryFullError(shortage))

    def died(self, why: str) -> None:
        """Mark the worker gone: fail what it owed and stop watching its pipe."""
        if not self.alive:
            return
        self.alive = False
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(self.conn.fileno())
        exitcode = self.process.exitcode
        detail = f"worker {self.pid} ended ({why}" + (
            f", exit code {exitcode})" if exitcode is not None else ")"
        )
        pending, self.pending = self.pending, {}
        for job in pending.values():
            if not job.future.done():
                job.future.set_exception(WorkerDiedError(detail))
        if pending:
            log.warning("%s with %d job(s) pending", detail, len(pending))

    async def close(self) -> None:
        """Ask the worker to exit, wait a little, then kill it; always reaps the process.
        A worker that did not exit cleanly may have left shared memory behind: swept."""
        if self.alive:
            with contextlib.suppress(WorkerDiedError):
                self.send(msg.Exit())
        self.died("closed by the session")
        # Closing our end first means the worker sees end-of-file and exits on its own, even
        # if this coroutine is cancelled before it has reaped the process.
        with contextlib.suppress(ValueError, OSError):
            self.conn.close()
        process = self.process
        await asyncio.to_thread(process.join, EXIT_GRACE_S)
        if process.exitcode is None:
            log.warning("worker %s did not exit in %.1f s; killing it", self.pid, EXIT_GRACE_S)
            process.kill()
            await asyncio.to_thread(process.join, EXIT_GRACE_S)
        exitcode = process.exitcode
        if exitcode is not None:
            process.close()
        if exitcode != 0:
            await asyncio.to_thread(sweep_shared_memory)


def sweep_shared_memory() -> None:
    """Unlink the shared memory blocks (``Threads`` > 1 tables) of dead processes: a worker
    killed mid-search (SIGKILL, out of memory) could not unlink its own."""
    try:
        removed = ShmPlace.from_environment().sweep()
    except (OSError, ValueError) as exc:
        log.warning("event=shm_sweep_failed error=%r", str(exc))
        return
    if removed:
        log.warning("event=shm_swept blocks=%d names=%s", len(removed), ",".join(removed))


class _Watchdog:
    """Tracks a search's progress and answers for a worker that misses its deadline.

    It sees every info (remembering the last completed iteration: an exact, first MultiPV
    line) and sets a timer for :data:`WATCHDOG_GRACE_S` past the moment the worker must
    answer: the hard deadline once the clock runs (at the start, or at ``ponderhit``), or a
    ``stop``.  If the worker has not answered by then, the job's future gets a result built
    from that iteration, the worker is told to stop, and whatever it sends for this job
    afterwards is ignored.
    """

    def __init__(
        self,
        worker: _Worker,
        seq: int,
        budget: TimeBudget | None,
        on_info: InfoCallback,
        emergency: Callable[[], str],
    ) -> None:
        self._worker = worker
        self._emergency = emergency
        self._seq = seq
        self._budget = budget
        self._on_info = on_info
        self._future: asyncio.Future[Any] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline: float | None = None
        self._started = time.monotonic()
        self._best: SearchInfo | None = None
        self._nodes = 0

    def see(self, info: SearchInfo) -> None:
        self._nodes = max(self._nodes, info.nodes)
        if info.pv and info.multipv == 1 and info.bound is Bound.EXACT and info.score is not None:
            self._best = info
        self._on_info(info)

    def watch(self, future: asyncio.Future[Any], *, clock_started: bool, sent_at: float) -> None:
        self._future = future
        self._started = sent_at
        future.add_done_callback(self._cancel)
        if clock_started:
            self._arm(sent_at)

    def start_clock(self) -> None:
        """``ponderhit``: the search's clock starts now."""
        self._arm(time.monotonic())

    def stop_requested(self) -> None:
        """``stop``: the worker answers within the grace, or the watchdog answers for it."""
        self._arm_at(time.monotonic() + WATCHDOG_GRACE_S)

    def _arm(self, clock_start: float) -> None:
        if self._budget is not None:
            self._arm_at(clock_start + self._budget.hard_ms / 1000.0 + WATCHDOG_GRACE_S)

    def _arm_at(self, deadline: float) -> None:
        if self._future is None or self._future.done():
            return
        if self._deadline is not None and self._deadline <= deadline:
            return  # already due no later than that
        self._deadline = deadline
        self._schedule(max(0.0, deadline - time.monotonic()))

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire)

    def _cancel(self, _future: asyncio.Future[Any]) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self) -> None:
        self._timer = None
        future = self._future
        if future is None or future.done():
            return
        worker, seq = self._worker, self._seq
        # On a loaded machine the timer can come before the loop has read the pipe: the
        # worker's own answer, or its death (an internal error the client is told of), may
        # already be there, and either beats answering for it.
        worker.drain()
        if future.done():
            return
        best = self._best
        worker.pending.pop(seq, None)
        if worker.alive:
            with contextlib.suppress(WorkerDiedError):
                worker.send(msg.Stop(seq))
        elapsed_ms = int((time.monotonic() - self._started) * 1000.0)
        if best is None:
            move = self._emergency()
            log.warning(
                "worker %s completed no iteration in time; emergency move %s", worker.pid, move
            )
            self._on_info(
                SearchInfo(
                    depth=0,
                    string="warning: the search got no CPU time "
                    "before it had to answer; playing an unsearched move",
                )
            )
            future.set_result(SearchResult(move, None, None, 0, self._nodes, elapsed_ms, (move,)))
            return
        log.info("worker %s missed its deadline; playing its depth-%d move", worker.pid, best.depth)
        future.set_result(
            SearchResult(
                best=best.pv[0],
                ponder=best.pv[1] if len(best.pv) > 1 else None,
                score=best.score,
                depth=best.depth,
                nodes=self._nodes,
                time_ms=elapsed_ms,
                pv=best.pv,
                lines=(best,),
            )
        )


class ProcessRunner:
    """Runs one session's searches, perft and bench in its own worker process.

    The worker starts at :meth:`start` (the session calls it when it begins) or, failing
    that, on the first job, and is reused; if it dies, the pending job fails (with
    :class:`WorkerDiedError`) and the next job starts a new one with the current Hash size
    and ``Threads`` (see :meth:`_restore_threads` for a table that no longer fits).
    ``resize_hash``/``clear`` before the worker exists only record the size: a fresh worker
    starts with an empty table of that size.
    """

    def __init__(
        self, hash_mb: int = 16, *, context: WorkerContext | None = None, nice: int = WORKER_NICE
    ) -> None:
        self._hash_mb = hash_mb
        self._threads = 1
        self._context = context
        self._nice = nice
        self._worker: _Worker | None = None
        self._starting: asyncio.Lock | None = None
        self._seq = itertools.count(1)
        self._closed = False
        self.started = 0
        """How many worker processes this runner has started (restarts included)."""

    @property
    def pid(self) -> int | None:
        """The live worker's process id (``None`` before the first job or after a death)."""
        worker = self._worker
        return worker.pid if worker is not None and worker.alive else None

    @property
    def hash_mb(self) -> int:
        return self._hash_mb

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
        sent_at = time.monotonic()
        budget = allocate(limits, game.side, game.ply, move_overhead_ms)
        worker = await self._ensure_worker()
        if worker.shortage is not None:
            await self._restore_threads(worker)  # freed since?
        if (shortage := worker.shortage) is not None:
            on_info(
                SearchInfo(
                    depth=0,
                    string=f"error: Threads {self._threads}: {shortage.describe()}; "
                    "this search runs with Threads 1",
                )
            )
        seq = next(self._seq)

        def emergency() -> str:
            # Never without moves: the worker answers a position without any at once.
            candidates = [game.parse_move(m) for m in limits.searchmoves or ()] or None
            move = emergency_move(game, candidates)
            assert move is not None
            return game.format_move(move)

        watchdog = _Watchdog(worker, seq, budget, on_info, emergency)

        def forward(event: ControlEvent) -> None:
            # Called where the session calls stop()/ponderhit(): on the event loop.
            steering = msg.Stop(seq) if event is ControlEvent.STOP else msg.PonderHit(seq)
            if worker.alive and seq in worker.pending:
                with contextlib.suppress(WorkerDiedError):
                    worker.send(steering)
            match event:
                case ControlEvent.PONDERHIT:
                    watchdog.start_clock()
                case ControlEvent.STOP:
                    watchdog.stop_requested()

        def steer(future: asyncio.Future[Any]) -> None:
            watchdog.watch(future, clock_started=not control.pondering, sent_at=sent_at)
            control.add_listener(forward)
            if control.stopped:
                forward(ControlEvent.STOP)
            elif control.ponderhit_at is not None:
                forward(ControlEvent.PONDERHIT)

        message = msg.SearchJob(
            seq,
            game,
            limits,
            multipv,
            move_overhead_ms,
            control.pondering,
            sent_at,
            algorithm,
            skill,
        )
        result = await self._submit(worker, seq, message, watchdog.see, after_send=steer)
        return cast(SearchResult, result)

    async def call(
        self, fn: Callable[..., T], *args: Any, control: SearchControl | None = None
    ) -> T:
        worker = await self._ensure_worker()
        seq = next(self._seq)
        after_send = None
        if control is not None:

            def forward(event: ControlEvent) -> None:
                if event is ControlEvent.STOP and worker.alive and seq in worker.pending:
                    with contextlib.suppress(WorkerDiedError):
                        worker.send(msg.Stop(seq))

            def steer(_future: asyncio.Future[Any]) -> None:
                control.add_listener(forward)
                if control.stopped:
                    forward(ControlEvent.STOP)

            after_send = steer
        message = msg.CallJob(seq, fn, args, stoppable=control is not None)
        return cast(T, await self._submit(worker, seq, message, after_send=after_send))

    async def start(self) -> None:
        """Start the worker process now: a session's first timed ``go`` must not pay for
        (or, under load, lose its whole budget to) a process start."""
        await self._ensure_worker()

    async def resize_hash(self, hash_mb: int) -> None:
        """:class:`SharedMemoryFullError`: the new shared table did not fit; one thread now."""
        self._hash_mb = hash_mb
        worker = await self._started_worker()
        if worker is not None:
            seq = next(self._seq)
            await self._submit_shared(worker, seq, msg.ResizeHash(seq, hash_mb))

    async def set_threads(self, threads: int) -> None:
        """:class:`SharedMemoryFullError`: the shared table did not fit; one thread now.

        Helpers need the worker, so ``threads`` above 1 starts it (with the old count) if
        need be: whether their table fits is known here, not at the first search."""
        if threads > 1:
            await self._ensure_worker()
        self._threads = threads
        worker = await self._started_worker()
        if worker is not None:
            seq = next(self._seq)
            await self._submit_shared(worker, seq, msg.SetThreads(seq, threads))

    async def _restore_threads(self, worker: _Worker) -> None:
        """Give a worker started again (after a death) the runner's ``Threads``; a table that
        does not fit now leaves it at one thread, marked short, and the session's option
        as it is: each search says so and tries again first."""
        seq = next(self._seq)
        try:
            await self._submit(worker, seq, msg.SetThreads(seq, self._threads))
        except SharedMemoryFullError as exc:
            worker.shortage = exc.shortage
        else:
            worker.shortage = None

    async def _submit_shared(self, worker: _Worker, seq: int, message: msg.Job) -> None:
        """A job that may move the table into shared memory: a refusal leaves one thread."""
        try:
            await self._submit(worker, seq, message)
        except SharedMemoryFullError:
            self._threads = 1
            raise

    async def _started_worker(self) -> _Worker | None:
        """The live worker, waiting for one being started (it was given the settings of
        the moment it started, so a change since must still be sent); ``None`` when there
        is none (the next one starts with the current settings)."""
        if self._starting is not None and self._starting.locked():
            await self._ensure_worker()
        worker = self._worker
        return worker if worker is not None and worker.alive else None

    async def clear(self) -> None:
        worker = self._worker
        if worker is not None and worker.alive:
            seq = next(self._seq)
            await self._submit(worker, seq, msg.ClearHash(seq))

    async def close(self) -> None:
        self._closed = True
        worker, self._worker = self._worker, None
        if worker is not None:
            await worker.close()

    async def _submit(
        self,
        worker: _Worker,
        seq: int,
        message: msg.Job,
        on_info: InfoCallback | None = None,
        *,
        after_send: Callable[[asyncio.Future[Any]], None] | None = None,
    ) -> object:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        worker.pending[seq] = _Pending(future, on_info)
        try:
            worker.send(message)
        except BaseException:
            worker.pending.pop(seq, None)
            raise
        if after_send is not None:
            after_send(future)
        try:
            return await future
        except asyncio.CancelledError:
            # Nobody wants the answer any more; do not let the worker search on for it.
            worker.pending.pop(seq, None)
            if worker.alive:
                with contextlib.suppress(WorkerDiedError):
                    worker.send(msg.Stop(seq))
            raise

    async def _ensure_worker(self) -> _Worker:
        if self._closed:
            raise WorkerError("the runner is closed")
        worker = self._worker
        if worker is not None and worker.alive:
            return worker
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            worker = self._worker
            if worker is not None and worker.alive:
                return worker
            if worker is not None:
                self._worker = None
                await worker.close()  # reap the dead one before starting its successor
            worker = await self._start_worker()
            if self._closed:
                await worker.close()
                raise WorkerError("the runner is closed")
            self._worker = worker
            if self._threads > 1:  # a successor: its predecessor had helpers
                await self._restore_threads(worker)
            return worker

    async def _start_worker(self) -> _Worker:
        context = self._context or worker_context()
        parent_conn, child_conn = context.Pipe(duplex=True)
        process = context.Process(
            target=_worker_main,
            args=(child_conn, self._hash_mb, self._nice),
            name="brudno-worker",
            daemon=True,
        )
        # Starting talks to the fork server (or forks a whole interpreter): not on the loop.
        starting = asyncio.ensure_future(asyncio.to_thread(process.start))
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            # The start completes in its thread regardless; end the process nobody wants.
            with contextlib.suppress(Exception):
                await starting
            if process.pid is not None:
                child_conn.close()
                await _Worker(process, parent_conn, asyncio.get_running_loop()).close()
            raise
        finally:
            child_conn.close()  # the worker holds its own copy; ours would hide its EOF
        self.started += 1
        log.debug("started search worker %s (Hash %d MiB)", process.pid, self._hash_mb)
        return _Worker(process, parent_conn, asyncio.get_running_loop())
