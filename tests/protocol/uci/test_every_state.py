"""Every state answers (issue 12): through the real `brudno` process on stdio.

``isready``, ``stop``, ``ponderhit`` and ``quit`` are answered at once whatever runs; what must
wait for the search is queued behind it, in order; ``perft`` and ``bench`` stop; huge and
malformed ``go`` values are bad input, not internal errors or endless searches; Ctrl-C stops
the search and prints its move.  No assertion is on time: a test that hangs fails at the
transcript driver's timeout, which is what "never answers" means here.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator

import chess
import pytest

from protocol.uci.session import MALFORMED_GO_MOVETIME_MS, MAX_QUEUED_COMMANDS
from tests.support.uci_process import UciProcess


@pytest.fixture
async def uci(brudno: list[str]) -> AsyncIterator[UciProcess]:
    engine = await UciProcess.start(brudno)
    yield engine
    assert await engine.close() == 0


def _is_bestmove(line: str) -> bool:
    return line.startswith("bestmove")


def _legal_at_start(line: str) -> bool:
    return chess.Move.from_uci(line.split()[1]) in chess.Board().legal_moves


async def test_isready_and_stop_are_not_queued_behind_a_setoption(uci: UciProcess) -> None:
    """Defect 1: `go movetime 3000`, `setoption`, `isready`, `stop` answered readyok only
    after the search, and ignored stop.  With depth 100 a lost stop would hang the test."""
    await uci.send("position startpos", "go depth 100", "setoption name Hash value 32", "isready")
    lines = await uci.read_until(lambda s: s == "readyok" or _is_bestmove(s))
    assert lines[-1] == "readyok"  # before any bestmove: the search is still running
    await uci.send("stop")
    lines = await uci.read_until(_is_bestmove)
    assert _legal_at_start(lines[-1])
    # The queued setoption ran after the search: a later exchange sees no error, and the
    # engine serves on.
    assert not any("error" in s for s in await uci.exchange("position startpos"))


async def test_perft_queued_behind_a_search_runs_after_stop(uci: UciProcess) -> None:
    """Defect 1: `go depth 100` + `perft 3` left the session silent for good."""
    await uci.send("position startpos", "go depth 100", "perft 3", "isready")
    await uci.read_until(lambda s: s == "readyok")
    await uci.send("stop")
    lines = await uci.read_until(lambda s: s.startswith("Nodes searched"))
    assert sum(_is_bestmove(s) for s in lines) == 1
    assert lines[-1] == "Nodes searched: 8902"  # the queued perft ran in full, after stop
    assert "a2a3: 380" in lines


async def test_commands_queued_behind_a_search_keep_their_order(uci: UciProcess) -> None:
    await uci.send(
        "position startpos",
        "go infinite",
        "position startpos moves e2e4",
        "d",
        "setoption name UCI_Variant value tictactoe",
        "d",
        "isready",
    )
    before = await uci.read_until(lambda s: s == "readyok")
    # readyok at once; nothing queued has run yet (only the search's info lines came).
    assert all(s.startswith("info") for s in before[:-1]), before
    await uci.send("stop")
    lines = await uci.read_until(lambda s: s.startswith("Fen: 3/3/3"))
    assert _legal_at_start(next(s for s in lines if _is_bestmove(s)))
    fens = [s for s in lines if s.startswith("Fen: ")]
    assert fens == [
        "Fen: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "Fen: 3/3/3[PPPPPpppp] w - - 0 1",
    ]


@pytest.mark.parametrize("job", ["perft 7", "bench 30", "go perft 7"])
async def test_perft_and_bench_stop(uci: UciProcess, job: str) -> None:
    """Defect 2: `perft 6`, `isready`, `stop` answered nothing for 15 s."""
    await uci.send("position startpos", job, "isready")
    await uci.read_until(lambda s: s == "readyok")
    await uci.send("stop", "go depth 1")
    lines = await uci.read_until(_is_bestmove)
    assert any("stopped" in s for s in lines), lines
    assert _legal_at_start(lines[-1])


async def test_quit_during_perft_exits(brudno: list[str]) -> None:
    engine = await UciProcess.start(brudno)
    await engine.send("perft 8", "quit")
    _, stderr = await asyncio.wait_for(engine.proc.communicate(), 60)
    assert engine.proc.returncode == 0
    assert stderr == b""


@pytest.mark.parametrize("keyword", ["movetime", "wtime", "btime", "winc", "movestogo"])
async def test_huge_go_values_are_clamped_not_internal_errors(
    uci: UciProcess, keyword: str
) -> None:
    """Defect 5: a 400-digit movetime was "internal error in search: int too large"."""
    huge = "9" * 400
    go = f"go {keyword} {huge}" + (" wtime 200" if keyword in ("winc", "movestogo") else "")
    await uci.send("position startpos", go, "isready")
    lines = await uci.read_until(lambda s: s == "readyok")
    if not any(_is_bestmove(s) for s in lines):  # a clock of 24 days: it waits for stop
        await uci.send("stop")
        lines += await uci.read_until(_is_bestmove)
    assert not any("error" in s for s in lines), lines
    lines = [s for s in lines if s != "readyok"]
    assert _legal_at_start(lines[-1])


@pytest.mark.parametrize("go", ["go movetime -5", "go depth abc", "go foo 3", "go nodes 0"])
async def test_malformed_go_is_reported_and_bounded(uci: UciProcess, go: str) -> None:
    """Defect 6: these searched until `stop`.  Now an error, then a bounded search whose
    bestmove comes without a stop (the driver's timeout fails the test otherwise)."""
    await uci.send("position startpos", go)
    lines = await uci.read_until(_is_bestmove)
    assert lines[0].startswith("info string error: "), lines
    assert f"info string searching with movetime {MALFORMED_GO_MOVETIME_MS}" in " ".join(lines)
    assert _legal_at_start(lines[-1])


async def test_malformed_go_keeps_its_valid_limit_and_infinite(uci: UciProcess) -> None:
    await uci.send("position startpos", "go depth 2 foo")
    lines = await uci.read_until(_is_bestmove)
    assert not any("searching with movetime" in s for s in lines)
    assert max(int(s.split()[2]) for s in lines if s.startswith("info depth")) <= 3
    await uci.send("go infinite bar")
    answer = await uci.exchange()
    assert not any(_is_bestmove(s) for s in answer)  # still waits for stop, as asked
    await uci.send("stop")
    await uci.read_until(_is_bestmove)


async def test_the_queue_is_bounded(uci: UciProcess) -> None:
    await uci.send("position startpos", "go infinite")
    await uci.send(*["d"] * (MAX_QUEUED_COMMANDS + 3), "isready")
    lines = await uci.read_until(lambda s: s == "readyok")
    refused = [s for s in lines if "already wait for the search" in s]
    assert len(refused) == 3
    await uci.send("stop")
    await uci.read_until(_is_bestmove)


async def test_every_go_gets_one_bestmove_also_when_stop_overtakes_a_queued_go(
    uci: UciProcess,
) -> None:
    await uci.send(
        "position startpos", "go infinite", "go depth 100", "go depth 100", "stop", "isready"
    )
    # readyok and the three moves in any order: the stopped searches may answer before it.
    lines: list[str] = []
    while "readyok" not in lines or sum(_is_bestmove(s) for s in lines) < 3:
        lines.append(await uci.readline())
    assert sum(_is_bestmove(s) for s in lines) == 3
    assert all(_legal_at_start(s) for s in lines if _is_bestmove(s))
    assert not any(_is_bestmove(s) for s in await uci.exchange())


async def test_ctrl_c_stops_the_search_prints_bestmove_and_exits(brudno: list[str]) -> None:
    """Defect 7: SIGINT during `go infinite` left the search running."""
    engine = await UciProcess.start(brudno)
    await engine.send("position startpos", "go infinite", "isready")
    await engine.read_until(lambda s: s == "readyok")
    engine.proc.send_signal(signal.SIGINT)
    lines = await engine.read_until(_is_bestmove)
    assert _legal_at_start(lines[-1])
    _, stderr = await asyncio.wait_for(engine.proc.communicate(), 60)
    assert engine.proc.returncode == 0
    assert stderr == b""  # no "Task was destroyed but it is pending!"
