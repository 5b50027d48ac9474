"""One job, from the payload a client published to the reply it gets: checking the job,
collecting what its session says, and the terminal reply.

A job is a one-shot request, so much of UCI has no place in it (see :func:`parse_job`), and a
session's output is more than a client over MQTT wants: :class:`ReplyCollector` thins the
progress and keeps internal errors (tracebacks, the worker's paths) away from the client.
Where and how a job runs is the worker's business (:mod:`protocol.transports.mqtt.worker`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from engine.limits import Limits
from games.registry import GAMES
from protocol.text import printable
from protocol.transports.mqtt.wire import ReplyStatus
from protocol.uci import commands as cmd
from protocol.uci.formatting import error_line
from protocol.uci.session import MAX_LINE_LENGTH

MAX_JOB_BYTES = MAX_LINE_LENGTH
"""Longer job payloads are refused: no sensible job comes near it."""

INTERNAL_ERROR_PREFIX = "info string error: internal error"
"""How a session reports a failure of its own (a bug, a crashed search process), as opposed
to bad client input: the text after it may hold a traceback and the worker's file paths."""


class JobError(Exception):
    """A job refused before anything ran; becomes one ``info string error:`` reply line."""

    def __init__(self, what: str, offending: str) -> None:
        super().__init__(f"{what} ({offending})")
        self.what = what
        self.offending = offending

    def line(self) -> str:
        return error_line(self.what, printable(self.offending, 200))


class JobFailedError(RuntimeError):
    """A job's session reported an internal error (a bug, a crashed search process).

    The message holds the session's error lines (which may name the worker's files), for the
    worker's log; the client gets :func:`internal_error_line` instead.
    """

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))


@dataclass(frozen=True, slots=True)
class Job:
    """A checked job: the lines that set up the position, then its single ``go``."""

    game: str
    setup: tuple[str, ...]
    go: str
    limits: Limits
    new_game: bool = False
    """The job said ``ucinewgame``: search with an empty table (reproducible answers)."""


@dataclass(frozen=True, slots=True)
class TerminalReply:
    """A job's one terminal reply: ``done`` or ``error`` and its lines."""

    status: ReplyStatus
    payload: str


def parse_job(payload: bytes, game: str) -> Job:
    """Check a job's payload for ``game``; raise :class:`JobError` saying what is wrong.

    A job is a complete, finite request: ``setoption``/``position`` lines (blank lines and
    ``isready`` are tolerated, ``ucinewgame`` clears the table) and exactly one ``go``, last,
    with a limit
    that ends the search by itself.  Anything interactive (``stop``, ``go infinite``, ``uci``,
    ``quit``, ``perft`` …) has no place in a one-shot request and is refused.  ``UCI_Variant``
    comes from the topic; a job may repeat it but not contradict it.  Whether positions and
    moves are legal is for the session to say when the job runs.
    """
    text = _job_text(payload, game)
    setup: list[str] = []
    go: tuple[str, Limits] | None = None
    new_game = False
    for raw in text.splitlines():
        line = raw.strip()
        command = cmd.parse_command(line)
        if go is not None and not isinstance(command, cmd.Empty):
            raise JobError("go must be the job's last command", line)
        match command:
            case cmd.Empty() | cmd.IsReady():
                pass
            case cmd.UciNewGame():
                new_game = True
            case cmd.SetOption(name=name, value=value):
                if not _repeats_variant(name, value, game, line):
                    setup.append(line)
            case cmd.Position():
                setup.append(line)
            case cmd.Go(limits=limits, errors=errors):
                _check_go(limits, errors, line)
                go = (line, limits)
            case cmd.Invalid(reason=reason):
                raise JobError(reason, line)
            case cmd.Unknown():
                raise JobError("unknown command", line)
            case _:
                raise JobError("not allowed in a job (only setoption, position and go)", line)
    if go is None:
        raise JobError("the job has no go command", printable(text, 80) or "empty payload")
    return Job(game, tuple(setup), go[0], go[1], new_game)


def _job_text(payload: bytes, game: str) -> str:
    """The text of a job for a known ``game`` and of an acceptable size, else JobError."""
    if game not in GAMES:
        known = ", ".join(sorted(GAMES))
        raise JobError(f"unknown game; this worker plays {known}", game)
    if len(payload) > MAX_JOB_BYTES:
        raise JobError("job too long", f"{len(payload)} bytes, limit {MAX_JOB_BYTES}")
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JobError("the job is not UTF-8 text", repr(payload[:40])) from exc


def _repeats_variant(name: str, value: str | None, game: str, line: str) -> bool:
    """Whether a ``setoption`` sets ``UCI_Variant`` to the topic's ``game`` (JobError if it
    sets it to another); such a line is dropped from the job."""
    if name.casefold() != "uci_variant":
        return False
    if (value or "").strip().casefold() != game.casefold():
        raise JobError(f"UCI_Variant comes from the topic ({game})", line)
    return True


def _check_go(limits: Limits, errors: tuple[str, ...], line: str) -> None:
    """Raise JobError unless the job's ``go`` parsed cleanly and ends the search by itself."""
    if errors:
        raise JobError(errors[0], line)
    if limits.waits_for_stop:
        raise JobError("go infinite/ponder waits for a stop a job cannot send", line)
    if not (limits.is_timed or limits.depth or limits.nodes or limits.mate):
        raise JobError("go needs a limit (depth, nodes, movetime, mate or a clock)", line)


def internal_error_line(incident: str, job: Job) -> str:
    """The one line a client gets for a job that failed inside the worker.

    It names the incident under which the worker logged the details (the traceback stays on
    the worker: it shows paths of the worker's machine and helps no client) and, as every
    error line, the client's text it is about: the job's ``go``.
    """
    return error_line(f"internal error, see the worker's log for incident {incident}", job.go)


class ReplyCollector:
    """The session's sink for one job: thins progress and keeps the terminal lines.

    ``info`` lines are kept only as the last line per MultiPV index within a depth (a line
    becomes ready for publishing once a deeper one arrives); current-move and statistics
    ticks are dropped.  Other lines pass through in order.  ``bestmove`` ends the job: the
    final reply carries the last depth's lines and the ``bestmove``.

    Internal-error lines (:data:`INTERNAL_ERROR_PREFIX`) are held back in
    :attr:`internal_errors`, never passed on: they are for the worker's log, and the job they
    belong to must end with an ``error`` reply, not with the stand-in ``bestmove`` the session
    sends after a failed search (UCI wants one for every ``go``; a job's client wants the
    truth).
    """

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.internal_errors: list[str] = []
        self.final: list[str] | None = None
        self.changed = asyncio.Event()
        self._ready: list[str] = []
        self._depth: str | None = None
        self._lines: dict[int, str] = {}

    def send(self, line: str, *, droppable: bool = False) -> None:
        if line.startswith(INTERNAL_ERROR_PREFIX):
            self.internal_errors.append(line)
            self.changed.set()
            return
        if droppable and line.startswith("info depth"):
            tokens = line.split()
            if "pv" not in tokens:
                return
            depth = tokens[2]
            multipv = int(tokens[tokens.index("multipv") + 1]) if "multipv" in tokens else 1
            if depth != self._depth:
                if self._flush():
                    self.changed.set()
                self._depth = depth
            self._lines[multipv] = line
            return
        self._flush()
        if line.startswith("bestmove"):
            self.final = [*self._ready, line]
            self._ready = []
        else:
            if line.startswith("info string error:"):
                self.errors.append(line)
            self._ready.append(line)
        self.changed.set()

    def _flush(self) -> bool:
        if not self._lines:
            return False
        self._ready.extend(self._lines[k] for k in sorted(self._lines))
        self._lines.clear()
        return True

    def take_ready(self) -> list[str]:
        """Lines ready to go out as progress (and forget them)."""
        ready, self._ready = self._ready, []
        return ready
