"""The real commands: `brudno serve` (SIGTERM), `brudno connect` (a GUI's view), `brudno ping`."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path

import chess
import chess.engine
import pytest

from brudno.cli import build_parser
from protocol.transports.connect import (
    EXIT_BUSY,
    EXIT_FAILED,
    EXIT_OK,
    AddressError,
    parse_address,
    ping,
    token_missing_message,
)
from protocol.transports.tcp.server import TOKEN_ENV, resolve_token
from tests.support.tcp_helpers import HANG_TIMEOUT, TcpClient, pid_alive, running_server, wait_until

LISTENING = re.compile(r"event=listening address=(\S+):(\d+)")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(TOKEN_ENV)}
    env.update(extra)
    return env


def _descendants(root: int) -> set[int]:
    """Every process below ``root`` (from /proc), i.e. the server's workers and helpers."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


async def _run(*command: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    out, err = await asyncio.wait_for(proc.communicate(), HANG_TIMEOUT)
    return proc.returncode or 0, out.decode(), err.decode()


def test_addresses() -> None:
    assert parse_address("example.org:4100") == ("example.org", 4100)
    assert parse_address("10.0.0.7") == ("10.0.0.7", 4000)
    assert parse_address("[::1]:4001") == ("::1", 4001)
    assert parse_address("::1") == ("::1", 4000)
    for bad in ("", ":4000", "host:port", "host:70000", "[::1", "[::1]x"):
        with pytest.raises(AddressError):
            parse_address(bad)


def test_token_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "token"
    secret.write_text("from-file\n")
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.delenv(f"{TOKEN_ENV}_FILE", raising=False)
    assert resolve_token(None, None, TOKEN_ENV) is None
    monkeypatch.setenv(f"{TOKEN_ENV}_FILE", str(secret))
    assert resolve_token(None, None, TOKEN_ENV) == "from-file"
    monkeypatch.setenv(TOKEN_ENV, "from-env")
    assert resolve_token(None, None, TOKEN_ENV) == "from-env"
    assert resolve_token(None, secret, TOKEN_ENV) == "from-file"
    assert resolve_token("given", secret, TOKEN_ENV) == "given"


def test_serve_refuses_a_public_address_without_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.delenv(f"{TOKEN_ENV}_FILE", raising=False)
    args = build_parser().parse_args(["serve", "--host", "0.0.0.0", "--port", "0"])
    assert args.run(args) == 2
    assert "requires a token" in capsys.readouterr().err


async def test_ping_reports_ready_busy_and_unreachable() -> None:
    token = "ping-token"
    async with running_server(token=token, max_sessions=1) as server:
        code, message = await ping("127.0.0.1", server.port, token=token)
        assert code == EXIT_OK and message.startswith("readyok from")
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        code, message = await ping("127.0.0.1", server.port, token="wrong")
        assert code == EXIT_FAILED and "authentication failed" in message
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        holder = await TcpClient.open(server.port, token=token)
        assert await holder.exchange() == []
        code, message = await ping("127.0.0.1", server.port, token=token)
        assert code == EXIT_BUSY and "server full" in message
        await holder.close()
        port = server.port
    code, message = await ping("127.0.0.1", port, token=token, timeout=5.0)
    assert code == EXIT_FAILED and "cannot reach" in message


async def test_ping_without_a_token_says_the_server_wants_one(brudno: list[str]) -> None:
    """Issue 12: no token given to a server that wants one is not "authentication failed"
    (which suggests a wrong secret) but a plain "requires a token", naming where to put it."""
    async with running_server(token="wanted-token") as server:
        address = f"127.0.0.1:{server.port}"
        code, out, err = await _run(*brudno, "ping", address, env=_env())
        assert code == EXIT_FAILED and out == ""
        assert err.strip() == (
            f"brudno ping: the server at {address} requires a token and none was given; "
            f"set {TOKEN_ENV} or pass --token-file (or --token)"
        )
        assert "authentication failed" not in err
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        code, _, err = await _run(*brudno, "ping", "--accept-busy", "--token-env", "MY_TOKEN",
                                  address, env=_env())
        assert code == EXIT_FAILED and "set MY_TOKEN or pass" in err  # never "busy"
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        code, message = await ping("127.0.0.1", server.port)
        assert (code, message) == (EXIT_FAILED, token_missing_message("127.0.0.1", server.port))
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        # A token that is given but wrong is still called what it is.
        code, message = await ping("127.0.0.1", server.port, token="wrong")
        assert code == EXIT_FAILED and "authentication failed" in message
        await wait_until(lambda: server.connections == 0, "the ping's session closed")


async def test_ping_and_connect_commands_against_a_server(brudno: list[str]) -> None:
    """What a GUI does: launch `brudno connect` and speak UCI to it; the token comes from
    the environment, never the command line."""
    token = "gui-token"
    async with running_server(token=token, max_sessions=2) as server:
        address = f"127.0.0.1:{server.port}"
        code, out, err = await _run(*brudno, "ping", address, env=_env(BRUDNO_TOKEN=token))
        assert code == 0 and out.startswith(f"readyok from {address}"), err
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        code, _, err = await _run(*brudno, "ping", address, env=_env(BRUDNO_TOKEN="nope"))
        assert code == 1 and "authentication failed" in err
        await wait_until(lambda: server.connections == 0, "the ping's session closed")

        _, engine = await chess.engine.popen_uci(
            [*brudno, "connect", address], env=_env(BRUDNO_TOKEN=token)
        )
        try:
            assert engine.id["name"].startswith("Brudno")
            board = chess.Board()
            for _ in range(2):
                result = await engine.play(board, chess.engine.Limit(nodes=200))
                assert result.move in board.legal_moves
                board.push(result.move)
            # With the one other slot taken, the server is busy; --accept-busy says healthy.
            code, _, err = await _run(*brudno, "ping", address, "--accept-busy",
                                      env=_env(BRUDNO_TOKEN="nope"))
            assert code == 1  # a wrong token is never "busy"
            await wait_until(lambda: server.connections == 1, "the ping's session closed")
            holder = await TcpClient.open(server.port, token=token)
            await holder.exchange()
            code, _, err = await _run(*brudno, "ping", "--quiet", "--accept-busy", address,
                                      env=_env(BRUDNO_TOKEN=token))
            assert code == 0, err
            await holder.close()
        finally:
            await engine.quit()
        await wait_until(lambda: server.connections == 0, "the bridge's session closed")


async def test_sigterm_delivers_bestmove_to_every_searching_client(brudno: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        *brudno, "serve", "--port", "0", stderr=asyncio.subprocess.PIPE, env=_env()
    )
    assert proc.stderr is not None
    log: list[str] = []
    port = 0
    while not port:
        raw = await asyncio.wait_for(proc.stderr.readline(), HANG_TIMEOUT)
        assert raw, "serve exited early:\n" + "".join(log)
        log.append(raw.decode())
        if match := LISTENING.search(log[-1]):
            port = int(match.group(2))
    rest = asyncio.create_task(proc.stderr.read())
    try:
        infinite = await TcpClient.open(port)
        deep = await TcpClient.open(port)
        ponder = await TcpClient.open(port)
        idle = await TcpClient.open(port)
        await infinite.send("go infinite")
        await deep.send("position startpos moves e2e4", "go depth 40")
        await ponder.send("position startpos moves d2d4 d7d5", "go ponder wtime 900 btime 900")
        for client in (infinite, deep, ponder):
            await client.read_until(lambda s: s.startswith("info depth 1 "))
        await idle.exchange()
        helpers = _descendants(proc.pid)
        assert len(helpers) >= 3  # the fork server and a worker per searching session
        proc.send_signal(signal.SIGTERM)
        for client in (infinite, deep, ponder):
            lines = await client.read_to_end()
            assert any(line.startswith("bestmove ") for line in lines), lines
        assert await idle.read_to_end() == ["info string server shutting down"]
        assert await asyncio.wait_for(proc.wait(), HANG_TIMEOUT) == 0
        text = "".join(log) + (await rest).decode()
        assert "event=shutdown" in text and "event=stopped" in text
        assert text.count("reason=shutdown") == 4
        for pid in helpers:
            await wait_until(lambda pid=pid: not pid_alive(pid), f"helper {pid} exited")
        for client in (infinite, deep, ponder, idle):
            await client.close()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
