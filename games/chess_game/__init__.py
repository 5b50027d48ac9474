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

from typing import Final

import chess

from games.chess_game.adapter import (
    DEFAULT_WEIGHTS_PATH,
    ChessGame,
    default_evaluator,
    describe_status,
    from_fen,
)
from games.chess_game.levels import CHESS_ELO
from games.chess_game.zobrist import zobrist_key
from games.variant import Variant, Weights

__all__ = [
    "DEFAULT_WEIGHTS_PATH",
    "VARIANT",
    "ChessGame",
    "default_evaluator",
    "describe_status",
    "from_fen",
    "zobrist_key",
]

VARIANT: Final = Variant(
    "chess",
    chess.STARTING_FEN,
    from_fen,
    "Standard chess (python-chess adapter)",
    weights=Weights(default_evaluator, from_fen),
    elo_scale=CHESS_ELO,
)
