"""The image as `brudno serve`, run by the real Docker daemon and used from the host.

Healthy by the image's own check, reachable with the real ``brudno ping`` and python-chess,
unprivileged, under tini, stopping gracefully, and still serving locked down
(read-only root, no capabilities, no new privileges).
"""

from __future__ import annotations

import asyncio
import os
import subprocess

import chess
import chess.engine
import pytest

from protocol.transports.connect import open_uci_tcp
from tests.conftest import brudno_command
from tests.container.docker_cli import Container, Docker, docker, published_port

pytestmark = pytest.mark.container

PORT = 4000
UID = "10001"
LOCKED_DOWN = (
    "--read-only",
    "--tmpfs",
    "/tmp",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
)
READ_TIMEOUT_S = 120.0


def _serve(env: Docker, *extra: str) -> tuple[Container, int]:
    server = env.run("-p", f"127.0.0.1::{PORT}", *extra)
    server.wait_health("healthy")
    return server, published_port(server, PORT)


async def _play_a_move(port: int, token: str) -> chess.Move:
    _, engine = await open_uci_tcp("127.0.0.1", port, token=token)
    try:
        await asyncio.wait_for(engine.initialize(), READ_TIMEOUT_S)
        board = chess.Board()
        result = await asyncio.wait_for(
            engine.play(board, chess.engine.Limit(depth=3)), READ_TIMEOUT_S
        )
    finally:
        await engine.quit()
    move = result.move
    assert move is not None and move in board.legal_moves
    return move


def test_server_is_healthy_and_serves_ping_and_uci_from_the_host(docker_env: Docker) -> None:
    server, port = _serve(docker_env)
    assert "readyok" in server.health_log()  # the check asked the server, not just its process
    ping = subprocess.run(
        [*brudno_command(), "ping", f"127.0.0.1:{port}"],
        env={**os.environ, "BRUDNO_TOKEN": docker_env.token},
        capture_output=True,
        text=True,
        timeout=READ_TIMEOUT_S,
        check=False,
    )
    assert ping.returncode == 0, ping.stderr
    asyncio.run(_play_a_move(port, docker_env.token))


def test_every_process_runs_as_the_unprivileged_user(docker_env: Docker) -> None:
    server, port = _serve(docker_env)
    asyncio.run(_play_a_move(port, docker_env.token))  # a session's worker process exists too
    table = docker("top", server.name, "-eo", "pid,uid,args").splitlines()[1:]
    assert len(table) >= 3, table  # tini, the server, its worker processes
    assert all(row.split()[1] == UID for row in table), table


def test_tini_is_pid_1_and_docker_stop_reaches_brudno_gracefully(docker_env: Docker) -> None:
    server, port = _serve(docker_env)
    assert server.exec("cat", "/proc/1/cmdline").split("\0")[:3] == ["tini", "--", "brudno"]
    lines = asyncio.run(_search_through_docker_stop(server, port, docker_env.token))
    assert any(line.startswith("bestmove ") for line in lines), lines
    assert "info string server shutting down" in lines
    # `docker stop` sends SIGTERM and kills after 10 s: exit 0 means brudno ended by itself.
    assert server.exit_code() == 0, server.logs()
    logs = server.logs()
    assert "event=stopped" in logs and "shutdown_forced" not in logs, logs


async def _search_through_docker_stop(server: Container, port: int, token: str) -> list[str]:
    """Start an infinite search, `docker stop` the container, return what the client got."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"auth {token}\nuci\nposition startpos\ngo infinite\n".encode())
    await writer.drain()
    lines: list[str] = []
    while not any(line.startswith("info depth") for line in lines):
        line = await asyncio.wait_for(reader.readline(), READ_TIMEOUT_S)
        assert line, f"closed before the search reported: {lines}"
        lines.append(line.decode().strip())
    stopping = asyncio.create_task(asyncio.to_thread(docker, "stop", server.name))
    while line := await asyncio.wait_for(reader.readline(), READ_TIMEOUT_S):
        lines.append(line.decode().strip())
    await stopping
    writer.close()
    return lines


def test_read_only_root_without_capabilities_still_serves(docker_env: Docker) -> None:
    server, port = _serve(docker_env, *LOCKED_DOWN)
    asyncio.run(_play_a_move(port, docker_env.token))
    assert server.inspect("{{.HostConfig.ReadonlyRootfs}}") == "true"
    assert server.inspect("{{.HostConfig.CapDrop}}") == "[ALL]"
    status = server.exec("cat", "/proc/1/status")
    assert "CapEff:\t0000000000000000" in status and "NoNewPrivs:\t1" in status
