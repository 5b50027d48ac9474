"""The parent's end of a worker's pipe: what arrives on it that is not an answer."""

from __future__ import annotations

import asyncio
import multiprocessing
from multiprocessing.process import BaseProcess
from typing import cast

import pytest

from protocol.uci.workers import WorkerDiedError, _Pending, _Worker


class _Process:
    """Stands in for the worker's process: only what the parent reads of it."""

    pid = 4242
    exitcode = None


async def test_an_unreadable_message_ends_the_worker_and_fails_its_jobs() -> None:
    """A message that does not unpickle names no job; the jobs waiting on the worker must
    fail (the session then answers with its fallback move) instead of waiting forever."""
    loop = asyncio.get_running_loop()
    parent, child = multiprocessing.Pipe()
    worker = _Worker(cast(BaseProcess, _Process()), parent, loop)
    try:
        answer: asyncio.Future[object] = loop.create_future()
        worker.pending[7] = _Pending(answer, None)
        child.send_bytes(b"not a pickle")
        with pytest.raises(WorkerDiedError, match="unreadable message"):
            await asyncio.wait_for(answer, timeout=30)  # guards against a hang only
        assert not worker.alive and worker.pending == {}
    finally:
        worker.died("test over")
        parent.close()
        child.close()
