"""TLS on `brudno serve`'s game port and HTTP port, through the real command.

A throwaway CA and server certificates are made per test (tests/support/tls_certs.py); the
clients are the project's own (`open_uci_tcp`, `brudno ping`, `brudno connect`) and plain
asyncio TLS sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import ssl
from pathlib import Path

import aiohttp
import chess
import chess.engine
import pytest

from protocol.transports.connect import open_uci_tcp
from protocol.transports.tls import client_context
from tests.support.http_helpers import HTTP_LISTENING
from tests.support.tcp_helpers import (
    HANG_TIMEOUT,
    TcpClient,
    env_without_token,
    run_command,
    serve_process,
)
from tests.support.tls_certs import Authority, Issued

TOKEN = "tls-test-token"


def _env() -> dict[str, str]:
    return env_without_token(BRUDNO_TOKEN=TOKEN)


def _tls_args(pair: Issued) -> tuple[str, ...]:
    return ("--tls-cert", str(pair.cert), "--tls-key", str(pair.key))


async def _tls_client(port: int, cafile: Path, *, server_hostname: str | None = None) -> TcpClient:
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=client_context(cafile), server_hostname=server_hostname
    )
    client = TcpClient(reader, writer)
    await client.send(f"auth {TOKEN}")
    return client


def _serial(client: TcpClient) -> int:
    peer = client.writer.get_extra_info("peercert")
    return int(peer["serialNumber"], 16)


async def test_a_ca_verified_client_plays_over_tls(brudno: list[str], tmp_path: Path) -> None:
    ca = Authority(tmp_path, "test")
    pair = ca.issue("server")
    async with serve_process(brudno, *_tls_args(pair), env=_env()) as server:
        await server.wait_for_log(r"event=listening .* tls=on")
        transport, engine = await open_uci_tcp(
            "127.0.0.1", server.port, token=TOKEN, tls=client_context(ca.cafile)
        )
        try:
            await asyncio.wait_for(engine.initialize(), HANG_TIMEOUT)
            board = chess.Board()
            result = await asyncio.wait_for(
                engine.play(board, chess.engine.Limit(time=0.1)), HANG_TIMEOUT
            )
            assert result.move is not None and result.move in board.legal_moves
        finally:
            await engine.quit()
            transport.close()
        assert await server.stop() == 0


async def test_unknown_ca_and_wrong_host_name_are_refused_by_the_client(
    brudno: list[str], tmp_path: Path
) -> None:
    ca = Authority(tmp_path, "test")
    stranger = Authority(tmp_path, "stranger")
    pair = ca.issue("server")
    async with serve_process(brudno, *_tls_args(pair), env=_env()) as server:
        with pytest.raises(ssl.SSLCertVerificationError, match="unable to get local issuer"):
            await _tls_client(server.port, stranger.cafile)
        with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
            await _tls_client(server.port, ca.cafile, server_hostname="elsewhere.example")
        client = await _tls_client(server.port, ca.cafile)
        assert await client.exchange() == []
        await client.close()
        assert await server.stop() == 0


async def test_a_plaintext_client_gets_no_session_and_holds_nothing(
    brudno: list[str], tmp_path: Path
) -> None:
    ca = Authority(tmp_path, "test")
    pair = ca.issue("server")
    async with serve_process(
        brudno, *_tls_args(pair), "--tls-handshake-timeout", "1", env=_env()
    ) as server:
        talker = await TcpClient.open(server.port)
        await talker.send(f"auth {TOKEN}", "isready")
        assert "readyok" not in await talker.read_to_end()
        silent = await TcpClient.open(server.port)
        assert await silent.read_to_end() == []  # cut by the handshake timeout
        client = await _tls_client(server.port, ca.cafile)
        assert await client.exchange() == []
        await client.close()
        for plain in (talker, silent):
            await plain.close()
        assert await server.stop() == 0
        assert sum("event=open " in line for line in server.log) == 1


async def test_sighup_renews_the_certificate_without_dropping_sessions(
    brudno: list[str], tmp_path: Path
) -> None:
    old_ca = Authority(tmp_path, "old")
    new_ca = Authority(tmp_path, "new")
    pair = old_ca.issue("server")
    async with serve_process(brudno, *_tls_args(pair), env=_env()) as server:
        before = await _tls_client(server.port, old_ca.cafile)
        assert await before.exchange() == []
        renewed = new_ca.issue("renewed")
        os.replace(renewed.cert, pair.cert)
        os.replace(renewed.key, pair.key)
        mark = len(server.log)
        server.proc.send_signal(signal.SIGHUP)
        await server.wait_for_log(r"event=tls_reloaded generation=2", start=mark)
        after = await _tls_client(server.port, new_ca.cafile)
        assert _serial(after) == renewed.serial
        with pytest.raises(ssl.SSLCertVerificationError):
            await _tls_client(server.port, old_ca.cafile)
        await before.send("go movetime 50")
        _, move = await before.bestmove()
        assert chess.Move.from_uci(move) in chess.Board().legal_moves
        assert _serial(before) == pair.serial
        for client in (before, after):
            await client.close()
        assert await server.stop() == 0


async def test_sighup_with_a_broken_pair_keeps_the_old_one(
    brudno: list[str], tmp_path: Path
) -> None:
    ca = Authority(tmp_path, "test")
    pair = ca.issue("server")
    other = ca.issue("other")
    async with serve_process(brudno, *_tls_args(pair), env=_env()) as server:
        pair.key.write_bytes(other.key.read_bytes())  # the wrong key for the certificate
        mark = len(server.log)
        server.proc.send_signal(signal.SIGHUP)
        failed = await server.wait_for_log(r"event=tls_reload_failed (.*)", start=mark)
        assert "is not the key of" in failed[1] and "kept=1" in failed[1]
        client = await _tls_client(server.port, ca.cafile)
        assert _serial(client) == pair.serial
        assert await client.exchange() == []
        await client.close()
        assert await server.stop() == 0


@pytest.mark.parametrize("fault", ["missing", "mismatched", "garbage", "half"])
async def test_a_bad_pair_at_start_is_exit_status_2(
    brudno: list[str], tmp_path: Path, fault: str
) -> None:
    ca = Authority(tmp_path, "test")
    pair = ca.issue("server")
    args = list(_tls_args(pair))
    expected = {
        "missing": "no such file",
        "mismatched": "is not the key of",
        "garbage": "not a PEM certificate and key",
        "half": "--tls-cert and --tls-key go together",
    }[fault]
    if fault == "missing":
        pair.key.unlink()
    elif fault == "mismatched":
        pair.key.write_bytes(ca.issue("other").key.read_bytes())
    elif fault == "garbage":
        pair.cert.write_text("not a certificate\n")
    else:
        args = args[:2]
    code, _, err = await run_command(*brudno, "serve", "--port", "0", *args, env=_env())
    assert code == 2
    assert err.startswith("brudno serve: TLS: ") and expected in err
    assert "Traceback" not in err


async def test_ping_and_connect_speak_tls(brudno: list[str], tmp_path: Path) -> None:
    ca = Authority(tmp_path, "test")
    stranger = Authority(tmp_path, "stranger")
    pair = ca.issue("server")
    async with serve_process(brudno, *_tls_args(pair), env=_env()) as server:
        address = f"127.0.0.1:{server.port}"
        code, out, err = await run_command(
            *brudno,
            "ping",
            "--timeout",
            "60",
            "--tls",
            "--cafile",
            str(ca.cafile),
            address,
            env=_env(),
        )
        assert code == 0, err
        assert out.startswith("readyok from")
        code, _, err = await run_command(
            *brudno,
            "ping",
            "--timeout",
            "60",
            "--cafile",
            str(stranger.cafile),
            address,
            env=_env(),
        )
        assert code == 1 and "certificate verify failed" in err
        proc = await asyncio.create_subprocess_exec(
            *brudno,
            "connect",
            "--tls",
            "--cafile",
            str(ca.cafile),
            address,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_env(),
        )
        out_b, err_b = await asyncio.wait_for(
            proc.communicate(b"uci\nisready\ngo movetime 50\n"), HANG_TIMEOUT
        )
        lines = out_b.decode().splitlines()
        assert proc.returncode == 0, err_b.decode()
        assert "uciok" in lines and "readyok" in lines
        assert any(line.startswith("bestmove ") for line in lines), lines
        assert await server.stop() == 0


async def test_the_http_port_speaks_tls_too(brudno: list[str], tmp_path: Path) -> None:
    ca = Authority(tmp_path, "test")
    pair = ca.issue("server")
    async with serve_process(brudno, *_tls_args(pair), "--metrics-port", "0", env=_env()) as server:
        found = await server.wait_for_log(HTTP_LISTENING.pattern)
        port = int(found[2])
        timeout = aiohttp.ClientTimeout(total=HANG_TIMEOUT)
        connector = aiohttp.TCPConnector(ssl=client_context(ca.cafile))
        async with (
            aiohttp.ClientSession(timeout=timeout, connector=connector) as http,
            http.get(f"https://127.0.0.1:{port}/healthz") as response,
        ):
            assert response.status == 200
            assert await response.text() == "ok\n"
        assert await server.stop() == 0


async def test_at_the_cap_a_socket_stuck_in_its_handshake_gives_way(
    brudno: list[str], tmp_path: Path
) -> None:
    ca = Authority(tmp_path, "test")
    pair = ca.issue("server")
    async with serve_process(
        brudno,
        *_tls_args(pair),
        "--max-connections",
        "3",
        "--max-sessions",
        "1",
        "--tls-handshake-timeout",
        "3600",
        env=_env(),
    ) as server:
        silent = [await TcpClient.open(server.port, local_host="127.0.0.2") for _ in range(3)]
        client = await _tls_client(server.port, ca.cafile)  # accepted after those three
        assert await client.exchange() == []
        await server.wait_for_log(r"event=cut connections=3 ")
        with contextlib.suppress(ConnectionError):
            assert await silent[0].read_to_end() == []
        for other in (client, *silent):
            await other.close()
        assert await server.stop() == 0
