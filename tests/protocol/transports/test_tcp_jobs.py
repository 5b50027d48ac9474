"""Jobs through the TCP server in real worker processes: every variant searches, and a long
perft ends with its client.

Issue 12: ``grundy`` failed in the worker (an IndexError in games/grundy.py: the server still
answered a legal move, from its fallback, with an ``info string error``), and a ``perft 8``
whose client went away kept its session slot and its worker busy for hours.  The tests state
the correct behaviour; timeouts only keep a broken server from hanging the suite.
"""

from __future__ import annotations

import chess
import pytest

from games.registry import get_variant
from tests.support.tcp_helpers import TcpClient, pid_alive, running_server, wait_until, worker_pids

VARIANTS = ("chess", "tictactoe", "cfour", "grundy")


@pytest.mark.parametrize("variant", VARIANTS)
async def test_every_variant_searches_to_a_legal_bestmove(variant: str) -> None:
    async with running_server() as server:
        before = worker_pids()
        client = await TcpClient.open(server.port)
        assert (
            await client.exchange(
                f"setoption name UCI_Variant value {variant}", "position startpos"
            )
            == []
        )
        await client.send("go depth 2")
        infos, best = await client.bestmove()
        # The search itself ran: no error, no fallback move, both iterations reported.
        assert not [line for line in infos if line.startswith("info string")], infos
        assert any(line.startswith("info depth 2 ") for line in infos), infos
        game = get_variant(variant).new()
        assert best in {game.format_move(move) for move in game.legal_moves()}, best
        assert worker_pids() - before, "the search did not run in a worker process"
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()


@pytest.mark.parametrize("disconnect", ["close", "reset"])
async def test_perft_8_ends_with_its_client(disconnect: str) -> None:
    """A client sends ``perft 8`` (hours of work) and goes away, with a plain close or a
    reset: its session slot is freed and its worker process ends.  A plain close looks like
    a half-close until the server writes (see ``Connection._finish``); a reset is seen at
    once.  Either way the session stops the job, which the perft polls."""
    async with running_server(max_sessions=1) as server:
        before = worker_pids()
        client = await TcpClient.open(server.port)
        await client.send("perft 8")
        assert await client.exchange() == []  # perft was dispatched; isready still answers
        await wait_until(lambda: bool(worker_pids() - before), "the perft's worker started")
        (pid,) = worker_pids() - before
        if disconnect == "close":
            await client.close()
        else:
            client.abort()
        await wait_until(lambda: server.sessions == 0, "the session slot is free")
        await wait_until(lambda: not pid_alive(pid), f"the perft's worker {pid} ended")
        await wait_until(lambda: server.connections == 0, "the connection is closed")
        # The one slot really is free again.
        other = await TcpClient.open(server.port)
        assert await other.exchange() == []
        await other.send("quit")
        assert await other.read_to_end() == []
        await other.close()


async def test_stop_ends_a_perft_and_the_session_carries_on() -> None:
    """``stop`` reaches a perft in the worker the same way: the client is told it stopped
    (not an internal error), and the session and its worker serve the next job."""
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        await client.send("perft 8")
        assert await client.exchange() == []
        lines = await client.exchange("stop")
        assert not [line for line in lines if line.startswith("info string error")], lines
        await client.send("go depth 1")
        infos, best = await client.bestmove()
        assert not [line for line in infos if line.startswith("info string error")], infos
        game = get_variant("chess").new()
        assert best in {game.format_move(move) for move in game.legal_moves()}
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()


async def test_isready_and_stop_are_answered_while_a_setoption_waits_for_the_search() -> None:
    """Issue 12 (1), over TCP: after ``go depth 100`` + ``setoption``, the session used to
    answer nothing again.  Now readyok comes during the search, stop ends it, and the queued
    setoption is applied afterwards (MultiPV 2 shows in the next search)."""
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        await client.send("position startpos", "go depth 100", "setoption name MultiPV value 2")
        before = await client.exchange()  # isready: answered while the search runs
        assert not [line for line in before if line.startswith("bestmove")], before
        await client.send("stop")
        _, best = await client.bestmove()
        assert chess.Move.from_uci(best) in chess.Board().legal_moves, best
        await client.send("go depth 2")
        infos, _ = await client.bestmove()
        assert any(" multipv 2 " in line for line in infos), infos
        await client.send("quit")
        await client.read_to_end()
        await client.close()


async def test_a_malformed_go_over_tcp_is_bounded() -> None:
    """Issue 12 (6): ``go movetime -5`` pinned a worker's CPU until ``stop``."""
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        await client.send("position startpos", "go movetime -5")
        infos, best = await client.bestmove()  # comes without a stop
        assert any("error: movetime" in line for line in infos), infos
        assert chess.Move.from_uci(best) in chess.Board().legal_moves, best
        await client.send("quit")
        await client.read_to_end()
        await client.close()
