"""The MQTT fleet in containers: a broker and two workers on a user-defined network, asked
from the host; one worker is killed and the broker restarted while jobs are out, and every
job still gets exactly one bestmove.

The faults are placed where the test controls them: the worker killed is the one that
accepted the first job, a search that only the workers' ``--max-job-seconds`` ends, so it is
surely mid-job; the broker restarts once the surviving worker has answered some jobs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import chess
import pytest

from protocol.transports.mqtt.ask import Answer, AskClient, AskOptions
from protocol.transports.mqtt.broker import BrokerSettings
from tests.container.docker_cli import Docker, docker, free_port
from tests.container.test_health_modes import start_broker, worker_command

pytestmark = pytest.mark.container

JOBS = 20
LONG_JOB_S = 20
"""The first job's search (movetime far beyond it) ends only by ``--max-job-seconds``."""
ANSWERED_BEFORE_RESTART = 5
ASK_TIMEOUT_S = 600.0


def test_twenty_jobs_survive_a_killed_worker_and_a_broker_restart(docker_env: Docker) -> None:
    network = docker_env.network()
    port = free_port()  # fixed, so the restarted broker keeps its host port
    broker = start_broker(docker_env, network, "-p", f"127.0.0.1:{port}:1883")
    command = worker_command(broker, "fleet-w{}", "--max-job-seconds", str(LONG_JOB_S))
    workers = [
        docker_env.run("--network", network, command=tuple(a.format(n) for a in command))
        for n in (1, 2)
    ]
    for worker in workers:
        worker.wait_health("healthy")
    victim, answers = asyncio.run(_ask_through_faults(docker_env, port, broker.name))

    assert len(answers) == JOBS
    long_job = answers[0][1]
    assert long_job.sends >= 2 and long_job.worker not in (None, victim), long_job
    for board, answer in answers:
        assert not answer.error, answer.lines
        assert sum(line.startswith("bestmove ") for line in answer.lines) == 1, answer.lines
        assert answer.bestmove is not None
        assert chess.Move.from_uci(answer.bestmove) in board.legal_moves


async def _ask_through_faults(
    env: Docker, port: int, broker: str
) -> tuple[str, list[tuple[chess.Board, Answer]]]:
    """Ask the jobs; kill the first job's worker, restart the broker midway.  Returns the
    killed worker's id and every (position, answer)."""
    boards = [chess.Board()]
    board = chess.Board()
    for move in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1"):
        board.push_uci(move)
        boards.append(board.copy())
    boards += [b.copy() for b in boards[: JOBS - len(boards)]]
    first_owner: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    answered = 0
    enough = asyncio.Event()

    def accepted(worker: str) -> None:
        if not first_owner.done():
            first_owner.set_result(worker)

    async def ask(client: AskClient, index: int, board: chess.Board) -> tuple[chess.Board, Answer]:
        nonlocal answered
        limit = f"movetime {LONG_JOB_S * 1000 * 10}" if index == 0 else "depth 2"
        answer = await client.ask(
            "chess",
            f"ucinewgame\nposition fen {board.fen()}\ngo {limit}",
            timeout=ASK_TIMEOUT_S,
            options=AskOptions(on_accepted=accepted if index == 0 else None),
        )
        answered += 1
        if answered >= ANSWERED_BEFORE_RESTART:
            enough.set()
        return board, answer

    async with AskClient(BrokerSettings("127.0.0.1", port)) as client:
        await client.wait_workers(2, ASK_TIMEOUT_S)
        first = asyncio.create_task(ask(client, 0, boards[0]))
        # The first job's task may fail before any worker takes it: then fail, never wait.
        either: set[asyncio.Future[Any]] = {first_owner, first}
        await asyncio.wait(either, timeout=ASK_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        if first.done() and not first_owner.done():
            first.result()
        victim = first_owner.result()
        rest = [asyncio.create_task(ask(client, n, b)) for n, b in enumerate(boards[1:], 1)]
        await asyncio.to_thread(docker, "kill", _container_of(env, victim))
        await asyncio.wait_for(enough.wait(), ASK_TIMEOUT_S)
        await asyncio.to_thread(docker, "restart", broker)
        return victim, await asyncio.gather(first, *rest)


def _container_of(env: Docker, worker_id: str) -> str:
    """The container whose worker took ``--id worker_id``."""
    for container in env.containers:
        if worker_id in container.inspect("{{json .Config.Cmd}}"):
            return container.name
    raise AssertionError(f"no container runs worker {worker_id}")
