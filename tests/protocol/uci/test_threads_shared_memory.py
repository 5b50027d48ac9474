"""``Threads`` > 1 on the real stdio ``brudno`` when its table does not fit in shared memory
(issue 44): one ``info string error:``, nothing allocated, and the engine plays on with
Threads 1.  ``BRUDNO_SHM_MAX_MB`` stands for a small ``/dev/shm``; the blocks go to a test
directory (``BRUDNO_SHM_DIR``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.shm import SHM_DIR_ENV, SHM_MAX_ENV, block_owner
from tests.support.uci_process import UciProcess


async def test_a_table_too_big_for_shared_memory_is_refused_on_stdio(
    brudno: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SHM_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(SHM_MAX_ENV, "8")
    uci = await UciProcess.start(brudno)
    line = "setoption name Threads value 2"
    assert await uci.exchange("setoption name Hash value 16", line) == [
        "info string error: Threads 2: a shared table of 16 MiB does not fit in shared memory "
        f"(8 MiB free); searching with Threads 1 ({line})"
    ]
    assert list(tmp_path.iterdir()) == []
    await uci.send("go depth 3")
    assert (await uci.read_until(lambda s: s.startswith("bestmove")))[-1] != "bestmove (none)"

    # A table that fits is made, in that directory, by the engine itself.
    assert await uci.exchange("setoption name Hash value 4", line) == []
    assert {block_owner(p.name) for p in tmp_path.iterdir()} == {uci.proc.pid}
    await uci.send("go depth 3")
    await uci.read_until(lambda s: s.startswith("bestmove"))
    assert await uci.close() == 0
    assert list(tmp_path.iterdir()) == []
