"""The variants Brudno plays, by name (the ``UCI_Variant`` option).

One explicit table of each game's ``VARIANT`` constant: importing a game module registers
nothing, so no module depends on import order and a game can be imported on its own.
"""

from __future__ import annotations

from typing import Final

from engine.game import InvalidPositionError
from games import chess_game, connect4, grundy, tictactoe
from games.variant import Variant

GAMES: Final[dict[str, Variant]] = {
    variant.name: variant
    for variant in (chess_game.VARIANT, connect4.VARIANT, grundy.VARIANT, tictactoe.VARIANT)
}


def get_variant(name: str) -> Variant:
    """The variant called ``name``; InvalidPositionError (naming the known ones) otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise InvalidPositionError(f"unknown game {name!r} (known: {known})") from None
