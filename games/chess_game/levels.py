"""Chess's ``UCI_Elo`` scale: which playing level scores about 50% against Stockfish 15.1
set to the same ``UCI_Elo``, at 10+0.1, measured by matches (the README's calibration table
gives each point's games, score and Elo error; ``bench/calibrate_levels.py`` reruns them).

Stockfish 15.1's scale starts at 1350; Brudno at full strength is near 1890 on it (issue 16's
matches), so the measured range is what the option declares and no more.
"""

from __future__ import annotations

from typing import Final

from engine.skill import EloScale

CHESS_ELO: Final = EloScale(
    points=((1350, 0.0), (1800, 17.0)),
    reference="Stockfish 15.1 UCI_Elo at 10+0.1",
)
