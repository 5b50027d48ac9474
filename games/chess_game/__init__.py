"""Chess through python-chess: the ``chess`` variant of the registry.

* :mod:`~games.chess_game.adapter` — :class:`ChessGame`, the make/unmake adapter;
* :mod:`~games.chess_game.zobrist` — Polyglot-compatible keys, from scratch and per move;
* :mod:`~games.chess_game.evaluation` — the fast evaluation (compiled);
* :mod:`~games.chess_game.features` — the named features, the readable way;
* :mod:`~games.chess_game.notation` — moves parsed with the reason one is refused, the board drawn;
* :mod:`~games.chess_game.book` — Polyglot opening books: checked, moves drawn by weight;
* :mod:`~games.chess_game.book_builder` — Polyglot books made from PGN games.

The default weights live in ``games/data/chess_weights.json`` (flat ``{feature: weight}``,
centipawns).
"""

from __future__ import annotations

from typing import Any, Final

import chess

from engine.game import Game
from games.chess_game.adapter import (
    DEFAULT_WEIGHTS_PATH,
    ChessGame,
    default_evaluator,
    describe_status,
    from_fen,
)
from games.chess_game.book import OpeningBook
from games.chess_game.levels import CHESS_ELO
from games.chess_game.tablebase import FoundTables, SyzygySettings, find_tables
from games.chess_game.zobrist import zobrist_key
from games.variant import FoundTables as AnyFoundTables
from games.variant import Tablebases, TableSettings, Variant, Weights

__all__ = [
    "DEFAULT_WEIGHTS_PATH",
    "VARIANT",
    "ChessGame",
    "default_evaluator",
    "describe_status",
    "from_fen",
    "zobrist_key",
]


def _use_tables(game: Game[Any], found: AnyFoundTables | None, probing: TableSettings) -> None:
    """Give a chess position the Syzygy tables ``found`` (``None``: none) under ``probing``."""
    if not isinstance(game, ChessGame):
        return
    settings = None
    if isinstance(found, FoundTables):
        settings = SyzygySettings.from_found(
            found, probe_depth=probing.depth, probe_limit=probing.limit, rule50=probing.rule50
        )
    game.use_tablebases(settings)


VARIANT: Final = Variant(
    "chess",
    chess.STARTING_FEN,
    from_fen,
    "Standard chess (python-chess adapter)",
    weights=Weights(default_evaluator, from_fen),
    elo_scale=CHESS_ELO,
    open_book=OpeningBook.open,
    tablebases=Tablebases(find_tables, _use_tables),
)
