"""How every searcher stops: count nodes, poll now and then, raise one exception.

A searcher counts the nodes it enters in its own ``nodes`` field and, when the count reaches
``next_poll``, calls :meth:`StopPoll.check`, which returns the next poll point or raises
:class:`~engine.driver.SearchStopped` (``stop``, the node limit, the hard deadline, or the
``on_poll`` listener asked for it).  The production search (:mod:`engine.search`) and every
classic algorithm (:mod:`engine.lab.classic`) use this one class; why the poll adapts:
docs/search.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from engine.control import SearchControl
from engine.driver import SearchStopped
from engine.timeman import Deadline

__all__ = ["POLL_MAX", "POLL_MIN", "PollListener", "StopPoll"]

POLL_MIN: Final = 64
POLL_MAX: Final = 1024
"""The poll interval in nodes: between these, adapted so that a poll comes about every
:data:`POLL_GAP_S` seconds whatever the searcher's speed."""
POLL_GAP_S: Final = 0.005

PollListener = Callable[[int], bool | None]
"""Told the node count at every poll; returning ``True`` stops the search."""


class StopPoll:
    """One search's stop conditions, checked every :data:`POLL_MIN` to :data:`POLL_MAX` nodes.

    ``node_limit`` is exact: :meth:`check` is due at that count at the latest and raises
    there.  A searcher starts with ``next_poll = poll.first`` and, whenever its node count
    reaches ``next_poll``, sets ``next_poll = poll.check(nodes, ply)``.  Compiled (it is
    called from the production search's hot path).
    """

    def __init__(
        self,
        *,
        node_limit: int | None = None,
        control: SearchControl | None = None,
        deadline: Deadline | None = None,
        on_poll: PollListener | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.node_limit = node_limit
        self.control = control
        self.deadline = deadline if deadline is not None and deadline.timed else None
        self.on_poll = on_poll
        self.clock = clock
        self.last = clock()
        self.every = POLL_MIN
        self.first = POLL_MIN if node_limit is None else min(POLL_MIN, node_limit)
        """The node count of the first poll."""

    def check(self, nodes: int, ply: int) -> int:
        """Poll after ``nodes`` nodes, ``ply`` moves below the root: the node count of the
        next poll, or :class:`SearchStopped` (carrying ``ply`` and ``nodes``)."""
        now = self.clock()
        gap = now - self.last
        self.last = now
        if gap > 2 * POLL_GAP_S and self.every > POLL_MIN:
            self.every >>= 1
        elif gap < POLL_GAP_S / 2 and self.every < POLL_MAX:
            self.every <<= 1
        due = nodes + self.every
        if self.on_poll is not None and self.on_poll(nodes):
            raise SearchStopped(ply, nodes)
        node_limit = self.node_limit
        if node_limit is not None:
            if nodes >= node_limit:
                raise SearchStopped(ply, nodes)
            due = min(due, node_limit)
        control = self.control
        if control is not None and control.stopped:
            raise SearchStopped(ply, nodes)
        deadline = self.deadline
        if deadline is not None and deadline.hard_reached(now):
            raise SearchStopped(ply, nodes)
        return due
