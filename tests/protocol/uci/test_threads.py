"""``Threads`` through the real `brudno` process: Lazy SMP helpers as GUIs and bots see them.

lichess-bot's shipped configuration sets ``Threads 4`` through python-chess, which refuses an
option outside the declared range; the helpers are processes that must come and go with the
engine and never cost it a ``bestmove``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import chess
import chess.engine
import pytest

from games.registry import GAMES
from tests.support.processes import alive, descendants, is_search_helper, wait_until
from tests.support.uci_process import UciProcess


@pytest.fixture
def engine(brudno: list[str]) -> Iterator[chess.engine.SimpleEngine]:
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as eng:
        yield eng


def helpers_of(engine: chess.engine.SimpleEngine) -> set[int]:
    pid = engine.transport.get_pid()  # type: ignore[attr-defined]
    return {p for p in descendants(pid) if is_search_helper(p)}


def test_python_chess_configures_threads_4_and_the_engine_plays(
    engine: chess.engine.SimpleEngine,
) -> None:
    assert engine.options["Threads"].max >= 64
    engine.configure({"Threads": 4})
    board = chess.Board()
    for _ in range(6):
        result = engine.play(board, chess.engine.Limit(time=0.2), info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves
        board.push(result.move)
    assert len(helpers_of(engine)) == 3


def test_threads_back_to_1_ends_the_helpers(engine: chess.engine.SimpleEngine) -> None:
    engine.configure({"Threads": 3})
    engine.ping()  # the setoption has run: the helpers are up
    started = helpers_of(engine)
    assert len(started) == 2
    engine.configure({"Threads": 1})
    engine.ping()
    assert not any(alive(pid) for pid in started)
    result = engine.play(chess.Board(), chess.engine.Limit(depth=3))
    assert result.move is not None


@pytest.mark.parametrize("ending", ["quit", "eof"])
def test_no_process_survives_the_engine(brudno: list[str], ending: str) -> None:
    engine = chess.engine.SimpleEngine.popen_uci(brudno, timeout=60)
    engine.configure({"Threads": 4})
    engine.play(chess.Board(), chess.engine.Limit(time=0.3))
    pid = engine.transport.get_pid()  # type: ignore[attr-defined]
    processes = descendants(pid) | {pid}
    assert len([p for p in processes if is_search_helper(p)]) == 3
    if ending == "quit":
        engine.quit()
    else:
        engine.transport.get_pipe_transport(0).close()  # type: ignore[attr-defined]
    engine.close()
    assert wait_until(lambda: not any(alive(p) for p in processes))


def test_a_helper_killed_mid_search_costs_no_bestmove(engine: chess.engine.SimpleEngine) -> None:
    engine.configure({"Threads": 3})
    engine.ping()
    victim = min(helpers_of(engine))
    board = chess.Board()
    with engine.analysis(board) as analysis:
        seen = 0
        for info in analysis:
            if "pv" in info:
                seen += 1
                if seen == 1:
                    os.kill(victim, signal.SIGKILL)
            if seen >= 3:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves
    engine.ping()  # still answering
    # SIGKILL ends a process only once the kernel schedules it, which for a niced helper on a
    # loaded machine can outlast the next search: the promise is for a helper already gone.
    assert wait_until(lambda: not alive(victim))
    again = engine.play(board, chess.engine.Limit(time=0.3))
    assert again.move in board.legal_moves
    assert wait_until(lambda: len(helpers_of(engine)) == 2)  # replaced at the next search
    assert victim not in helpers_of(engine)


@pytest.mark.parametrize("threads", [1, 4])
def test_stop_gets_the_bestmove_with_any_number_of_threads(
    engine: chess.engine.SimpleEngine, threads: int
) -> None:
    """Nothing waits for the helpers: ``stop`` is answered as with one thread (the latency
    itself is measured by bench/threads.py, not asserted here)."""
    engine.configure({"Threads": threads})
    board = chess.Board()
    with engine.analysis(board) as analysis:
        for info in analysis:
            if info.get("depth", 0) >= 4:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves
    engine.ping()


@pytest.mark.parametrize("variant", ["tictactoe", "cfour", "grundy", "chess"])
async def test_every_variant_searches_with_helpers(brudno: list[str], variant: str) -> None:
    uci = await UciProcess.start(brudno)
    try:
        await uci.exchange(
            "setoption name Threads value 2",
            f"setoption name UCI_Variant value {variant}",
            "position startpos",
        )
        for _ in range(2):  # the second search meets the first one's shared entries
            await uci.send("go depth 5")
            lines = await uci.read_until(lambda s: s.startswith("bestmove"))
            best = lines[-1].split()[1]
            assert GAMES[variant].new().parse_move(best) in GAMES[variant].new().legal_moves()
            assert not [line for line in lines if "error" in line]
    finally:
        assert await uci.close() == 0


@pytest.mark.parametrize("searching", [True, False])
async def test_helpers_die_with_a_killed_engine(brudno: list[str], searching: bool) -> None:
    """SIGKILL leaves the engine no chance to end its helpers: they notice on their own (the
    pipe's end-of-file when idle, the parent's absence at their next poll when searching)."""
    uci = await UciProcess.start(brudno)
    await uci.exchange("setoption name Threads value 3", "position startpos")
    if searching:
        await uci.send("go infinite")
        await uci.read_until(lambda s: " pv " in s)
    helpers = {p for p in descendants(uci.proc.pid) if is_search_helper(p)}
    assert len(helpers) == 2
    uci.proc.kill()
    await uci.proc.communicate()
    assert wait_until(lambda: not any(alive(p) for p in helpers))
