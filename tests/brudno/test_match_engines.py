"""Matches between real engine processes: Brudno, Debian's Stockfish, and a scripted engine
(`fake_uci_engine.py`) that loses on time, plays illegal moves, crashes or hangs on demand.

Limits are depths, node counts and move caps, so the games are short and their results do not
depend on the machine's speed.  The clock tests use a scripted engine that sleeps several
times longer than its whole clock, so the forfeit never depends on timing either.
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn
import pytest

from brudno.arena import players as match_players
from brudno.arena.adjudication import ResignRule
from brudno.arena.clock import TimeControl
from brudno.arena.match import Match
from brudno.arena.openings import Opening
from brudno.arena.players import EngineConfig
from brudno.arena.results import MatchResult
from brudno.arena.settings import MatchError, MatchSettings
from brudno.arena.stats import Sprt, SprtDecision
from brudno.cli import main as brudno_main
from tests.support.paths import REPO

FAKE = REPO / "tests" / "support" / "fake_uci_engine.py"
HANG = 120.0  # seconds before a broken test gives up; no assertion depends on it


def fake(*args: str) -> EngineConfig:
    return EngineConfig((sys.executable, str(FAKE), *args))


def stockfish_command() -> list[str]:
    """Debian's stockfish (in /usr/games, which is not always on PATH).  Missing is a failure:
    scripts/test installs it."""
    found = shutil.which("stockfish") or (
        "/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None
    )
    if found is None:
        pytest.fail("stockfish is not installed (apt-get install stockfish; scripts/test does it)")
    return [found]


async def play(settings: MatchSettings, pgn: io.StringIO | None = None) -> MatchResult:
    match = Match(settings, pgn=pgn, progress=io.StringIO())
    return await asyncio.wait_for(match.run(), HANG)


def read_games(text: str) -> list[chess.pgn.Game]:
    stream = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    return games


def run_cli(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "brudno", *args],
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )


# -- real engines ----------------------------------------------------------------------------
@pytest.mark.slow  # three Python processes start; about 5 s on an idle machine
def test_brudno_against_brudno_from_pgn_openings(
    brudno: list[str], data_dir: Path, tmp_path: Path
) -> None:
    """The command line end to end: two games of one PGN opening, both colours, two at once,
    capped at move 15; the report and the PGN say what happened."""
    pgn_path = tmp_path / "games.pgn"
    json_path = tmp_path / "result.json"
    book = data_dir / "chess" / "openings" / "8moves_v3_every7th.pgn"
    engine = " ".join(brudno)
    done = run_cli(
        [
            "match",
            "--engine", engine, "--name", "Brudno A", "--option", "Hash=4",
            "--engine", engine, "--name", "Brudno B",
            "--each-option", "Move Overhead=10",
            "--depth", "1", "--games", "2", "--concurrency", "2",
            "--openings", str(book), "--openings-start", "2", "--maxmoves", "15",
            "--pgn", str(pgn_path), "--json", str(json_path),
        ]
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Match of 2 engines, chess, depth 1: 2 games in " + lines[0].split(" in ")[1]
    assert lines[1].startswith("Brudno A vs Brudno B: 2 games, W ")
    assert lines[2].startswith("Elo difference: ")
    assert "LOS: " in lines[2]
    assert lines[3].startswith("Ptnml(0-2): [")
    assert lines[-2] == "Brudno A: 0 time losses, 0 illegal moves, 0 crashes"
    assert lines[-1] == "Brudno B: 0 time losses, 0 illegal moves, 0 crashes"
    assert "Game 1/2 Brudno A vs Brudno B: " in done.stderr  # progress

    games = read_games(pgn_path.read_text())
    assert len(games) == 2
    assert {g.headers["Round"] for g in games} == {"1", "2"}
    by_round = {g.headers["Round"]: g for g in games}
    assert (by_round["1"].headers["White"], by_round["1"].headers["Black"]) == (
        "Brudno A",
        "Brudno B",
    )
    assert (by_round["2"].headers["White"], by_round["2"].headers["Black"]) == (
        "Brudno B",
        "Brudno A",
    )
    for game in games:
        headers = game.headers
        for tag in ("Event", "Site", "Date", "TimeControl", "Termination", "Result"):
            assert headers[tag], tag
        assert headers["TimeControl"] == "-"
        assert "FEN" not in headers  # a PGN opening starts from the standard position
        moves = list(game.mainline_moves())
        # the book: 1. e4 e6 2. d4 d5 3. Nd2 c5 4. exd5 exd5 5. Ngf3 Nf6 6. dxc5 Bxc5 ...
        assert [m.uci() for m in moves[:4]] == ["e2e4", "e7e6", "d2d4", "d7d5"]
        assert [n.comment for n in game.mainline()][:16] == ["book"] * 16
        assert headers["Result"] == game.end().board().result(claim_draw=True) or (
            headers["Termination"] == "adjudication"
        )
        assert len(moves) <= 2 * 15
    summary = json.loads(json_path.read_text())
    assert summary["games"] == 2
    assert [e["name"] for e in summary["engines"]] == ["Brudno A", "Brudno B"]
    pair = summary["pairs"][0]
    assert pair["wins"] + pair["draws"] + pair["losses"] == 2
    assert sum(pair["ptnml"]) == 1


async def test_stockfish_against_brudno_from_epd_openings(
    brudno: list[str], data_dir: Path
) -> None:
    book = data_dir / "chess" / "openings" / "noob_3moves_every30th.epd"
    fen = book.read_text().splitlines()[0]
    settings = MatchSettings(
        engines=(EngineConfig(tuple(stockfish_command())), EngineConfig(tuple(brudno))),
        games=2,
        depth=1,
        openings=(Opening(fen, (), "noob:1"),),
        maxmoves=20,
    )
    pgn = io.StringIO()
    result = await play(settings, pgn)
    assert result.names[0].startswith("Stockfish")
    assert result.names[1].startswith("Brudno")
    assert result.games == 2
    stats = result.pairs[(0, 1)]
    assert stats.games == 2
    assert [e.text() for e in result.errors] == ["0 time losses, 0 illegal moves, 0 crashes"] * 2
    games = read_games(pgn.getvalue())
    for game in games:
        assert game.headers["FEN"] == fen
        assert game.headers["SetUp"] == "1"
        assert game.headers["OpeningSource"] == "noob:1"
        board = game.board()
        for move in game.mainline_moves():
            assert move in board.legal_moves
            board.push(move)


async def test_tictactoe_brudno_draws_itself_and_beats_a_weak_player(brudno: list[str]) -> None:
    """Perfect play (depth 9 is the whole game) draws against itself and wins against the
    scripted engine, which takes the first free square (a1, b1, c1, ...) with either mark."""
    settings = MatchSettings(
        engines=(
            EngineConfig(tuple(brudno)),
            EngineConfig(tuple(brudno)),
            fake("--name", "First square"),
        ),
        games=2,
        variant="tictactoe",
        depth=9,
    )
    pgn = io.StringIO()
    result = await play(settings, pgn)
    assert result.names[0].startswith("Brudno")
    assert result.names[1:] == [f"{result.names[0]} (2)", "First square"]
    itself = result.pairs[(0, 1)]
    assert (itself.wins, itself.draws, itself.losses) == (0, 2, 0)
    for key in ((0, 2), (1, 2)):
        stats = result.pairs[key]
        assert (stats.wins, stats.draws, stats.losses) == (2, 0, 0)
    assert [index for index, _, _ in result.standings()][-1] == 2
    text = pgn.getvalue()
    assert text.count('[Variant "tictactoe"]') == 6
    assert "P@b2" in text  # Brudno opens in the centre


# -- faults ----------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["chess", "tictactoe"])
async def test_late_move_is_a_loss_on_time(variant: str) -> None:
    settings = MatchSettings(
        engines=(fake("--mode", "slow", "--at", "2", "--sleep", "900"), fake("--name", "Ok")),
        games=2,
        variant=variant,
        tc=TimeControl.parse("0.3+0"),
        timemargin_ms=50,
    )
    pgn = io.StringIO()
    result = await play(settings, pgn)
    stats = result.pairs[(0, 1)]
    assert (stats.wins, stats.draws, stats.losses) == (0, 0, 2)
    assert result.errors[0].time_losses == 2
    assert result.errors[1].time_losses == 0
    assert pgn.getvalue().count('[Termination "time forfeit"]') == 2
    assert "White loses on time" in pgn.getvalue()
    assert "Black loses on time" in pgn.getvalue()


async def test_movetime_overrun_is_a_loss_on_time() -> None:
    settings = MatchSettings(
        engines=(fake("--name", "Ok"), fake("--mode", "slow", "--at", "1", "--sleep", "700")),
        games=1,
        movetime_ms=100,
    )
    result = await play(settings)
    assert result.errors[1].time_losses == 1
    assert result.pairs[(0, 1)].wins == 1


@pytest.mark.parametrize("mode", ["illegal", "none"])
@pytest.mark.parametrize("variant", ["chess", "tictactoe"])
async def test_illegal_move_loses(mode: str, variant: str) -> None:
    settings = MatchSettings(
        engines=(fake("--mode", mode, "--at", "2"), fake("--name", "Ok")),
        games=2,
        variant=variant,
        depth=1,
    )
    pgn = io.StringIO()
    result = await play(settings, pgn)
    assert result.pairs[(0, 1)].losses == 2
    assert result.errors[0].illegal_moves == 2
    assert pgn.getvalue().count('[Termination "rules infraction"]') == 2
    assert "makes an illegal move" in pgn.getvalue()


@pytest.mark.parametrize("variant", ["chess", "tictactoe"])
async def test_crash_loses_and_the_engine_is_restarted(variant: str) -> None:
    """The crashing engine dies on its second move of every game; each game it is started
    afresh, so every one of the four games is played and counted."""
    settings = MatchSettings(
        engines=(fake("--name", "Ok"), fake("--mode", "crash", "--at", "2", "--name", "Bad")),
        games=4,
        variant=variant,
        depth=1,
    )
    pgn = io.StringIO()
    result = await play(settings, pgn)
    assert result.games == 4
    assert result.pairs[(0, 1)].wins == 4
    assert result.errors[1].crashes == 4
    assert result.errors[0].crashes == 0
    assert pgn.getvalue().count('[Termination "abandoned"]') == 4
    assert "Black disconnects" in pgn.getvalue()


async def test_hung_engine_forfeits_on_time_and_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(match_players, "RECOVER_TIMEOUT", 0.5)  # how long `stop` may take
    settings = MatchSettings(
        engines=(fake("--mode", "hang", "--at", "2"), fake("--name", "Ok")),
        games=2,
        tc=TimeControl.parse("0.3+0"),
    )
    result = await play(settings)
    assert result.games == 2
    assert result.errors[0].time_losses == 2
    assert result.pairs[(0, 1)].losses == 2


async def test_resign_adjudication_with_reported_scores() -> None:
    settings = MatchSettings(
        engines=(fake("--name", "Pessimist", "--cp", "-800"), fake("--name", "Optimist")),
        games=2,
        depth=1,
        resign=ResignRule(movecount=3, score=500),
    )
    pgn = io.StringIO()
    result = await play(settings, pgn)
    assert result.pairs[(0, 1)].losses == 2
    games = read_games(pgn.getvalue())
    for game in games:
        assert game.headers["Termination"] == "adjudication"
        assert game.headers["PlyCount"] in ("5", "6")  # the pessimist's third move ends it


async def test_tablebase_adjudication(data_dir: Path) -> None:
    """
    . . . . k . . .
    . . . . . . . .
    . . . . K . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . Q . . . .     KQ v K: decided by the tables before anyone moves
    """
    settings = MatchSettings(
        engines=(fake("--name", "A"), fake("--name", "B")),
        games=2,
        depth=1,
        openings=(Opening("4k3/8/4K3/8/8/8/8/3Q4 w - - 0 1", (), "kqk"),),
        tablebase=str(data_dir / "syzygy" / "regular"),
    )
    pgn = io.StringIO()
    result = await play(settings, pgn)
    stats = result.pairs[(0, 1)]
    assert (stats.wins, stats.draws, stats.losses) == (1, 0, 1)
    assert "White wins by adjudication: SyzygyTB" in pgn.getvalue()
    assert '[PlyCount "0"]' in pgn.getvalue()


# -- match control ---------------------------------------------------------------------------
async def test_sprt_stops_the_match_when_it_decides() -> None:
    settings = MatchSettings(
        engines=(EngineConfig(tuple(stockfish_command())), fake("--name", "First move")),
        games=40,
        depth=2,
        concurrency=2,
        sprt=Sprt(0.0, 200.0, 0.05, 0.05),
        maxmoves=60,
    )
    result = await play(settings)
    assert result.sprt is not None
    assert result.sprt.decision is SprtDecision.H1
    assert result.games < 40
    assert result.pairs[(0, 1)].losses == 0


async def test_round_robin_of_three() -> None:
    """The scripted engine always plays the first free square; on tic-tac-toe that wins with
    X (a1 b1 ... a3 completes the a3-c1 diagonal), so every engine wins its white games."""
    settings = MatchSettings(
        engines=(fake("--name", "A"), fake("--name", "B"), fake("--name", "C")),
        games=2,
        variant="tictactoe",
        depth=1,
        concurrency=3,
    )
    result = await play(settings)
    assert result.games == 6
    assert sorted(result.pairs) == [(0, 1), (0, 2), (1, 2)]
    for stats in result.pairs.values():
        assert (stats.wins, stats.draws, stats.losses) == (1, 0, 1)
        assert stats.white_points == 2.0
    assert [points for _, points, _ in result.standings()] == [2.0, 2.0, 2.0]


async def test_interrupt_stops_and_reports_the_finished_games() -> None:
    settings = MatchSettings(
        engines=(fake("--name", "A"), fake("--name", "B")),
        games=200,
        variant="tictactoe",
        depth=1,
    )
    match = Match(settings, progress=io.StringIO())
    task = asyncio.ensure_future(match.run())
    while match.result.games < 3:
        await asyncio.sleep(0.01)
    match.interrupt()
    result = await asyncio.wait_for(task, HANG)
    assert result.interrupted
    assert 3 <= result.games < 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "/nonexistent/engine", "--engine", "x", "--depth", "1"], "cannot start"),
        (["--engine", f"{sys.executable} {FAKE}", "--option", "Nope=1",
          "--engine", f"{sys.executable} {FAKE}", "--depth", "1"], "has no option 'Nope'"),
        (["--option", "Hash=1", "--engine", "x"], "must follow the --engine"),
        (["--engine", "a", "--engine", "b"], "give a limit"),
        (["--engine", "a", "--engine", "b", "--tc", "fast"], "time control"),
        (["--engine", "a", "--depth", "1"], "at least twice"),
        (["--engine", "a", "--engine", "b", "--depth", "1", "--sprt", "elo1=x"], "not a number"),
        (["--engine", "a", "--engine", "b", "--depth", "1", "--openings", "/nope.epd"],
         "cannot read"),
    ],
)  # fmt: skip
def test_command_line_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = brudno_main(["match", *args])
    except SystemExit as exit_:  # argparse's own errors
        code = int(exit_.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err


async def test_match_error_for_an_engine_without_the_variant() -> None:
    settings = MatchSettings(
        engines=(fake(), EngineConfig((sys.executable, "-c", "print('uciok')"))),
        games=1,
        variant="tictactoe",
        depth=1,
    )
    with pytest.raises(MatchError, match="UCI_Variant tictactoe"):
        await play(settings)


async def test_an_engine_that_cannot_be_restarted_ends_the_match(tmp_path: Path) -> None:
    """It starts once, crashes on its first move, and refuses to start again."""
    marker = tmp_path / "started"
    script = (
        f"if [ -e {marker} ]; then exit 1; fi; touch {marker}; "
        f"exec {sys.executable} {FAKE} --mode crash --at 1"
    )
    settings = MatchSettings(
        engines=(EngineConfig(("sh", "-c", script)), fake("--name", "Ok")),
        games=4,
        depth=1,
    )
    with pytest.raises(MatchError, match="cannot restart"):
        await play(settings)


async def test_an_option_the_engine_rejects_stops_the_match(
    brudno: list[str], tmp_path: Path
) -> None:
    """A mistyped EvalFile is answered with ``info string error``; the match must not go on
    comparing the shipped weights with themselves."""
    missing = tmp_path / "no-such-weights.json"
    settings = MatchSettings(
        engines=(
            EngineConfig(tuple(brudno), (("EvalFile", str(missing)),), "Tuned"),
            EngineConfig(tuple(brudno)),
        ),
        games=2,
        depth=1,
    )
    with pytest.raises(MatchError, match="Tuned rejected its options: error: EvalFile"):
        await play(settings)
