"""Issue 12: connections that have not authenticated cannot lock a token server out.

Silent sockets count against their own budget (``--max-pending-auth``, per address
``--max-pending-per-address``), never against ``--max-sessions``; when that budget is full
the oldest pending connection is evicted.  The event order is made deterministic by waiting
for the server's own log line (or state) for each connection, never by sleeping.
"""

from __future__ import annotations

import re

import chess
import pytest

from protocol.transports.tcp.config import ServerConfig, ServerConfigError
from protocol.transports.tcp.pending_auth import PendingAuth, address_key
from protocol.transports.tcp.server import TcpServer
from protocol.transports.tcp.wire import PENDING_FULL, RETRY_LATER
from tests.support.tcp_helpers import (
    TcpClient,
    env_without_token,
    running_server,
    serve_process,
    wait_until,
)

TOKEN = "lockout-test-token"
BUDGET = 4
EVICTED = [f"info string error: {PENDING_FULL}"]


async def test_silent_sockets_cannot_lock_a_token_server_out(brudno: list[str]) -> None:
    """The issue's attack on a real `brudno serve`: more silent sockets than the pending
    budget, from the legitimate clients' own address, reopened as the server closes them;
    every legitimate client still authenticates and gets a session (``--max-sessions 1``:
    had silent sockets counted as sessions, nobody would)."""
    async with serve_process(
        brudno,
        "--max-sessions",
        "1",
        "--max-pending-auth",
        str(BUDGET),
        "--max-pending-per-address",
        str(BUDGET),
        "--auth-timeout",
        "600",  # the silent sockets outlive the test: no timing involved
        env=env_without_token(BRUDNO_TOKEN=TOKEN),
    ) as server:
        await server.wait_for_log(rf"event=listening .* max_pending_auth={BUDGET} ")

        async def open_silent() -> TcpClient:
            client = await TcpClient.open(server.port)
            await server.wait_for_log(rf"event=open session=\S+ peer={re.escape(client.local)} ")
            return client

        silent = [await open_silent() for _ in range(2 * BUDGET + 2)]
        # The oldest were told why and closed, to make room; the newest BUDGET still wait.
        for client in silent[:-BUDGET]:
            assert await client.read_to_end() == EVICTED
        silent = silent[-BUDGET:]

        for round_ in range(3):
            # A legitimate client: its auth line arrives within one round trip, so it is
            # pending only for that long, then holds the one session slot.
            mark = len(server.log)
            legit = await TcpClient.open(server.port, token=TOKEN)
            hello = await legit.exchange("uci")
            assert hello[0].startswith("id name Brudno") and hello[-1] == "uciok"
            await legit.send("position startpos moves e2e4", "go depth 2")
            _, best = await legit.bestmove()
            board = chess.Board()
            board.push_uci("e2e4")
            assert chess.Move.from_uci(best) in board.legal_moves
            # It made room by evicting the oldest silent socket, and left the pending
            # budget as soon as its auth line arrived.
            assert await silent[0].read_to_end() == EVICTED
            silent = silent[1:]
            # The session slot is the legitimate client's: another authenticated client is
            # told the server is full (after auth, so a wrong token is never "busy").
            second = await TcpClient.open(server.port, token=TOKEN)
            assert await second.read_to_end() == [
                f"info string error: server full (1 sessions); {RETRY_LATER}"
            ]
            await second.close()
            await legit.send("quit")
            assert await legit.read_to_end() == []
            await legit.close()
            await server.wait_for_log(r"event=close session=\S+ reason=quit ", start=mark)
            # The attacker reopens what the server closed, as in the issue.
            silent.append(await open_silent())
            assert len(silent) == BUDGET, round_

        assert await server.stop() == 0
        for client in silent:  # still pending at shutdown: closed without a word
            assert await client.read_to_end() == []
            await client.close()
        text = "".join(server.log)
        evictions = (BUDGET + 2) + 3  # the first flood's excess, then one per legit client
        assert text.count("event=auth_evicted") == evictions
        assert text.count('reason="auth evicted"') == evictions
        assert text.count("event=session ") == 3


async def test_per_address_limit_and_heaviest_address_pay_first() -> None:
    """Through the in-process server, several client addresses (127.0.0.x): an address at
    its own limit gives up its own oldest connection; a full budget takes the oldest of the
    address holding the most.  A legitimate client from yet another address gets in."""
    async with running_server(
        token=TOKEN,
        max_sessions=1,
        max_pending_auth=4,
        max_pending_per_address=2,
        auth_timeout_s=600.0,
    ) as server:

        async def open_silent(local_host: str) -> TcpClient:
            client = await TcpClient.open(server.port, local_host=local_host)
            await wait_until(
                lambda: any(c.peer == client.local for c in server.open_connections()),
                f"the server accepted {client.local}",
            )
            return client

        a1 = await open_silent("127.0.0.2")
        a2 = await open_silent("127.0.0.2")
        a3 = await open_silent("127.0.0.2")  # .2 is at its limit (2): a1 goes
        assert await a1.read_to_end() == EVICTED
        b1 = await open_silent("127.0.0.3")
        c1 = await open_silent("127.0.0.4")
        assert server.pending_auth == 4  # a2 a3 b1 c1: the budget is full
        d1 = await open_silent("127.0.0.5")  # .2 holds the most: its oldest (a2) goes
        assert await a2.read_to_end() == EVICTED
        assert server.pending_auth == 4 and server.sessions == 0

        legit = await TcpClient.open(server.port, token=TOKEN, local_host="127.0.0.6")
        assert await legit.exchange() == []  # a session: it answers isready
        assert await a3.read_to_end() == EVICTED  # all hold one now: the oldest overall
        assert server.sessions == 1
        assert server.pending_auth == 3  # b1 c1 d1 still wait; legit left on its auth line
        for client in (a1, a2, a3, b1, c1, d1, legit):
            await client.close()


async def test_without_a_token_every_connection_is_a_session_at_once() -> None:
    """No token, no pending stage: the slot is taken on accept, as before."""
    async with running_server(max_sessions=1) as server:
        first = await TcpClient.open(server.port)
        await wait_until(lambda: server.sessions == 1, "the first holds the slot")
        assert server.pending_auth == 0
        refused = await TcpClient.open(server.port)
        assert await refused.read_to_end() == [
            f"info string error: server full (1 sessions); {RETRY_LATER}"
        ]
        assert await first.exchange() == []
        for client in (first, refused):
            await client.close()


def test_pending_auth_bookkeeping() -> None:
    pending: PendingAuth[str] = PendingAuth(limit=3, per_address=2)
    assert pending.admit("a1", "A") is None
    assert pending.admit("a2", "A") is None
    assert pending.admit("a3", "A") == "a1"  # A's own oldest
    assert pending.admit("b1", "B") is None
    assert len(pending) == 3
    assert pending.admit("c1", "C") == "a2"  # A holds the most
    assert pending.admit("d1", "D") == "a3"  # a tie: the oldest of all
    pending.leave("b1")
    pending.leave("b1")  # idempotent
    assert "b1" not in pending and len(pending) == 2
    assert pending.admit("e1", "E") is None


def test_address_keys() -> None:
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9")
    assert address_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("fe80::1%eth0") == "fe80::/64"
    assert address_key("/run/brudno.sock") == "/run/brudno.sock"


def test_pending_limits_are_checked() -> None:
    """The options' half (``brudno serve --max-pending-auth`` …) is in
    tests/brudno/test_serve_cli.py."""
    for field in ("max_pending_auth", "max_pending_per_address"):
        with pytest.raises(ServerConfigError, match=field):
            TcpServer(ServerConfig(**{field: 0}))
    with pytest.raises(ServerConfigError, match="auth_timeout_s"):
        TcpServer(ServerConfig(auth_timeout_s=0.0))
