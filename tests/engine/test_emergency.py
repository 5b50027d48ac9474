"""The emergency move: a one-ply look, not the first generated move (issue 12, 8)."""

from __future__ import annotations

from engine.emergency import emergency_move
from games.registry import get_variant


def test_it_takes_a_mate_in_one() -> None:
    game = get_variant("chess").new("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    move = emergency_move(game)
    assert move is not None and game.format_move(move) == "a1a8"


def test_a_mate_in_one_beats_a_free_queen() -> None:
    """Mate shows as an empty move list, not as ``is_terminal()`` (engine.game's rules)."""
    game = get_variant("chess").new("6k1/5ppp/8/3N4/8/2q5/5PPP/4R1K1 w - - 0 1")
    move = emergency_move(game)
    assert move is not None and game.format_move(move) == "e1e8"


def test_it_takes_the_free_queen_and_leaves_the_position_as_it_was() -> None:
    fen = "4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1"
    game = get_variant("chess").new(fen)
    first = game.format_move(game.legal_moves()[0])
    move = emergency_move(game)
    assert move is not None and game.format_move(move) == "d1d5"
    assert first != "d1d5"  # the first generated move would not have been it
    assert game.fen() == fen


def test_it_wins_at_tictactoe_and_returns_none_without_moves() -> None:
    game = get_variant("tictactoe").new("PP1/pp1/3[PPPpp] w - - 0 3")
    move = emergency_move(game)
    assert move is not None and game.format_move(move) == "P@c3"
    game = get_variant("tictactoe").new("PPp/ppP/PpP[] b - - 0 5")
    assert emergency_move(game) is None


def test_candidates_restrict_the_choice() -> None:
    game = get_variant("chess").new("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1")
    only = [game.parse_move("e1f2")]
    move = emergency_move(game, only)
    assert move is not None and game.format_move(move) == "e1f2"
