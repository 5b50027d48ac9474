"""The TCP server: many isolated sessions, limits, and a client's bad behaviour.

Every test runs an in-process server (``running_server``), which on exit checks that every
connection, asyncio task and worker process the test caused is gone.
"""

from __future__ import annotations

import asyncio
import random

import chess
import chess.engine
import pytest

from protocol.transports.connect import open_uci_tcp
from protocol.transports.tcp.config import ServerConfig, ServerConfigError, is_loopback
from protocol.transports.tcp.server import TcpServer
from protocol.transports.tcp.wire import RETRY_LATER
from tests.support.tcp_helpers import TcpClient, running_server, wait_until, worker_pids

CLIENTS = 32


def _position(seed: int) -> chess.Board:
    """A different, reproducible middle-game-ish position per client."""
    rng = random.Random(seed)
    board = chess.Board()
    for _ in range(6 + seed % 9):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    if board.is_game_over():
        board.pop()
    return board


async def test_a_session_speaks_uci() -> None:
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        hello = await client.exchange("uci")
        assert hello[0].startswith("id name Brudno") and hello[-1] == "uciok"
        await client.send("position startpos moves e2e4 e7e5", "go depth 2")
        infos, best = await client.bestmove()
        board = chess.Board()
        for move in ("e2e4", "e7e5"):
            board.push_uci(move)
        assert chess.Move.from_uci(best) in board.legal_moves
        assert any(line.startswith("info depth 2") for line in infos)
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()


async def test_many_python_chess_clients_play_isolated_sessions() -> None:
    """32 python-chess clients at once, each with its own position and Hash: every move is
    legal in *its* position, and the server accounts each session's own Hash."""
    async with running_server(max_sessions=CLIENTS) as server:
        configured = asyncio.Barrier(CLIENTS + 1)
        finished = asyncio.Barrier(CLIENTS + 1)

        async def play(index: int) -> list[bool]:
            _, engine = await open_uci_tcp("127.0.0.1", server.port)
            try:
                await engine.initialize()
                await engine.configure({"Hash": 1 + index % 3})
                await engine.ping()
                await configured.wait()
                board = _position(index)
                legal = []
                for _ in range(3):
                    if board.is_game_over():
                        break
                    result = await engine.play(board, chess.engine.Limit(nodes=150))
                    legal.append(result.move in board.legal_moves)
                    assert result.move is not None
                    board.push(result.move)
                await finished.wait()
                return legal
            finally:
                await engine.quit()

        games = [asyncio.create_task(play(i)) for i in range(CLIENTS)]
        await configured.wait()
        assert server.memory.used_mb == sum(1 + i % 3 for i in range(CLIENTS))
        assert server.connections == CLIENTS
        await finished.wait()
        assert len(worker_pids()) >= CLIENTS  # one process per session, all alive at once
        results = await asyncio.gather(*games)
        assert all(results) and all(all(game) for game in results)


async def test_position_and_options_do_not_leak_between_sessions() -> None:
    async with running_server() as server:
        a = await TcpClient.open(server.port)
        b = await TcpClient.open(server.port)
        await a.exchange(
            "setoption name UCI_Variant value tictactoe",
            "setoption name MultiPV value 3",
            "position startpos moves P@b2",
        )
        await b.exchange("position startpos moves e2e4")
        await a.send("go depth 2")
        await b.send("go depth 2")
        a_infos, a_best = await a.bestmove()
        b_infos, b_best = await b.bestmove()
        assert a_best.startswith("P@") and a_best != "P@b2"
        assert any(" multipv 3 " in line for line in a_infos)
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(b_best) in board.legal_moves
        assert not any(" multipv 2 " in line for line in b_infos)
        display = await b.exchange("d")
        assert any("rnbqkbnr/pppp" in line for line in display)  # still b's own board
        for client in (a, b):
            await client.close()


async def test_hash_is_bounded_by_the_server_memory_limit() -> None:
    async with running_server(max_memory_mb=40) as server:
        first = await TcpClient.open(server.port)
        second = await TcpClient.open(server.port)
        await first.exchange()
        await second.exchange()
        assert server.memory.used_mb == 32  # two sessions at the default 16 MiB

        third = await TcpClient.open(server.port)  # 48 MiB would exceed 40
        refusal = await third.read_to_end()
        assert len(refusal) == 1
        assert refusal[0].startswith("info string error: server memory limit")
        assert RETRY_LATER in refusal[0]

        out = await first.exchange("setoption name Hash value 32")
        assert len(out) == 1 and out[0].startswith("info string error: Hash 32 MiB exceeds")
        assert server.memory.used_mb == 32  # refused: nothing changed
        assert await first.exchange("setoption name Hash value 20") == []
        assert server.memory.used_mb == 36
        await first.send("go depth 1")  # and the session still searches
        await first.bestmove()
        for client in (first, second, third):
            await client.close()
        await wait_until(lambda: server.memory.used_mb == 0, "memory is released")


async def test_flood_beyond_max_sessions_is_refused_one_line_each() -> None:
    async with running_server(max_sessions=4) as server:
        clients = [await TcpClient.open(server.port) for _ in range(4)]
        for client in clients:
            await client.exchange()
        extra = await asyncio.gather(*(TcpClient.open(server.port) for _ in range(20)))
        refusals = await asyncio.gather(*(client.read_to_end() for client in extra))
        for lines in refusals:
            assert lines == [f"info string error: server full (4 sessions); {RETRY_LATER}"]
        for client in clients:  # the admitted sessions are unaffected
            assert await client.exchange("position startpos moves d2d4") == []
        for client in (*clients, *extra):
            await client.close()


async def test_token_is_required_first_and_compared_exactly() -> None:
    token = "s3cret-token"
    async with running_server(token=token, auth_timeout_s=0.5) as server:
        good = await TcpClient.open(server.port, token=token)
        assert await good.exchange() == []

        for bad_first_line in ("auth wrong-token", "auth s3cret-toke", "isready", "auth"):
            bad = await TcpClient.open(server.port)
            await bad.send(bad_first_line)
            lines = await bad.read_to_end()
            assert lines == [
                "info string error: authentication failed (the first line must be 'auth <token>')"
            ]
            assert token not in " ".join(lines)
            await bad.close()

        silent = await TcpClient.open(server.port)  # never authenticates
        assert await silent.read_to_end() == ["info string error: authentication timed out"]
        await silent.close()
        await good.send("go depth 1")
        await good.bestmove()
        await good.close()


async def test_a_client_token_on_an_open_server_is_not_echoed() -> None:
    async with running_server() as server:
        client = await TcpClient.open(server.port, token="not-needed-here")
        assert await client.exchange() == []
        await client.close()


def test_binding_beyond_loopback_requires_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("") and not is_loopback("::")
    with pytest.raises(ServerConfigError, match="requires a token"):
        TcpServer(ServerConfig(host="0.0.0.0"))
    with pytest.raises(ServerConfigError, match="empty"):
        TcpServer(ServerConfig(host="0.0.0.0", token="  "))
    TcpServer(ServerConfig(host="0.0.0.0", token="long-enough-secret"))


async def test_oversized_lines_and_garbage_do_not_hurt_the_session() -> None:
    async with running_server(max_line_bytes=1024) as server:
        other = await TcpClient.open(server.port)
        client = await TcpClient.open(server.port)
        await client.exchange("position startpos moves g1f3")
        await client.send_bytes(b"position startpos moves " + b"e2e4 " * 50_000 + b"\n")
        await client.send_bytes(bytes(range(256)) * 8 + b"\n\xff\xfe\x00garbage\r\n")
        out = await client.exchange()
        too_long = [line for line in out if "line too long" in line]
        assert too_long == ["info string error: line too long (more than 1024 bytes; ignored)"]
        assert all(line.startswith("info string error:") for line in out)
        await client.send("go depth 1")  # the position is still the one before the flood
        _, best = await client.bestmove()
        board = chess.Board()
        board.push_uci("g1f3")
        assert chess.Move.from_uci(best) in board.legal_moves
        assert await other.exchange() == []
        for c in (client, other):
            await c.close()


async def test_half_closed_client_still_gets_its_bestmove() -> None:
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        await client.send("position startpos", "go depth 3")
        client.writer.write_eof()
        lines = await client.read_to_end()
        assert lines[-1].startswith("bestmove ")
        await client.close()


async def test_dropped_connections_stop_their_searches() -> None:
    async with running_server() as server:
        survivor = await TcpClient.open(server.port)
        before = worker_pids()
        dropped = await TcpClient.open(server.port)
        await dropped.send("go infinite")
        await wait_until(lambda: worker_pids() - before, "the search started")
        dropped.abort()
        await wait_until(lambda: server.connections == 1, "the dropped session is closed")
        await wait_until(lambda: not (worker_pids() - before), "its worker is closed")
        quiet = await TcpClient.open(server.port)
        await quiet.send("go infinite")
        await quiet.close()  # a plain close (FIN) with an infinite search running
        await wait_until(lambda: server.connections == 1, "the closed session is gone")
        assert await survivor.exchange() == []
        await survivor.close()


async def test_a_client_that_never_reads_is_held_back_not_buffered() -> None:
    """The client floods ``uci`` without reading; the server stops reading it instead of
    buffering replies, never drops one, and other sessions carry on."""
    sent = 500
    async with running_server(output_buffer_bytes=4096, send_buffer_bytes=8192) as server:
        other = await TcpClient.open(server.port)
        hog = await TcpClient.open(server.port, rcvbuf=4096)
        await hog.send_bytes(b"uci\n" * sent)
        await wait_until(
            lambda: any(not c.sink.writable() for c in server.open_connections()),
            "the server holds the reader back",
        )
        (connection,) = [c for c in server.open_connections() if c.lines_in > 0]
        assert connection.lines_in < sent  # it stopped reading the client's input
        await other.send("go depth 1")
        await other.bestmove()
        reply = sum(len(line) + 1 for line in await other.exchange("uci"))
        peak = connection.sink.peak
        assert peak <= 4096 + reply  # at most one reply beyond the high-water mark
        await hog.send("isready")
        lines = await hog.read_until(lambda s: s == "readyok")
        assert sum(1 for line in lines if line == "uciok") == sent  # none dropped
        for client in (hog, other):
            await client.close()


async def test_idle_sessions_are_closed_but_searching_ones_are_not() -> None:
    async with running_server(idle_timeout_s=0.3) as server:
        idle = await TcpClient.open(server.port)
        assert await idle.read_to_end() == ["info string error: idle for 0.3 s; closing"]
        busy = await TcpClient.open(server.port)
        await busy.send("go infinite")
        await asyncio.sleep(0.8)  # well past the idle timeout, while searching
        await busy.send("stop")
        _, best = await busy.bestmove()
        assert chess.Move.from_uci(best) in chess.Board().legal_moves
        for client in (idle, busy):
            await client.close()


async def test_shutdown_sends_every_searching_client_its_bestmove() -> None:
    async with running_server() as server:
        port = server.port
        infinite = await TcpClient.open(port)
        deep = await TcpClient.open(server.port)
        ponder = await TcpClient.open(server.port)
        idle = await TcpClient.open(server.port)
        await infinite.send("go infinite")
        await deep.send("position startpos moves e2e4", "go depth 40")
        await ponder.send("position startpos moves e2e4 e7e5", "go ponder wtime 1000 btime 1000")
        await idle.exchange()
        for client in (infinite, deep, ponder):
            await client.read_until(lambda s: s.startswith("info depth 1 "))
        await server.shutdown()
        with pytest.raises(OSError):
            await TcpClient.open(port)  # no longer listening
        for client in (infinite, deep, ponder):
            lines = await client.read_to_end()
            assert [line.split()[0] for line in lines[-2:]] == ["bestmove", "info"]
            assert lines[-1] == "info string server shutting down"
        assert await idle.read_to_end() == ["info string server shutting down"]
        for client in (infinite, deep, ponder, idle):
            await client.close()
