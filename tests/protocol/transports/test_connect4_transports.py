"""Connect Four's play hook answers the same over every transport: the real ``brudno``
process on stdio, the TCP server's worker processes and an MQTT worker's job.  On a lost
end-game position all give the proven score and the move that delays the loss longest
(``go mate``: a node budget, no clock); on the empty board, under a clock, all answer from
the shipped strategy book with the centre drop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from engine.score import Mate, report
from games.connect4.board import COLUMN_ORDER, Connect4
from games.connect4.play import pv_text
from games.connect4.solver import Connect4Solver, engine_score
from protocol.transports.mqtt.ask import AskOptions
from tests.support.mosquitto_fixture import HANG_TIMEOUT, Mosquitto, ask_client, running_worker
from tests.support.paths import DATA
from tests.support.tcp_helpers import TcpClient, ensure_warm, running_server
from tests.support.uci_process import UciProcess

PONS = DATA / "connect4" / "pons"
GO = "go mate 30"


def lost_position() -> tuple[str, tuple[str, str]]:
    """An end-game test position the side to move loses, whose drops lose at different
    speeds, and the answer expected: ``mate -N`` of the slowest loss and its first drop in
    centre-first order."""
    solver = Connect4Solver()
    for line in (PONS / "Test_L3_R1").read_text(encoding="utf-8").splitlines():
        moves, score = line.split()
        if int(score) >= 0:
            continue
        position = Connect4.from_moves(moves)
        scores = solver.move_scores(position)
        if len(set(scores.values())) > 2:
            longest = max(scores.values())
            mate = report(engine_score(longest, position.ply))
            assert isinstance(mate, Mate) and mate.moves < 0
            column = next(col for col in COLUMN_ORDER if scores.get(col) == longest)
            return moves, (f"mate {mate.moves}", pv_text(position, [column])[0])
    raise AssertionError("no such position in Test_L3_R1")


def answer(lines: list[str]) -> tuple[str, str]:
    """The final exact score (``mate N``) and the best move of a transcript."""
    exact = [s for s in lines if " score mate " in s and "bound" not in s]
    assert exact, lines
    score = exact[-1].split(" score ")[1].split(" nodes ")[0]
    assert lines[-1].startswith("bestmove "), lines
    return score, lines[-1].split()[1]


def book_answer(lines: list[str]) -> tuple[str, str]:
    """Where the answer came from (the ``info string`` prefix) and the best move."""
    notes = [s for s in lines if s.startswith("info string ")]
    assert notes and lines[-1].startswith("bestmove "), lines
    return notes[-1].split()[2].rstrip(":"), lines[-1].split()[1]


@dataclass(frozen=True)
class Case:
    position: str
    go: str
    expected: tuple[str, str]
    answer: Callable[[list[str]], tuple[str, str]]


def lost_case() -> Case:
    moves, expected = lost_position()
    return Case(f"position fen {moves}", GO, expected, answer)


def book_case() -> Case:
    clock = "go wtime 10000 btime 10000 winc 100 binc 100"
    return Case("position startpos", clock, ("strategy", "P@d1"), book_answer)


CASES = pytest.mark.parametrize("make", [lost_case, book_case], ids=["lost", "book"])


def commands(case: Case) -> tuple[str, str]:
    return "setoption name UCI_Variant value cfour", case.position


@CASES
async def test_stdio(brudno: list[str], make: Callable[[], Case]) -> None:
    case = make()
    engine = await UciProcess.start(brudno)
    try:
        await engine.exchange(*commands(case))
        await engine.send(case.go)
        lines = await engine.read_until(lambda s: s.startswith("bestmove"))
        assert case.answer(lines) == case.expected
    finally:
        assert await engine.close() == 0


@CASES
async def test_tcp(make: Callable[[], Case]) -> None:
    case = make()
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        await client.exchange(*commands(case))
        await client.send(case.go)
        infos, best = await client.bestmove()
        assert case.answer([*infos, f"bestmove {best}"]) == case.expected
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()


@CASES
async def test_mqtt_job(mosquitto: Mosquitto, mqtt_prefix: str, make: Callable[[], Case]) -> None:
    case = make()
    await ensure_warm()
    async with (
        running_worker(mosquitto, mqtt_prefix),
        ask_client(mosquitto, mqtt_prefix) as ask,
    ):
        reply = await ask.ask(
            "cfour",
            f"{case.position}\n{case.go}\n",
            timeout=HANG_TIMEOUT,
            options=AskOptions(require_worker=True),
        )
    assert not reply.error and reply.errors == (), reply.lines
    assert case.answer(list(reply.lines)) == case.expected
