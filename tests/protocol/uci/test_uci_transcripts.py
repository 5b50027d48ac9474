"""Raw UCI transcripts against the real `brudno` process.

What match tools send (cutechess-cli, fastchess, lichess-bot), other variants, and a table of
bad input with the engine's answers.  After every bad line the engine must still serve and its
position and options must be unchanged.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator

import pytest

from tests.support.uci_process import UciProcess

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
AFTER_E4_FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


@pytest.fixture
async def uci(brudno: list[str]) -> AsyncIterator[UciProcess]:
    engine = await UciProcess.start(brudno)
    yield engine
    assert await engine.close() == 0


def fen_of(display: list[str]) -> str:
    return next(line for line in display if line.startswith("Fen: "))[5:]


async def current_fen(uci: UciProcess) -> str:
    return fen_of(await uci.exchange("d"))


async def test_uci_handshake_lists_options_then_uciok(uci: UciProcess) -> None:
    await uci.send("uci")
    lines = await uci.read_until(lambda s: s == "uciok")
    assert lines[0].startswith("id name Brudno")
    assert lines[1].startswith("id author ")
    options = [line for line in lines if line.startswith("option name ")]
    assert "option name Hash type spin default 16 min 1 max 4096" in options
    assert "option name Threads type spin default 1 min 1 max 64" in options
    assert "option name Clear Hash type button" in options
    assert any(o.startswith("option name UCI_Variant type combo default chess") for o in options)


async def test_cutechess_style_game_sequence_with_crlf(uci: UciProcess) -> None:
    """cutechess-cli: isready around every move, ucinewgame + isready, clocks; CRLF framing."""
    await uci.send("uci", end="\r\n")
    await uci.read_until(lambda s: s == "uciok")
    await uci.send(
        "setoption name Hash value 8",
        "setoption name UCI_Opponent value none 1500 computer stockfish",
        "isready",
        end="\r\n",
    )
    assert await uci.read_until(lambda s: s == "readyok") == ["readyok"]
    moves: list[str] = []
    await uci.send("ucinewgame", "isready", end="\r\n")
    await uci.read_until(lambda s: s == "readyok")
    for _ in range(4):
        position = "position startpos" + (" moves " + " ".join(moves) if moves else "")
        await uci.send(
            position,
            "go wtime 10000 btime 10000 winc 100 binc 100 depth 2",
            end="\r\n",
        )
        lines = await uci.read_until(lambda s: s.startswith("bestmove"))
        assert all(s.startswith("info") for s in lines[:-1])
        best = lines[-1].split()[1]
        moves.append(best)
        await uci.send("isready", end="\r\n")
        assert await uci.read_until(lambda s: s == "readyok") == ["readyok"]
    # Every move the engine chose was accepted back as legal: the final position parses.
    display = await uci.exchange("position startpos moves " + " ".join(moves), "d")
    assert fen_of(display) != START_FEN


async def test_searchmoves_0000_is_ignored_and_search_still_runs(uci: UciProcess) -> None:
    await uci.send("position startpos", "go depth 2 searchmoves 0000")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    assert not any("error" in s for s in lines)
    assert lines[-1] != "bestmove 0000"


async def test_infinite_search_holds_bestmove_until_stop(uci: UciProcess) -> None:
    """Tic-tac-toe is solved long before `stop`; the move must still wait for it."""
    await uci.exchange("setoption name UCI_Variant value tictactoe", "position startpos")
    await uci.send("go infinite")
    before_stop = await uci.exchange()  # isready is answered during the search
    assert not any(s.startswith("bestmove") for s in before_stop)
    await uci.send("stop")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    assert lines[-1].startswith("bestmove P@")


async def test_ponder_holds_bestmove_until_ponderhit(uci: UciProcess) -> None:
    await uci.exchange("setoption name UCI_Variant value tictactoe", "position startpos moves b2")
    await uci.send("go ponder wtime 1000 btime 1000 depth 9")
    before = await uci.exchange()
    assert not any(s.startswith("bestmove") for s in before)
    await uci.send("ponderhit")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    # Against a centre opening only a corner holds the draw.
    assert lines[-1].split()[1] in {"P@a1", "P@a3", "P@c1", "P@c3"}


async def test_tictactoe_variant_fen_moves_and_drops(uci: UciProcess) -> None:
    await uci.exchange("setoption name UCI_Variant value tictactoe")
    assert await current_fen(uci) == "3/3/3[PPPPPpppp] w - - 0 1"
    assert (
        fen_of(await uci.exchange("position startpos moves P@b2", "d"))
        == "3/1P1/3[PPPPpppp] b - - 0 1"
    )
    # plain square names are accepted too
    assert fen_of(await uci.exchange("position startpos moves b2 a1", "d")).startswith("3/1P1/p2[")
    await uci.send("position fen 3/1P1/3[PPPPpppp] b - - 0 1", "go depth 9")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    assert lines[-1].split()[1] in {"P@a1", "P@a3", "P@c1", "P@c3"}
    assert any(" score cp 0 " in s for s in lines)


async def test_go_perft_prints_divide_and_total(uci: UciProcess) -> None:
    """perft runs as a job like go (isready is answered meanwhile); output ends with the total."""
    await uci.send("position startpos", "go perft 2")
    lines = await uci.read_until(lambda s: s.startswith("Nodes searched"))
    assert "e2e4: 20" in lines
    assert lines[-1] == "Nodes searched: 400"
    await uci.send("perft 1")
    assert (await uci.read_until(lambda s: s.startswith("Nodes searched")))[-1] == (
        "Nodes searched: 20"
    )


async def test_eval_explains_terms_that_add_up(uci: UciProcess) -> None:
    lines = await uci.exchange("position startpos moves e2e4", "eval")
    total = next(s for s in lines if s.startswith("total"))
    assert int(total.split()[-1]) == int(lines[-1].split()[1])
    assert any(s.startswith("material") for s in lines)


async def test_quit_during_search_still_sends_bestmove(brudno: list[str]) -> None:
    engine = await UciProcess.start(brudno)
    await engine.send("position startpos", "go infinite")
    await engine.exchange()
    await engine.send("quit")
    lines = await engine.read_until(lambda s: s.startswith("bestmove"))
    assert lines[-1].split()[1] != "0000"
    assert await engine.proc.wait() == 0


async def test_end_of_input_lets_a_finite_search_finish(brudno: list[str]) -> None:
    engine = await UciProcess.start(brudno)
    await engine.send("position startpos", "go depth 2")
    assert engine.proc.stdin is not None
    engine.proc.stdin.close()
    lines = await engine.read_until(lambda s: s.startswith("bestmove"))
    assert lines[-1].split()[1] != "0000"
    assert await engine.proc.wait() == 0


BAD_INPUT = [
    # (line, text that the error must name)
    ("frobnicate", "frobnicate"),
    ("position startpos moves e2e5", "e2e5"),
    ("position startpos moves e2e4 e2e4", "e2e4"),
    ("position startpos moves zz", "zz"),
    ("position fen not/a/fen w - - 0 1", "not/a/fen"),
    ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "8/8/8/8/8/8/8/8"),
    ("position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "RNBQKBNR x"),
    ("position", "position"),
    ("position sideways", "sideways"),
    ("setoption name NoSuchOption value 3", "NoSuchOption"),
    ("setoption name Hash value 999999", "999999"),
    ("setoption name Hash value lots", "lots"),
    ("setoption name MultiPV value 0", "MultiPV"),
    ("setoption name UCI_Variant value checkers", "checkers"),
    ("setoption name UCI_Chess960 value maybe", "maybe"),
    ("setoption value 3", "setoption"),
    ("perft", "perft"),
    ("perft -1", "-1"),
    ("\x00\x01garbage\xff", "garbage"),
]


@pytest.mark.parametrize(("line", "named"), BAD_INPUT)
async def test_bad_input_is_reported_and_changes_nothing(
    uci: UciProcess, line: str, named: str
) -> None:
    await uci.exchange("position startpos moves e2e4", "setoption name MultiPV value 2")
    answer = await uci.exchange(line)
    errors = [s for s in answer if s.startswith("info string error: ")]
    assert len(errors) == 1, answer
    assert named in errors[0]
    assert await current_fen(uci) == AFTER_E4_FEN
    # options unchanged: MultiPV still 2, so a search reports two lines
    await uci.send("go depth 1")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    assert any(" multipv 2 " in s for s in lines)


async def test_go_garbage_is_reported_but_the_search_still_answers(uci: UciProcess) -> None:
    await uci.send("position startpos", "go depth x wtime 1000 sideways")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    errors = [s for s in lines if s.startswith("info string error:")]
    assert any("x" in s and "depth" in s for s in errors)
    assert any("sideways" in s for s in errors)
    assert lines[-1].split()[1] != "0000"


async def test_go_while_searching_ends_the_old_search_first(uci: UciProcess) -> None:
    await uci.send("position startpos", "go infinite")
    await uci.exchange()
    await uci.send("go depth 1")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    lines += await uci.read_until(lambda s: s.startswith("bestmove"))
    assert sum(s.startswith("bestmove") for s in lines) == 2


async def test_setoption_during_an_infinite_search_waits_for_stop(uci: UciProcess) -> None:
    """Queued behind the search, never refused, never blocking isready."""
    await uci.send("position startpos", "go infinite")
    answer = await uci.exchange("setoption name MultiPV value 2")
    assert not any(s.startswith("bestmove") or "error" in s for s in answer), answer
    await uci.send("stop")
    await uci.read_until(lambda s: s.startswith("bestmove"))
    await uci.send("go depth 2")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    assert any(" multipv 2 " in s for s in lines), lines


async def test_setoption_after_a_finite_go_waits_for_it_like_stockfish(uci: UciProcess) -> None:
    """Piped scripts send setoption right after go; it applies once that search is done."""
    await uci.send(
        "position startpos", "go depth 2", "setoption name MultiPV value 2", "go depth 1"
    )
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    lines += await uci.read_until(lambda s: s.startswith("bestmove"))
    assert not any("error" in s for s in lines)
    second = lines[lines.index(next(s for s in lines if s.startswith("bestmove"))) + 1 :]
    assert any(" multipv 2 " in s for s in second)


async def test_register_and_debug_are_accepted(uci: UciProcess) -> None:
    answer = await uci.exchange("register later", "debug on", "debug off")
    assert not any("error" in s for s in answer)


async def test_unknown_leading_token_is_skipped_per_spec(uci: UciProcess) -> None:
    await uci.send("joho isready")
    assert await uci.readline() == "readyok"
    assert await uci.exchange("joho") == ["info string error: unknown command (joho)"]


async def test_connect_four_infinite_search_reports_the_exact_mate(uci: UciProcess) -> None:
    """Pons' convention scores 44455554221 at -15: the side to move loses with its 7th stone
    after the opponent's 8th, i.e. mated; the solver proves it, so the score is a mate."""
    await uci.exchange("setoption name UCI_Variant value cfour", "position fen 44455554221")
    await uci.send("go infinite")
    lines = await uci.exchange()  # the solver may report before readyok
    await uci.send("stop")
    lines += await uci.read_until(lambda s: s.startswith("bestmove"))
    exact = [s for s in lines if " score mate " in s and "bound" not in s]
    assert exact, lines
    assert int(exact[-1].split(" score mate ")[1].split()[0]) < 0
    assert lines[-1].startswith("bestmove P@")


async def test_a_position_that_extends_the_game_plays_only_the_new_moves(uci: UciProcess) -> None:
    """GUIs resend the whole game each move; the engine advances its position in place, and
    a bad extension, a shorter line or another start still give exactly the position asked."""
    game = "e2e4 e7e5 g1f3 b8c6 f1b5"
    after = "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
    await uci.exchange("position startpos moves e2e4 e7e5")
    assert fen_of(await uci.exchange(f"position startpos moves {game}", "d")) == after
    answer = await uci.exchange(f"position startpos moves {game} a7a6 b5c6 zz")
    assert [s for s in answer if s.startswith("info string error: illegal move zz")], answer
    assert await current_fen(uci) == after  # the two good new moves were taken back
    assert fen_of(await uci.exchange("position startpos moves e2e4", "d")) == AFTER_E4_FEN
    assert fen_of(await uci.exchange(f"position fen {AFTER_E4_FEN} moves e7e5", "d")) == (
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    )
    # Repetition detection sees the moves played in place: b8c6 repeats a position that
    # exists only in the extension.
    await uci.exchange("position startpos moves e2e4")
    await uci.exchange("position startpos moves e2e4 e7e5 g1f3 b8c6 f3g1 c6b8 g1f3")
    await uci.send("go depth 3 searchmoves b8c6")
    lines = await uci.read_until(lambda s: s.startswith("bestmove"))
    assert lines[-1].startswith("bestmove b8c6")
    assert " score cp 0 " in lines[-2], lines


@pytest.mark.parametrize(
    "script",
    ["uci\nquit\n", "uci\nisready\nquit\nisready\nisready\n", "quit\n" + "isready\n" * 200],
)
def test_quit_leaves_nothing_on_stderr(brudno: list[str], script: str) -> None:
    """Input still arriving when ``quit`` closes the loop is dropped silently: no thread
    traceback, no "never awaited" warning (both seen before the reader used a semaphore)."""
    for _ in range(5):
        done = subprocess.run(
            brudno, input=script, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0
        assert done.stderr == ""
        assert done.stdout.count("readyok") <= script.split("quit", maxsplit=1)[0].count("isready")
