"""The adapter's own moves leave exactly what python-chess's ``push`` would.

The search plays on native records, one per ply, each made from its parent by the move: after
every legal move the record must hold what python-chess's board after ``Board.push`` holds.
python-chess's board catches up on demand through ``games.chess_game.make.push_plain``, which
writes the board's fields directly; everything python-chess reads later (FEN, the move and
undo stacks, castling rights, the promoted-pieces mask) must be what ``Board.push`` would have
written, for every legal move, and ``pop`` must undo it.
"""

from __future__ import annotations

import random
import re
import tomllib

import chess
import pytest

from games.chess_game.adapter import ChessGame
from games.chess_game.bitboard64 import Bitboards, signed
from games.chess_game.make import (
    PYTHON_CHESS_SUPPORTED,
    BoardUndo,
    check_python_chess,
    pop_move,
    push_plain,
    undo_stack,
)
from games.chess_game.move_codes import to_chess
from games.chess_game.zobrist import zobrist_key
from tests.support.paths import DATA, REPO

CHESS_DATA = DATA / "chess"


def _fields(board: chess.Board) -> tuple[object, ...]:
    return (
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
        tuple(board.occupied_co),
        board.occupied,
        board.promoted,
        board.turn,
        board.castling_rights,
        board.ep_square,
        board.halfmove_clock,
        board.fullmove_number,
        board.move_stack,
        [tuple(getattr(state, name) for name in _STATE_FIELDS) for state in board._stack],
    )


_STATE_FIELDS = tuple(vars(chess._BoardState(chess.Board())))
"""The fields of python-chess's undo record, which the adapter's own record must match."""


def _positions() -> list[chess.Board]:
    boards = [
        chess.Board(),
        # En passant available, promotions with and without capture, castling rights of a
        # rook that can be captured, a promoted queen (its mask must move with it).
        chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"),
        chess.Board("r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1"),
        chess.Board("rn2k2r/8/8/8/8/8/8/R3K2R b KQkq - 5 20"),
        chess.Board("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1"),
    ]
    boards[-1].promoted = chess.BB_A1
    for line in (CHESS_DATA / "perft" / "perft.epd").read_text(encoding="utf-8").splitlines():
        if line.strip():
            boards.append(chess.Board(line.split(";")[0].strip()))
    perft960 = (CHESS_DATA / "perft" / "chess960.perft").read_text(encoding="utf-8")
    for line in perft960.splitlines()[:200]:
        if line.startswith("epd "):
            boards.append(chess.Board(line[4:].strip() + " 0 1", chess960=True))
    rng = random.Random(7)
    walked = []
    for board in boards:
        for _ in range(2):
            walk = board.copy()
            for _ in range(rng.randrange(1, 50)):
                moves = list(walk.legal_moves)
                if not moves:
                    break
                walk.push(rng.choice(moves))
            walked.append(walk)
    return boards + walked


def test_every_legal_move_leaves_python_chess_s_board() -> None:
    pushed = 0
    kinds: set[str] = set()
    for board in _positions():
        game = ChessGame(board)
        inner = game._synced()
        before = _fields(inner)
        for code in game.legal_moves():
            move = to_chess(code)
            expected = inner.copy()
            expected.push(move)
            game.push(code)
            assert game._synced() is inner
            assert _fields(inner) == _fields(expected), (board.fen(), move.uci())
            assert inner.fen() == expected.fen()
            game.pop()
            assert _fields(inner) == before
            pushed += 1
            if move.promotion:
                kinds.add("promotion")
            if inner.is_en_passant(move):
                kinds.add("en passant")
            if inner.is_castling(move):
                kinds.add("castling")
            if inner.is_capture(move):
                kinds.add("capture")
            if inner.promoted & chess.BB_SQUARES[move.from_square]:
                kinds.add("promoted piece")
    assert pushed > 6000
    assert kinds == {"promotion", "en passant", "castling", "capture", "promoted piece"}


def test_first_move_cleans_castling_rights_as_python_chess_does() -> None:
    # Rights for a rook that is not there: python-chess drops them at the first push.
    board = chess.Board("4k3/8/8/8/8/8/8/4K2R w KQ - 0 1")
    game = ChessGame(board)
    game.push(game.parse_move("e1d1"))
    expected = board.copy()
    expected.push(chess.Move.from_uci("e1d1"))
    assert _fields(game._synced()) == _fields(expected)
    assert game._synced().castling_rights == 0


def test_null_move_leaves_python_chess_s_board() -> None:
    # From the start (rights to clean at the first push), with en passant to forfeit, and
    # with black to move (the move number advances).
    for fen in (
        "4k3/8/8/8/8/8/8/4K2R w KQ - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "rn2k2r/8/8/8/8/8/8/R3K2R b KQkq - 5 20",
    ):
        game = ChessGame(chess.Board(fen))
        inner = game._synced()
        before = _fields(inner)
        expected = inner.copy()
        expected.push(chess.Move.null())
        game.push_null()
        assert game._synced() is inner
        assert _fields(inner) == _fields(expected), fen
        assert inner.fen() == expected.fen()
        game.pop()
        assert _fields(inner) == before
        assert inner.fen() == chess.Board(fen).fen()


def test_python_chess_reads_the_adapter_s_undo_records() -> None:
    # The board's stack holds the adapter's records: python-chess's own pop, root, copy and
    # repetition test must work on it as on its own.
    game = ChessGame(chess.Board())
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3"):
        game.push(game.parse_move(uci))
    inner = game._synced()
    assert inner.root().fen() == chess.STARTING_FEN
    assert inner.copy().fen() == inner.fen()
    assert inner.is_repetition(2)
    assert inner.pop() == chess.Move.from_uci("g1f3")
    assert inner.fen() == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 4 3"


def test_python_chess_keeps_the_internals_make_relies_on() -> None:
    # make.py writes python-chess's private state: Board._stack, a list of _BoardState
    # records that Board.pop restores through their restore().  A python-chess that renames,
    # adds or drops any of it fails here, not deep inside a search.
    board = chess.Board()
    board.push_uci("e2e4")
    stack = undo_stack(board)
    assert stack is board._stack
    assert [type(state) for state in stack] == [chess._BoardState]
    ours = BoardUndo(chess.Board())
    theirs = chess._BoardState(chess.Board())
    assert {name: getattr(ours, name) for name in _STATE_FIELDS} == vars(theirs)
    push_plain(board, chess.Move.from_uci("e7e5"), chess.PAWN, 0)
    assert isinstance(stack[-1], BoardUndo)
    assert board.pop() == chess.Move.from_uci("e7e5")  # python-chess's pop, on our record
    pop_move(board)  # ours, on python-chess's record
    assert board.fen() == chess.STARTING_FEN
    assert stack == []


@pytest.mark.parametrize("version", ["1.11.0", "1.11.2", "1.11.99"])
def test_the_supported_python_chess_versions_pass_the_check(version: str) -> None:
    check_python_chess(version)


@pytest.mark.parametrize("version", ["1.10.9", "1.12.0", "2.0.0", "1", "x.y"])
def test_other_python_chess_versions_are_refused(version: str) -> None:
    with pytest.raises(ImportError, match=re.escape(f"python-chess {version} is not supported")):
        check_python_chess(version)


def test_the_installed_python_chess_is_supported_and_the_range_is_the_pin() -> None:
    check_python_chess(chess.__version__)
    (low_major, low_minor), (high_major, high_minor) = PYTHON_CHESS_SUPPORTED
    pin = f"chess>={low_major}.{low_minor},<{high_major}.{high_minor}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pin in project["project"]["dependencies"]
    assert pin in project["build-system"]["requires"]


def _fields_of(node: Bitboards) -> tuple[object, ...]:
    return (
        node.turn,
        node.white,
        node.black,
        node.occupied,
        node.pawns,
        node.knights,
        node.bishops,
        node.rooks,
        node.queens,
        node.kings,
        node.castling,
        node.ep_square,
        node.halfmove,
        node.chess960,
        node.king,
        node.checkers,
        node.key,
    )


def _record(game: ChessGame) -> tuple[object, ...]:
    return _fields_of(game._current)


def _expected_record(board: chess.Board) -> tuple[object, ...]:
    """What the record of ``board`` holds, read from python-chess's own board."""
    node = Bitboards(board)
    king = board.king(board.turn)
    assert king is not None
    node.king = king
    node.checkers = signed(board.checkers_mask())
    node.key = signed(zobrist_key(board))
    return _fields_of(node)


def test_every_legal_move_makes_the_record_python_chess_s_board_has() -> None:
    # The search plays on the native records alone: after every legal move (and a null
    # move) of every position, the new record must equal one read from python-chess's board
    # after the same move, and the parent's record must be intact after the pop.
    for board in _positions():
        game = ChessGame(board)
        before = _record(game)
        assert before == _expected_record(board)
        for code in game.legal_moves():
            game.push(code)
            move = to_chess(code)
            expected = board.copy()
            expected.push(move)
            assert _record(game) == _expected_record(expected), (
                board.fen(),
                move.uci(),
            )
            game.pop()
            assert _record(game) == before
        if not board.is_check():
            game.push_null()
            expected = board.copy()
            expected.push(chess.Move.null())
            assert _record(game) == _expected_record(expected), board.fen()
            game.pop()


def test_python_chess_catches_up_at_any_depth_and_pops_back() -> None:
    # python-chess's board follows the search lazily: lines of moves and null moves played
    # on the records, the board brought up to date at random plies, popped back part way,
    # played on again.  At every step the FEN and the key are those of a board that played
    # the same moves itself.
    rng = random.Random(11)
    for board in _positions()[:60]:
        game = ChessGame(board)
        reference = board.copy()
        for _ in range(40):
            if reference.move_stack and rng.random() < 0.4:
                game.pop()
                reference.pop()
            else:
                moves = game.legal_moves()
                if not reference.is_check() and rng.random() < 0.1:
                    game.push_null()
                    reference.push(chess.Move.null())
                elif moves:
                    move = rng.choice(moves)
                    game.push(move)
                    reference.push(to_chess(move))
            if rng.random() < 0.3:
                assert game.fen() == reference.fen()
                assert game._synced().move_stack == reference.move_stack
            assert game.key() == _expected_record(reference)[-1]
        assert game.fen() == reference.fen()
