"""Credentials on a real ``brudno serve`` (and a real ``brudno mqtt`` worker), asked by real
clients over real sockets: the operator token on the monitoring port, the login cookie and
logout, the brute-force limit on both ports, counted together (127.0.0.2 plays a second
client address), and a second ``auth`` line (the throttle alone:
tests/protocol/transports/test_auth_throttle.py; log lines: test_log_lines_cli.py)."""

from __future__ import annotations

import asyncio
import re
from http.cookies import SimpleCookie
from pathlib import Path

from tests.support.http_helpers import (
    HTTP_LISTENING,
    ClientSide,
    get,
    request,
    samples,
    wait_for_file_line,
)
from tests.support.mosquitto_fixture import Mosquitto, WorkerProcess
from tests.support.tcp_helpers import (
    HANG_TIMEOUT,
    ServeProcess,
    TcpClient,
    env_without_token,
    serve_process,
)

GAME_TOKEN = "game-secret-41c7d2"
OPERATOR_TOKEN = "operator-secret-9e06ab"
ATTACKER, BYSTANDER = "127.0.0.1", "127.0.0.2"
FREE_FAILURES = 5
"""Wrong tokens an address gets before its penalties begin (ThrottlePolicy's default)."""
MAX_ATTEMPTS = 20
"""Far more wrong tokens than it takes to be throttled, however slow the machine."""
THROTTLED = "info string error: authentication failed (too many failed attempts"


def _env() -> dict[str, str]:
    return env_without_token(BRUDNO_TOKEN=GAME_TOKEN, BRUDNO_METRICS_TOKEN=OPERATOR_TOKEN)


async def _base(server: ServeProcess) -> str:
    found = await server.wait_for_log(HTTP_LISTENING.pattern)
    return f"http://127.0.0.1:{found[2]}"


async def test_the_operator_token_replaces_the_game_token_on_the_http_port(
    brudno: list[str], tmp_path: Path
) -> None:
    async with serve_process(brudno, "--metrics-port", "0", env=_env()) as server:
        assert await server.wait_for_log(r"event=http_listening .*auth=operator_token")
        base = await _base(server)
        for path in ("/metrics", "/status.json", "/events", "/board.svg?variant=chess&fen=8"):
            assert (await get(base + path, token=GAME_TOKEN)).status == 401, path
        assert (await get(base + "/metrics", token=OPERATOR_TOKEN)).status == 200
        assert (await get(base + "/status.json", token=OPERATOR_TOKEN)).status == 200
        page = await request("POST", base + "/login", form={"token": GAME_TOKEN})
        assert page.status == 401 and "Set-Cookie" not in page.headers
        # The game port is the players': the game token, not the operator's.
        player = await TcpClient.open(server.port, token=GAME_TOKEN)
        assert await player.exchange() == []
        operator = await TcpClient.open(server.port, token=OPERATOR_TOKEN)
        assert (await operator.read_to_end())[0].startswith("info string error: authentication")
        await player.close()
        await operator.close()
        assert await server.stop() == 0
        assert OPERATOR_TOKEN not in "".join(server.log)

    secret = tmp_path / "operator-token"
    secret.write_text(OPERATOR_TOKEN + "\n")
    async with serve_process(
        brudno,
        "--metrics-port",
        "0",
        "--metrics-token-file",
        str(secret),
        env=env_without_token(BRUDNO_TOKEN=GAME_TOKEN),
    ) as server:
        base = await _base(server)
        assert (await get(base + "/metrics", token=GAME_TOKEN)).status == 401
        assert (await get(base + "/metrics", token=OPERATOR_TOKEN)).status == 200


async def test_a_worker_takes_an_operator_token_too(
    mosquitto: Mosquitto, mqtt_prefix: str, brudno: list[str], tmp_path: Path
) -> None:
    secret = tmp_path / "operator-token"
    secret.write_text(OPERATOR_TOKEN + "\n")
    worker = WorkerProcess(
        brudno,
        mosquitto,
        mqtt_prefix,
        "ops-w1",
        tmp_path,
        "--metrics-port",
        "0",
        "--token",
        GAME_TOKEN,
        "--metrics-token-file",
        str(secret),
    )
    try:
        found = await wait_for_file_line(worker.log_path, HTTP_LISTENING)
        base = f"http://127.0.0.1:{found[2]}"
        assert (await get(base + "/metrics", token=GAME_TOKEN)).status == 401
        assert (await get(base + "/metrics", token=OPERATOR_TOKEN)).status == 200
    finally:
        worker.close()
    assert OPERATOR_TOKEN not in worker.log_text()


async def test_the_login_cookie_is_a_session_that_post_logout_revokes(
    brudno: list[str],
) -> None:
    async with serve_process(brudno, "--metrics-port", "0", env=_env()) as server:
        base = await _base(server)
        cookies = []
        for _ in range(2):
            login = await request("POST", base + "/login", form={"token": OPERATOR_TOKEN})
            assert login.status == 303, login
            cookie = SimpleCookie(login.headers["Set-Cookie"])["brudno_status"]
            assert cookie["max-age"] == str(8 * 3600) and cookie["httponly"] is True
            assert cookie["samesite"] == "Strict" and cookie["path"] == "/"
            assert not cookie["secure"]  # plain HTTP: a Secure cookie would never come back
            assert OPERATOR_TOKEN not in cookie.value and GAME_TOKEN not in cookie.value
            cookies.append(f"brudno_status={cookie.value}")
        first, second = cookies
        assert first != second  # random, not derived from the token

        def with_cookie(value: str) -> dict[str, str]:
            return {"Cookie": value}

        assert (await get(base + "/status.json", headers=with_cookie(first))).status == 200
        # A GET (a link, an image on another page) cannot log anyone out.
        assert (await get(base + "/logout", headers=with_cookie(first))).status == 405
        assert (await get(base + "/status.json", headers=with_cookie(first))).status == 200
        logout = await request("POST", base + "/logout", headers=with_cookie(first))
        assert logout.status == 303 and "Max-Age=0" in logout.headers["Set-Cookie"]
        assert (await get(base + "/status.json", headers=with_cookie(first))).status == 401
        assert (await get(base + "/", headers=with_cookie(first))).status == 401
        assert (await get(base + "/status.json", headers=with_cookie(second))).status == 200


async def test_wrong_tokens_on_http_are_throttled_per_address(brudno: list[str]) -> None:
    async with serve_process(
        brudno, "--metrics-port", "0", "--auth-max-penalty", "4", env=_env()
    ) as server:
        base = await _base(server)
        statuses: list[int] = []
        while 429 not in statuses:
            assert len(statuses) < MAX_ATTEMPTS, statuses
            reply = await get(base + "/metrics", token=f"guess-{len(statuses)}")
            statuses.append(reply.status)
        assert statuses[:FREE_FAILURES] == [401] * FREE_FAILURES
        assert 1 <= int(reply.headers["Retry-After"]) <= 4

        # Another address is not affected: its right token works, its wrong one is its own.
        assert (
            await get(base + "/metrics", token=OPERATOR_TOKEN, client=ClientSide(BYSTANDER))
        ).status == 200
        assert (
            await get(base + "/metrics", token="nope", client=ClientSide(BYSTANDER))
        ).status == 401
        values = await metrics_from(base, BYSTANDER)
        assert values['brudno_auth_failures_total{reason="throttled"}'] >= 1
        assert values['brudno_auth_failures_total{reason="wrong_token"}'] >= FREE_FAILURES + 2

        # The attack stops: the right token works again once the penalty has run out.
        await _until_status(base + "/metrics", OPERATOR_TOKEN, ATTACKER, 200)
        assert await server.stop() == 0
        log = "".join(server.log)
        # One line per burst, not one per attempt.
        assert log.count("event=auth_throttled address=127.0.0.1 ") == 1, log
        assert log.count("event=http_auth_failed peer=127.0.0.1 ") == FREE_FAILURES + 1


async def test_wrong_tokens_on_the_game_port_are_throttled_per_address(
    brudno: list[str],
) -> None:
    async with serve_process(
        brudno, "--metrics-port", "0", "--auth-max-penalty", "4", env=_env()
    ) as server:
        base = await _base(server)
        answers: list[str] = []
        while not answers or not answers[-1].startswith(THROTTLED):
            assert len(answers) < MAX_ATTEMPTS, answers
            guess = await TcpClient.open(server.port, token=f"guess-{len(answers)}")
            answers.append(" ".join(await guess.read_to_end()))
            await guess.close()
        assert (
            answers[:FREE_FAILURES]
            == ["info string error: authentication failed (the first line must be 'auth <token>')"]
            * FREE_FAILURES
        )
        assert re.search(r"try again in [1-4] s\)$", answers[-1]), answers[-1]

        bystander = await TcpClient.open(server.port, token=GAME_TOKEN, local_host=BYSTANDER)
        assert await bystander.exchange() == []
        await bystander.close()
        values = await metrics_from(base, BYSTANDER)
        assert values['brudno_auth_failures_total{reason="throttled"}'] >= 1

        # The right token from the attacker's address works again after the penalty.
        async with asyncio.timeout(HANG_TIMEOUT):
            while True:
                client = await TcpClient.open(server.port, token=GAME_TOKEN)
                await client.send("isready")
                first = await client.readline()
                await client.close()
                if first == "readyok":
                    break
                assert first is not None and first.startswith(THROTTLED), first
                await asyncio.sleep(0.2)
        assert await server.stop() == 0
        log = "".join(server.log)
        assert log.count("event=auth_throttled address=127.0.0.1 ") == 1, log
        assert log.count("event=auth_failed ") == FREE_FAILURES + 1


async def test_both_ports_count_one_address_together(brudno: list[str]) -> None:
    async with serve_process(brudno, "--metrics-port", "0", env=_env()) as server:
        base = await _base(server)
        for n in range(3):
            assert (await get(base + "/metrics", token=f"guess-{n}")).status == 401
        for n in range(3):
            guess = await TcpClient.open(server.port, token=f"guess-{n}")
            assert (await guess.read_to_end())[0].startswith("info string error: auth")
            await guess.close()
        # The sixth wrong token from this address, three per port: the penalties begin.
        await server.wait_for_log(r"event=auth_throttled address=127\.0\.0\.1 failures=6 ")


async def test_a_second_auth_line_is_neither_echoed_nor_logged(brudno: list[str]) -> None:
    async with serve_process(brudno, env=_env()) as server:
        client = await TcpClient.open(server.port, token=GAME_TOKEN)
        assert await client.exchange() == []
        assert await client.exchange("auth another-secret-5f1e") == [
            "info string error: already authenticated"
        ]
        assert await client.exchange(f"auth {GAME_TOKEN}") == [
            "info string error: already authenticated"
        ]
        await client.close()
        assert await server.stop() == 0
        log = "".join(server.log)
        assert "another-secret-5f1e" not in log and GAME_TOKEN not in log


async def metrics_from(base: str, local_host: str) -> dict[str, float]:
    """The metrics, asked from ``local_host`` (an address the test did not throttle)."""
    reply = await get(base + "/metrics", token=OPERATOR_TOKEN, client=ClientSide(local_host))
    assert reply.status == 200, reply
    return samples(reply.text)


async def _until_status(url: str, token: str, local_host: str, status: int) -> None:
    """Ask until the answer has ``status`` (a 429 meanwhile); fails after the hang timeout."""
    async with asyncio.timeout(HANG_TIMEOUT):
        while (
            reply := await get(url, token=token, client=ClientSide(local_host))
        ).status != status:
            assert reply.status == 429, reply
            await asyncio.sleep(0.2)
