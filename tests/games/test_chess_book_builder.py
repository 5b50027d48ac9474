"""Writing Polyglot books: python-chess must read back exactly the entries written.

The PGN below is small enough to know every entry by hand: all four castlings (written as
the king taking its rook) and promotions to knight, rook and queen, with weights from the
results.  The shared opening file is checked where its content is known independently (its
first moves, counted here from the movetext).
"""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import pytest

from games.chess_game.book_builder import (
    MAX_WEIGHT,
    BookBuilder,
    BookEntry,
    Weighting,
    encode_move,
    scale_weights,
    write_book,
)

CASTLING_FEN = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
PROMOTION_FEN = "8/P7/7k/8/8/8/p7/7K w - - 0 1"


def _game(result: str, moves: str, fen: str | None = None, variant: str | None = None) -> str:
    headers = [f'[Result "{result}"]']
    if fen is not None:
        headers += [f'[FEN "{fen}"]', '[SetUp "1"]']
    if variant is not None:
        headers.append(f'[Variant "{variant}"]')
    return "\n".join(headers) + f"\n\n{moves} {result}\n\n"


PGN = "".join(
    [
        _game("1/2-1/2", "1. O-O O-O-O", CASTLING_FEN),  # e1h1 and e8a8, a draw each
        _game("1-0", "1. O-O-O O-O", CASTLING_FEN),  # e1a1 won, e8h8 lost
        _game("0-1", "1. O-O-O O-O", CASTLING_FEN),  # e1a1 lost, e8h8 won
        _game("1/2-1/2", "1. a8=N a1=R", PROMOTION_FEN),
        _game("1-0", "1. a8=Q a1=Q", PROMOTION_FEN),  # a1=Q only lost: weight 0, not written
    ]
)


def raw(move: str) -> int:
    """Polyglot's encoding, written out from the format's definition."""
    from_file, from_row = "abcdefgh".index(move[0]), int(move[1]) - 1
    to_file, to_row = "abcdefgh".index(move[2]), int(move[3]) - 1
    promotion = " nbrq".index(move[4]) if len(move) == 5 else 0
    return to_file | to_row << 3 | from_file << 6 | from_row << 9 | promotion << 12


def key(fen: str, *moves: str) -> int:
    board = chess.Board(fen)
    for move in moves:
        board.push_uci(move)
    return chess.polyglot.zobrist_hash(board)


def build(pgn: str, **settings: object) -> BookBuilder:
    builder = BookBuilder(**settings)  # type: ignore[arg-type]
    builder.add_pgn(io.StringIO(pgn))
    return builder


def read_back(path: Path) -> list[tuple[int, int, int, int]]:
    with chess.polyglot.open_reader(path) as reader:
        return [(entry.key, entry.raw_move, entry.weight, entry.learn) for entry in reader]


EXPECTED = sorted(
    [
        (key(CASTLING_FEN), raw("e1h1"), 1, 0),
        (key(CASTLING_FEN), raw("e1a1"), 2, 0),
        (key(CASTLING_FEN, "e1g1"), raw("e8a8"), 1, 0),
        (key(CASTLING_FEN, "e1c1"), raw("e8h8"), 2, 0),
        (key(PROMOTION_FEN), raw("a7a8n"), 1, 0),
        (key(PROMOTION_FEN), raw("a7a8q"), 2, 0),
        (key(PROMOTION_FEN, "a7a8n"), raw("a2a1r"), 1, 0),
    ],
    key=lambda entry: (entry[0], -entry[2], entry[1]),
)


def test_python_chess_reads_back_exactly_the_entries_written(tmp_path: Path) -> None:
    builder = build(PGN, min_count=1)
    entries = builder.entries()
    path = tmp_path / "book.bin"
    assert write_book(path, entries) == len(EXPECTED) == 7
    assert path.stat().st_size == 16 * len(EXPECTED)
    assert [(e.key, e.move, e.weight, e.learn) for e in entries] == EXPECTED
    assert read_back(path) == EXPECTED
    assert (builder.stats.games, builder.stats.plies, builder.stats.entries) == (5, 10, 7)
    assert (builder.stats.positions, builder.stats.moves, builder.stats.book_positions) == (
        6,
        8,
        5,
    )


def test_the_reader_turns_castling_and_promotions_back_into_moves(tmp_path: Path) -> None:
    path = tmp_path / "book.bin"
    write_book(path, build(PGN, min_count=1).entries())
    with chess.polyglot.open_reader(path) as reader:

        def moves(fen: str, *played: str) -> dict[str, int]:
            board = chess.Board(fen)
            for move in played:
                board.push_uci(move)
            return {entry.move.uci(): entry.weight for entry in reader.find_all(board)}

        assert moves(CASTLING_FEN) == {"e1c1": 2, "e1g1": 1}
        assert moves(CASTLING_FEN, "e1g1") == {"e8c8": 1}
        assert moves(CASTLING_FEN, "e1c1") == {"e8g8": 2}
        assert moves(PROMOTION_FEN) == {"a7a8q": 2, "a7a8n": 1}
        assert moves(PROMOTION_FEN, "a7a8n") == {"a2a1r": 1}
        assert moves(PROMOTION_FEN, "a7a8q") == {}  # a1=Q only lost


def test_encode_move_matches_the_format_for_every_kind_of_move() -> None:
    board = chess.Board(CASTLING_FEN)
    assert encode_move(board, chess.Move.from_uci("e1g1")) == raw("e1h1")
    assert encode_move(board, chess.Move.from_uci("e1c1")) == raw("e1a1")
    assert encode_move(board, chess.Move.from_uci("a1a8")) == raw("a1a8")
    board = chess.Board(PROMOTION_FEN)
    for piece in "nbrq":
        assert encode_move(board, chess.Move.from_uci(f"a7a8{piece}")) == raw(f"a7a8{piece}")
    assert raw("a7a8b") >> 12 == 2


def test_max_ply_counts_only_the_first_plies() -> None:
    entries = build(PGN, min_count=1, max_ply=1).entries()
    assert {(e.key, e.move) for e in entries} == {
        (key(CASTLING_FEN), raw("e1h1")),
        (key(CASTLING_FEN), raw("e1a1")),
        (key(PROMOTION_FEN), raw("a7a8n")),
        (key(PROMOTION_FEN), raw("a7a8q")),
    }


def test_min_count_keeps_moves_played_often_enough() -> None:
    entries = build(PGN, min_count=2).entries()
    assert [(e.key, e.move, e.weight) for e in entries] == sorted(
        [
            (key(CASTLING_FEN), raw("e1a1"), 2),  # 1-0 and 0-1: 2 points in 2 games
            (key(CASTLING_FEN, "e1c1"), raw("e8h8"), 2),
        ]
    )


def test_min_score_drops_moves_that_scored_too_little() -> None:
    assert len(build(PGN, min_count=1, min_score=50).entries()) == 7  # 50%: all kept
    entries = build(PGN, min_count=1, min_score=75).entries()
    assert [(e.key, e.move, e.weight) for e in entries] == [
        (key(PROMOTION_FEN), raw("a7a8q"), 2)  # the only move scoring 100%
    ]


def test_count_weighting_counts_games_and_keeps_moves_that_lost() -> None:
    entries = build(PGN, min_count=1, weighting=Weighting.COUNT).entries()
    weights = {(e.key, e.move): e.weight for e in entries}
    assert weights[(key(CASTLING_FEN), raw("e1a1"))] == 2
    assert weights[(key(CASTLING_FEN), raw("e1h1"))] == 1
    assert weights[(key(PROMOTION_FEN, "a7a8q"), raw("a2a1q"))] == 1
    assert len(entries) == 8


def test_other_variants_are_skipped_and_broken_games_used_up_to_the_error() -> None:
    pgn = (
        _game("1-0", "1. e4 e5 2. Nf3", variant="Chess960")
        + _game("1-0", "1. e4 e5 2. Nf3", variant="Crazyhouse")
        + _game("1-0", "1. e4 e5 2. Nf3", variant="no such variant")
        + _game("1-0", "1. e4 e5 2. Ke3 Nc6")  # 2. Ke3 is illegal: e4 and e5 count
        + _game("1-0", "1. e4 e5 2. Nf3 Nc6")
    )
    builder = build(pgn, min_count=1)
    entries = builder.entries()
    start = chess.STARTING_FEN
    assert {(e.key, e.move, e.weight) for e in entries} == {
        (key(start), raw("e2e4"), 4),  # black's e5 and Nc6 only lost: not written
        (key(start, "e2e4", "e7e5"), raw("g1f3"), 2),
    }
    stats = builder.stats
    assert (stats.games, stats.skipped, stats.with_errors) == (5, 3, 1)
    assert "3 of other variants skipped" in stats.summary()


def test_weights_beyond_16_bits_are_scaled_keeping_every_move_playable() -> None:
    assert scale_weights([3, 65535, 1]) == [3, 65535, 1]
    assert scale_weights([131070, 1000, 1]) == [MAX_WEIGHT, 500, 1]
    assert scale_weights([]) == []


def test_write_book_refuses_unsorted_entries(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sorted"):
        write_book(tmp_path / "b.bin", [BookEntry(2, 1, 1), BookEntry(1, 1, 1)])
    assert not list(tmp_path.iterdir())


def test_the_shared_openings_give_a_book_whose_first_moves_match_the_movetext(
    data_dir: Path, tmp_path: Path
) -> None:
    pgn = data_dir / "chess" / "openings" / "8moves_v3_every7th.pgn"
    text = pgn.read_text(encoding="utf-8")
    assert set(re.findall(r'\[Result "([^"]*)"\]', text)) == {"1/2-1/2"}  # all draws
    first = Counter(re.findall(r"^1\. (\S+)", text, flags=re.MULTILINE))
    builder = BookBuilder(max_ply=2)  # min_count 2, score weighting
    with pgn.open(encoding="utf-8") as handle:
        assert builder.add_pgn(handle) == sum(first.values()) == 4958
    path = tmp_path / "openings.bin"
    write_book(path, builder.entries())
    board = chess.Board()
    expected = {board.parse_san(san).uci(): n for san, n in first.items() if n >= 2}
    with chess.polyglot.open_reader(path) as reader:
        got = {entry.move.uci(): entry.weight for entry in reader.find_all(board)}
        keys = [entry.key for entry in reader]
    assert got == expected  # a draw is 1 point: the weight is the number of games
    assert keys == sorted(keys) and len(keys) == builder.stats.entries
