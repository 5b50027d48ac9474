"""Connect Four: the board (:mod:`~games.connect4.board`), its exact solver
(:mod:`~games.connect4.solver`, which builds on the board) and the variant made of both.

The solver imports the board and this module imports both, so there is no circle and the
solver is an ordinary attribute of the variant, not a lazy import."""

from __future__ import annotations

from typing import Final

from games.connect4.board import START_FEN, from_fen
from games.connect4.solver import solve_for_uci
from games.variant import Variant

VARIANT: Final = Variant(
    "cfour",
    START_FEN,
    from_fen,
    "Connect Four 7x6 (Fairy-Stockfish/cutechess notation; exact solver)",
    solve=solve_for_uci,
)
