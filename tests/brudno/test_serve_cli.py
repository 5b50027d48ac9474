"""`brudno serve`: its options, where the token comes from, and SIGTERM on the real command.

What the server does with a connection is tested on the library, in
tests/protocol/transports/test_tcp_*.py.
"""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import pytest

from brudno.cli import build_parser
from brudno.commands.serve import TOKEN_ENV, resolve_token
from protocol.transports.tcp.config import ServerConfig
from tests.support.tcp_helpers import (
    HANG_TIMEOUT,
    TcpClient,
    env_without_token,
    pid_alive,
    wait_until,
)

LISTENING = re.compile(r"event=listening address=(\S+):(\d+)")


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


def test_pending_limits_are_options() -> None:
    """Issue 12's options; the checks the library makes of them are in
    tests/protocol/transports/test_tcp_pending_auth.py."""
    parser = build_parser()
    args = parser.parse_args(
        [
            "serve",
            "--max-pending-auth",
            "32",
            "--max-pending-per-address",
            "8",
            "--auth-timeout",
            "2.5",
        ]
    )
    assert (args.max_pending_auth, args.max_pending_per_address, args.auth_timeout) == (32, 8, 2.5)
    defaults = parser.parse_args(["serve"])
    assert defaults.max_pending_auth == ServerConfig().max_pending_auth == 16
    assert defaults.max_pending_per_address == ServerConfig().max_pending_per_address == 4
    for bad in (
        ["--max-pending-auth", "0"],
        ["--max-pending-per-address", "-1"],
        ["--auth-timeout", "0"],
        ["--auth-timeout", "nan"],
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(["serve", *bad])


async def test_sigterm_delivers_bestmove_to_every_searching_client(brudno: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        *brudno, "serve", "--port", "0", stderr=asyncio.subprocess.PIPE, env=env_without_token()
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
