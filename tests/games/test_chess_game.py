"""The chess adapter against the game contract: FEN, notation, keys, terminal rules, copies."""

from __future__ import annotations

import pickle
import random

import chess
import chess.polyglot
import pytest

from engine.game import Game, IllegalMoveError, InvalidPositionError
from games.chess_game import ChessGame, from_fen, zobrist_key
from games.chess_game.bitboard64 import unsigned
from games.chess_game.move_codes import from_chess, to_chess
from games.registry import get_variant

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
START_KEY = 0x463B96181691FC9C
"""The Polyglot key of the start position (published with the Polyglot book format)."""


def play(game: ChessGame, *moves: str) -> ChessGame:
    for text in moves:
        game.push(game.parse_move(text))
    return game


def random_playout(game: ChessGame, rng: random.Random, plies: int) -> list[int]:
    played = []
    for _ in range(plies):
        moves = game.legal_moves()
        if not moves:
            break
        move = rng.choice(moves)
        game.push(move)
        played.append(move)
    return played


# -- registry and FEN ----------------------------------------------------------------------


def test_registered_variant_builds_the_start_position() -> None:
    variant = get_variant("chess")
    game = variant.new()
    assert isinstance(game, ChessGame)
    assert isinstance(game, Game)
    assert game.variant == "chess"
    assert game.fen() == chess.STARTING_FEN
    assert variant.description == "Standard chess (python-chess adapter)"
    assert (game.side, game.ply) == (0, 0)
    assert len(game.legal_moves()) == 20


@pytest.mark.parametrize(
    ("fen", "reason"),
    [
        ("", "empty fen"),
        ("xyz", "expected 8 rows"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "'w' or 'b'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - a 1", "half-move clock"),
        ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "position part"),
    ],
)
def test_malformed_fen_is_rejected_with_the_reason(fen: str, reason: str) -> None:
    with pytest.raises(InvalidPositionError, match="malformed FEN") as info:
        from_fen(fen, False)
    assert reason in str(info.value)


@pytest.mark.parametrize(
    ("fen", "flag"),
    [
        ("8/8/8/8/8/8/8/8 w - - 0 1", "STATUS_EMPTY"),
        ("4k3/8/8/8/8/8/8/8 w - - 0 1", "STATUS_NO_WHITE_KING"),
        ("4k3/8/8/8/8/8/8/4K2k w - - 0 1", "STATUS_TOO_MANY_KINGS"),
        ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "STATUS_PAWNS_ON_BACKRANK"),
        ("4k3/8/8/8/8/8/8/4K2R w KQ - 0 1", "STATUS_BAD_CASTLING_RIGHTS"),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
            "STATUS_INVALID_EP_SQUARE",
        ),
        ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", None),
        ("R3k3/8/8/8/8/8/8/4K3 w - - 0 1", "STATUS_OPPOSITE_CHECK"),
        ("B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1", "STATUS_IMPOSSIBLE_CHECK"),
    ],
)
def test_illegal_positions_name_their_status_flags(fen: str, flag: str | None) -> None:
    if flag is None:
        assert from_fen(fen, False).fen() == fen
        return
    with pytest.raises(InvalidPositionError, match="illegal position") as info:
        from_fen(fen, False)
    assert flag in str(info.value)


def test_the_constructor_only_needs_the_kings() -> None:
    """Perft suites hold unreachable positions (two bishops checking at once); the adapter
    plays them, the registry refuses them."""
    game = ChessGame(chess.Board("B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1"))
    assert len(game.legal_moves()) == 6  # perft.epd: ;D1 6
    with pytest.raises(InvalidPositionError, match="STATUS_NO_BLACK_KING"):
        ChessGame(chess.Board("8/8/8/8/8/8/8/4K3 w - - 0 1"))


def test_chess960_reads_x_fen_and_shredder_fen_and_writes_shredder() -> None:
    shredder = "r4k1r/8/8/8/8/8/8/R4K1R w HAha - 0 1"
    x_fen = "r4k1r/8/8/8/8/8/8/R4K1R w KQkq - 0 1"
    assert from_fen(x_fen, True).fen() == shredder
    assert from_fen(shredder, True).fen() == shredder
    inner = from_fen("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", True)
    assert inner.fen() == "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1"
    assert from_fen(chess.STARTING_FEN, False).fen() == chess.STARTING_FEN
    assert from_fen(chess.STARTING_FEN, True).fen().split()[2] == "HAha"


def test_side_and_ply_follow_the_fen_and_the_moves() -> None:
    game = from_fen("4k3/8/8/8/8/8/8/4K3 b - - 3 10")
    assert (game.side, game.ply) == (1, 19)
    play(game, "e8d8")
    assert (game.side, game.ply) == (0, 20)
    game.pop()
    assert (game.side, game.ply) == (1, 19)
    assert from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 0").ply == 0


def test_the_callers_board_is_copied_and_its_history_replayed() -> None:
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1"):
        board.push_uci(uci)
    game = ChessGame(board)
    game.push(game.parse_move("f6g8"))
    assert len(board.move_stack) == 3
    assert game.is_terminal(), "the start position occurred before, in the board's history"
    assert unsigned(game.key()) == START_KEY


# -- notation ------------------------------------------------------------------------------


def test_standard_castling_accepts_both_notations_and_prints_e1g1() -> None:
    game = from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    for text, printed in (("e1g1", "e1g1"), ("e1h1", "e1g1"), ("e1c1", "e1c1"), ("e1a1", "e1c1")):
        assert game.format_move(game.parse_move(text)) == printed
    play(game, "e1h1")
    assert game.fen() == "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1"
    play(game, "e8c8")
    assert game.fen() == "2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2"
    assert unsigned(game.key()) == chess.polyglot.zobrist_hash(game.board)


def test_chess960_castling_both_ways_is_king_takes_rook() -> None:
    """King on f1 between rooks a1 and h1: ``f1h1`` and ``f1a1`` castle, ``f1g1`` is a king
    step.

        r . . . . k . r
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        R . . . . K . R
    """
    game = from_fen("r4k1r/8/8/8/8/8/8/R4K1R w HAha - 0 1", True)
    castles = sorted(
        game.format_move(m) for m in game.legal_moves() if game.board.is_castling(to_chess(m))
    )
    assert castles == ["f1a1", "f1h1"]
    expected = {
        "f1h1": "r4k1r/8/8/8/8/8/8/R4RK1 b ha - 1 1",
        "f1a1": "r4k1r/8/8/8/8/8/8/2KR3R b ha - 1 1",
        "f1g1": "r4k1r/8/8/8/8/8/8/R5KR b ha - 1 1",
    }
    for text, fen in expected.items():
        move = game.parse_move(text)
        assert game.format_move(move) == text
        game.push(move)
        assert game.fen() == fen
        assert unsigned(game.key()) == zobrist_key(game.board)
        assert game.evaluate() == game.evaluator.evaluate(game.features())
        game.pop()
    play(game, "f1a1", "f8h8")
    assert game.fen() == "r4rk1/8/8/8/8/8/8/2KR3R w - - 2 2"
    assert unsigned(game.key()) == zobrist_key(game.board)


def test_promotions_parse_and_print_with_the_piece_letter() -> None:
    game = from_fen("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert game.format_move(game.parse_move("a7a8q")) == "a7a8q"
    assert game.format_move(game.parse_move("a7b8n")) == "a7b8n"
    play(game, "a7b8r")
    assert game.fen() == "1R2k3/8/8/8/8/8/8/4K3 b - - 0 1"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("0000", "null move"),
        ("", "not a UCI move"),
        ("e9e4", "not a UCI move"),
        ("hello", "not a UCI move"),
        ("e2e4e5", "not a UCI move"),
        ("P@e4", "no drops"),
        ("e7e5", "no piece on e7"),
        ("e8d8", "not white's"),
        ("e2e5", "cannot go to e5"),
        ("a7a8", "must name its promotion piece"),
        ("e1e2q", "only a pawn reaching the last rank promotes"),
    ],
)
def test_bad_moves_raise_naming_the_text_and_why(text: str, reason: str) -> None:
    game = from_fen("4k3/P7/8/8/8/8/4P3/4K3 w - - 0 1")
    with pytest.raises(IllegalMoveError) as info:
        game.parse_move(text)
    message = str(info.value)
    assert reason in message
    assert message.endswith(f"({text})")


def test_a_move_that_leaves_the_king_in_check_is_refused() -> None:
    game = from_fen("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1")
    with pytest.raises(IllegalMoveError, match=r"\(white is in check\) \(e1d2\)"):
        game.parse_move("e1d2")
    assert game.format_move(game.parse_move("e1e2")) == "e1e2"


# -- moves ---------------------------------------------------------------------------------


def assert_partition(game: ChessGame) -> None:
    legal = game.legal_moves()
    noisy = game.noisy_moves()
    quiet = game.quiet_moves()
    assert len(set(noisy)) == len(noisy) and len(set(quiet)) == len(quiet)
    assert set(noisy) | set(quiet) == set(legal)
    assert not set(noisy) & set(quiet)
    assert len(noisy) + len(quiet) == len(legal)
    for move in legal:
        assert game.is_noisy(move) == (move in noisy)


def test_noisy_and_quiet_partition_the_legal_moves_along_random_games() -> None:
    rng = random.Random(7)
    for start, chess960 in ((chess.STARTING_FEN, False), (KIWIPETE, False)):
        for _ in range(4):
            game = from_fen(start, chess960)
            for _ in range(80):
                assert_partition(game)
                if not random_playout(game, rng, 1):
                    break


def test_noisy_moves_come_queen_promotions_first_then_mvv_lva() -> None:
    """The b7 pawn promotes on a8 (taking a rook), c8 (taking a knight) or b8; e5 takes d6
    en passant (pawn takes pawn); the queen takes d5 (queen takes pawn).

        r . n . k . . .
        . P q . b . . .
        . . . . . . . .
        . . . p P . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . Q K . . .
    """
    game = from_fen("r1n1k3/1Pq1b3/8/3pP3/8/8/8/3QK3 w - d6 0 2")
    noisy = [game.format_move(m) for m in game.noisy_moves()]
    assert noisy == [
        "b7a8q", "b7c8q", "b7b8q",  # queen promotions, richest capture first
        "e5d6", "d1d5",  # pawn takes pawn before queen takes pawn
        "b7a8r", "b7a8b", "b7a8n", "b7c8r", "b7c8b", "b7c8n", "b7b8r", "b7b8b", "b7b8n",
    ]  # fmt: skip


def _noisy_rank(board: chess.Board, move: chess.Move) -> int:
    """The MVV-LVA key of the test above, from python-chess's board."""
    victim = board.piece_type_at(move.to_square) or 0
    if board.is_en_passant(move):
        victim = chess.PAWN
    score = 8 * victim - (board.piece_type_at(move.from_square) or 0)
    if move.promotion:
        score += 100 if move.promotion == chess.QUEEN else -100
    return -score


def test_noisy_moves_are_a_stable_sort_of_the_generated_captures_along_random_games() -> None:
    """The noisy moves are generated as captures, then en passant, then promotions without a
    capture, and sorted by MVV-LVA keeping that order among equal keys (a stable sort)."""
    rng = random.Random(46)
    for start in (chess.STARTING_FEN, KIWIPETE, "r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 1"):
        for _ in range(3):
            game = from_fen(start)
            for _ in range(60):
                board = game.board
                legal = list(board.legal_moves)
                generated = (
                    [m for m in legal if board.piece_at(m.to_square) and not board.is_castling(m)]
                    + [m for m in legal if board.is_en_passant(m)]
                    + [m for m in legal if m.promotion and not board.piece_at(m.to_square)]
                )
                expected = sorted(generated, key=lambda m: _noisy_rank(board, m))
                assert [to_chess(m) for m in game.noisy_moves()] == expected, board.fen()
                if not random_playout(game, rng, 1):
                    break


def test_en_passant_is_noisy_and_not_quiet() -> None:
    game = from_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2")
    ep = game.parse_move("e5d6")
    assert game.is_noisy(ep)
    assert ep in game.noisy_moves()
    assert ep not in game.quiet_moves()
    assert game.parse_move("e5e6") in game.quiet_moves()


def test_push_pop_restores_everything() -> None:
    rng = random.Random(3)
    game = from_fen(KIWIPETE)
    before = (game.fen(), game.key(), game.evaluate(), game.legal_moves())
    played = random_playout(game, rng, 40)
    for _ in played:
        game.pop()
    assert (game.fen(), game.key(), game.evaluate(), game.legal_moves()) == before


def test_null_move_passes_and_is_refused_when_unsound() -> None:
    game = from_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
    assert game.can_null_move()
    key = game.key()
    game.push_null()
    assert (game.side, game.fen()) == (1, "4k3/8/8/8/8/8/8/3QK3 b - - 1 1")
    assert unsigned(game.key()) == zobrist_key(game.board)
    game.pop()
    assert game.key() == key
    assert not from_fen("4k3/4p3/8/8/8/8/4P3/4K3 w - - 0 1").can_null_move(), "pawn ending"
    assert not from_fen("4k3/8/8/8/8/8/3q4/3QK3 w - - 0 1").can_null_move(), "in check"


def test_null_move_drops_the_en_passant_key() -> None:
    game = play(from_fen("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1"), "e2e4")
    assert unsigned(game.key()) != zobrist_key(chess.Board("4k3/8/8/8/3pP3/8/8/4K3 b - - 0 1"))
    game.push_null()
    assert unsigned(game.key()) == zobrist_key(chess.Board("4k3/8/8/8/3pP3/8/8/4K3 w - - 0 1"))


# -- keys ----------------------------------------------------------------------------------


def test_start_key_is_the_polyglot_key() -> None:
    assert unsigned(from_fen(chess.STARTING_FEN).key()) == START_KEY


def keyed_playouts(fen: str, chess960: bool, games: int, seed: int) -> int:
    """Random games through the adapter beside a plain python-chess board; the incremental
    key must equal the from-scratch key of the twin board after every move.  Returns the
    number of positions compared."""
    rng = random.Random(seed)
    compared = 0
    for _ in range(games):
        game = from_fen(fen, chess960)
        twin = chess.Board(fen, chess960=chess960)
        for _ in range(120):
            moves = game.legal_moves()
            if not moves:
                break
            move = rng.choice(moves)
            game.push(move)
            twin.push(to_chess(move))
            assert unsigned(game.key()) == zobrist_key(twin), twin.fen()
            if not chess960:
                assert unsigned(game.key()) == chess.polyglot.zobrist_hash(twin)
            compared += 1
        while compared and twin.move_stack:
            game.pop()
            twin.pop()
            assert unsigned(game.key()) == zobrist_key(twin)
    return compared


@pytest.mark.parametrize("fen", [chess.STARTING_FEN, KIWIPETE], ids=["start", "kiwipete"])
def test_incremental_key_equals_polyglot_along_random_games(fen: str) -> None:
    assert keyed_playouts(fen, False, games=8, seed=11) > 500


def test_incremental_key_equals_scratch_key_in_chess960() -> None:
    starts = [chess.Board.from_chess960_pos(n).fen(shredder=True) for n in (0, 100, 518, 959)]
    starts.append("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1")
    assert sum(keyed_playouts(fen, True, games=4, seed=5) for fen in starts) > 1000


def test_transpositions_share_a_key_and_rights_change_it() -> None:
    a = play(from_fen(chess.STARTING_FEN), "g1f3", "g8f6", "b1c3", "b8c6")
    b = play(from_fen(chess.STARTING_FEN), "b1c3", "b8c6", "g1f3", "g8f6")
    assert a.key() == b.key()
    shuffled = play(from_fen(chess.STARTING_FEN), "g1f3", "g8f6", "h1g1", "h8g8", "g1h1", "g8h8")
    developed = play(from_fen(chess.STARTING_FEN), "g1f3", "g8f6")
    assert shuffled.board.board_fen() == developed.board.board_fen()
    assert shuffled.key() != developed.key(), "the rooks' moves cost the short castling rights"
    after = "rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w Qq - 6 4"
    assert shuffled.key() == from_fen(after).key()


def test_en_passant_enters_the_key_only_when_a_pawn_can_take() -> None:
    lone = play(from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"), "e2e4")
    assert lone.key() == from_fen("4k3/8/8/8/4P3/8/8/4K3 b - - 0 1").key()
    beside = play(from_fen("4k3/8/8/8/5p2/8/4P3/4K3 w - - 0 1"), "e2e4")
    assert beside.key() != from_fen("4k3/8/8/8/4Pp2/8/8/4K3 b - - 0 1").key()
    assert beside.key() == from_fen("4k3/8/8/8/4Pp2/8/8/4K3 b - e3 0 1").key()


def test_keys_are_the_same_in_every_process() -> None:
    """Hard-coded: the bench node count depends on the keys being reproducible."""
    game = play(from_fen(chess.STARTING_FEN), "e2e4", "d7d5", "e4e5", "f7f5")
    assert unsigned(game.key()) == 0x22A48B5A8E47FF78  # Polyglot's published key for this line
    assert play(game, "e1e2").key() == 0x652A607CA3F242C1


# -- terminal rules ------------------------------------------------------------------------


def test_first_repetition_is_terminal_and_draw() -> None:
    game = from_fen(chess.STARTING_FEN)
    play(game, "g1f3", "g8f6", "f3g1")
    assert not game.is_terminal()
    play(game, "f6g8")
    assert game.is_terminal()
    assert game.terminal_value() == 0
    game.pop()
    assert not game.is_terminal()


def test_a_repetition_eight_plies_back_is_seen_also_through_the_callers_history() -> None:
    # Each ply's record keeps its key; the test walks back over every second record.
    cycle = ("g1f3", "g8f6", "b1c3", "b8c6", "f3g1", "f6g8", "c3b1")
    game = from_fen(chess.STARTING_FEN)
    for uci in cycle:
        play(game, uci)
        assert not game.is_terminal(), uci
    play(game, "c6b8")
    assert game.is_terminal(), "the start position came back after eight plies"
    board = chess.Board()
    for uci in cycle:
        board.push_uci(uci)
    replayed = ChessGame(board)
    assert not replayed.is_terminal()
    play(replayed, "c6b8")
    assert replayed.is_terminal(), "the caller's moves count for repetitions"


def test_repetition_counts_from_the_last_capture_and_not_across_a_null_move() -> None:
    game = from_fen("4k3/8/8/8/8/8/r7/R3K3 w - - 0 1")
    play(game, "a1a2", "e8d8", "e1d1", "d8e8")
    assert not game.is_terminal()
    play(game, "d1e1")
    assert game.is_terminal(), "the position right after the capture came back"
    passing = from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    play(passing, "a1a2")
    passing.push_null()
    play(passing, "a2a1")
    passing.push_null()
    assert passing.key() == from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 2 2").key()
    assert not passing.is_terminal(), "passing twice is not a repetition"


def test_fifty_move_rule() -> None:
    game = from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 99 80")
    assert not game.is_terminal()
    play(game, "a1a2")
    assert game.is_terminal()
    assert game.terminal_value() == 0
    assert from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 100 80").is_terminal()


def test_checkmate_beats_the_fifty_move_rule() -> None:
    """Ra8 mates on the hundredth half-move without a capture or pawn move.

    . . . . . . . k
    . . . . . . . .
    . . . . . . K .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    R . . . . . . .
    """
    game = play(from_fen("7k/8/6K1/8/8/8/8/R7 w - - 99 80"), "a1a8")
    assert game.is_terminal()
    assert game.legal_moves() == []
    assert game.terminal_value() == -1


@pytest.mark.parametrize(
    ("fen", "drawn"),
    [
        ("8/8/8/4k3/8/8/8/4K3 w - - 0 1", True),
        ("8/8/8/4k3/8/8/8/3BK3 w - - 0 1", True),
        ("8/8/8/4k3/8/8/8/3NK3 b - - 0 1", True),
        ("8/8/4b3/4k3/8/8/8/4KB2 w - - 0 1", True),
        ("8/8/8/4k3/8/8/8/3RK3 w - - 0 1", False),
        ("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1", False),
        ("8/8/8/4k3/8/8/8/2NNK3 w - - 0 1", False),
        ("8/8/3b4/4k3/8/8/8/4KB2 w - - 0 1", False),
    ],
)
def test_insufficient_material(fen: str, drawn: bool) -> None:
    assert from_fen(fen).is_terminal() == drawn


def test_mate_and_stalemate_values() -> None:
    mated = play(from_fen(chess.STARTING_FEN), "f2f3", "e7e5", "g2g4", "d8h4")
    assert mated.in_check()
    assert mated.legal_moves() == [] and mated.noisy_moves() == [] and mated.quiet_moves() == []
    assert not mated.is_terminal(), "mate is found by the empty move list, not by is_terminal"
    assert mated.terminal_value() == -1
    stalemate = from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert not stalemate.in_check()
    assert stalemate.legal_moves() == []
    assert stalemate.terminal_value() == 0


# -- copies and display --------------------------------------------------------------------


def test_copy_is_independent_and_keeps_the_history() -> None:
    game = play(from_fen(chess.STARTING_FEN), "g1f3", "g8f6", "f3g1")
    twin = game.copy()
    play(twin, "f6g8")
    assert twin.is_terminal(), "the copy remembers the start position"
    assert game.fen() == "rnbqkb1r/pppppppp/5n2/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 3 2"
    twin.pop()
    twin.pop()
    assert twin.fen() == "rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 2 2"
    assert unsigned(game.key()) == zobrist_key(game.board)


def test_copy_generates_moves_as_the_original_does() -> None:
    # Pins and checkers are kept per ply; a copy starts with none and finds its own.
    game = play(from_fen("4k3/8/8/8/1b6/8/3N4/4K2R w K - 0 1"), "e1f1", "b4a5", "f1e1")
    assert "d2b3" not in {game.format_move(m) for m in game.legal_moves()}  # the knight is pinned
    assert game.legal_moves()  # the original fills its per-ply slots first
    twin = game.copy()
    assert twin.legal_moves() == game.legal_moves()
    assert twin.noisy_moves() == game.noisy_moves()
    assert twin.quiet_moves() == game.quiet_moves()
    play(twin, "a5d2")  # takes the pinned knight, with check
    assert twin.in_check()
    assert not game.in_check()
    assert [twin.format_move(m) for m in twin.legal_moves()] == [
        m.uci() for m in twin.board.legal_moves
    ]
    assert "e1d2" in {twin.format_move(m) for m in twin.legal_moves()}
    assert game.legal_moves() == [from_chess(m) for m in game.board.legal_moves]


def test_display_shows_board_fen_key_and_checkers() -> None:
    lines = from_fen(chess.STARTING_FEN).display().splitlines()
    assert lines[1] == " | r | n | b | q | k | b | n | r | 8"
    assert lines[15] == " | R | N | B | Q | K | B | N | R | 1"
    assert lines[17] == "   a   b   c   d   e   f   g   h"
    assert lines[-3:] == [f"Fen: {chess.STARTING_FEN}", "Key: 463B96181691FC9C", "Checkers:"]
    checked = from_fen("4k3/8/8/8/8/8/3q4/3QK3 w - - 0 1").display()
    assert checked.endswith("Checkers: d2")
    assert not checked.endswith("\n")


def test_pickles_compactly_with_its_history() -> None:
    """Games cross pipes to worker processes: the pickle must stay small (no caches) and keep
    the move history, so repetitions are still seen after the trip."""
    game = from_fen("r1bqkbnr/pppppppp/2n5/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 2 2")
    for text in ["f3g1", "c6b8", "g1f3", "b8c6"]:
        game.push(game.parse_move(text))
    game.evaluate()
    data = pickle.dumps(game)
    assert len(data) < 2_000
    twin = pickle.loads(data)
    assert twin.fen() == game.fen()
    assert twin.key() == game.key()
    assert twin.is_terminal() == game.is_terminal()
    assert twin.evaluate() == game.evaluate()
