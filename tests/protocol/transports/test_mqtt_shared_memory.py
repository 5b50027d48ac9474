"""A ``Threads`` > 1 job whose table does not fit in shared memory, on a real ``brudno mqtt``
and a real Mosquitto (issue 44): the job is refused with an ``error`` reply carrying the one
``info string error:`` line (nothing searched, nothing allocated), and the worker takes the
next job as usual.  ``BRUDNO_SHM_MAX_MB`` stands for a small ``/dev/shm``; the tables go to a
test directory (``BRUDNO_SHM_DIR``)."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

from engine.shm import SHM_DIR_ENV, SHM_MAX_ENV
from tests.support.mosquitto_fixture import HANG_TIMEOUT, Mosquitto, WorkerProcess, ask_client


async def test_a_job_whose_table_does_not_fit_is_refused(
    brudno: list[str],
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setenv(SHM_DIR_ENV, str(shm))
    monkeypatch.setenv(SHM_MAX_ENV, "8")
    worker = WorkerProcess(brudno, mosquitto, mqtt_prefix, "shm-w", tmp_path, "--max-threads", "2")
    try:
        async with ask_client(mosquitto, mqtt_prefix) as ask:
            await ask.wait_workers(1, HANG_TIMEOUT)
            threads = "setoption name Threads value 2"
            answer = await ask.ask(
                "chess",
                f"setoption name Hash value 16\n{threads}\nposition startpos\ngo depth 3\n",
                timeout=HANG_TIMEOUT,
            )
            assert answer.error and answer.bestmove is None, answer.lines
            assert list(answer.lines) == [
                "info string error: Threads 2: a shared table of 16 MiB does not fit in "
                f"shared memory (8 MiB free); searching with Threads 1 ({threads})"
            ]
            assert list(shm.iterdir()) == []

            answer = await ask.ask(
                "chess",
                f"setoption name Hash value 4\n{threads}\nposition startpos\ngo depth 3\n",
                timeout=HANG_TIMEOUT,
            )
            assert not answer.error, answer.lines
            assert chess.Move.from_uci(answer.bestmove or "") in chess.Board().legal_moves
        worker.terminate()
        assert worker.wait() == 0, worker.log_text()
        assert list(shm.iterdir()) == []
    finally:
        worker.close()
