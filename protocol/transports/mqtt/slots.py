"""The worker's search slots: one runner (a search process) per slot, kept across jobs.

Starting a search process per job would cost more than a small search, so a slot keeps its
runner, and each job's fresh :class:`~protocol.uci.session.EngineSession` borrows it for the
job's length.  The session sees a runner like any other; closing it only gives it back.  The
transposition table therefore carries over between jobs, as between two ``go`` commands of a
UCI session (a job that starts with ``ucinewgame`` gets an empty one), but only between jobs
that score positions alike: :meth:`Slot.prepare` clears it when a job's
:data:`EVALUATION_OPTIONS` differ from the previous job's on the slot (one client's
``EvalFile`` weights must not leave scores that the next client's search probes); the table's
size goes back to the default after every job, so one job's ``Hash`` does not become the next one's.
``Threads`` likewise goes back to 1 (ending the slot's helper processes): a job that asks for
more pays for starting its helpers, but it never leaves them running for jobs that did not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from engine.control import SearchControl
from engine.game import Game
from engine.info import InfoCallback, SearchResult
from engine.limits import Limits
from protocol.uci.options import OptionName
from protocol.uci.runner import SearchRunner
from protocol.uci.workers import ProcessRunner

T = TypeVar("T")

DEFAULT_HASH_MB = 16

EVALUATION_OPTIONS = (
    OptionName.VARIANT,
    OptionName.EVAL_FILE,
    OptionName.SYZYGY_PATH,
    OptionName.SYZYGY_50_MOVE_RULE,
)
"""The options whose values decide the scores a search stores in the table: the game, its
weights, and which endgames tablebases score (and how)."""

Evaluation = tuple[str, ...]
"""The values of :data:`EVALUATION_OPTIONS` for one job, in that order."""


class Slot:
    """One search slot: a runner (a worker process) kept across jobs."""

    def __init__(self, factory: Callable[[int], SearchRunner]) -> None:
        self._factory = factory
        self.runner = factory(DEFAULT_HASH_MB)
        self.hash_mb = DEFAULT_HASH_MB
        self.threads = 1
        self.evaluation: Evaluation | None = None
        """What the table's entries were scored with (``None``: the table is empty)."""
        self._past_restarts = 0
        """Restarts of the runners this slot has replaced, and the replacements themselves."""

    @property
    def restarts(self) -> int:
        """How often this slot's search process had to be started again (a worker that
        died) or was replaced (a search that would not stop): what an operator watches."""
        return self._past_restarts + _restarts(self.runner)

    def lease(self, hash_mb: int) -> SearchRunner:
        """The runner factory handed to a job's session: the slot's runner, not a new one."""
        del hash_mb  # the session starts at the default size, which the slot is reset to
        return _LeasedRunner(self)

    async def prepare(self, evaluation: Evaluation) -> bool:
        """Before a job's search: clear the table if its entries were scored otherwise than
        ``evaluation`` says; returns whether it did."""
        cleared = self.evaluation is not None and self.evaluation != evaluation
        if cleared:
            await self.runner.clear()
        self.evaluation = evaluation
        return cleared

    async def reset_after_job(self) -> None:
        if self.threads != 1:
            self.threads = 1
            await self.runner.set_threads(1)
        if self.hash_mb != DEFAULT_HASH_MB:
            self.hash_mb = DEFAULT_HASH_MB
            await self.runner.resize_hash(DEFAULT_HASH_MB)

    async def replace(self) -> None:
        """Discard a runner whose search will not stop (its process is killed)."""
        old, self.runner = self.runner, self._factory(DEFAULT_HASH_MB)
        self._past_restarts += _restarts(old) + 1
        self.hash_mb = DEFAULT_HASH_MB
        self.threads = 1
        self.evaluation = None
        await old.close()


def _restarts(runner: SearchRunner) -> int:
    """A worker-process runner's restarts (its first start is none); other runners have none."""
    return max(0, runner.started - 1) if isinstance(runner, ProcessRunner) else 0


class _LeasedRunner:
    """A slot's runner as one job's session sees it: closing it returns it to the pool."""

    def __init__(self, slot: Slot) -> None:
        self._slot = slot

    async def search(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        on_info: InfoCallback,
        **options: Any,
    ) -> SearchResult:
        # Keyword options (multipv, move_overhead_ms, algorithm …) pass through unchanged.
        return await self._slot.runner.search(game, limits, control, on_info, **options)

    async def call(
        self, fn: Callable[..., T], *args: Any, control: SearchControl | None = None
    ) -> T:
        return await self._slot.runner.call(fn, *args, control=control)

    async def start(self) -> None:
        await self._slot.runner.start()

    async def resize_hash(self, hash_mb: int) -> None:
        self._slot.hash_mb = hash_mb
        await self._slot.runner.resize_hash(hash_mb)

    async def set_threads(self, threads: int) -> None:
        self._slot.threads = threads
        await self._slot.runner.set_threads(threads)

    async def clear(self) -> None:
        await self._slot.runner.clear()

    async def close(self) -> None:
        """The pool owns the runner; the session only gives it back."""
