"""How long to wait before reconnecting to a broker; the worker and the ask client share it."""

from __future__ import annotations

import random
from collections.abc import Callable


class Backoff:
    """Reconnect delays: doubling from ``initial_s`` up to ``maximum_s``, each drawn from the
    upper half of its range so a fleet that lost its broker does not return in lockstep."""

    def __init__(
        self, initial_s: float, maximum_s: float, rng: Callable[[], float] = random.random
    ) -> None:
        self._initial = initial_s
        self._maximum = max(initial_s, maximum_s)
        self._rng = rng
        self._attempt = 0

    def reset(self) -> None:
        self._attempt = 0

    def next_delay(self) -> float:
        ceiling = min(self._maximum, self._initial * (1 << min(self._attempt, 30)))
        self._attempt += 1
        return ceiling * (0.5 + 0.5 * self._rng())
