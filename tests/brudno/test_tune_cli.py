"""``brudno tune``: the quiet filter and label conversion, ``tune fit`` on a tiny data file
written here (its weights load and play through the chess adapter), and ``tune data`` end to end
against the installed Stockfish (a missing Stockfish fails the test, as the issue requires)."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

from brudno.arena.tuning_data import (
    DATA_DIR_ENV,
    TuneDataError,
    find_data_dir,
    is_quiet,
    label_to_target,
    read_data,
)
from brudno.arena.tuning_games import game_outcome
from engine.eval import LinearEvaluator
from engine.limits import Limits
from engine.search import Searcher
from games.chess_game import DEFAULT_WEIGHTS_PATH, ChessGame
from tests.support.paths import DATA

OPENINGS = DATA / "chess" / "openings"

# Quiet positions with labels that disagree with the shipped weights in a learnable way.
TINY = """\
# hand-made: FEN ; target
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 ; 0.46
rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2 ; 0.45
r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3 ; 0.55
4k3/8/8/8/8/8/4P3/4K3 w - - 0 1 ; 0.80
4k3/8/8/8/8/8/4P3/4K3 b - - 0 1 ; 0.25
4k3/8/8/3q4/8/8/8/4K3 w - - 0 1 ; 0.02
r3k3/8/8/8/8/8/8/4K3 b - - 0 1 ; 0.97
4k3/8/8/8/8/8/8/1NN1K3 w - - 0 1 ; 0.52
"""


def _tune(
    brudno: list[str],
    *args: str,
    timeout: float = 120,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``brudno tune ARGS`` run to its end; the caller checks the exit code and output."""
    return subprocess.run(
        [*brudno, "tune", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )


def test_quiet_filter() -> None:
    """Not quiet: in check; a pawn can take an undefended knight; a pawn can take a defended
    queen (victim worth more); a pawn can promote.  Quiet: the start, a defended-pawn trade."""
    assert is_quiet(chess.Board())
    assert not is_quiet(chess.Board("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1"))  # check
    assert not is_quiet(chess.Board("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1"))  # hanging knight
    assert not is_quiet(chess.Board("4k3/2p5/3q4/4P3/8/8/8/4K3 w - - 0 1"))  # pawn takes queen
    assert not is_quiet(chess.Board("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"))  # promotion
    assert is_quiet(chess.Board("4k3/8/2p5/3p4/4P3/8/8/4K3 w - - 0 1"))  # pawn for pawn


def test_labels_are_side_to_move_win_probabilities() -> None:
    pov = chess.engine.PovScore
    assert label_to_target(pov(chess.engine.Cp(0), chess.WHITE)) == 0.5
    assert label_to_target(pov(chess.engine.Cp(400), chess.WHITE)) == pytest.approx(10 / 11)
    assert label_to_target(pov(chess.engine.Cp(-400), chess.BLACK)) == pytest.approx(1 / 11)
    assert label_to_target(pov(chess.engine.Mate(3), chess.WHITE)) == 1.0
    assert label_to_target(pov(chess.engine.Mate(-2), chess.BLACK)) == 0.0


def test_read_data_skips_positions_that_are_not_quiet(tmp_path: Path) -> None:
    data = tmp_path / "data.epd"
    data.write_text(TINY + "4k3/8/8/8/8/8/4r3/4K3 w - - 0 1 ; 0.1\n", encoding="utf-8")
    samples, skipped = read_data(data)
    assert (len(samples), skipped) == (8, 1)
    features, target = samples[3]
    assert target == 0.8
    assert features["material.eg.P"] > 0  # white to move with the extra pawn


def test_fit_writes_weights_that_load_and_play(brudno: list[str], tmp_path: Path) -> None:
    data = tmp_path / "tiny.epd"
    data.write_text(TINY, encoding="utf-8")
    out = tmp_path / "weights.json"
    done = _tune(brudno, "fit", str(data), "--out", str(out), "--iterations", "40")
    assert done.returncode == 0, done.stderr
    errors = {
        key: float(line.rsplit(" ", 1)[1])
        for line in done.stdout.splitlines()
        for key in ("before", "after")
        if line.startswith(f"error {key}")
    }
    assert errors["after"] < errors["before"]
    assert "samples 8 (skipped 0 not quiet)" in done.stdout

    shipped = json.loads(DEFAULT_WEIGHTS_PATH.read_text(encoding="utf-8"))
    written = json.loads(out.read_text(encoding="utf-8"))
    assert list(written)[: len(shipped)] == list(shipped)  # same table, same order
    assert all(type(value) is int for value in written.values())
    assert written != shipped

    evaluator = LinearEvaluator.from_json(out)
    game = ChessGame(chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"), evaluator=evaluator)
    assert game.evaluate() == evaluator.evaluate(game.features())  # fast path is exact
    result = Searcher().search(game, Limits(depth=2))
    assert result.best is not None
    assert game.board.is_legal(chess.Move.from_uci(result.best))


def test_fit_rejects_a_bad_line(brudno: list[str], tmp_path: Path) -> None:
    data = tmp_path / "bad.epd"
    data.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ; 1.7\n", "utf-8")
    done = _tune(brudno, "fit", str(data), "--out", str(tmp_path / "w.json"), timeout=60)
    assert done.returncode == 2
    assert "bad.epd:1" in done.stderr and "outside [0, 1]" in done.stderr
    assert not (tmp_path / "w.json").exists()


def test_data_end_to_end_with_stockfish(brudno: list[str], tmp_path: Path) -> None:
    """Six positions at depth 1 from the shared EPD openings, twice: same file both times."""
    files = []
    for name in ("first.epd", "second.epd"):
        out = tmp_path / name
        games = str(OPENINGS / "noob_3moves_every30th.epd")
        done = _tune(
            brudno, "data", "--out", str(out), "--positions", "6", "--depth", "1", "--games", games
        )
        assert done.returncode == 0, done.stderr
        assert "positions 6" in done.stdout
        files.append(out.read_text(encoding="utf-8"))
    # Identical except the --out path recorded in the header.
    assert files[0].replace("first.epd", "second.epd") == files[1]
    header = [line for line in files[0].splitlines() if line.startswith("#")]
    assert any("Stockfish" in line and "depth 1" in line for line in header)
    assert any("brudno tune data" in line and "--positions 6" in line for line in header)
    samples, skipped = read_data(tmp_path / "first.epd")
    assert (len(samples), skipped) == (6, 0)
    assert all(0.0 <= target <= 1.0 for _, target in samples)


def test_fit_reports_a_holdout_and_accepts_regularization(
    brudno: list[str], tmp_path: Path
) -> None:
    data = tmp_path / "tiny.epd"
    data.write_text(TINY, encoding="utf-8")
    out = str(tmp_path / "w.json")
    fit = ["fit", str(data), "--out", out, "--iterations", "20", "--holdout", "4", "--l2", "1e-8"]
    done = _tune(brudno, *fit, "--l2-for", "king.mg.danger.*=0", "--l2-for", "psqt.*=1e-6")
    assert done.returncode == 0, done.stderr
    assert "samples 6 (skipped 0 not quiet)" in done.stdout  # 8 minus every 4th
    assert "holdout 2 error before" in done.stdout


@pytest.mark.parametrize("value", ["1e-8", "psqt.*=", "psqt.*=-1", "=1e-8", "psqt.*=x"])
def test_fit_refuses_a_malformed_l2_for(brudno: list[str], tmp_path: Path, value: str) -> None:
    data = tmp_path / "tiny.epd"
    data.write_text(TINY, encoding="utf-8")
    done = _tune(brudno, "fit", str(data), "--out", str(tmp_path / "w.json"), "--l2-for", value)
    assert done.returncode == 2
    assert "PATTERN=LAMBDA" in done.stderr


def test_fit_reports_the_error_on_a_validation_file(brudno: list[str], tmp_path: Path) -> None:
    """``--validate`` scores the start and the fitted weights on another file: here the
    fitted file itself, on which the fit must have lowered the error."""
    data = tmp_path / "tiny.epd"
    data.write_text(TINY, encoding="utf-8")
    fit = ["fit", str(data), "--out", str(tmp_path / "w.json")]
    done = _tune(brudno, *fit, "--iterations", "40", "--validate", str(data))
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("validation "))
    words = line.split()
    assert words[:4] == ["validation", "8", "error", "before"]
    assert float(words[6]) < float(words[4])


def test_fit_keeps_frozen_weight_groups(brudno: list[str], tmp_path: Path) -> None:
    data = tmp_path / "tiny.epd"
    data.write_text(TINY, encoding="utf-8")
    out = tmp_path / "w.json"
    freeze = ["--freeze", "psqt.", "--freeze", "material.eg."]
    done = _tune(brudno, "fit", str(data), "--out", str(out), "--iterations", "50", *freeze)
    assert done.returncode == 0, done.stderr
    start = json.loads(DEFAULT_WEIGHTS_PATH.read_text(encoding="utf-8"))
    fitted = json.loads(out.read_text(encoding="utf-8"))
    frozen = [name for name in start if name.startswith(("psqt.", "material.eg."))]
    assert frozen and all(fitted[name] == start[name] for name in frozen)
    assert any(fitted[name] != start[name] for name in start if name not in frozen)


# -- where the shared data is found (tune data without --games) ---------------------------


def make_data_dir(root: Path) -> Path:
    """A shared data directory holding one small opening file."""
    openings = root / "chess" / "openings"
    openings.mkdir(parents=True)
    source = (OPENINGS / "noob_3moves_every30th.epd").read_text(encoding="utf-8")
    (openings / "few.epd").write_text("\n".join(source.splitlines()[:20]) + "\n", "utf-8")
    return root


def test_find_data_dir_order(tmp_path: Path) -> None:
    """--data-dir, then $BRUDNO_DATA_DIR, then ../shared/data from the current directory,
    then beside a source checkout; an installed package's own location never counts."""
    explicit = make_data_dir(tmp_path / "explicit")
    env = make_data_dir(tmp_path / "env")
    work = tmp_path / "work"
    beside = make_data_dir(work / "shared" / "data")
    cwd = work / "repo"
    cwd.mkdir()
    checkout = tmp_path / "checkout" / "brudno"
    checkout.mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("", encoding="utf-8")
    near_checkout = make_data_dir(tmp_path / "checkout" / "shared" / "data")
    environ = {DATA_DIR_ENV: str(env)}

    assert find_data_dir(explicit, environ=environ, cwd=cwd, source_root=checkout) == explicit
    assert find_data_dir(None, environ=environ, cwd=cwd, source_root=checkout) == env
    assert find_data_dir(None, environ={}, cwd=cwd, source_root=checkout) == beside.resolve()
    assert find_data_dir(None, environ={}, cwd=tmp_path, source_root=checkout) == (
        near_checkout.resolve()
    )
    site_packages = tmp_path / "lib" / "site-packages"  # no pyproject.toml: not a checkout
    site_packages.mkdir(parents=True)
    make_data_dir(tmp_path / "lib" / "shared" / "data")
    with pytest.raises(TuneDataError, match="--data-dir DIR"):
        find_data_dir(None, environ={}, cwd=tmp_path, source_root=site_packages)


def test_a_named_data_dir_that_is_wrong_is_an_error_not_a_guess(tmp_path: Path) -> None:
    beside = make_data_dir(tmp_path / "shared" / "data")
    cwd = tmp_path / "repo"
    cwd.mkdir()
    assert find_data_dir(None, environ={}, cwd=cwd, source_root=None) == beside.resolve()
    with pytest.raises(TuneDataError, match=r"--data-dir .*missing: no chess/openings"):
        find_data_dir(tmp_path / "missing", environ={}, cwd=cwd, source_root=None)
    with pytest.raises(TuneDataError, match=r"\$BRUDNO_DATA_DIR .*nope: no chess/openings"):
        find_data_dir(None, environ={DATA_DIR_ENV: "nope"}, cwd=cwd, source_root=None)


def test_data_with_a_missing_data_dir_says_so(brudno: list[str], tmp_path: Path) -> None:
    out = str(tmp_path / "d.epd")
    done = _tune(brudno, "data", "--out", out, "--data-dir", "nowhere", timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "brudno tune: --data-dir nowhere: no chess/openings directory in it\n"
    assert not (tmp_path / "d.epd").exists()


@pytest.mark.parametrize("how", ["--data-dir", "environment", "current directory"])
def test_data_finds_the_shared_openings(brudno: list[str], tmp_path: Path, how: str) -> None:
    """Each way of naming the data, through the real command (labels from Stockfish)."""
    data = make_data_dir(tmp_path / "shared" / "data")
    cwd = tmp_path / "repo"
    cwd.mkdir()
    out = tmp_path / "d.epd"
    command = ["data", "--out", str(out), "--positions", "3", "--depth", "1"]
    command += ["--plies", "0"]  # the openings themselves: shows which file was read
    env = {key: value for key, value in os.environ.items() if key != DATA_DIR_ENV}
    if how == "--data-dir":
        command += ["--data-dir", str(data)]
    elif how == "environment":
        env[DATA_DIR_ENV] = str(data)
    done = _tune(brudno, *command, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    assert "positions 3" in done.stdout
    samples, _ = read_data(out)
    assert len(samples) == 3
    openings = (data / "chess" / "openings" / "few.epd").read_text(encoding="utf-8")
    boards = {" ".join(line.split()[:4]) for line in openings.splitlines()}
    written = [line for line in out.read_text(encoding="utf-8").splitlines() if line[0] != "#"]
    assert {" ".join(line.split()[:4]) for line in written} <= boards


# Two finished games and one unfinished: 1. e4 e5 2. Nf3 Nc6 (White won), the same opening
# again (a draw: its positions are already known and are not repeated), and an unfinished
# game (no result to learn from: skipped).
PLAYED = """\
[Event "a"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 1-0

[Event "b"]
[Result "1/2-1/2"]

1. e4 e5 2. Nf3 Nc6 3. Bc4 1/2-1/2

[Event "c"]
[Result "*"]

1. d4 d5 *
"""


def _played_data(brudno: list[str], tmp_path: Path, *extra: str) -> tuple[int, str]:
    games = tmp_path / "games.pgn"
    games.write_text(PLAYED, encoding="utf-8")
    out = tmp_path / "played.epd"
    out.unlink(missing_ok=True)
    done = _tune(brudno, "data", "--out", str(out), "--played", str(games), *extra)
    return done.returncode, (out.read_text(encoding="utf-8") if out.exists() else done.stderr)


def test_played_positions_labelled_by_results_alone(brudno: list[str], tmp_path: Path) -> None:
    """Every position after a move of a finished game, once, with the result from the side
    to move's view; ``--result-weight 1`` runs no engine (a missing one is no error)."""
    code, text = _played_data(
        brudno, tmp_path, "--result-weight", "1", "--stockfish", "/nonexistent"
    )
    assert code == 0, text
    labels = {
        " ".join(line.split(" ; ")[0].split()[:4]): float(line.split(" ; ")[1])
        for line in text.splitlines()
        if not line.startswith("#")
    }
    board = chess.Board()
    expected = {}
    for san, white_score in (("e4", 1), ("e5", 1), ("Nf3", 1), ("Nc6", 1), ("Bc4", 0.5)):
        board.push_san(san)
        expected[board.epd()] = white_score if board.turn == chess.WHITE else 1 - white_score
    assert labels == expected
    assert "--result-weight 1" in text and "game's result" in text
    assert "--plies" not in text  # no random plies are added to played games


def test_played_positions_blend_stockfish_and_result(brudno: list[str], tmp_path: Path) -> None:
    code, text = _played_data(brudno, tmp_path, "--depth", "1", "--result-weight", "0.5")
    assert code == 0, text
    targets = [float(line.split(" ; ")[1]) for line in text.splitlines() if line[0] != "#"]
    assert len(targets) == 5
    assert "0.5·engine + 0.5·result" in text
    # Black to move after 1. e4 in a game White won: half of the label is that loss.
    after_e4 = next(
        line for line in text.splitlines() if line.startswith("rnbqkbnr/pppppppp/8/8/4P3")
    )
    assert float(after_e4.split(" ; ")[1]) < 0.5 + 0.01
    code, text = _played_data(brudno, tmp_path, "--result-weight", "1.5")
    assert code == 2 and "must be from 0 to 1" in text


# A game that recorded Stockfish's evaluations ([%eval], White's view, where each position
# stands), but not of every position: after 2. Nf3 it recorded none.
EVALUATED = """\
[Event "e"]
[Result "0-1"]

{ [%eval 0.20,8] } 1. e4 { [%eval 0.30,8] } 1... e5 { [%eval -1.00,8] } 2. Nf3 2... Nc6
{ [%eval #-3] } 0-1
"""


def test_played_positions_labelled_by_the_games_own_evaluations(
    brudno: list[str], tmp_path: Path
) -> None:
    """``--game-evals``: the engine's part of each label is the score the game recorded for
    that position (side to move's view), blended with the result; no engine runs, and a
    position the game did not evaluate is left out."""
    games = tmp_path / "evaluated.pgn"
    games.write_text(EVALUATED, encoding="utf-8")
    out = tmp_path / "evaluated.epd"
    options = ["--game-evals", "--result-weight", "0.25", "--stockfish", "/nonexistent"]
    done = _tune(brudno, "data", "--out", str(out), "--played", str(games), *options)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    labels = {
        " ".join(line.split(" ; ")[0].split()[:4]): float(line.split(" ; ")[1])
        for line in text.splitlines()
        if not line.startswith("#")
    }

    def win(cp: float) -> float:
        return 1.0 / (1.0 + math.pow(10.0, -cp / 400.0))

    board = chess.Board()
    expected = {}
    # (move, White's recorded score after it or None, Black won: White's result 0)
    for san, white_cp in (("e4", 30), ("e5", -100), ("Nf3", None), ("Nc6", -100_000)):
        board.push_san(san)
        if white_cp is None:
            continue
        mover = win(white_cp) if board.turn == chess.WHITE else 1.0 - win(white_cp)
        result = 0.0 if board.turn == chess.WHITE else 1.0
        expected[board.epd()] = round(0.75 * mover + 0.25 * result, 4)
    assert labels == pytest.approx(expected, abs=1e-4)
    assert "--game-evals" in text and "recorded evaluations" in text
    no_games = _tune(brudno, "data", "--out", str(out), "--game-evals")
    assert no_games.returncode == 2 and "need played games" in no_games.stderr


# -- tune games: Stockfish self-play games for the data ---------------------------------------
def _games(brudno: list[str], tmp_path: Path, starts: str, *extra: str) -> tuple[str, str]:
    openings = tmp_path / "starts.epd"
    openings.write_text(starts, encoding="utf-8")
    out = tmp_path / "games.pgn"
    done = _tune(
        brudno, "games", "--out", str(out), "--openings", str(openings), *extra, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8"), done.stdout


def _read_games(text: str) -> list[chess.pgn.Game]:
    handle = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(handle)) is not None:
        assert not game.errors
        games.append(game)
    return games


def test_games_are_legal_finished_and_start_where_the_openings_do(
    brudno: list[str], tmp_path: Path
) -> None:
    """Each game starts at an opening plus at most ``--plies`` quiet plies, its moves are legal,
    and its result is what the rules or the adjudication said; a second run appends."""
    starts = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n"
    args = ("--count", "3", "--nodes", "300", "--plies", "2", "--seed", "7")
    text, stdout = _games(brudno, tmp_path, starts, *args)
    games = _read_games(text)
    assert len(games) == 3
    wins = {"1-0": 0, "1/2-1/2": 0, "0-1": 0}
    opening = chess.Board(starts.strip() + " 0 1")
    for game in games:
        start = game.board()
        assert game.headers["SetUp"] == "1"
        assert len(start.move_stack) == 0
        # The start is the opening or reachable from it by two quiet plies.
        reachable = {opening.board_fen()}
        for first in opening.legal_moves:
            opening.push(first)
            reachable.add(opening.board_fen())
            reachable.update(_after(opening, move) for move in opening.legal_moves)
            opening.pop()
        assert start.board_fen() in reachable
        end = game.end().board()
        result = game.headers["Result"]
        wins[result] += 1
        termination = game.headers["Termination"]
        if termination.startswith("adjudicated"):
            assert (result == "1/2-1/2") == (termination == "adjudicated draw")
        else:
            outcome = end.outcome(claim_draw=True)
            assert outcome is not None and outcome.result() == result
            assert outcome.termination.name.lower() == termination
        assert "brudno tune games" in game.headers["Annotator"]
    assert stdout.startswith(
        f"games 3 (+{wins['1-0']} ={wins['1/2-1/2']} -{wins['0-1']} for White), plies "
    )
    text, _ = _games(brudno, tmp_path, starts, *args)
    again = _read_games(text)
    assert len(again) == 6
    # The same seed gives the same starts, and Stockfish at a node budget the same games.
    assert [str(g) for g in again[3:]] == [str(g) for g in games]


def _after(board: chess.Board, move: chess.Move) -> str:
    board.push(move)
    fen = board.board_fen()
    board.pop()
    return fen


def test_games_adjudicate_a_won_position(brudno: list[str], tmp_path: Path) -> None:
    """Three queens against a bare king: White wins, by mate or once both sides agree."""
    text, _ = _games(
        brudno, tmp_path, "4k3/8/8/8/8/8/8/QQQ1K3 w - -\n", "--count", "1", "--plies", "0"
    )
    (game,) = _read_games(text)
    assert game.headers["Result"] == "1-0"
    assert game.headers["Termination"] in {"checkmate", "adjudicated win"}
    # Stockfish's score of every position it moved from stands beside that position, from
    # White's view (winning throughout); the final position, never searched, has none.
    nodes = [game, *game.mainline()]
    scores = [node.eval() for node in nodes[:-1]]
    assert all(score is not None and score.white() > chess.engine.Cp(500) for score in scores)
    assert all(node.eval_depth() for node in nodes[:-1])
    assert nodes[-1].eval() is None


def test_games_refuse_openings_with_no_usable_start(brudno: list[str], tmp_path: Path) -> None:
    openings = tmp_path / "over.epd"
    openings.write_text("8/8/4k3/8/8/3K4/8/8 w - -\n", encoding="utf-8")  # bare kings
    done = _tune(brudno, "games", "--out", str(tmp_path / "g.pgn"), "--openings", str(openings))
    assert done.returncode == 2
    assert done.stderr.startswith("brudno tune: no usable start in 1000 tries from ")


def test_games_end_where_a_draw_can_be_claimed_on_the_board() -> None:
    """The cheap end-of-game test agrees with python-chess's claim for the position itself:
    mate, a third repetition, the fifty-move rule; a second repetition plays on."""
    mate = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    outcome = game_outcome(mate)
    assert outcome is not None and outcome.winner == chess.WHITE
    board = chess.Board()
    for move in ["g1f3", "g8f6", "f3g1", "f6g8"]:
        board.push_uci(move)
    assert game_outcome(board) is None  # the start seen twice
    for move in ["g1f3", "g8f6", "f3g1", "f6g8"]:
        board.push_uci(move)
    outcome = game_outcome(board)
    assert outcome is not None and outcome.termination == chess.Termination.THREEFOLD_REPETITION
    assert outcome.result() == "1/2-1/2"
    fifty = chess.Board("4k3/8/8/8/8/8/4R3/4K3 w - - 100 80")
    outcome = game_outcome(fifty)
    assert outcome is not None and outcome.termination == chess.Termination.FIFTY_MOVES
    assert game_outcome(chess.Board("4k3/8/8/8/8/8/4R3/4K3 w - - 99 80")) is None
