"""``brudno book build`` and the book in play: the real command builds a book from the shared
openings, python-chess reads it back, and the real ``brudno`` engine, driven by python-chess,
plays book moves (announced with ``info string book move``) and searches once out of book."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.engine
import chess.polyglot
import pytest

OPENINGS = Path("chess") / "openings" / "8moves_v3_every7th.pgn"
BOOK_LINE = re.compile(r"^book move ([a-h][1-8][a-h][1-8][nbrq]?) \(weight (\d+) of (\d+)\)$")


def book_build(brudno: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*brudno, "book", "build", *args], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def book(brudno: list[str], data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared openings as a book, with the default filters (16 plies, 2 games)."""
    path = tmp_path_factory.mktemp("book") / "openings.bin"
    done = book_build(brudno, str(data_dir / OPENINGS), "--out", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "games read: 4958",
        "positions counted: 79328 (30465 distinct, 36642 distinct moves)",
        "entries written: 6555 (4792 positions)",
    ]
    assert lines[3].startswith(f"wrote {path} (104880 bytes)")
    return path


@pytest.fixture
def engine(brudno: list[str], book: Path) -> Iterator[chess.engine.SimpleEngine]:
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as eng:
        eng.configure({"OwnBook": True, "BookFile": str(book)})
        yield eng


def test_python_chess_reads_the_built_book_back(book: Path) -> None:
    with chess.polyglot.open_reader(book) as reader:
        entries = list(reader)
        first = {entry.move.uci(): entry.weight for entry in reader.find_all(chess.Board())}
    assert len(entries) == 6555 == book.stat().st_size // 16
    assert [entry.key for entry in entries] == sorted(entry.key for entry in entries)
    assert all(entry.weight > 0 and entry.learn == 0 for entry in entries)
    assert first == {
        "d2d4": 1816,
        "e2e4": 1762,
        "c2c4": 622,
        "g1f3": 608,
        "g2g3": 91,
        "b2b3": 38,
        "f2f4": 15,
        "e2e3": 3,
        "b2b4": 2,
    }


def test_the_engine_plays_book_moves_then_searches(
    engine: chess.engine.SimpleEngine, book: Path
) -> None:
    board = chess.Board()
    with chess.polyglot.open_reader(book) as reader:
        for _ in range(16):
            result = engine.play(board, chess.engine.Limit(time=2.0), info=chess.engine.INFO_ALL)
            said = BOOK_LINE.match(str(result.info.get("string", "")))
            if said is None:
                break
            assert result.move is not None and result.move.uci() == said[1]
            weights = {entry.move: entry.weight for entry in reader.find_all(board)}
            assert weights[result.move] == int(said[2])
            assert sum(weights.values()) == int(said[3])
            assert "depth" not in result.info  # answered without a search
            board.push(result.move)
        else:
            pytest.fail("still in book after 16 plies")
    assert board.ply() >= 2  # the book knows at least the first move and a reply
    assert "depth" in result.info  # out of book: searched
    assert result.move is not None and result.move in board.legal_moves


def test_the_same_position_gets_the_same_book_move(
    engine: chess.engine.SimpleEngine, brudno: list[str], book: Path
) -> None:
    board = chess.Board()
    board.push_uci("e2e4")
    first = engine.play(board, chess.engine.Limit(time=2.0)).move
    assert engine.play(board, chess.engine.Limit(time=2.0)).move == first
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as other:
        other.configure({"OwnBook": True, "BookFile": str(book)})
        assert other.play(board, chess.engine.Limit(time=2.0)).move == first


def test_book_build_errors(brudno: list[str], data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "book.bin"
    missing = book_build(brudno, str(tmp_path / "missing.pgn"), "--out", str(out))
    assert missing.returncode == 2
    assert "No such file or directory" in missing.stderr
    empty = book_build(
        brudno, str(data_dir / OPENINGS), "--out", str(out), "--max-games", "3", "--min-count", "9"
    )
    assert empty.returncode == 1
    assert empty.stdout.startswith("games read: 3\n")
    assert "nothing written" in empty.stderr
    assert not out.exists()
    bad = book_build(brudno, str(data_dir / OPENINGS), "--out", str(out), "--min-score", "101")
    assert bad.returncode == 2 and "must be within 0..100" in bad.stderr
