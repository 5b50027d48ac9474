"""Game adapters and their registry.

A variant is chosen by name (the UCI_Variant option); each entry knows its start position and
how to build a position from its FEN dialect.  Games import only the engine's contract.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from engine.game import Game, InvalidPositionError


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    start_fen: str
    from_fen: Callable[[str, bool], Game[Hashable]]
    """Build a position from FEN; the flag is UCI_Chess960 (ignored by games without it)."""
    description: str = ""

    def new(self, fen: str | None = None, *, chess960: bool = False) -> Game[Hashable]:
        """The start position, or the given FEN; raises InvalidPositionError."""
        return self.from_fen(self.start_fen if fen is None else fen, chess960)


GAMES: dict[str, Variant] = {}


def register(variant: Variant) -> Variant:
    GAMES[variant.name] = variant
    return variant


def get_variant(name: str) -> Variant:
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise InvalidPositionError(f"unknown game {name!r} (known: {known})") from None


def _load_builtin() -> None:
    # Imported for their registration side effect; kept here so `import games` is enough.
    from games import chess_game, tictactoe  # noqa: F401, PLC0415


_load_builtin()
