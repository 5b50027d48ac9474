"""What one session is doing, noted from the lines it reads and writes.

A :class:`SessionTap` is the :class:`~protocol.transports.observer.SessionObserver` of one
session.  It works from the UCI text both ways, the one interface every transport shares
(the TCP server's connections and the MQTT worker's jobs alike), and it does as little as
it can per line, because it runs on the event loop for every line:

* an ``info`` line is only *kept* (the latest one per kind, a reference, no parsing): the
  page and the scrape parse it when they look, at their own pace;
* ``go`` starts a clock, ``stop`` another; the ``bestmove`` that answers them (UCI gives every
  ``go`` exactly one, in order) closes them and feeds the histograms;
* the nodes come from the search's result (the session's ``on_result`` hook), once per
  search, since no ``info`` line reports the last, unfinished iteration; the same hook tells
  an emergency move: a failed search (no result, the session's stand-in move) or a move that
  no completed iteration chose (depth 0 without a score: the worker's watchdog answering
  for a starved search, or a stop before the first iteration ended).

Latency here is the server's: from the ``go`` line read to the ``bestmove`` written (a
``go`` queued behind a running search includes its wait), without the network.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from engine.info import SearchResult
from protocol.transports.http.metrics import Metrics
from protocol.transports.http.status import InfoSample, SessionStatus, parse_info
from protocol.uci import commands as cmd
from protocol.uci.options import OptionName
from protocol.uci.session import MAX_QUEUED_COMMANDS, EngineSession, State

MAX_OPEN_GOS: Final = MAX_QUEUED_COMMANDS + 2
"""``go`` lines awaiting their ``bestmove``: the running one, those queued, and one refused
by a full queue (which never gets one).  Bounded, so a mismatch cannot grow memory."""


@dataclass(frozen=True, slots=True)
class _Go:
    received: float
    movetime_ms: int | None
    timed: bool
    """False for ``go infinite`` / ``go ponder``: their latency is the client's choice."""


class SessionTap:
    """One session's observer: feeds the metrics, and keeps what the page shows."""

    def __init__(
        self,
        sid: str,
        session: EngineSession,
        metrics: Metrics,
        restarts: Callable[[], int],
        *,
        on_closed: Callable[[SessionTap], None] | None = None,
    ) -> None:
        self.sid = sid
        self._on_closed = on_closed
        self._session = session
        self._metrics = metrics
        self.restarts = restarts
        self._clock = time.monotonic
        self._opened = self._clock()
        self._gos: deque[_Go] = deque(maxlen=MAX_OPEN_GOS)
        self._stop_at: float | None = None
        self._line: str | None = None
        """The latest principal-variation report (first MultiPV line)."""
        self._stats: str | None = None
        """The latest report with counters (a line or a statistics tick)."""
        self.searches = 0
        """Searches answered in this session."""

    # -- SessionObserver -----------------------------------------------------------------------
    def line_in(self, line: str) -> None:
        head = line.lstrip()[:5]
        if head.startswith("go"):
            command = cmd.parse_command(line)
            if isinstance(command, cmd.Go):
                limits = command.limits
                self._gos.append(
                    _Go(self._clock(), limits.movetime, timed=not limits.waits_for_stop)
                )
                self._metrics.searches_started.inc()
        elif head.startswith("stop") and self._gos and self._stop_at is None:
            self._stop_at = self._clock()

    def line_out(self, line: str) -> None:
        if line.startswith("info depth"):
            if " currmove " in line:
                return
            self._stats = line
            if " pv " in line and " multipv 1 " in line:
                self._line = line
        elif line.startswith("bestmove"):
            self._answered()

    def closed(self) -> None:
        self._gos.clear()
        if self._on_closed is not None:
            self._on_closed(self)

    def searched(self, result: SearchResult | None) -> None:
        """The session's :attr:`~protocol.uci.session.EngineSession.on_result`: every node
        counts, also those of the last iteration, which no ``info`` line reports; a move
        without a completed iteration behind it is an emergency move."""
        if result is None:
            self._metrics.emergency_moves.inc()
            return
        if result.nodes > 0:
            self._metrics.nodes.inc(result.nodes)
        if result.best is not None and result.depth == 0 and result.score is None:
            self._metrics.emergency_moves.inc()

    # -- what the answer closes ----------------------------------------------------------------
    def _answered(self) -> None:
        now = self._clock()
        metrics = self._metrics
        metrics.searches_finished.inc()
        self.searches += 1
        if self._stop_at is not None:
            metrics.stop_latency.observe(max(0.0, now - self._stop_at))
            self._stop_at = None
        if not self._gos:
            return
        go = self._gos.popleft()
        if not go.timed:
            return
        latency = max(0.0, now - go.received)
        metrics.bestmove_latency.observe(latency)
        if go.movetime_ms is not None:
            metrics.bestmove_overshoot.observe(max(0.0, latency - go.movetime_ms / 1000.0))

    # -- what the page and the scrape read -----------------------------------------------------
    @property
    def searching(self) -> bool:
        return self._session.state is not State.IDLE

    def nps(self) -> int:
        """The current search's speed (0 while idle)."""
        return parse_info(self._stats).nps if self.searching else 0

    def info(self) -> InfoSample:
        """The latest line with its counters brought up to date by later statistics."""
        line = parse_info(self._line)
        stats = parse_info(self._stats)
        if stats.nodes >= line.nodes:
            return InfoSample(
                depth=stats.depth if stats.depth is not None else line.depth,
                seldepth=line.seldepth,
                score=line.score,
                nodes=stats.nodes,
                nps=stats.nps,
                time_ms=stats.time_ms,
                pv=line.pv,
            )
        return line

    def status(self) -> SessionStatus:
        session = self._session
        options = session.options
        return SessionStatus(
            sid=self.sid,
            variant=options.get_str(OptionName.VARIANT),
            fen=session.position.fen(),
            chess960=options.get_bool(OptionName.CHESS960),
            state=session.state.value,
            info=self.info(),
            searches=self.searches,
            age_s=self._clock() - self._opened,
        )
