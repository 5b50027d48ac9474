"""Syzygy tables in the chess adapter: checking a ``SyzygyPath``, the probes the search uses,
root move ranking (the fifty-move rule included), and settings that survive copies and
pickles.  Tables: ``../shared/data/syzygy/regular`` (3 and 4 pieces, WDL and DTZ)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import chess
import chess.syzygy
import pytest

from engine.game import Tablebase, TablebaseProbing
from games.chess_game import ChessGame, from_fen
from games.chess_game.move_codes import encode, shared, to_chess
from games.chess_game.tablebase import (
    FoundTables,
    SyzygySettings,
    TablebaseError,
    find_tables,
)
from protocol.uci.syzygy import split_path
from tests.support.paths import DATA

REGULAR = DATA / "syzygy" / "regular"

KBN_WIN = "8/6k1/4K3/6B1/8/8/5N2/8 w - - {clock} 40"
"""White wins with DTZ 20 (endgame.epd): six moves zero in 19 more plies, the others later."""
KBN_FASTEST = {"e6f5", "g5e7", "g5f6", "f2e4", "f2h3", "f2d3"}

ROOK_TRADE = "8/8/8/4k3/8/2r5/2R1P3/4K3 w - - 0 1"
"""Five pieces (beyond the tables); Rxc3 captures into KRPvK, a win the tables know."""


@pytest.fixture(scope="module")
def found() -> FoundTables:
    return find_tables([REGULAR])


@pytest.fixture(scope="module")
def settings(found: FoundTables) -> SyzygySettings:
    return SyzygySettings.from_found(found, probe_depth=1, probe_limit=7, rule50=True)


@pytest.fixture(scope="module")
def tables() -> chess.syzygy.Tablebase:
    return chess.syzygy.open_tablebase(str(REGULAR))


def with_tables(fen: str, settings: SyzygySettings) -> ChessGame:
    game = from_fen(fen)
    game.use_tablebases(settings)
    return game


def test_the_regular_tables_are_found_and_counted(found: FoundTables) -> None:
    assert (found.wdl, found.dtz, found.pieces) == (35, 35, 4)
    assert found.directories == (str(REGULAR.resolve()),)
    assert found.summary() == "found 35 WDL and 35 DTZ tablebase files (up to 4 pieces)"
    assert find_tables([REGULAR]).stamp == found.stamp  # the same files, the same stamp


def test_split_path_takes_directories_as_stockfish_does() -> None:
    sep = os.pathsep
    assert split_path(f"/a{sep}/b c{sep}{sep} /d ") == ["/a", "/b c", "/d"]
    assert split_path("") == split_path(f" {sep} ") == []


def test_several_directories_add_up_and_other_files_are_ignored(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    for name in ("KQvK.rtbw", "KQvK.rtbz"):
        (extra / name).symlink_to(REGULAR / name)
    (extra / "README.txt").write_text("not a table")
    (extra / "KQvK.bak").write_bytes(b"\0" * 80)
    both = find_tables([REGULAR, extra])
    assert (both.wdl, both.dtz, len(both.directories)) == (36, 36, 2)
    alone = find_tables([extra])
    assert (alone.wdl, alone.dtz, alone.pieces) == (1, 1, 3)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "{dir}: no such directory"),
        ("empty", "{dir} holds no Syzygy tables (.rtbw/.rtbz files)"),
        ("file", "{dir} is not a directory"),
        ("garbage", "{dir}: KQvK.rtbw is not a Syzygy table (wrong file size)"),
        ("header", "{dir}: KRvK.rtbz is not a Syzygy table (wrong header)"),
    ],
)
def test_unusable_directories_and_damaged_tables_are_refused(
    tmp_path: Path, setup: str, message: str
) -> None:
    target = tmp_path / "tables"
    if setup == "empty":
        target.mkdir()
    elif setup == "file":
        target.write_text("a file")
    elif setup == "garbage":
        target.mkdir()
        (target / "KQvK.rtbw").write_bytes(os.urandom(1000))
    elif setup == "header":
        target.mkdir()
        (target / "KRvK.rtbw").symlink_to(REGULAR / "KRvK.rtbw")
        (target / "KRvK.rtbz").write_bytes(b"\x00" * (64 * 40 + 16))  # a table's size
    with pytest.raises(TablebaseError) as caught:
        find_tables([target], ["tables"])
    assert str(caught.value) == message.format(dir="tables")


def test_the_game_carries_its_settings_through_copies_and_pickles(
    settings: SyzygySettings,
) -> None:
    game = with_tables("8/8/8/4k3/8/8/1R6/4K3 w - - 0 1", settings)
    assert isinstance(game, Tablebase)
    assert game.tb_probing() == TablebaseProbing(limit=4, depth=1, rule50=True)
    for twin in (game.copy(), pickle.loads(pickle.dumps(game))):
        assert isinstance(twin, ChessGame)
        assert twin.tablebases == settings
        assert twin.tb_probing() == game.tb_probing()
        assert twin.tb_root_moves(True) == game.tb_root_moves(True)
    moves = game.tb_root_moves(True)
    assert moves
    # The search compares moves by identity: root moves must be the shared objects too.
    assert all(m is shared(m) for m in moves)
    plain = from_fen(game.fen())
    assert plain.tb_probing() is None and plain.tb_root_moves(True) is None
    assert pickle.loads(pickle.dumps(plain)).tablebases is None


def test_the_probe_limit_is_the_smaller_of_the_option_and_the_tables(
    found: FoundTables,
) -> None:
    game = from_fen(chess.STARTING_FEN)
    for limit, expected in ((7, 4), (4, 4), (3, 3), (0, None)):
        game.use_tablebases(
            SyzygySettings.from_found(found, probe_depth=5, probe_limit=limit, rule50=False)
        )
        probing = game.tb_probing()
        assert (probing.limit if probing else None) == expected
    game.use_tablebases(None)
    assert game.tb_probing() is None and game.tablebases is None


def test_wdl_is_probed_only_right_after_a_capture_or_pawn_move(
    settings: SyzygySettings,
) -> None:
    game = with_tables(ROOK_TRADE, settings)
    assert game.tb_pieces() == 5
    assert game.tb_wdl() is None  # five pieces: beyond the tables
    game.push(game.parse_move("c2c3"))  # Rxc3: KRPvK, black to move
    assert game.tb_pieces() == 4
    assert game.tb_wdl() == -2
    game.push(game.parse_move("e5d4"))  # a king move: the counter runs again
    assert game.tb_wdl() is None
    game.push(game.parse_move("e2e4"))  # a pawn move zeroes it
    assert game.tb_wdl() == -2
    castling = with_tables("4k3/8/8/8/8/8/8/R3K3 b Q - 0 1", settings)
    assert castling.tb_wdl() is None and castling.tb_root_moves(True) is None


def test_root_moves_keep_the_result_and_need_the_tables(settings: SyzygySettings) -> None:
    drawn = with_tables("8/8/R2k4/8/8/K7/8/4r3 b - - 0 1", settings)  # KRvKR, a draw
    moves = drawn.tb_root_moves(True)
    assert moves is not None and set(moves) <= set(drawn.legal_moves())
    mate = with_tables("k7/8/1K6/8/8/8/8/6Q1 w - - 0 1", settings)
    won = mate.tb_root_moves(True)
    assert won is not None and won[0] == encode(chess.G1, chess.G8, 0)  # mate zeroes at once
    assert encode(chess.G1, chess.G3, 0) not in won  # stalemate
    assert with_tables(ROOK_TRADE, settings).tb_root_moves(True) is None  # five pieces


def _child_dtz(tables: chess.syzygy.Tablebase, fen: str, move: str) -> int:
    board = chess.Board(fen)
    board.push_uci(move)
    return tables.probe_dtz(board)


def test_the_fifty_move_counter_narrows_a_win_to_the_fastest_zeroing(
    settings: SyzygySettings, tables: chess.syzygy.Tablebase
) -> None:
    """With time to spare every winning move ranks alike (the search picks among them);
    20 plies from the rule only the moves that zero in time keep the win."""
    relaxed = with_tables(KBN_WIN.format(clock=0), settings).tb_root_moves(True)
    assert relaxed is not None
    texts = {to_chess(move).uci() for move in relaxed}
    assert len(texts) == 20 and "g5h6" not in texts  # every move but the bishop's loss
    pressed = with_tables(KBN_WIN.format(clock=80), settings).tb_root_moves(True)
    assert pressed is not None
    assert {to_chess(move).uci() for move in pressed} == KBN_FASTEST
    fen = KBN_WIN.format(clock=80)
    assert {_child_dtz(tables, fen, move) for move in KBN_FASTEST} == {-19}


def test_without_dtz_tables_wins_are_ranked_by_wdl(tmp_path: Path) -> None:
    for table in REGULAR.glob("*.rtbw"):
        (tmp_path / table.name).symlink_to(table)
    wdl_only = find_tables([tmp_path])
    assert (wdl_only.wdl, wdl_only.dtz) == (35, 0)
    settings = SyzygySettings.from_found(wdl_only, probe_depth=1, probe_limit=7, rule50=True)
    moves = with_tables(KBN_WIN.format(clock=80), settings).tb_root_moves(True)
    assert moves is not None
    assert {to_chess(move).uci() for move in moves} == {
        m.uci() for m in chess.Board(KBN_WIN.format(clock=0)).legal_moves
    } - {"g5h6"}  # WDL cannot see the counter: every win
