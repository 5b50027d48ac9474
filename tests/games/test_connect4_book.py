"""Connect Four's opening book: its scores against the solver and Pascal Pons' test sets, the
mirror folding, the file format, and the build script's ``--check``.

Books from the empty board cost a full solve of the game, so these tests build books rooted a
few plies before a test-set position (the builder's ``root``), which exercise the same code.
"""

from __future__ import annotations

import random
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from games.connect4.board import Connect4
from games.connect4.book import BookFormatError, Connect4Book, book_key, mirror
from games.connect4.book_builder import build_book, position_of, positions_by_ply
from games.connect4.solver import Connect4Solver
from tests.support.paths import REPO
from tests.support.pons import pons_cases

SCRIPT = REPO / "scripts" / "build_connect4_book.py"


def mirrored(moves: str) -> str:
    return "".join(str(8 - int(c)) for c in moves)


@pytest.mark.parametrize(("name", "index", "back"), [("Test_L3_R1", 1, 4), ("Test_L2_R1", 1, 3)])
def test_book_scores_equal_pons_and_the_solver(name: str, index: int, back: int) -> None:
    """A book rooted ``back`` plies before a test-set position holds that position with Pons'
    score (and its mirror image too), and a seeded sample of its positions with the solver's."""
    moves, expected = pons_cases(name)[index]
    root = Connect4.from_moves(moves[:-back])
    book, stats = build_book(len(moves), root=root)
    assert stats.entries == len(book) > 1 and stats.leaves > 0
    assert book.score(Connect4.from_moves(moves)) == expected
    assert book.score(Connect4.from_moves(mirrored(moves))) == expected
    positions = [
        (current, mask)
        for level in positions_by_ply(root, len(moves))
        for current, mask in level.values()
    ]
    solver = Connect4Solver()
    for current, mask in random.Random(48).sample(positions, min(40, len(positions))):
        position = position_of(current, mask)
        solver.reset()
        assert book.score(position) == solver.score(position), position.fen()


def test_every_pons_position_within_a_books_depth_is_in_it() -> None:
    """Pons' positions that extend a book's root within its depth are all in it, scored as
    the set scores them: the end-game set's positions behind a common prefix."""
    cases = pons_cases("Test_L3_R1")
    moves, _ = cases[5]
    prefix = moves[:-3]
    root = Connect4.from_moves(prefix)
    book, _ = build_book(len(moves), root=root)
    inside = [(m, s) for m, s in cases if m.startswith(prefix) and len(m) <= len(moves)]
    assert inside
    for case_moves, score in inside:
        assert book.score(Connect4.from_moves(case_moves)) == score, case_moves


def test_mirror_images_share_one_entry() -> None:
    position = Connect4.from_moves("1121")
    image = Connect4.from_moves(mirrored("1121"))
    assert mirror(mirror(position.key())) == position.key()
    assert mirror(position.key()) == image.key()
    assert book_key(position.current, position.mask) == book_key(image.current, image.mask)
    root = Connect4.from_moves(pons_cases("Test_L3_R1")[0][0][:-3])
    levels = positions_by_ply(root, root.ply + 3)
    unfolded = set()
    for level in levels:
        for current, mask in level.values():
            unfolded.add(current + mask)
            unfolded.add(mirror(current + mask))
    book, _ = build_book(root.ply + 3, root=root)
    assert len(book) == sum(len(level) for level in levels) < len(unfolded)


def test_best_moves_are_the_solvers() -> None:
    """Where the book knows every child, its best columns are exactly the solver's."""
    moves, _ = pons_cases("Test_L2_R1")[7]
    root = Connect4.from_moves(moves[:-2])
    book, _ = build_book(root.ply + 2, root=root)
    assert book.best_moves(root) == Connect4Solver().solve_position(root).best_moves
    assert book.move_scores(root) == Connect4Solver().move_scores(root)
    leaf = Connect4.from_moves(moves)
    assert book.score(leaf) is not None and book.move_scores(leaf) is None


def test_file_round_trip_and_damage(tmp_path: Path) -> None:
    moves, _ = pons_cases("Test_L3_R1")[2]
    book, _ = build_book(len(moves), root=Connect4.from_moves(moves[:-3]))
    data = book.to_bytes()
    assert len(data) == 24 + 9 * len(book)
    path = tmp_path / "book.bin"
    path.write_bytes(data)
    loaded = Connect4Book.load(path)
    assert loaded.depth == book.depth and loaded.items() == book.items()
    damaged = bytearray(data)
    damaged[-1] ^= 1
    with pytest.raises(BookFormatError, match="checksum"):
        Connect4Book.from_bytes(bytes(damaged))
    with pytest.raises(BookFormatError, match="magic"):
        Connect4Book.from_bytes(b"NOTABOOK" + data[8:])
    with pytest.raises(BookFormatError, match="payload bytes"):
        Connect4Book.from_bytes(data[:-1])
    with pytest.raises(ValueError, match="array"):
        Connect4Book(3, array("Q", [1, 2]), array("b", [0]))


def test_build_is_deterministic_and_the_script_checks_its_file(tmp_path: Path) -> None:
    moves, _ = pons_cases("Test_L3_R1")[1]
    root = moves[:-3]
    depth = str(len(moves))
    out = tmp_path / "book.bin"

    def script(*extra: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(SCRIPT), depth, "--root", root, "--output", str(out)]
        return subprocess.run([*command, *extra], capture_output=True, text=True, check=False)

    built = script()
    assert built.returncode == 0, built.stderr
    assert " entries, " in built.stdout and built.stdout.count(" s") >= 1
    book, _ = build_book(len(moves), root=Connect4.from_moves(root))
    assert out.read_bytes() == book.to_bytes()
    assert script("--check").returncode == 0
    out.write_bytes(out.read_bytes()[:-1] + b"\x7f")
    checked = script("--check")
    assert checked.returncode == 1 and "differs" in checked.stderr
    estimated = script("--estimate", "3", "--max-nodes", "100000")
    assert estimated.returncode == 0 and "sampled leaves solved" in estimated.stdout
    counted = script("--count")
    levels = positions_by_ply(Connect4.from_moves(root), len(moves))
    assert counted.stdout.split(": ")[1].split(" (")[0].split() == [str(len(x)) for x in levels]
