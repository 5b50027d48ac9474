"""The status page's live feed: samples at a bounded rate, one small mailbox per page.

The sessions never push anything: one loop samples the monitor every
``sample_interval_s`` *while at least one page is open* (no page, no cost), encodes the
sample once, and offers it to every page's :class:`Mailbox`.  A mailbox holds one sample: a
page that has not taken the last one gets the newer one instead, and the replaced sample is
counted (``brudno_status_updates_dropped``, and ``dropped_updates`` in the page's next
sample).  So a slow browser costs one sample of memory and never holds anyone up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterator

from protocol.transports.http.status import StatusSnapshot

log = logging.getLogger(__name__)


class Mailbox:
    """One page's next sample: at most one waits; a newer one replaces it."""

    __slots__ = ("_event", "_latest", "dropped")

    def __init__(self) -> None:
        self._latest: bytes | None = None
        self._event = asyncio.Event()
        self.dropped = 0

    def offer(self, data: bytes) -> bool:
        """Leave ``data`` for the page; False when it replaced a sample not yet taken."""
        replaced = self._latest is not None
        if replaced:
            self.dropped += 1
        self._latest = data
        self._event.set()
        return not replaced

    async def take(self) -> bytes:
        await self._event.wait()
        self._event.clear()
        data, self._latest = self._latest, None
        assert data is not None
        return data


class Feed:
    """Samples for the open pages (see the module notes)."""

    def __init__(
        self,
        sample: Callable[[int], StatusSnapshot],
        interval_s: float,
        max_pages: int,
        on_drop: Callable[[], None],
    ) -> None:
        self._sample = sample
        self._interval_s = interval_s
        self._max_pages = max_pages
        self._on_drop = on_drop
        self._pages: set[Mailbox] = set()
        self._wake = asyncio.Event()

    @property
    def pages(self) -> int:
        return len(self._pages)

    @contextlib.contextmanager
    def subscribe(self) -> Iterator[Mailbox | None]:
        """A mailbox for one page, ``None`` when :data:`max_pages` are open already; the
        first sample is in it at once."""
        if len(self._pages) >= self._max_pages:
            yield None
            return
        box = Mailbox()
        box.offer(self._encode(box))
        self._pages.add(box)
        self._wake.set()
        try:
            yield box
        finally:
            self._pages.discard(box)

    def _encode(self, box: Mailbox) -> bytes:
        snapshot = self._sample(box.dropped)
        return json.dumps(snapshot.to_json(), separators=(",", ":")).encode()

    async def run(self) -> None:
        """Sample while pages are open; sleep while none is."""
        while True:
            if not self._pages:
                self._wake.clear()
                await self._wake.wait()
            await asyncio.sleep(self._interval_s)
            try:
                self._publish()
            except Exception:  # a broken sample must not end the feed for good
                log.exception("status sample failed")

    def _publish(self) -> None:
        shared: bytes | None = None
        for box in list(self._pages):
            if box.dropped:
                data = self._encode(box)  # this page is told how many it missed
            else:
                shared = shared if shared is not None else self._encode(box)
                data = shared
            if not box.offer(data):
                self._on_drop()
