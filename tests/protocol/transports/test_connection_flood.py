"""Thousands of idle sockets against `brudno serve` at a small descriptor limit.

The real command runs under ``prlimit --nofile`` (util-linux); the flood comes from other
loopback addresses than the legitimate client (any 127.x.y.z is this machine on Linux), as
it would from other hosts.  The flood opens more sockets to each port than the server has
descriptors; the server must cut the old idle ones rather than run out, so a real client is
still served, and the server stays up.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import shutil

import pytest

from tests.support.http_helpers import HTTP_LISTENING, get
from tests.support.tcp_helpers import TcpClient, env_without_token, serve_process

TOKEN = "flood-test-token"
DESCRIPTORS = 1024
"""The server's RLIMIT_NOFILE.  Its caps (300 game connections, 100 HTTP ones) leave room
for one accept batch per port (the listen backlogs, 100 and 128) and its own descriptors."""
FLOOD = 2 * DESCRIPTORS
"""Idle sockets opened to each port."""


async def _open_idle(port: int, source: str, count: int) -> list[asyncio.StreamWriter]:
    """``count`` sockets that connect and never send a byte (those the kernel completed;
    the server may cut them at once, which is the point)."""

    async def one() -> asyncio.StreamWriter | None:
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), 30
            )
        except (OSError, TimeoutError):
            return None
        return writer

    opened = await asyncio.gather(*(one() for _ in range(count)))
    return [w for w in opened if w is not None]


@pytest.fixture
def prlimit() -> str:
    """The ``prlimit`` command; also raises this process's own limit for the flood."""
    found = shutil.which("prlimit")
    if found is None:
        pytest.fail("prlimit (util-linux) is needed to lower the server's descriptor limit")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * FLOOD + 256
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.fail(f"the flood needs {needed} descriptors here; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return found


async def test_idle_floods_on_both_ports_do_not_lock_out_a_client(
    brudno: list[str], prlimit: str
) -> None:
    command = [prlimit, f"--nofile={DESCRIPTORS}:{DESCRIPTORS}", *brudno]
    async with serve_process(
        command,
        "--max-connections",
        "300",
        "--max-pending-auth",
        "5000",
        "--max-pending-per-address",
        "5000",
        "--auth-timeout",
        "3600",
        "--metrics-port",
        "0",
        "--metrics-max-connections",
        "100",
        "--metrics-idle-timeout",
        "3600",
        env=env_without_token(BRUDNO_TOKEN=TOKEN),
    ) as server:
        http_port = int((await server.wait_for_log(HTTP_LISTENING.pattern))[2])
        flood: list[asyncio.StreamWriter] = []
        try:
            flood += await _open_idle(server.port, "127.0.0.2", FLOOD)
            flood += await _open_idle(http_port, "127.0.0.3", FLOOD)
            assert len(flood) > DESCRIPTORS  # more than the server could hold at once
            client = await TcpClient.open(server.port, token=TOKEN)
            assert await client.exchange("uci") != []
            await client.send("go movetime 50")
            await client.bestmove()
            assert (await get(f"http://127.0.0.1:{http_port}/healthz")).status == 200
            await client.close()
        finally:
            for writer in flood:
                writer.transport.abort()
        assert server.proc.returncode is None
        await server.wait_for_log(r"event=cut ")
        await server.wait_for_log(r"event=http_evicted ")
        assert await server.stop() == 0
        log = "".join(server.log)
        assert "Traceback" not in log, log[-3000:]


async def test_at_the_cap_the_oldest_silent_socket_gives_way(brudno: list[str]) -> None:
    async with serve_process(
        brudno,
        "--max-connections",
        "3",
        "--max-sessions",
        "1",
        "--max-pending-auth",
        "8",
        "--max-pending-per-address",
        "8",
        "--auth-timeout",
        "3600",
        env=env_without_token(BRUDNO_TOKEN=TOKEN),
    ) as server:
        silent = []
        for count in (1, 2, 3):
            silent.append(await TcpClient.open(server.port, local_host="127.0.0.2"))
            await server.wait_for_log(rf"event=open .* connections={count} ")
        client = await TcpClient.open(server.port, token=TOKEN)
        assert await client.exchange() == []
        await server.wait_for_log(r"event=cut ")
        with contextlib.suppress(ConnectionError):
            assert await silent[0].read_to_end() == []  # cut without a word
        await server.wait_for_log(
            rf"session=\S+ reason=\"cut: connection cap\" peer={silent[0].local}"
        )
        for other in (client, *silent):
            await other.close()
        assert await server.stop() == 0


async def test_at_its_cap_the_http_port_closes_the_oldest_idle_connection(
    brudno: list[str],
) -> None:
    async with serve_process(
        brudno,
        "--metrics-port",
        "0",
        "--metrics-max-connections",
        "17",
        "--metrics-idle-timeout",
        "3600",
    ) as server:
        http_port = int((await server.wait_for_log(HTTP_LISTENING.pattern))[2])
        idle = [await TcpClient.open(http_port, local_host="127.0.0.3") for _ in range(17)]
        # The first probe may be accepted in one batch with the idle sockets, before the
        # server has registered them; the second certainly finds them and evicts one.
        for _ in range(2):
            assert (await get(f"http://127.0.0.1:{http_port}/healthz")).status == 200
        await server.wait_for_log(r"event=http_evicted connections=1[78] ")
        with contextlib.suppress(ConnectionError):
            assert await idle[0].read_to_end() == []
        for socket in idle:
            await socket.close()
        assert await server.stop() == 0


async def test_an_idle_http_connection_is_closed(brudno: list[str]) -> None:
    async with serve_process(
        brudno, "--metrics-port", "0", "--metrics-idle-timeout", "1"
    ) as server:
        http_port = int((await server.wait_for_log(HTTP_LISTENING.pattern))[2])
        idle = await TcpClient.open(http_port)
        assert await idle.read_to_end() == []
        await idle.close()
        assert await server.stop() == 0
