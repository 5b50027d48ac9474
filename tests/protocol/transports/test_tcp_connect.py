"""The client library of `brudno serve`: addresses, and the health check against a server.

The commands built on it (`brudno connect`, `brudno ping`) are tested in
tests/brudno/test_connect_cli.py and tests/brudno/test_ping_cli.py.
"""

from __future__ import annotations

import asyncio

import pytest

from protocol.transports.connect import AddressError, PingStatus, parse_address, ping
from tests.support.tcp_helpers import TcpClient, running_server, wait_until


def test_addresses() -> None:
    assert parse_address("example.org:4100") == ("example.org", 4100)
    assert parse_address("10.0.0.7") == ("10.0.0.7", 4000)
    assert parse_address("[::1]:4001") == ("::1", 4001)
    assert parse_address("::1") == ("::1", 4000)
    for bad in ("", ":4000", "host:port", "host:70000", "[::1", "[::1]x"):
        with pytest.raises(AddressError):
            parse_address(bad)


async def test_ping_reports_ready_busy_and_unreachable() -> None:
    token = "ping-token"
    async with running_server(token=token, max_sessions=1) as server:
        code, message = await ping("127.0.0.1", server.port, token=token)
        assert code is PingStatus.READY and message.startswith("readyok from")
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        code, message = await ping("127.0.0.1", server.port, token="wrong")
        assert code is PingStatus.FAILED and "authentication failed" in message
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        holder = await TcpClient.open(server.port, token=token)
        assert await holder.exchange() == []
        code, message = await ping("127.0.0.1", server.port, token=token)
        assert code is PingStatus.BUSY and "server full" in message
        await holder.close()
        port = server.port
    code, message = await ping("127.0.0.1", port, token=token, timeout=5.0)
    assert code is PingStatus.FAILED and "cannot reach" in message


async def test_ping_survives_a_server_that_sends_an_endless_line() -> None:
    """A peer that is not a UCI server (or a hostile one) sends 70 KB without a newline:
    ping reports it as a failure instead of raising (asyncio's line limit is 64 KiB)."""

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(b"x" * 70_000 + b"\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(flood, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        status, message = await ping("127.0.0.1", port, timeout=10)
    assert status is PingStatus.FAILED
    assert "too long" in message
