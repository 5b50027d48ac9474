"""The referees (game rules: chess through python-chess, other variants through their adapter)
and the PGN they write."""

from __future__ import annotations

import io

import chess.pgn
import pytest

from brudno.arena.openings import Opening
from brudno.arena.referee import (
    ChessReferee,
    GameResult,
    Outcome,
    Termination,
    VariantReferee,
    format_pgn,
)

START = Opening(None, (), "start position")
DRAW = GameResult.DRAW


# -- referees --------------------------------------------------------------------------------
def test_chess_referee_ends_games_by_the_rules() -> None:
    """
    . . . . . . k .
    . . . . . p p p
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    R . . . . . K .     white to move: Ra8#
    """
    referee = ChessReferee(Opening("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", (), "mate"))
    assert referee.outcome() is None
    assert referee.play("a1a8") == "Ra8#"
    outcome = referee.outcome()
    assert outcome == Outcome("1-0", Termination.NORMAL, "White mates")
    stalemate = ChessReferee(Opening("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", (), "stalemate"))
    assert stalemate.outcome() == Outcome(DRAW, Termination.NORMAL, "Draw by stalemate")
    bare = ChessReferee(Opening("8/8/4k3/8/8/3K4/8/8 w - - 0 1", (), "bare kings"))
    assert bare.outcome() is not None
    assert bare.outcome() == Outcome(
        DRAW, Termination.NORMAL, "Draw by insufficient mating material"
    )
    fifty = ChessReferee(Opening("8/8/4k3/8/8/3K4/8/R7 w - - 99 80", (), "fifty"))
    assert fifty.outcome() is None
    fifty.play("a1a2")
    assert fifty.outcome() == Outcome(DRAW, Termination.NORMAL, "Draw by fifty moves rule")


def test_chess_referee_threefold_repetition_and_illegal_moves() -> None:
    referee = ChessReferee(START)
    for _ in range(2):
        for move in ("g1f3", "g8f6", "f3g1", "f6g8"):
            assert referee.outcome() is None
            referee.play(move)
    outcome = referee.outcome()
    assert outcome is not None
    assert outcome.reason == "Draw by 3-fold repetition"
    with pytest.raises(ValueError):
        referee.play("e2e5")
    with pytest.raises(ValueError):
        referee.play("nonsense")


def test_chess_referee_gives_engines_the_start_and_the_moves() -> None:
    referee = ChessReferee(Opening(None, ("e2e4", "c7c5"), "book"))
    position = referee.position()
    assert position.start_fen is None
    assert list(position.moves) == ["e2e4", "c7c5"]
    assert position.board is referee.board
    assert list(referee.notation()) == ["e4", "c5"]
    assert referee.turn == 0
    assert referee.fullmove == 2


def test_variant_referee_plays_tictactoe_through_the_adapter() -> None:
    """
    . . .
    o o .
    X X .     X to move: c1 completes the first rank
    """
    referee = VariantReferee("tictactoe", Opening("3/pp1/PP1[PPPpp] w - - 0 3", (), "x wins"))
    assert referee.outcome() is None
    assert referee.turn == 0
    assert referee.play("P@c1") == "P@c1"
    assert referee.outcome() == Outcome("1-0", Termination.NORMAL, "White wins")
    with pytest.raises(ValueError):
        VariantReferee("tictactoe", START).play("P@z9")
    full = VariantReferee("tictactoe", START)
    for move in ("b2", "a1", "c1", "a3", "a2", "c2", "b1", "b3", "c3"):
        assert full.outcome() is None
        full.play(move)
    outcome = full.outcome()
    assert outcome is not None
    assert outcome.result == DRAW


# -- PGN -------------------------------------------------------------------------------------
def test_pgn_round_trips_through_python_chess() -> None:
    fen = "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4"
    referee = ChessReferee(Opening(fen, ("b5a4",), "noob:1"))
    referee.play("g8f6")
    referee.play("e1g1")
    tags = [
        ("Event", "Brudno match"),
        ("Site", "here"),
        ("Date", "2024.01.02"),
        ("Round", "7"),
        ("White", "Brudno"),
        ("Black", "Stockfish 15.1"),
        ("Result", "1-0"),
        ("FEN", fen),
        ("SetUp", "1"),
        ("TimeControl", "10+0.1"),
        ("Termination", Termination.TIME_FORFEIT),
    ]
    text = format_pgn(
        tags, referee, ["book", "-0.25/9 0.120s", "+0.31/11 0.250s"], "1-0", "Black loses on time"
    )
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert not game.errors
    assert game.headers["Event"] == "Brudno match"
    assert game.headers["Result"] == "1-0"
    assert game.headers["TimeControl"] == "10+0.1"
    assert game.headers["Termination"] == "time forfeit"
    assert game.board().fen() == fen
    assert [m.uci() for m in game.mainline_moves()] == ["b5a4", "g8f6", "e1g1"]
    comments = [node.comment for node in game.mainline()]
    assert comments == ["book", "-0.25/9 0.120s", "+0.31/11 0.250s Black loses on time"]
    assert "4. Ba4 {book} Nf6" in text
    assert "5. O-O" in text


def test_pgn_escapes_tag_values_as_the_standard_says() -> None:
    text = format_pgn([("Event", 'say "hi" \\o/')], ChessReferee(START), [], "*", None)
    assert text.startswith('[Event "say \\"hi\\" \\\\o/"]\n\n')


def test_pgn_move_numbers_when_black_starts() -> None:
    referee = ChessReferee(Opening("4k3/8/8/8/8/8/4P3/4K3 b - - 0 30", (), "b"))
    referee.play("e8d7")
    referee.play("e2e4")
    text = format_pgn([("Result", "*")], referee, [None, None], "*", None)
    assert text.endswith("30... Kd7 31. e4 *\n")
