"""Shared memory blocks of 64-bit words that one process creates and deletes and others only
attach to.

The creator of a block unlinks it when it is done; a process that attached only closes its
mapping.  Helpers are started with ``spawn`` (or from a fork server), which hands them their
creator's resource tracker: an attach registers the block a second time with that same
tracker (a set, so nothing changes), and if the creator is killed before it could unlink, the
tracker deletes the block once every process using it is gone.  Unregistering on attach, a
common workaround for CPython's per-process trackers, would be wrong here: it would drop the
creator's registration from the shared tracker.

Views into a block must be released before the block can be closed (else CPython complains
at exit that "exported pointers exist"), so :class:`SharedWords` hands out views it keeps
track of, and releases them, closes and (for the creator) unlinks exactly once: at
:meth:`SharedWords.close` or, if nobody called it, when the interpreter exits.
"""

from __future__ import annotations

import contextlib
import weakref
from multiprocessing import shared_memory


def _release(block: shared_memory.SharedMemory, views: list[memoryview], unlink: bool) -> None:
    for view in views:
        view.release()
    views.clear()
    block.close()
    if unlink:
        with contextlib.suppress(FileNotFoundError):
            block.unlink()


class SharedWords:
    """A shared block of 64-bit words, created (``words``) or attached (``name``)."""

    __slots__ = ("__weakref__", "_block", "_finalizer", "_views", "owner")

    def __init__(self, *, words: int | None = None, name: str | None = None) -> None:
        if (words is None) == (name is None):
            raise ValueError("give the number of words to create a block, or a block's name")
        self.owner = name is None
        if name is None:
            assert words is not None
            self._block = shared_memory.SharedMemory(create=True, size=8 * max(1, words))
        else:
            self._block = shared_memory.SharedMemory(name=name)
        self._views: list[memoryview] = []
        self._finalizer = weakref.finalize(
            self, _release, self._block, self._views, unlink=self.owner
        )

    @property
    def name(self) -> str:
        return self._block.name

    def view(self, start: int = 0, stop: int | None = None, *, signed: bool = False) -> memoryview:
        """Words ``start:stop`` as a ``memoryview`` of format ``Q``, or ``q`` when ``signed``
        (valid until close)."""
        buf = self._block.buf
        assert buf is not None
        words = buf.cast("q" if signed else "Q")
        view = words[start:stop]
        words.release()
        self._views.append(view)
        return view

    def close(self) -> None:
        """Release every view, close the mapping, and delete the block if this process made
        it; later calls do nothing."""
        self._finalizer()
