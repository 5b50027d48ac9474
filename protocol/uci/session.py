"""One UCI engine session: a transport-agnostic state machine.

States (DESIGN.md): IDLE → SEARCHING (a ``go``, ``perft`` or ``bench`` job is running) →
STOPPING (``stop`` was asked, waiting for the job to hand back its answer) → IDLE.
Invariants this module keeps:

* ``isready``, ``stop``, ``ponderhit`` and ``quit`` are answered at once in every state: they
  are never queued behind a job, so the reader is never blocked by one;
* a command that needs the job's result or an idle engine (``setoption``, ``ucinewgame``,
  ``position``, ``go``, ``perft``, ``bench``, ``d``, ``eval``) is queued behind the running job
  and run in arrival order once it ends (a bounded queue: past
  :data:`MAX_QUEUED_COMMANDS` a command is refused with an error); when the engine is idle it
  runs at once, so a transport that feeds lines one by one sees its effects before the next;
* ``stop`` ends the running job and every ``go`` queued before it (each still answers: a
  queued ``go`` then answers at once); a ``go`` that arrives while a job runs ends that job
  first, as a new search always did;
* every ``go`` gets exactly one ``bestmove``, and it is never dropped by a sink;
* during ``go infinite`` / ``go ponder`` no ``bestmove`` before ``stop`` / ``ponderhit``,
  even if the search ran out of tree first;
* bad input produces ``info string error: …`` and changes nothing (position, options, TT);
  an internal error is logged in full here and reaches the client as one short line.

The session never searches itself: searches, perft and bench run in a :class:`SearchRunner`
off the event loop; the options, the position and what the options load are its
:class:`~protocol.uci.engine.Engine`'s.  The session schedules: the command queue, jobs,
``go``/``stop``/``ponderhit``, and the output sink.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import itertools
import logging
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any, Protocol

from engine.control import SearchControl
from engine.emergency import emergency_move
from engine.game import Game, IllegalMoveError
from engine.info import SearchInfo, SearchResult
from engine.limits import Limits
from engine.perft import divide_until_stopped
from protocol.text import printable
from protocol.uci import commands as cmd
from protocol.uci.bench import run_bench
from protocol.uci.engine import Engine, Policies
from protocol.uci.formatting import (
    bestmove_line,
    error_line,
    id_lines,
    info_line,
    info_string,
    option_line,
)
from protocol.uci.options import ANY_PATH, EvalFileAccess, OptionName, Options
from protocol.uci.runner import SearchRunner, ThreadRunner
from protocol.uci.syzygy import ANY_SYZYGY_PATH, SyzygyAccess

log = logging.getLogger(__name__)

ENGINE_NAME = "Brudno"
ENGINE_AUTHOR = "the Brudno developers"
MAX_LINE_LENGTH = 1 << 16
"""Longer lines are refused: no legitimate UCI command comes near it (a game of 1,000 moves
is about 5,000 characters)."""

MAX_QUEUED_COMMANDS = 256
"""Commands that may wait behind a running job.  A GUI never queues more than a handful
(``position`` and ``go`` per move); the bound keeps a client that floods a long search with
commands from growing the server's memory.  Past it a command is refused with an error."""

MALFORMED_GO_MOVETIME_MS = 1000
"""What a ``go`` with a bad part searches when its valid parts set no limit: a typo such as
``go movetime -5`` must not pin a CPU until ``stop``.  ``infinite`` and ``ponder`` are kept."""


def engine_version() -> str:
    try:
        return metadata.version("brudno")
    except metadata.PackageNotFoundError:
        return "dev"


class State(enum.StrEnum):
    IDLE = "idle"
    SEARCHING = "searching"
    STOPPING = "stopping"


_AT_ONCE = (
    cmd.Empty,
    cmd.Uci,
    cmd.IsReady,
    cmd.Debug,
    cmd.Register,
    cmd.Stop,
    cmd.PonderHit,
    cmd.Quit,
    cmd.Invalid,
    cmd.Unknown,
)
"""Commands answered as they arrive, whatever runs: they neither wait for a job nor change
what a job or a queued command depends on."""

_JOBS = (cmd.Go, cmd.Perft, cmd.Bench)
"""Commands that start a job (the session is busy until it ends)."""


@dataclass(frozen=True, slots=True)
class _Queued:
    """A command waiting behind the running job, with its arrival number (for ``stop``)."""

    seq: int
    command: cmd.Command
    line: str


class LineSink(Protocol):
    """Where the session's output lines go.  Must not block the event loop for long.

    ``droppable`` lines (search ``info``) may be discarded by a transport under backpressure;
    every other line (``bestmove``, ``readyok``, errors) must be delivered.
    """

    def send(self, line: str, *, droppable: bool = False) -> None: ...


class _Output:
    """The session's output: lines, ``info string`` notes and errors (a
    :class:`~protocol.uci.engine.Reporter` for the engine)."""

    def __init__(self, sink: LineSink) -> None:
        self.sink = sink

    def send(self, line: str) -> None:
        self.sink.send(line)

    def say(self, text: str) -> None:
        self.sink.send(info_string(text))

    def internal_error(self, during: str, exc: BaseException, offending: str) -> None:
        """A bug or a failed worker: the whole story goes to the server's log; the client
        gets one short line (the exception's type, no message that could hold paths)."""
        log.error("internal error in %s (%s)", during, offending.strip()[:200], exc_info=exc)
        self.error(f"internal error in {during} ({type(exc).__name__})", offending.strip())

    def error(self, what: str, offending: str) -> None:
        # Echo the client's text back safely: control bytes would corrupt the line framing.
        shown = printable(offending)
        log.info("client error: %s (%s)", what, shown)
        self.sink.send(error_line(what, shown))


class EngineSession:
    """One client's engine: its position, options, search and output.

    The transport decides what this client may touch on the machine it runs on:

    * ``runner_factory`` builds the runner (threads on stdio, a worker process on servers);
    * ``hash_budget`` lets a server share memory among sessions
      (:class:`~protocol.uci.engine.Policies`);
    * ``thread_budget`` lets a server share its cores among sessions (likewise);
    * ``eval_files`` says which files ``setoption name EvalFile`` may read
      (:class:`~protocol.uci.options.EvalFileAccess`): any path by default, as on stdio, where
      the user owns the process; a server passes
      :data:`~protocol.uci.options.NO_EVAL_FILES` or ``EvalFileAccess.within(directory)``,
      because there the value would name a file on the server's machine.  A refused value
      gets one ``info string error: …`` and the option keeps its old value;
    * ``book_files`` is the same policy for ``setoption name BookFile`` (the opening book),
      with a directory of its own on servers.
    """

    def __init__(
        self,
        sink: LineSink,
        *,
        runner_factory: Callable[[int], SearchRunner] = ThreadRunner,
        hash_budget: Callable[[int], str | None] | None = None,
        thread_budget: Callable[[int], tuple[int, str]] | None = None,
        eval_files: EvalFileAccess = ANY_PATH,
        syzygy: SyzygyAccess = ANY_SYZYGY_PATH,
        book_files: EvalFileAccess = ANY_PATH,
    ) -> None:
        self._sink = sink
        self._out = _Output(sink)
        self._engine = Engine(
            runner_factory,
            self._out,
            Policies(hash_budget, thread_budget, eval_files, syzygy, book_files),
        )
        self._runner = self._engine.runner
        self._debug = False
        self.state = State.IDLE
        self._control: SearchControl | None = None
        self._job: asyncio.Task[None] | None = None
        """The running job (search, perft, bench); ``None`` once it has ended."""
        self._release: asyncio.Event | None = None
        """Set when a held bestmove (infinite / ponder) may be sent."""
        self._queue: collections.deque[_Queued] = collections.deque()
        self._pump: asyncio.Task[None] | None = None
        """Runs the queued commands once the job ends; alive while any are left."""
        self._arrivals = itertools.count(1)
        self._last_seq = 0
        self._stopped_through = 0
        """``stop`` ends the running job and every ``go`` that arrived up to this number, also
        one still queued (queued perft and bench run: they were asked for after the job)."""
        self._input_ended = False
        """No more input will come: a job that would wait for ``stop`` is not held."""
        self._starting: asyncio.Task[None] | None = None
        self._closed = False
        self.on_result: Callable[[SearchResult | None], None] | None = None
        """Sees each search's result just before its ``bestmove`` goes out, ``None`` when the
        search failed and a stand-in move answers (a transport's monitoring counts nodes and
        emergency moves); must be quick and must not raise."""

    # -- public interface ------------------------------------------------------------------
    @property
    def position(self) -> Game[Any]:
        """The current position (read-only by convention; the search works on a copy)."""
        return self._engine.game

    @property
    def options(self) -> Options:
        return self._engine.options

    @property
    def idle(self) -> bool:
        """No job runs and no command waits: the next command runs at once."""
        return not self._busy

    async def handle(self, line: str) -> bool:
        """Process one input line.  Returns False once the session should end (``quit``).

        Never waits for a running job: a command that must is queued behind it (see the
        module docstring), so ``isready`` and ``stop`` that follow are answered at once.
        """
        if self._closed:
            return False
        if self._starting is None:
            # Get the runner ready while the GUI is still sending uci/isready.
            self._starting = asyncio.create_task(self._start_runner())
        if len(line) > MAX_LINE_LENGTH:
            self._error("line too long", f"{len(line)} characters, limit {MAX_LINE_LENGTH}")
            return True
        command = cmd.parse_command(line)
        if self._debug and not isinstance(command, cmd.Empty):
            self._say(f"debug: received {line.strip()!r} in state {self.state.value}")
        try:
            if isinstance(command, _AT_ONCE):
                return await self._answer(command)
            if isinstance(command, cmd.Go):
                for problem in command.errors:
                    self._send(info_string(f"error: {problem}"))
            if not self._busy:
                await self._execute(_Queued(self._arrive(), command, line))
                return True
            self._enqueue(command, line)
        except Exception as exc:  # a bug must never take the session down with it
            self._internal_error("handling a command", exc, line)
        return True

    async def finish_input(self) -> None:
        """Input ended (EOF): let queued commands and finite jobs finish, then close.

        An infinite or pondering search would never end on its own, so it is stopped, and
        one still queued is stopped as it starts.
        """
        self._input_ended = True
        if self._release is not None and not self._release.is_set():
            self._stop_search()
        await self.close()

    async def close(self) -> None:
        """Wait for the queue and any running job (their answers are sent), then release
        the runner.  To end them early, send ``stop`` first."""
        if self._closed:
            return
        await self._settle()
        self._closed = True
        if self._starting is not None and not self._starting.done():
            # A worker still being started is ended by its runner on cancellation; wait for
            # that, so a closed session leaves no task and no process behind.
            self._starting.cancel()
            await asyncio.wait((self._starting,))
        self._engine.book.close()
        await self._runner.close()

    # -- dispatch --------------------------------------------------------------------------
    @property
    def _busy(self) -> bool:
        return self._job is not None or self._pump is not None or bool(self._queue)

    def _arrive(self) -> int:
        self._last_seq = next(self._arrivals)
        return self._last_seq

    async def _start_runner(self) -> None:
        try:
            await self._runner.start()
        except Exception:
            # The first job will try again and report what fails then.
            log.warning("could not start the search runner ahead of the first job", exc_info=True)

    async def _answer(self, command: cmd.Command) -> bool:
        """The commands answered at once, in every state."""
        match command:
            case cmd.Empty():
                pass
            case cmd.Uci():
                self._uci()
            case cmd.IsReady():
                self._send("readyok")
            case cmd.Debug(on=on):
                self._debug = on
            case cmd.Register():
                self._say("registration is not required")
            case cmd.Stop():
                self._stop_through(self._last_seq)
            case cmd.PonderHit():
                self._ponderhit()
            case cmd.Quit():
                await self._quit()
                return False
            case cmd.Invalid(line=line, reason=reason):
                self._error(reason, line)
            case cmd.Unknown(line=line):
                self._error("unknown command", line.strip())
        return True

    def _enqueue(self, command: cmd.Command, line: str) -> None:
        """Queue ``command`` behind the running job (and those already waiting)."""
        if len(self._queue) >= MAX_QUEUED_COMMANDS:
            self._error(
                f"{MAX_QUEUED_COMMANDS} commands already wait for the search; "
                "send stop, or wait for bestmove",
                line.strip(),
            )
            return
        seq = self._arrive()
        if isinstance(command, cmd.Go):
            self._stop_through(seq - 1)  # a new search ends the running one and those queued
        self._queue.append(_Queued(seq, command, line))
        if self._pump is None:
            self._pump = asyncio.create_task(self._run_queue())

    async def _run_queue(self) -> None:
        """Run queued commands in order, each after the job before it has ended."""
        try:
            while True:
                await self._wait_job()
                if not self._queue:
                    return
                item = self._queue.popleft()
                try:
                    await self._execute(item)
                except Exception as exc:
                    self._internal_error("handling a command", exc, item.line)
        finally:
            self._pump = None

    async def _settle(self) -> None:
        """Wait until the queue is empty and no job runs."""
        while self._busy:
            if self._pump is not None:
                await self._pump
            else:
                await self._wait_job()

    async def _quit(self) -> None:
        """``quit``: drop what waits, stop the job (its answer is still sent), close."""
        if self._queue:
            log.info("quit: %d queued command(s) dropped", len(self._queue))
            self._queue.clear()
        self._stop_through(self._last_seq)
        await self.close()

    async def _execute(self, item: _Queued) -> None:
        """Run one command that needs an idle engine (never called while a job runs)."""
        match item.command:
            case cmd.SetOption(name=name, value=value):
                await self._engine.set_option(name, value)
            case cmd.UciNewGame():
                await self._runner.clear()
            case cmd.Position(fen=fen, moves=moves):
                self._engine.set_position(fen, moves)
            case cmd.Go(limits=limits, errors=errors):
                try:
                    self._go(limits, bounded=not errors, seq=item.seq)
                except Exception as exc:
                    self._internal_error("go", exc, item.line)
                    if self._job is None:  # no search began to answer it: still one bestmove
                        self._send_bestmove(None, self._engine.game)
            case cmd.Display():
                self._send_lines(self._engine.game.display().splitlines())
            case cmd.Eval():
                self._send_lines(self._engine.eval_lines())
            case cmd.Perft(depth=depth):
                self._perft(depth)
            case cmd.Bench(depth=depth):
                self._bench(depth)
            case other:
                raise AssertionError(f"not a queued command: {other!r}")

    # -- commands --------------------------------------------------------------------------
    def _uci(self) -> None:
        for text in id_lines(f"{ENGINE_NAME} {engine_version()}", ENGINE_AUTHOR):
            self._send(text)
        for spec in self._engine.options.specs:
            self._send(option_line(spec))
        self._send("uciok")

    # -- searching -------------------------------------------------------------------------
    def _go(self, limits: Limits, *, bounded: bool, seq: int) -> None:
        """Start a search.  ``bounded`` is False when the ``go`` had a bad part: then a
        search that its valid parts leave without any limit gets a short one instead.
        With ``OwnBook`` on, a book move is answered at once instead
        (:meth:`~protocol.uci.engine.Engine.book_move`)."""
        book = self._engine.book_move(limits)
        if book is not None:
            self._say(f"book move {book.move} (weight {book.weight} of {book.total})")
            self._send(bestmove_line(book.move))
            return
        limits = self._checked_searchmoves(limits)
        if not bounded and not _has_limit(limits, self._engine.game.side):
            limits = replace(limits, movetime=MALFORMED_GO_MOVETIME_MS)
            self._say(
                f"searching with movetime {MALFORMED_GO_MOVETIME_MS}: the go had errors "
                "and no valid limit"
            )
        control = SearchControl(pondering=limits.ponder)
        release = asyncio.Event()
        if not limits.waits_for_stop:
            release.set()
        game = self._engine.game.copy()
        if self._debug:
            self._say(f"debug: search {limits} on {game.fen()}")
        self._start_job(self._search_job(game, limits, control, release), control, release)
        if seq <= self._stopped_through:
            self._stop_search()  # a stop (or a newer go) arrived while this go was queued

    def _start_job(
        self,
        job: Coroutine[Any, Any, None],
        control: SearchControl | None = None,
        release: asyncio.Event | None = None,
    ) -> None:
        """Run a long job (search, perft, bench) as a task, so that the session keeps
        reading input: ``isready`` is answered and ``stop`` is heard while it runs.

        A job that would wait for a ``stop`` after input has ended starts stopped: it still
        answers, at once."""
        if release is None:
            release = asyncio.Event()
            release.set()
        self._control, self._release = control or SearchControl(), release
        self.state = State.SEARCHING
        self._job = asyncio.create_task(self._finishing(job))
        if self._input_ended and not release.is_set():
            self._stop_search()

    async def _finishing(self, job: Coroutine[Any, Any, None]) -> None:
        try:
            await job
        finally:
            self.state = State.IDLE
            self._control = self._release = None
            self._job = None

    def _checked_searchmoves(self, limits: Limits) -> Limits:
        """Drop searchmoves that are not legal here (reporting them; ``0000`` silently)."""
        if limits.searchmoves is None:
            return limits
        legal: list[str] = []
        for text in limits.searchmoves:
            if text == "0000":
                continue
            try:
                self._engine.game.parse_move(text)
            except IllegalMoveError:
                self._error("illegal searchmove ignored", text)
            else:
                legal.append(text)
        return replace(limits, searchmoves=tuple(legal) or None)

    async def _search_job(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        release: asyncio.Event,
    ) -> None:
        result: SearchResult | None = None
        options = self._engine.options
        try:
            result = await self._runner.search(
                game,
                limits,
                control,
                self._on_info,
                multipv=options.get_int(OptionName.MULTI_PV),
                move_overhead_ms=options.get_int(OptionName.MOVE_OVERHEAD),
                algorithm=options.get_str(OptionName.ALGORITHM),
                skill=self._engine.skill(),
            )
        except Exception as exc:
            self._internal_error("search", exc, game.fen())
        finally:
            # Hold the move while infinite/pondering until stop or ponderhit releases it.
            await release.wait()
            if self.on_result is not None:
                self.on_result(result)
            self._send_bestmove(result, game)

    def _send_bestmove(self, result: SearchResult | None, game: Game[Any]) -> None:
        if result is None:
            # The search failed: still honour "every go gets one bestmove", with a legal move
            # if the game can still name one, else the null move.
            best = None
            try:
                move = emergency_move(game)
                best = None if move is None else game.format_move(move)
            except Exception:
                log.exception("no emergency move after a failed search")
            self._send(bestmove_line(best))
            return
        self._send(bestmove_line(result.best, result.ponder))

    def _on_info(self, info: SearchInfo) -> None:
        self._sink.send(
            info_line(info, show_wdl=self._engine.options.get_bool(OptionName.SHOW_WDL)),
            droppable=True,
        )

    def _stop_through(self, seq: int) -> None:
        """End the running job and every ``go`` that arrived up to ``seq`` (those still
        queued start stopped, see :meth:`_go`)."""
        self._stopped_through = seq
        self._stop_search()

    def _stop_search(self) -> None:
        if self._control is None or self._release is None:
            return  # stop while idle: nothing to do (UCI allows it)
        self.state = State.STOPPING
        self._control.stop()
        self._release.set()

    def _ponderhit(self) -> None:
        if self._control is None or self._release is None:
            return
        self._control.ponderhit()
        self._release.set()

    async def _wait_job(self) -> None:
        job = self._job
        if job is not None:
            await asyncio.shield(job)  # a cancelled waiter must not cancel the job

    # -- perft and bench -------------------------------------------------------------------
    def _perft(self, depth: int) -> None:
        control = SearchControl()
        self._start_job(self._perft_job(self._engine.game.copy(), depth, control), control)

    async def _perft_job(self, game: Game[Any], depth: int, control: SearchControl) -> None:
        try:
            done = await self._runner.call(divide_until_stopped, game, depth, control=control)
        except Exception as exc:
            self._internal_error("perft", exc, f"perft {depth}")
            return
        if not done.complete:
            self._say(f"perft stopped: {len(done.counts)} of {done.root_moves} root moves counted")
        for move, count in done.counts:
            self._send(f"{move}: {count}")
        self._send("")
        self._send(f"Nodes searched: {done.nodes}")

    def _bench(self, depth: int | None) -> None:
        control = SearchControl()
        self._start_job(self._bench_job(self._engine.variant.name, depth, control), control)

    async def _bench_job(self, variant: str, depth: int | None, control: SearchControl) -> None:
        try:
            result = await self._runner.call(run_bench, variant, depth, control=control)
        except Exception as exc:
            self._internal_error("bench", exc, "bench")
            return
        for text in result.lines():
            self._send(text)

    # -- output ----------------------------------------------------------------------------
    def _send(self, line: str) -> None:
        self._out.send(line)

    def _send_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self._out.send(line)

    def _say(self, text: str) -> None:
        self._out.say(text)

    def _internal_error(self, during: str, exc: BaseException, offending: str) -> None:
        self._out.internal_error(during, exc, offending)

    def _error(self, what: str, offending: str) -> None:
        self._out.error(what, offending)


def _has_limit(limits: Limits, side: int) -> bool:
    """True when the search will end by itself or waits for ``stop`` by request."""
    return (
        limits.movetime is not None
        or limits.clock(side)[0] is not None
        or limits.depth is not None
        or limits.nodes is not None
        or limits.mate is not None
        or limits.waits_for_stop
    )
