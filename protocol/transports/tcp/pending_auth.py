"""Connections that have not authenticated yet, held against a budget of their own (issue 12).

Kept apart from the session slots so that silent sockets cannot take them: with a token, a
connection costs a session slot only once its ``auth`` line is accepted.  This is the
bookkeeping only (who is pending, who must make room); the server does the evicting.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from typing import Generic, TypeVar

K = TypeVar("K")


def address_key(host: str) -> str:
    """The client address pending connections are counted under (``max_pending_per_address``).

    An IPv4 address as it is; IPv6 by its /64, because one host or home usually owns a whole
    /64 and could otherwise take a fresh address for every connection; an IPv4-mapped IPv6
    address as the IPv4 address it is.  Anything else (a Unix socket path) as given.
    """
    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class PendingAuth(Generic[K]):
    """Connections that have not sent their first line yet, held against their own budget.

    Bookkeeping only: :meth:`admit` registers a newcomer and names the connection that must
    make room, the caller evicts it.  The newcomer is always admitted and the oldest pending
    connection pays, because a pending connection's only job is to send one line and a real
    client sends it at once: refusing the newcomer instead would let whoever holds the budget
    with silent sockets keep everyone out (issue 12), while evicting the oldest forces an
    attacker to flood faster than one round trip of every real client.  Who pays:

    * an address already holding ``per_address`` pending connections gives up its own oldest,
      so a flood from one address churns only that address's connections;
    * otherwise, when ``limit`` are pending, the oldest connection of the address holding the
      most, so many-address floods also hit themselves first.
    """

    def __init__(self, limit: int, per_address: int) -> None:
        self.limit = limit
        self.per_address = per_address
        self._waiting: dict[K, str] = {}
        """Pending connection → its address key, oldest first (dicts keep insertion order)."""

    def __len__(self) -> int:
        return len(self._waiting)

    def __contains__(self, key: object) -> bool:
        return key in self._waiting

    def admit(self, key: K, address: str) -> K | None:
        """Register ``key`` as pending from ``address``; returns the connection to evict
        (already forgotten here), or ``None`` when there was room."""
        victim: K | None = None
        mine = [k for k, a in self._waiting.items() if a == address]
        if len(mine) >= self.per_address:
            victim = mine[0]
        elif len(self._waiting) >= self.limit:
            counts = Counter(self._waiting.values())
            most = max(counts.values())
            victim = next(k for k, a in self._waiting.items() if counts[a] == most)
        if victim is not None:
            del self._waiting[victim]
        self._waiting[key] = address
        return victim

    def take_oldest(self) -> K | None:
        """Forget and return the connection to give way when *all* connections are full
        (``max_connections``): the oldest of the address holding the most; ``None`` when
        nobody is pending."""
        if not self._waiting:
            return None
        counts = Counter(self._waiting.values())
        most = max(counts.values())
        victim = next(k for k, a in self._waiting.items() if counts[a] == most)
        del self._waiting[victim]
        return victim

    def leave(self, key: K) -> None:
        """``key`` is no longer pending (it sent a line, or closed); idempotent."""
        self._waiting.pop(key, None)
