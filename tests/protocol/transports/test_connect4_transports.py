"""Connect Four's play hook answers the same over every transport: the real ``brudno``
process on stdio and the TCP server's worker processes, on a lost end-game position, give the
same proven score and the move that delays the loss longest (``go mate``: a node budget, no
clock)."""

from __future__ import annotations

from engine.score import Mate, report
from games.connect4.board import Connect4
from games.connect4.solver import Connect4Solver, engine_score
from tests.support.paths import DATA
from tests.support.tcp_helpers import TcpClient, running_server
from tests.support.uci_process import UciProcess

PONS = DATA / "connect4" / "pons"


def lost_position() -> tuple[str, dict[int, int]]:
    """An end-game test position the side to move loses, whose drops lose at different
    speeds, and each drop's score."""
    solver = Connect4Solver()
    for line in (PONS / "Test_L3_R1").read_text(encoding="utf-8").splitlines():
        moves, score = line.split()
        if int(score) >= 0:
            continue
        scores = solver.move_scores(Connect4.from_moves(moves))
        if len(set(scores.values())) > 2:
            return moves, scores
    raise AssertionError("no such position in Test_L3_R1")


def answer(lines: list[str]) -> tuple[str, str]:
    """The final exact score (``score mate N``) and the best move of a transcript."""
    exact = [s for s in lines if " score mate " in s and "bound" not in s]
    assert exact, lines
    score = exact[-1].split(" score ")[1].split(" nodes ")[0]
    return score, lines[-1].split()[1]


async def test_stdio_and_tcp_play_the_same_loss_delaying_move(brudno: list[str]) -> None:
    moves, scores = lost_position()
    position = Connect4.from_moves(moves)
    commands = ("setoption name UCI_Variant value cfour", f"position fen {moves}")
    engine = await UciProcess.start(brudno)
    try:
        await engine.exchange(*commands)
        await engine.send("go mate 30")
        over_stdio = answer(await engine.read_until(lambda s: s.startswith("bestmove")))
    finally:
        assert await engine.close() == 0
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        await client.exchange(*commands)
        await client.send("go mate 30")
        infos, best = await client.bestmove()
        over_tcp = answer([*infos, f"bestmove {best}"])
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
    assert over_stdio == over_tcp
    longest = max(scores.values())
    expected = report(engine_score(longest, position.ply))
    assert isinstance(expected, Mate)
    assert over_stdio[0] == f"mate {expected.moves}"
    assert scores[position.parse_move(over_stdio[1]) // 7] == longest > min(scores.values())
