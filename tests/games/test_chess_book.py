"""Opening a Polyglot book and drawing moves from it (games.chess_game.book)."""

from __future__ import annotations

import os
import random
import struct
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import chess
import chess.polyglot
import pytest

from games.chess_game import from_fen
from games.chess_game.book import BookError, BookMove, OpeningBook
from games.registry import get_variant

START = chess.STARTING_FEN
CASTLE_FEN = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"


def raw(move: str) -> int:
    """Polyglot's move encoding (castling as king takes rook)."""
    squares = [chess.parse_square(move[:2]), chess.parse_square(move[2:4])]
    promotion = " nbrq".index(move[4]) if len(move) > 4 else 0
    return squares[1] | squares[0] << 6 | promotion << 12


def key(fen: str) -> int:
    return chess.polyglot.zobrist_hash(chess.Board(fen))


def write(path: Path, entries: list[tuple[int, str, int]]) -> Path:
    """A book of (key, move, weight) entries, sorted by key as the format requires."""
    path.write_bytes(
        b"".join(
            struct.pack(">QHHI", k, raw(move), weight, 0) for k, move, weight in sorted(entries)
        )
    )
    return path


@pytest.fixture
def start_book(tmp_path: Path) -> Iterator[OpeningBook]:
    book = OpeningBook.open(
        write(
            tmp_path / "start.bin",
            [
                (key(START), "e2e4", 6),
                (key(START), "d2d4", 3),
                (key(START), "c2c4", 1),
                (key(START), "e2e5", 500),  # illegal: never played, not in the total
                (key(START), "g1f3", 0),  # weight 0: deleted
                (key(CASTLE_FEN), "e1h1", 1),
            ],
        )
    )
    yield book
    book.close()


def test_a_book_opens_and_says_what_it_holds(start_book: OpeningBook, tmp_path: Path) -> None:
    assert start_book.entries == 6
    assert start_book.summary() == f"BookFile: 6 entries from {tmp_path / 'start.bin'}"
    one = OpeningBook.open(write(tmp_path / "one.bin", [(1, "e2e4", 1)]), shown_as="one.bin")
    assert one.summary() == "BookFile: 1 entry from one.bin"
    one.close()


def test_the_draw_is_the_same_for_the_same_position_and_seed(
    start_book: OpeningBook, tmp_path: Path
) -> None:
    game = from_fen(START)
    first = [start_book.choose(game, seed) for seed in range(50)]
    assert [start_book.choose(game, seed) for seed in range(50)] == first
    again = OpeningBook.open(tmp_path / "start.bin")
    assert [again.choose(from_fen(START), seed) for seed in range(50)] == first
    again.close()
    assert len({choice.move for choice in first if choice is not None}) == 3


def test_the_draw_follows_the_weights(start_book: OpeningBook) -> None:
    game = from_fen(START)
    drawn: Counter[str] = Counter()
    for seed in range(3000):
        choice = start_book.choose(game, seed)
        assert choice is not None
        assert (choice.total, choice.candidates) == (10, 3)
        assert choice.weight == {"e2e4": 6, "d2d4": 3, "c2c4": 1}[choice.move]
        drawn[choice.move] += 1
    assert set(drawn) == {"e2e4", "d2d4", "c2c4"}  # never the illegal or the deleted move
    for move, share in (("e2e4", 0.6), ("d2d4", 0.3), ("c2c4", 0.1)):
        assert abs(drawn[move] / 3000 - share) < 0.04  # about 4 standard deviations


def test_no_move_for_positions_the_book_lacks_or_other_games(start_book: OpeningBook) -> None:
    assert start_book.choose(from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1")) is None
    assert start_book.choose(get_variant("tictactoe").new()) is None


def test_castling_comes_back_in_the_notation_of_the_game(start_book: OpeningBook) -> None:
    assert start_book.choose(from_fen(CASTLE_FEN)) == BookMove("e1g1", 1, 1, 1)
    assert start_book.choose(from_fen(CASTLE_FEN, True)) == BookMove("e1h1", 1, 1, 1)


def test_a_book_with_only_unplayable_moves_gives_none(tmp_path: Path) -> None:
    book = OpeningBook.open(
        write(tmp_path / "bad.bin", [(key(START), "e2e5", 9), (key(START), "e2e4", 0)])
    )
    assert book.choose(from_fen(START)) is None
    book.close()


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.bin"
    os.mkfifo(path)  # opening it for reading would block until a writer came
    return path


def _garbage(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.bin"
    path.write_bytes(random.Random(7).randbytes(16 * 64))
    return path


def _descending(tmp_path: Path) -> Path:
    path = tmp_path / "descending.bin"
    path.write_bytes(struct.pack(">QHHI", 2, 1, 1, 0) + struct.pack(">QHHI", 1, 1, 1, 0))
    return path


def _write_bytes(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return make


BAD = [
    ("missing", lambda tmp: tmp / "missing.bin", "cannot read {path}: No such file or directory"),
    ("directory", lambda tmp: tmp, "cannot read {path}: Is a directory"),
    ("fifo", _fifo, "{path} is not a regular file"),
    ("empty", _write_bytes("empty.bin", b""), "{path} is empty: not a Polyglot book"),
    (
        "text",
        _write_bytes("text.bin", b"[Event]\n" * 3),
        "{path} is not a Polyglot book: 24 bytes is not a whole number of 16-byte entries",
    ),
    (
        "garbage",
        _garbage,
        "{path} is not a Polyglot book: its keys are not in ascending order (near entry 2)",
    ),
    (
        "descending",
        _descending,
        "{path} is not a Polyglot book: its keys are not in ascending order (near entry 1)",
    ),
]


@pytest.mark.parametrize(("name", "make", "message"), BAD, ids=[case[0] for case in BAD])
def test_unusable_files_are_refused_naming_the_file(
    tmp_path: Path, name: str, make: Callable[[Path], Path], message: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(BookError) as caught:
        OpeningBook.open(path)
    assert str(caught.value) == message.replace("{path}", str(path))
    with pytest.raises(BookError) as caught:
        OpeningBook.open(path, shown_as="as given.bin")
    assert str(caught.value) == message.replace("{path}", "as given.bin")


def test_key_order_is_checked_across_read_chunks(tmp_path: Path) -> None:
    """The check reads 65,536 entries at a time; a descent at a chunk's edge is found."""
    count = (1 << 16) + 2
    keys = list(range(1, count + 1))
    keys[1 << 16] = 0  # the first key of the second chunk is smaller than the last of the first
    path = tmp_path / "big.bin"
    path.write_bytes(b"".join(struct.pack(">QHHI", k, 1, 1, 0) for k in keys))
    with pytest.raises(BookError, match=r"near entry 65536\)$"):
        OpeningBook.open(path)
