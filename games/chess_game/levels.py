"""Chess's ``UCI_Elo`` scale: the playing level that scores about 50% against Stockfish 15.1
set to the same ``UCI_Elo``, at 10+0.1 (the README's calibration table gives each point's
games, score and Elo error; ``bench/calibrate_levels.py`` reruns them).

How the points were placed (``bench/calibrate_levels.py probe``, 30 games each against
Stockfish with ``UCI_LimitStrength``, 2026-11-24): ``Skill Level`` 0 scored 8% against 1350
(about 930), 8 scored 35% against 1350 (1242 +/- 136), 12 43% against 1500 (1453 +/- 132),
15 27% against 1650 (1474 +/- 157), 18 27% against 1800 (1624 +/- 157).  A least-squares
line through levels 8-18 (36 Elo a level) puts 1350 at level 10.5, 1500 at 14.7 and 1600 at
17.5.  Stockfish's scale starts at 1350, so nothing below it can be measured against it;
above 1600 the levels run out (their four-line search costs them a ply at this clock, so
even level 19 plays below full strength, which is near 1800-1890 on this scale).  The option
declares exactly the measured range.
"""

from __future__ import annotations

from typing import Final

from engine.skill import EloScale

CHESS_ELO: Final = EloScale(
    points=((1350, 10.5), (1500, 14.7), (1600, 17.5)),
    reference="Stockfish 15.1 UCI_Elo at 10+0.1",
)
