"""The sessions' ``Threads``, held against the cores a server may use.

``Threads N`` makes a session search with N processes (:mod:`engine.smp`).  On a server one
client asking for 64 would take every core from the others, so a server grants threads from a
budget: at most ``max_threads`` per session, and the sum over its sessions (each counted with
at least its main search) at most ``total``.  A session keeps its first thread whatever the
budget says (the number of sessions is bounded on its own, by ``--max-sessions``); extra
threads are granted while they fit, and a request that does not fit is cut down to what does,
with the reason, rather than refused: a bot configured for ``Threads 4`` then still plays,
with fewer helpers.
"""

from __future__ import annotations


class ThreadBudget:
    """Threads granted per session, within a per-session and a total limit."""

    def __init__(self, total: int, max_threads: int) -> None:
        if total < 1 or max_threads < 1:
            raise ValueError("thread limits must be at least 1")
        self.total = total
        self.max_threads = max_threads
        self._held: dict[str, int] = {}

    @property
    def used(self) -> int:
        """Threads granted over all sessions (a server requests one for each session it
        admits, so every session counts with at least its main search)."""
        return sum(self._held.values())

    def held(self, session: str) -> int:
        return self._held.get(session, 1)

    def request(self, session: str, threads: int) -> tuple[int, str]:
        """Grant ``session`` up to ``threads`` (replacing what it held); returns the count
        granted, at least 1, and why it is fewer than asked (empty when it is not)."""
        others = self.used - self._held.get(session, 0)
        free = self.total - others
        granted = max(1, min(threads, self.max_threads, free))
        self._held[session] = granted
        if granted == threads:
            return granted, ""
        if threads > self.max_threads and granted == self.max_threads:
            return granted, f"this server allows at most {self.max_threads} per session"
        return granted, (
            f"this server's {self.total} threads are shared by its sessions "
            f"and {max(0, others)} are in use"
        )

    def release(self, session: str) -> None:
        self._held.pop(session, None)
