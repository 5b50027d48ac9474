"""The sessions' Hash tables and search helpers, held against one memory limit.

Each session's transposition table is real memory in its worker process, and a client chooses
its size (``setoption name Hash``): without a shared bound, a few clients asking for 4 GiB
each would take the machine.  The server admits a session only if its table fits, and the
session asks here before resizing (its ``hash_budget`` hook), so a refused resize changes
nothing.  With ``Threads`` above 1 the table is shared by the session's processes: one block
of at most ``Hash`` MiB in ``/dev/shm`` (:mod:`engine.shm`), counted once, as its ``Hash``;
each helper process is charged :data:`~engine.smp.pool.HELPER_PROCESS_MB` on top, which also
covers the helpers' one-page scoreboard block.  The count stays true when a worker is killed:
its block is swept when the server reaps it, before a successor makes another.
"""

from __future__ import annotations

from engine.smp.pool import HELPER_PROCESS_MB


class MemoryBudget:
    """The sessions' Hash sizes, held against one limit (MiB)."""

    def __init__(self, limit_mb: int) -> None:
        self.limit_mb = limit_mb
        self._held: dict[str, int] = {}
        self._helpers: dict[str, int] = {}

    @property
    def used_mb(self) -> int:
        return sum(self._held.values()) + HELPER_PROCESS_MB * sum(self._helpers.values())

    def admit(self, session: str, mb: int) -> bool:
        """Reserve ``mb`` for a new session; False (nothing reserved) if it would not fit."""
        if self.used_mb + mb > self.limit_mb:
            return False
        self._held[session] = mb
        return True

    def request(self, session: str, mb: int) -> str | None:
        """Change a session's reservation (the session's ``hash_budget`` hook)."""
        own_helpers = HELPER_PROCESS_MB * self._helpers.get(session, 0)
        others = self.used_mb - self._held.get(session, 0) - own_helpers
        if others + own_helpers + mb > self.limit_mb:
            return (
                f"Hash {mb} MiB exceeds the server's memory limit "
                f"({self.limit_mb} MiB, {others} MiB held by other sessions"
                + (f", {own_helpers} MiB by this one's search helpers" if own_helpers else "")
                + f"; at most {max(0, self.limit_mb - others - own_helpers)} MiB available)"
            )
        self._held[session] = mb
        return None

    def reserve_helpers(self, session: str, helpers: int) -> int:
        """Hold memory for up to ``helpers`` helper processes of ``session`` (replacing what
        it held); returns how many fit."""
        self._helpers.pop(session, None)
        free = self.limit_mb - self.used_mb
        fitting = max(0, min(helpers, free // HELPER_PROCESS_MB))
        if fitting:
            self._helpers[session] = fitting
        return fitting

    def release(self, session: str) -> None:
        self._held.pop(session, None)
        self._helpers.pop(session, None)
