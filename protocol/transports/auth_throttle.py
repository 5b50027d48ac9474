"""The brute-force limit both ports share: failed logins counted per client address, and
how long an address must wait before its next login is even checked.

An address (IPv6: its /64, :func:`~protocol.transports.tcp.pending_auth.address_key`) gets
``free_failures`` wrong tokens; each further one blocks it for a penalty that doubles from
``first_penalty_s`` up to ``max_penalty_s``.  While blocked, its logins are refused unchecked
(the game port's ``authentication failed``, HTTP's ``429``), so parallel connections gain
nothing.  A success, or twice ``max_penalty_s`` without a failure, forgets the address.  Only the
attacker's own address is blocked; at most ``max_addresses`` are remembered (the least
recently failed forgotten first), so many addresses cannot grow it without limit.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from protocol.transports.tcp.pending_auth import address_key

DEFAULT_FIRST_PENALTY_S = 1.0
DEFAULT_MAX_PENALTY_S = 10.0


@dataclass(frozen=True, slots=True)
class ThrottlePolicy:
    free_failures: int = 5
    """Wrong tokens an address may send before penalties begin."""
    first_penalty_s: float = DEFAULT_FIRST_PENALTY_S
    max_penalty_s: float = DEFAULT_MAX_PENALTY_S
    """The longest block: the right token works again this long after an attack stops."""
    max_addresses: int = 4096

    @classmethod
    def up_to(cls, max_penalty_s: float) -> ThrottlePolicy:
        """The default policy with penalties capped at ``max_penalty_s`` (the first one too)."""
        return cls(
            first_penalty_s=min(DEFAULT_FIRST_PENALTY_S, max_penalty_s), max_penalty_s=max_penalty_s
        )

    def check(self) -> None:
        """``ValueError`` for a policy that would not limit anything or not make sense."""
        if self.free_failures < 0:
            raise ValueError("free_failures must not be negative")
        first, most = self.first_penalty_s, self.max_penalty_s
        if not (0 < first <= most and math.isfinite(most)):
            raise ValueError("penalties must be positive, finite, the first within the maximum")
        if self.max_addresses < 1:
            raise ValueError("max_addresses must be at least 1")


@dataclass(frozen=True, slots=True)
class Failure:
    """What one wrong token cost its address."""

    address: str
    """The address key it was counted under."""
    failures: int
    """Wrong tokens from this address since it was last forgotten."""
    penalty_s: float
    """How long the address is now blocked (0 while its failures are free)."""
    report: bool
    """Worth a log line: a free failure, or the one that starts the penalties (later ones
    in the same burst are only counted, so a flood cannot flood the log)."""


@dataclass(slots=True)
class _Record:
    failures: int
    last_failure: float
    blocked_until: float


class AuthThrottle:
    """Failed logins by address; ``clock`` (monotonic seconds) is injectable for tests."""

    def __init__(
        self, policy: ThrottlePolicy | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy if policy is not None else ThrottlePolicy()
        self.policy.check()
        self._clock = clock
        self._records: OrderedDict[str, _Record] = OrderedDict()
        """By address key, the least recently failed first."""

    def __len__(self) -> int:
        return len(self._records)

    def blocked_for(self, host: str) -> float:
        """Seconds until a login from ``host`` is checked again (0: check it now)."""
        now = self._forget_stale()
        record = self._records.get(address_key(host))
        return 0.0 if record is None else max(0.0, record.blocked_until - now)

    def failed(self, host: str) -> Failure:
        """Count a wrong token from ``host`` (only call it for a token that was checked)."""
        now = self._forget_stale()
        key = address_key(host)
        policy = self.policy
        record = self._records.pop(key, None)
        if record is None:
            if len(self._records) >= policy.max_addresses:
                self._records.popitem(last=False)
            record = _Record(0, now, now)
        self._records[key] = record
        record.failures += 1
        record.last_failure = now
        beyond = record.failures - policy.free_failures
        penalty = 0.0
        if beyond > 0:
            penalty = min(policy.max_penalty_s, policy.first_penalty_s * 2.0 ** min(beyond - 1, 60))
            record.blocked_until = now + penalty
        return Failure(key, record.failures, penalty, report=beyond <= 1)

    def succeeded(self, host: str) -> None:
        """The right token from ``host``: forget its failures."""
        self._records.pop(address_key(host), None)

    def _forget_stale(self) -> float:
        """Drop addresses quiet for twice ``max_penalty_s`` (the oldest are first); the time."""
        now = self._clock()
        quiet = 2 * self.policy.max_penalty_s
        records = self._records
        while records:
            oldest = next(iter(records.values()))
            if now - oldest.last_failure < quiet or now < oldest.blocked_until:
                break
            records.popitem(last=False)
        return now
