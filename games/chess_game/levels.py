"""Chess's ``UCI_Elo`` scale, built from its calibration file ``games/data/chess_levels.json``.

Each point is the playing level that scores about 50% against Stockfish 15.1 set to the same
``UCI_Elo`` at 10+0.1, or a level chained below Stockfish's range to a calibrated level of
ours (:mod:`games.calibration`); ``bench/calibrate_levels.py`` measures the points and writes
them to the file with ``--table``, docs/playing.md shows them (a test keeps the two equal),
and the option declares exactly the file's range.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from games.calibration import Calibration

CALIBRATION_PATH: Final = Path(__file__).resolve().parent.parent / "data" / "chess_levels.json"
CHESS_CALIBRATION: Final = Calibration.read(CALIBRATION_PATH)
CHESS_ELO: Final = CHESS_CALIBRATION.scale()
