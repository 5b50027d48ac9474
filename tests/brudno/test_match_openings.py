"""Opening books: the shared EPD and PGN samples, other variants' FEN lines, and bad files."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

from brudno.arena.openings import OpeningError, OpeningSelection, count_openings, load_openings


def test_epd_book_sequential(data_dir: Path) -> None:
    path = data_dir / "chess" / "openings" / "noob_3moves_every30th.epd"
    assert count_openings(path) == 5032
    first = load_openings(path, 3)
    assert [o.label for o in first] == [
        "noob_3moves_every30th.epd:1",
        "noob_3moves_every30th.epd:2",
        "noob_3moves_every30th.epd:3",
    ]
    assert first[0].fen == "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4"
    assert first[0].moves == ()
    tail = load_openings(path, 2, OpeningSelection(start=5032))  # wraps around to the first line
    assert [o.label for o in tail] == ["noob_3moves_every30th.epd:5032", first[0].label]


def test_epd_book_random_order_is_reproducible(data_dir: Path) -> None:
    path = data_dir / "chess" / "openings" / "UHO_4060_v4_every48th.epd"
    one = load_openings(path, 5, OpeningSelection(order="random", seed=7))
    two = load_openings(path, 5, OpeningSelection(order="random", seed=7))
    other = load_openings(path, 5, OpeningSelection(order="random", seed=8))
    assert one == two
    assert one != other
    assert len({o.label for o in one}) == 5
    for opening in one:
        assert opening.fen is not None
        assert chess.Board(opening.fen).is_valid()


def test_pgn_book_gives_the_main_line_from_the_start(data_dir: Path) -> None:
    path = data_dir / "chess" / "openings" / "8moves_v3_every7th.pgn"
    assert count_openings(path) == 4958
    (first,) = load_openings(path, 1)
    assert first.fen is None
    assert first.label == "8moves_v3_every7th.pgn#1"
    # 1. Nf3 d5 2. g3 c6 3. Bg2 Nf6 4. d3 Bg4 5. h3 Bh5 6. b3 e6 7. Bb2 Qa5+ 8. Qd2 Qxd2+
    assert len(first.moves) == 16
    assert first.moves[:4] == ("g1f3", "d7d5", "g2g3", "c7c6")
    assert first.moves[-1] == "a5d2"
    (cut,) = load_openings(path, 1, OpeningSelection(plies=4))
    assert cut.moves == first.moves[:4]
    third = load_openings(path, 1, OpeningSelection(start=3))[0]
    assert third.label == "8moves_v3_every7th.pgn#3"
    assert third.moves != first.moves


def test_tictactoe_openings_are_fen_lines(tmp_path: Path) -> None:
    book = tmp_path / "ttt.epd"
    book.write_text("# corner openings\n3/3/P2[PPPPpppp] b - - 0 1\n3/1p1/P2[PPPPppp] w - - 0 2\n")
    openings = load_openings(book, 3, OpeningSelection(variant="tictactoe"))
    assert [o.fen for o in openings] == [
        "3/3/P2[PPPPpppp] b - - 0 1",
        "3/1p1/P2[PPPPppp] w - - 0 2",
        "3/3/P2[PPPPpppp] b - - 0 1",
    ]
    assert [o.label for o in openings] == ["ttt.epd:2", "ttt.epd:3", "ttt.epd:2"]


def test_bad_books_are_rejected_with_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.epd"
    bad.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nnot a fen\n")
    with pytest.raises(OpeningError, match=r"bad\.epd:2"):
        load_openings(bad, 2)
    over = tmp_path / "over.epd"
    over.write_text("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n")  # stalemate
    with pytest.raises(OpeningError, match="already over"):
        load_openings(over, 1)
    won = tmp_path / "won.epd"
    won.write_text("3/pp1/PPP[PPpp] b - - 0 3\n")
    with pytest.raises(OpeningError, match="already over"):
        load_openings(won, 1, OpeningSelection(variant="tictactoe"))
    empty = tmp_path / "empty.epd"
    empty.write_text("\n# nothing\n")
    with pytest.raises(OpeningError, match="no openings"):
        load_openings(empty, 1)
    with pytest.raises(OpeningError, match="cannot read"):
        load_openings(tmp_path / "missing.epd", 1)
    pgn = tmp_path / "book.pgn"
    pgn.write_text('[Event "?"]\n\n1. e4 e5 2. Nf3 Nc6 *\n')
    with pytest.raises(OpeningError, match="chess only"):
        load_openings(pgn, 1, OpeningSelection(variant="tictactoe"))
    with pytest.raises(OpeningError, match="order"):
        load_openings(pgn, 1, OpeningSelection(order="shuffled"))
    illegal = tmp_path / "illegal.pgn"
    illegal.write_text('[Event "?"]\n\n1. e4 e5 2. Ke3 *\n')
    with pytest.raises(OpeningError, match=r"illegal\.pgn#1"):
        load_openings(illegal, 1)
