"""The monitoring package's parts: the info-line reader, the token rule, the board pictures,
the feed's mailboxes, and an in-process server whose metrics count refusals, failed logins,
emergency moves and the page's feed (the real commands: tests/brudno/test_monitoring_cli.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
import xml.etree.ElementTree as ET
from http.cookies import SimpleCookie
from pathlib import Path

import aiohttp
import pytest

from protocol.transports.auth_throttle import AuthThrottle, ThrottlePolicy
from protocol.transports.http.auth import COOKIE, Access, shown_token
from protocol.transports.http.board import BoardError, render
from protocol.transports.http.config import HttpConfig, HttpConfigError
from protocol.transports.http.feed import Mailbox
from protocol.transports.http.monitor import Monitor
from protocol.transports.http.server import HttpServer
from protocol.transports.http.service import serve_tcp_monitored
from protocol.transports.http.status import InfoSample, ServiceKind, parse_info
from protocol.transports.tcp.config import ServerConfig
from protocol.transports.tls import ServerTls, TlsFiles, client_context
from tests.support.http_helpers import ClientSide, get, metrics, request
from tests.support.mosquitto_fixture import FailingRunner, free_port
from tests.support.tcp_helpers import HANG_TIMEOUT, TcpClient, ensure_warm, wait_until
from tests.support.tls_certs import Authority

TOKEN = "unit-secret-0b9d"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "info depth 7 seldepth 11 multipv 1 score cp -24 nodes 4848 nps 23307 hashfull 3 "
            "tbhits 0 time 208 pv g8f6 e2e3",
            InfoSample(7, 11, "cp -24", 4848, 23307, 208, ("g8f6", "e2e3")),
        ),
        (
            "info depth 3 multipv 1 score mate -2 lowerbound nodes 10 nps 5 time 2 pv a1a2",
            InfoSample(3, None, "mate -2 lowerbound", 10, 5, 2, ("a1a2",)),
        ),
        (
            "info depth 9 nodes 100 nps 50 hashfull 0 tbhits 0 time 2",
            InfoSample(9, None, None, 100, 50, 2),
        ),
        ("info depth x nodes -", InfoSample()),
        ("info string depth 5", InfoSample()),
        (None, InfoSample()),
    ],
)
def test_info_lines_are_read_tolerantly(line: str | None, expected: InfoSample) -> None:
    assert parse_info(line) == expected


def test_token_rule() -> None:
    assert Access(None).open
    access = Access(TOKEN)
    basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    assert shown_token({"Authorization": f"Bearer {TOKEN}"}) == TOKEN
    assert shown_token({"Authorization": f"Basic {basic}"}) == TOKEN
    assert shown_token({"Authorization": "Basic !!!"}) == ""  # shown, and wrong
    assert shown_token({}) is None and shown_token({"Authorization": f"Token {TOKEN}"}) is None
    assert access.token_matches(TOKEN)
    assert not access.token_matches(TOKEN + "x") and not access.token_matches("")
    assert not access.session_alive({}) and not access.session_alive({COOKIE: TOKEN})


def test_login_sessions_are_random_expire_and_are_revoked() -> None:
    now = [100.0]
    access = Access(TOKEN, session_ttl_s=60, clock=lambda: now[0])
    first, second = access.log_in(), access.log_in()
    assert first != second and TOKEN not in first and len(first) >= 40
    assert access.session_alive({COOKIE: first}) and access.session_alive({COOKIE: second})
    access.log_out({COOKIE: first})
    assert not access.session_alive({COOKIE: first}) and access.session_alive({COOKIE: second})
    now[0] += 60
    assert not access.session_alive({COOKIE: second})


def test_config_keeps_the_loopback_rule() -> None:
    HttpConfig().check()
    HttpConfig(host="0.0.0.0", token=TOKEN).check()
    with pytest.raises(HttpConfigError, match="requires a token"):
        HttpConfig(host="0.0.0.0").check()
    with pytest.raises(HttpConfigError, match="out of range"):
        HttpConfig(port=70000).check()


@pytest.mark.parametrize(
    ("variant", "fen", "arrow", "marks"),
    [
        ("chess", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "e7e5", 32),
        ("tictactoe", "X/3/3[PPPPpppp] w - - 0 1".replace("X", "1P1"), "P@b2", 1),
        ("cfour", "7/7/7/7/7/3Pp2[PPPPPPPPPPPPPPPPPPPPpppppppppppppppppppp] w - - 0 2", "P@d2", 2),
        ("grundy", "5/3/1 b 2", None, 9),
    ],
)
def test_board_pictures(variant: str, fen: str, arrow: str | None, marks: int) -> None:
    svg = render(variant, fen, arrow=arrow)
    root = ET.fromstring(svg)  # well-formed SVG
    assert root.tag.endswith("svg")
    if variant == "chess":
        assert svg.count("<use") == marks  # one per piece
        assert "arrow" in svg
    elif variant == "grundy":
        assert svg.count('fill="#8d6e63"') == marks  # one match per unit of every heap
    else:
        assert svg.count("<circle") + svg.count("<path") == marks
        assert "#fff59d" in svg  # the line's first move is highlighted


@pytest.mark.parametrize(
    ("variant", "fen"),
    [
        ("chess", "not a fen"),
        ("tictactoe", "3/3/33[] w"),
        ("cfour", "7/7/x6[] w"),
        ("grundy", "a/b w 1"),
        ("grundy", "9999 w 1"),
        ("shogi", "whatever"),
        ("tictactoe", "<script>/3/3[] w"),
    ],
)
def test_bad_positions_are_refused(variant: str, fen: str) -> None:
    with pytest.raises(BoardError):
        render(variant, fen)


async def test_a_mailbox_keeps_the_newest_sample_and_counts_the_rest() -> None:
    box = Mailbox()
    assert box.offer(b"1")
    assert not box.offer(b"2")
    assert not box.offer(b"3")
    assert box.dropped == 2
    assert await box.take() == b"3"
    assert box.offer(b"4")
    assert await box.take() == b"4"


async def test_in_process_server_counts_refusals_logins_and_emergency_moves() -> None:
    """A failing search still answers (a stand-in move): an emergency move, counted."""
    await ensure_warm()
    stop = asyncio.Event()
    started: list[HttpServer] = []
    port = free_port()
    tcp = ServerConfig(port=port, token=TOKEN, max_sessions=1, runner_factory=FailingRunner)
    serving = asyncio.create_task(
        serve_tcp_monitored(tcp, HttpConfig(port=0, token=TOKEN), stop, started=started.append)
    )
    try:
        await wait_until(lambda: bool(started), "the HTTP server listens")
        http = started[0]
        base = f"http://127.0.0.1:{http.port}"
        client = await TcpClient.open(port, token=TOKEN)
        await client.send("go depth 3")
        lines, move = await client.bestmove()
        assert any("internal error in search" in line for line in lines)
        second = await TcpClient.open(port, token=TOKEN)
        assert "server full" in " ".join(await second.read_to_end())
        wrong = await TcpClient.open(port, token="nope")
        await wrong.read_to_end()

        values = await metrics(base, TOKEN)
        assert values["brudno_emergency_moves_total"] == 1.0
        assert values['brudno_sessions_refused_total{reason="full"}'] == 1.0
        assert values['brudno_auth_failures_total{reason="wrong_token"}'] == 1.0
        assert values["brudno_searches_finished_total"] == 1.0
        assert move != "0000"

        # The page's feed: the first sample at once, then one per interval.
        timeout = aiohttp.ClientTimeout(total=HANG_TIMEOUT)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(f"{base}/events", headers=headers) as events,
        ):
            assert events.headers["Content-Type"] == "text/event-stream"
            samples = []
            while len(samples) < 2:
                line = (await events.content.readline()).decode()
                if line.startswith("data: "):
                    samples.append(json.loads(line[6:]))
            assert all(s["sessions"][0]["variant"] == "chess" for s in samples)
            assert samples[0]["ready"] is False  # its one slot is taken
        await client.close()
        assert (await get(f"{base}/healthz")).status == 200
    finally:
        stop.set()
        await asyncio.wait_for(serving, HANG_TIMEOUT)


async def test_login_form_is_throttled_and_its_cookie_secure_over_tls(tmp_path: Path) -> None:
    """The login form under the brute-force limit, on a clock the test moves (no sleeping,
    no racing a penalty), and the cookie's ``Secure`` flag when the port is TLS."""
    now = [0.0]
    throttle = AuthThrottle(
        ThrottlePolicy(free_failures=1, first_penalty_s=30, max_penalty_s=60), lambda: now[0]
    )
    authority = Authority(tmp_path, "monitor")
    issued = authority.issue("server")
    tls = ServerTls(TlsFiles(issued.cert, issued.key))
    verified = ClientSide(tls=client_context(authority.cafile))
    config = HttpConfig(port=0, token="game", operator_token=TOKEN, tls=tls)
    async with HttpServer(config, Monitor(ServiceKind.SERVE), throttle) as http:
        login = f"https://127.0.0.1:{http.port}/login"
        wrong = [
            await request("POST", login, form={"token": "guess"}, client=verified) for _ in range(2)
        ]
        assert [r.status for r in wrong] == [401, 401] and "Wrong token." in wrong[1].text
        blocked = await request("POST", login, form={"token": TOKEN}, client=verified)  # unchecked
        assert blocked.status == 429, blocked
        assert blocked.headers["Retry-After"] == "30"
        assert "try again in 30 s" in blocked.text and 'name="token"' in blocked.text
        game = await request(
            "POST",
            login,
            form={"token": "game"},
            client=ClientSide(local_host="127.0.0.2", tls=verified.tls),
        )
        assert game.status == 401  # another address; the game token opens nothing here
        now[0] += 30
        right = await request("POST", login, form={"token": TOKEN}, client=verified)
        assert right.status == 303
        cookie = SimpleCookie(right.headers["Set-Cookie"])["brudno_status"]
        assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Strict"
