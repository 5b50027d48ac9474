"""The words every process of a parallel search shares besides the table.

One shared block of 64-bit words: word 0 is the number of the last *stopped* search (a helper
searching job ``j`` stops as soon as the word reaches ``j``), then two words per helper: the
job its node count belongs to, and the count.  A helper publishes its count at every poll of
its search (about every 5 ms), so the main search can report the nodes of all processes the
way Stockfish's ``info nodes`` does, without any message.

No locks: each word has one writer.  A helper writes its count as 0 before it writes the new
job number, so a reader that sees the new number never sees the old job's count.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.shm import SharedWords

_STOPPED = 0
_FIRST = 1


@dataclass(frozen=True, slots=True)
class ScoreboardHandle:
    """What a helper needs to attach (pickles small)."""

    name: str
    helpers: int


class Scoreboard:
    """The shared words; :meth:`create` in the main process, :meth:`attach` in a helper."""

    __slots__ = ("_block", "_words", "helpers")

    def __init__(self, block_name: str | None, helpers: int) -> None:
        self.helpers = helpers
        self._block = (
            SharedWords(words=_FIRST + 2 * max(1, helpers))
            if block_name is None
            else SharedWords(name=block_name)
        )
        self._words = self._block.view()

    @classmethod
    def create(cls, helpers: int) -> Scoreboard:
        return cls(None, helpers)

    @classmethod
    def attach(cls, handle: ScoreboardHandle) -> Scoreboard:
        return cls(handle.name, handle.helpers)

    @property
    def handle(self) -> ScoreboardHandle:
        return ScoreboardHandle(self._block.name, self.helpers)

    # -- the main search's side ----------------------------------------------------------------
    def stop(self, job: int) -> None:
        """Every search numbered ``job`` or lower stops at its next poll."""
        self._words[_STOPPED] = max(self._words[_STOPPED], job)

    def nodes(self, job: int) -> int:
        """The nodes the helpers have counted for ``job`` so far."""
        words = self._words
        total = 0
        for i in range(_FIRST, _FIRST + 2 * self.helpers, 2):
            if words[i] == job:
                total += words[i + 1]
        return total

    # -- a helper's side -----------------------------------------------------------------------
    def stopped(self, job: int) -> bool:
        return self._words[_STOPPED] >= job

    def begin(self, helper: int, job: int) -> None:
        """Helper ``helper`` (0-based) starts ``job`` with no nodes counted."""
        i = _FIRST + 2 * helper
        self._words[i + 1] = 0
        self._words[i] = job

    def count(self, helper: int, nodes: int) -> None:
        self._words[_FIRST + 2 * helper + 1] = nodes

    def close(self) -> None:
        """Detach (the creator also deletes the block)."""
        self._block.close()
