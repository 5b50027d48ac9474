"""Connect Four: the board (:mod:`~games.connect4.board`), its exact solver
(:mod:`~games.connect4.solver`), its opening book (:mod:`~games.connect4.book`), the play
policy over both (:mod:`~games.connect4.play`) and the variant made of them.

Each builds on the ones before it and this module imports the last, so there is no circle and
the play hook is an ordinary attribute of the variant, not a lazy import."""

from __future__ import annotations

from typing import Final

from games.connect4.board import START_FEN, from_fen
from games.connect4.play import solve_for_uci
from games.variant import Variant

VARIANT: Final = Variant(
    "cfour",
    START_FEN,
    from_fen,
    "Connect Four 7x6 (Fairy-Stockfish/cutechess notation; exact solver)",
    solve=solve_for_uci,
)
