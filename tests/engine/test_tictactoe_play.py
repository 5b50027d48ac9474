"""The engine never loses tic-tac-toe: exhaustive play against every opponent, as X and as O.

Every reply of the engine is cached per position, so each distinct position is searched once;
the opponent tries every legal move everywhere.  Beyond "never loses", every engine move must
keep the exact game value (checked against the test's own solver): perfect play.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.game import Game
from engine.limits import Limits
from engine.score import Cp
from engine.search import Searcher
from games.registry import get_variant
from tests.support.toy_game import solve


class Tally:
    def __init__(self) -> None:
        self.games = 0
        self.engine_wins = 0
        self.draws = 0
        self.losses: list[str] = []


def explore(
    game: Game[Any], engine_side: int, searcher: Searcher, replies: dict[int, Any], tally: Tally
) -> None:
    """Play the engine's cached reply, or every opponent move, until each game ends."""
    if game.is_terminal() or not game.legal_moves():
        tally.games += 1
        outcome = game.terminal_value()  # for the side to move
        if outcome == 0:
            tally.draws += 1
        elif (game.side == engine_side) == (outcome > 0):
            tally.engine_wins += 1
        else:
            tally.losses.append(game.fen())
        return
    if game.side == engine_side:
        key = game.key()
        if key not in replies:
            result = searcher.search(game.copy(), Limits(depth=9))
            assert result.best is not None
            move = game.parse_move(result.best)
            game.push(move)
            kept = -solve(game, 1)
            game.pop()
            assert kept == solve(game), f"{result.best} gives away value in {game.fen()}"
            replies[key] = move
        candidates = [replies[key]]
    else:
        candidates = game.legal_moves()
    for move in candidates:
        game.push(move)
        explore(game, engine_side, searcher, replies, tally)
        game.pop()


@pytest.mark.parametrize(("engine_side", "name"), [(0, "X"), (1, "O")])
def test_engine_never_loses(engine_side: int, name: str) -> None:
    tally = Tally()
    explore(get_variant("tictactoe").new(), engine_side, Searcher(1), {}, tally)
    assert tally.losses == [], f"the engine as {name} lost"
    assert tally.games == tally.engine_wins + tally.draws
    # The opponent's blunders get punished: most games against all sequences are wins.
    assert tally.engine_wins > tally.draws > 0


def test_start_position_is_a_draw() -> None:
    game = get_variant("tictactoe").new()
    assert solve(game) == 0
    for depth in (9, 12):
        result = Searcher(1).search(game, Limits(depth=depth))
        assert result.score == Cp(0)
        assert len(result.pv) == 9  # played out to a full board
