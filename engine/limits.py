"""What a search may spend, as the ``go`` command said it.

Every field is ``X | None``: ``None`` means "not given", never zero.  Several limits given
together mean "stop at whichever is reached first".  Times are in milliseconds (as in UCI), so
the protocol layer can pass them through untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None
    """Search for a mate in this many moves (stop when one is proven)."""
    infinite: bool = False
    ponder: bool = False
    searchmoves: Sequence[str] | None = None
    """Restrict the root to these moves (in the game's move text); ``None`` means all."""

    def clock(self, side: int) -> tuple[int | None, int]:
        """Remaining time and increment (ms) for ``side`` (0 = first player/white, 1 = second)."""
        if side == 0:
            return self.wtime, self.winc or 0
        return self.btime, self.binc or 0

    @property
    def is_timed(self) -> bool:
        """True when a clock or a fixed move time bounds the search."""
        return self.movetime is not None or self.wtime is not None or self.btime is not None

    @property
    def waits_for_stop(self) -> bool:
        """True when ``bestmove`` must wait for ``stop``/``ponderhit`` (UCI: infinite, ponder)."""
        return self.infinite or self.ponder
