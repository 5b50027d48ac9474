"""The clocks of a match game, kept by the runner as cutechess and fastchess keep them.

An engine's own idea of time cannot be trusted to judge it, so the runner measures: each
side has its time left; an engine is told both clocks (``wtime``/``btime``, increments,
``movestogo``), the time from sending ``go`` to reading ``bestmove`` is charged to it, the
increment is added after the move, and a move that arrives later than the time left plus the
margin is a loss on time.  With a fixed time per move instead of a clock, a move later than
that time plus the margin loses too.  :class:`TimeControl` is the ``--tc`` value,
:class:`GameClock` one game's running clocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brudno.arena.players import GoLimits

__all__ = ["DEFAULT_TIMEMARGIN_MS", "GameClock", "TimeControl", "seconds_text"]

DEFAULT_TIMEMARGIN_MS = 50
"""Lateness forgiven before a loss on time: the pipe and the process switch cost a little."""

_TC_RE = re.compile(
    r"^(?:(?P<moves>\d+)/)?(?P<base>(?:\d+:)?\d+(?:\.\d+)?)(?:\+(?P<inc>\d+(?:\.\d+)?))?$"
)


@dataclass(frozen=True, slots=True)
class TimeControl:
    """``[MOVES/]BASE[+INC]``: BASE seconds (or ``M:SS``) for every MOVES moves (or for the
    whole game), plus INC seconds after each move; kept in milliseconds."""

    base_ms: int
    inc_ms: int = 0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        match = _TC_RE.match(text.strip())
        if match is None:
            raise ValueError(f"time control must look like 10+0.1, 40/60 or 1:30+1, not {text!r}")
        base_text = match["base"]
        minutes, _, seconds = base_text.rpartition(":")
        base = float(seconds) + 60.0 * float(minutes or 0)
        moves = int(match["moves"]) if match["moves"] else None
        if moves == 0:
            raise ValueError("the number of moves per period must be at least 1")
        inc = float(match["inc"] or 0)
        if base <= 0:
            raise ValueError(f"the base time must be positive: {text!r}")
        return cls(round(base * 1000), round(inc * 1000), moves)

    def text(self) -> str:
        """The PGN TimeControl form: ``40/60``, ``10+0.1``, ``300``."""
        base = seconds_text(self.base_ms)
        out = f"{self.moves}/{base}" if self.moves else base
        return f"{out}+{seconds_text(self.inc_ms)}" if self.inc_ms else out


def seconds_text(ms: int) -> str:
    """Milliseconds as PGN writes seconds: ``0.25``, ``10``."""
    return f"{ms / 1000:g}"


class GameClock:
    """Both sides' clocks through one game (side 0 is white).

    With a :class:`TimeControl` the engines get ``wtime``/``btime`` and are charged; with only
    ``movetime_ms`` every move has that budget; with neither (depth or node limits) nothing
    is timed.  ``depth`` and ``nodes`` ride along on every ``go``.
    """

    def __init__(
        self,
        tc: TimeControl | None,
        *,
        movetime_ms: int | None = None,
        depth: int | None = None,
        nodes: int | None = None,
        timemargin_ms: int = DEFAULT_TIMEMARGIN_MS,
    ) -> None:
        self._tc = tc
        self._movetime_ms = movetime_ms
        self._depth = depth
        self._nodes = nodes
        self._margin_ms = timemargin_ms
        self._left = [float(tc.base_ms), float(tc.base_ms)] if tc else [0.0, 0.0]
        self._togo: list[int | None] = [tc.moves, tc.moves] if tc and tc.moves else [None, None]

    def limits(self, side: int) -> GoLimits:
        """The ``go`` for ``side`` to move: both clocks, or the fixed limits."""
        tc = self._tc
        if tc is None:
            return GoLimits(movetime=self._movetime_ms, depth=self._depth, nodes=self._nodes)
        inc = tc.inc_ms or None
        return GoLimits(
            wtime=round(self._left[0]),
            btime=round(self._left[1]),
            winc=inc,
            binc=inc,
            movestogo=self._togo[side],
            depth=self._depth,
            nodes=self._nodes,
        )

    def allowed_ms(self, side: int) -> float | None:
        """How long ``side`` may take for this move before it loses on time (None: no limit)."""
        if self._tc is not None:
            return self._left[side] + self._margin_ms
        if self._movetime_ms is not None:
            return self._movetime_ms + self._margin_ms
        return None

    def timeout(self, side: int) -> float | None:
        """:meth:`allowed_ms` in seconds: when the runner stops waiting for the move."""
        allowed = self.allowed_ms(side)
        return None if allowed is None else allowed / 1000.0

    def is_late(self, side: int, elapsed: float) -> bool:
        """Did a move that took ``elapsed`` seconds come too late?"""
        allowed = self.allowed_ms(side)
        return allowed is not None and elapsed * 1000.0 > allowed

    def charge(self, side: int, elapsed: float) -> None:
        """``side`` moved (legally) after ``elapsed`` seconds: take the time, add the
        increment, and start a new period once its moves are played."""
        tc = self._tc
        if tc is None:
            return
        self._left[side] = max(0.0, self._left[side] - elapsed * 1000.0) + tc.inc_ms
        moves_left = self._togo[side]
        if moves_left is not None:
            moves_left -= 1
            if moves_left == 0:
                self._left[side] += tc.base_ms
                moves_left = tc.moves
            self._togo[side] = moves_left
