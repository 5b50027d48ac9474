"""`brudno epd`: reading suites (bm/am in SAN, alternatives), judging moves, and running a
suite against Brudno and against Stockfish through the command line's entry point."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import chess
import pytest

from brudno.arena.epd import EpdError, load_suite
from brudno.cli import main as brudno_main


def stockfish() -> str:
    found = shutil.which("stockfish") or (
        "/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None
    )
    if found is None:
        pytest.fail("stockfish is not installed (apt-get install stockfish; scripts/test does it)")
    return found


def test_win_at_chess_suite_reads_with_alternatives(data_dir: Path) -> None:
    positions, skipped = load_suite(data_dir / "chess" / "suites" / "wacnew.epd")
    assert len(positions) == 300
    assert skipped == 0
    by_name = {p.name: p for p in positions}
    first = by_name["WAC.001"]
    assert first.line == 1
    assert first.wanted() == "bm Qg6"
    assert first.judge(first.board.parse_san("Qg6"))
    assert not first.judge(first.board.parse_san("Qh4"))
    assert not first.judge(None)
    king = by_name["WAC.041"]  # 1k6/5RP1/1P6/1K6/6r1/8/8/8 w - - bm Ka5 Kc5 b7
    assert king.wanted() == "bm Ka5 Kc5 b7"
    for san in ("Ka5", "Kc5", "b7"):
        assert king.judge(king.board.parse_san(san))
    assert not king.judge(king.board.parse_san("Rf8+"))
    rook = by_name["WAC.274"]  # am Rd6; bm Rb6 Rg5+
    assert rook.wanted() == "am Rd6; bm Rb6 Rg5+"
    assert rook.judge(rook.board.parse_san("Rg5+"))
    assert not rook.judge(rook.board.parse_san("Rd6"))
    assert not rook.judge(rook.board.parse_san("Rh6"))


def test_avoid_move_only_positions(tmp_path: Path) -> None:
    suite = tmp_path / "am.epd"
    suite.write_text(
        "# comment\n"
        '6k1/5ppp/8/8/8/8/8/R5K1 w - - am Ra8#; id "avoid";\n'
        "\n"
        '6k1/5ppp/8/8/8/8/8/R5K1 w - - id "nothing to check";\n'
    )
    positions, skipped = load_suite(suite)
    assert skipped == 1
    (only,) = positions
    assert only.name == "avoid"
    assert only.line == 2
    assert only.wanted() == "am Ra8#"
    assert only.judge(only.board.parse_san("Kf1"))
    assert not only.judge(only.board.parse_san("Ra8#"))


def test_bad_suites() -> None:
    with pytest.raises(EpdError, match="cannot read"):
        load_suite("/nonexistent/suite.epd")


@pytest.fixture
def mate_suite(data_dir: Path, tmp_path: Path) -> Path:
    """The eight mate-in-one positions with every mating move as bm, plus one position that
    marks its only mate as the move to avoid (an engine that finds it must fail there)."""
    lines = []
    for number, fen in enumerate(
        (data_dir / "chess" / "mates" / "mate1.fen").read_text().split("\n")
    ):
        if not fen.strip():
            continue
        board = chess.Board(fen)
        mates = []
        for move in board.legal_moves:
            board.push(move)
            if board.is_checkmate():
                mates.append(move)
            board.pop()
        assert mates, fen
        sans = " ".join(board.san(m) for m in mates)
        lines.append(f'{board.epd()} bm {sans}; id "mate1.{number + 1}";')
    lines.append('6k1/5ppp/8/8/8/8/8/R5K1 w - - am Ra8#; id "trap";')
    path = tmp_path / "mates.epd"
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def run_epd(capsys: pytest.CaptureFixture[str], *args: str) -> Done:
    """``brudno epd ARGS`` in this process (the engines it starts are real processes)."""
    try:
        code = brudno_main(["epd", *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return Done(code, out, err)


def test_brudno_solves_mates_in_one(mate_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The default engine is Brudno itself (``python -m brudno``)."""
    done = run_epd(capsys, str(mate_suite), "--depth", "2", "--verbose")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "solved 8/9"
    assert re.fullmatch(r"Time used: \d+\.\d s \(searching \d+\.\d s\)", lines[-2])
    assert lines[-3].startswith("Solved by time: ")  # how many by 0.1 s, ... varies
    assert lines[-3].endswith(" 8 in all")
    assert lines[-4].startswith("Engine: Brudno ")
    assert lines[-5] == "Suite: mates.epd, 9 positions; depth 2"
    per_position = lines[:9]
    assert [line.split()[1] for line in per_position] == ["ok"] * 8 + ["FAIL"]
    assert per_position[0].startswith("1/9 ok   mate1.1: ")
    assert per_position[8].startswith("9/9 FAIL trap: Ra8# (am Ra8#); depth ")


def test_any_uci_engine_with_a_node_limit(
    mate_suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run_epd(
        capsys, str(mate_suite), "--engine", stockfish(), "--nodes", "5000", "--count", "4",
        "--start", "2", "--option", "Hash=8", "--concurrency", "2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "solved 4/4"
    assert lines[0] == "Suite: mates.epd, 4 positions; nodes 5000"
    assert lines[1].startswith("Engine: Stockfish")
    assert not any(line.startswith(("1/4", "2/4")) for line in lines)  # not verbose


def test_command_line_errors(
    mate_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = run_epd(capsys, str(tmp_path / "missing.epd"))
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr
    out_of_range = run_epd(capsys, str(mate_suite), "--start", "50")
    assert out_of_range.returncode == 2
    assert "no positions" in out_of_range.stderr
    no_engine = run_epd(capsys, str(mate_suite), "--engine", "/nonexistent/engine", "--depth", "1")
    assert no_engine.returncode == 2
    assert "cannot start" in no_engine.stderr
