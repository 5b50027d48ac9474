"""Several ``brudno mqtt`` processes behind a real Mosquitto: sharing jobs, a worker killed
mid-job, presence and Will, a broker restart."""

from __future__ import annotations

import asyncio
import collections
from pathlib import Path

import chess
import pytest

from protocol.transports.mqtt.ask import AskOptions
from tests.support.mosquitto_fixture import (
    HANG_TIMEOUT,
    Mosquitto,
    WorkerProcess,
    ask_client,
    retained_status,
    wait_until,
)

POSITIONS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "8/2k5/8/3K4/8/8/6R1/8 w - - 0 1",
]


def _start(
    fleet: list[WorkerProcess],
    brudno: list[str],
    broker: Mosquitto,
    mqtt_prefix: str,
    worker_id: str,
    *extra: str,
    workdir: Path,
) -> WorkerProcess:
    worker = WorkerProcess(brudno, broker, mqtt_prefix, worker_id, workdir, *extra)
    fleet.append(worker)
    return worker


def _legal(fen: str, move: str | None) -> bool:
    return chess.Move.from_uci(move or "") in chess.Board(fen).legal_moves


@pytest.mark.slow
async def test_three_workers_share_sixty_jobs(
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    ids = ["w-a", "w-b", "w-c"]
    for worker_id in ids:
        _start(fleet, brudno, mosquitto, mqtt_prefix, worker_id, workdir=tmp_path)
    async with ask_client(mosquitto, mqtt_prefix) as ask:
        assert await ask.wait_workers(3, HANG_TIMEOUT) == ids
        fens = [POSITIONS[n % len(POSITIONS)] for n in range(60)]
        answers = await asyncio.gather(
            *(
                ask.ask("chess", f"position fen {fen}\ngo nodes 300", timeout=HANG_TIMEOUT * 3)
                for fen in fens
            )
        )
    assert all(_legal(fen, a.bestmove) for fen, a in zip(fens, answers, strict=True))
    assert all(a.sends == 1 and not a.error for a in answers)
    taken = collections.Counter(a.worker for a in answers)
    assert set(taken) == set(ids), taken  # every worker took some
    assert sum(taken.values()) == 60
    for worker in fleet:
        worker.terminate()
        assert worker.wait() == 0, worker.log_text()


@pytest.mark.slow
async def test_a_job_of_a_killed_worker_is_answered_by_another(
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    """The job is a search that never ends by itself (depth 60): the first taker is killed
    when it accepts it, and the second taker's search ends only when the test stops it (a
    SIGTERM: the running job is stopped and still answered), however fast the search is."""
    workers = {
        w: _start(
            fleet, brudno, mosquitto, mqtt_prefix, w, "--shutdown-timeout", "0", workdir=tmp_path
        )
        for w in ("k1", "k2")
    }
    async with ask_client(mosquitto, mqtt_prefix) as ask:
        await ask.wait_workers(2, HANG_TIMEOUT)
        accepted_by: list[str] = []

        def kill_first_taker(worker_id: str) -> None:
            accepted_by.append(worker_id)
            if len(accepted_by) == 1:
                workers[worker_id].kill()  # mid-job: no reply, no PUBACK, no goodbye

        stopped: list[str] = []

        def stop_second_taker_once_it_searches(line: str) -> None:
            # The victim's lines all came before its Will, so before the second accept.
            if len(accepted_by) == 2 and line.startswith("info depth") and not stopped:
                stopped.append(accepted_by[1])
                workers[accepted_by[1]].terminate()

        answer = await ask.ask(
            "chess",
            "position startpos moves e2e4 e7e5\ngo depth 60",
            timeout=HANG_TIMEOUT,
            options=AskOptions(
                retry_after=None,
                on_accepted=kill_first_taker,
                on_line=stop_second_taker_once_it_searches,
            ),
        )
        victim, survivor = accepted_by[0], ({"k1", "k2"} - {accepted_by[0]}).pop()
        board = chess.Board()
        board.push_uci("e2e4")
        board.push_uci("e7e5")
        assert chess.Move.from_uci(answer.bestmove or "") in board.legal_moves
        assert answer.worker == survivor
        assert answer.sends == 2  # re-sent when the victim's Will said it was offline
        assert accepted_by == [victim, survivor]
        await wait_until(lambda: ask.workers.get(victim) == "offline", "the Will arrived")
    assert workers[victim].wait() == -9
    assert await retained_status(mosquitto, mqtt_prefix, victim) == "offline"
    assert workers[survivor].wait() == 0
    assert await retained_status(mosquitto, mqtt_prefix, survivor) == "offline"
    assert "event=stopped worker=" + survivor in workers[survivor].log_text()


@pytest.mark.slow
async def test_the_worker_carries_on_through_a_broker_restart(
    fresh_mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    """The broker restarts while a job searches (one that never ends by itself, depth 60):
    the worker reconnects, takes another job meanwhile, and the long job, stopped by the
    test's SIGTERM, is still answered — whatever the speed of the search."""
    broker = fresh_mosquitto
    worker = _start(
        fleet,
        brudno,
        broker,
        mqtt_prefix,
        "steady",
        "--session-expiry",
        "300",
        "--concurrency",
        "2",
        "--shutdown-timeout",
        "0",
        workdir=tmp_path,
    )
    async with ask_client(broker, mqtt_prefix) as ask:
        await ask.wait_workers(1, HANG_TIMEOUT)
        first = await ask.ask("chess", "go depth 2", timeout=HANG_TIMEOUT)
        assert _legal(chess.STARTING_FEN, first.bestmove)

        restarted = asyncio.Event()

        def restart_broker(worker_id: str) -> None:
            if not restarted.is_set():
                restarted.set()
                broker.restart()  # mid-job: both sides lose the connection

        fen = POSITIONS[1]
        during = asyncio.create_task(
            ask.ask(
                "chess",
                f"position fen {fen}\ngo depth 60",
                timeout=HANG_TIMEOUT,
                options=AskOptions(on_accepted=restart_broker),
            )
        )
        await wait_until(restarted.is_set, "the job was accepted and the broker restarted")
        await wait_until(
            lambda: worker.log_text().count("event=connected") >= 2, "the worker reconnected"
        )
        after = await ask.ask("tictactoe", "go depth 9", timeout=HANG_TIMEOUT)
        assert after.bestmove is not None and after.worker == "steady"
        assert not during.done()  # still searching through it all
        worker.terminate()  # stops the long search, which is answered all the same
        answer = await during
        assert _legal(fen, answer.bestmove) and answer.worker == "steady"
    assert worker.wait() == 0
    log = worker.log_text()
    assert log.count("event=connected") >= 2, log
    assert "event=connection_lost" in log, log
