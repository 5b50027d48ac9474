"""Write the mobility tables into ``games/data/chess_weights.json``: Stockfish 11's shape,
our level.

    python scripts/mobility_tables.py [--weights PATH] [--check]

Each piece type's ``mobility.{mg,eg}.X.k`` (the value of one piece reaching ``k`` squares of
its mobility area) is Stockfish 11 classical's ``MobilityBonus`` in our units (its middlegame
pawn is 128 to our 67, its endgame pawn 213 to our 97), plus one constant per piece type and
phase: the constant that keeps the table's mean over the sample positions (the STS suite and
the UHO openings of ``../shared/data/chess``, each piece weighted by its phase's share) equal
to the mean of the linear term it replaces (:data:`OLD_LINEAR`: the old weight per square,
counted in the old area, own pieces excluded).  A Texel fit that frees the mobility weights
leaves the file unlike this script's (``--check`` then says so): freeze the ``mobility``
group, or ship the fit and drop the check.  So a piece's average worth, which the
material and square weights were fitted around, stays; only the shape is Stockfish's.  Why:
docs/evaluation.md, *Mobility*.  ``--check`` exits 1 when the file's tables differ from what
the script computes (nothing is random: the same data give the same numbers).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import chess

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from games.chess_game.evaluation import MOBILITY_COUNTS, TAPER, TAPER_MAX  # noqa: E402
from games.chess_game.features import game_phase, mobility_counts  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "chess"
SAMPLES = (
    DATA / "suites" / "STS1-STS15_LAN_v3.epd",
    DATA / "openings" / "UHO_4060_v4_every48th.epd",
)

STOCKFISH_11 = {
    "N": [(-62, -81), (-53, -56), (-12, -30), (-4, -14), (3, 8), (13, 15), (22, 23), (28, 27),
          (33, 33)],
    "B": [(-48, -59), (-20, -23), (16, -3), (26, 13), (38, 24), (51, 42), (55, 54), (63, 57),
          (63, 65), (68, 73), (81, 78), (81, 86), (91, 88), (98, 97)],
    "R": [(-58, -76), (-27, -18), (-15, 28), (-10, 55), (-5, 69), (-2, 82), (9, 112),
          (16, 118), (30, 132), (29, 142), (32, 155), (38, 165), (46, 166), (48, 169),
          (58, 171)],
    "Q": [(-39, -36), (-21, -15), (3, 8), (3, 18), (14, 34), (22, 54), (28, 61), (41, 73),
          (43, 79), (48, 92), (56, 94), (60, 104), (60, 113), (66, 120), (67, 123), (70, 126),
          (71, 133), (73, 136), (79, 140), (88, 143), (88, 148), (99, 166), (102, 170),
          (102, 175), (106, 184), (109, 191), (113, 206), (116, 212)],
}  # fmt: skip
"""``MobilityBonus`` of Stockfish 11's ``evaluate.cpp``, (mg, eg) by count."""
SCALE = {"mg": 67 / 128, "eg": 97 / 213}
"""Stockfish's pawn to ours, per phase."""
OLD_LINEAR = {"mg": {"N": 6, "B": 4, "R": 4, "Q": 2}, "eg": {"N": 2, "B": 3, "R": 1, "Q": 5}}
"""The linear weights per square these tables replace (main ac47cdf)."""


def _old_counts(board: chess.Board, color: chess.Color) -> dict[str, list[int]]:
    """Each piece's squares in the old area (no own piece, no enemy pawn attack)."""
    own = chess.SquareSet(board.occupied_co[color])
    guarded = chess.SquareSet()
    for square in board.pieces(chess.PAWN, not color):
        guarded |= board.attacks(square)
    return {
        letter: [
            len(board.attacks(square) - own - guarded) for square in board.pieces(piece_type, color)
        ]
        for piece_type, letter in zip(
            (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN), "NBRQ", strict=True
        )
    }


def tables() -> dict[str, int]:
    """The mobility weights by name, from the sample positions."""
    # Per phase and piece type: the phase-weighted number of pieces, the old linear term's
    # sum over them, and the scaled Stockfish table's.
    pieces = {phase: dict.fromkeys("NBRQ", 0.0) for phase in SCALE}
    old = {phase: dict.fromkeys("NBRQ", 0.0) for phase in SCALE}
    new = {phase: dict.fromkeys("NBRQ", 0.0) for phase in SCALE}
    for path in SAMPLES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            board = chess.Board(" ".join(line.split()[:4]) + " 0 1")
            share = {"mg": TAPER[game_phase(board)] / TAPER_MAX}
            share["eg"] = 1 - share["mg"]
            for color in chess.COLORS:
                counts = mobility_counts(board, color)
                for letter, old_counts in _old_counts(board, color).items():
                    for phase, weight in share.items():
                        pieces[phase][letter] += weight * len(old_counts)
                        old[phase][letter] += weight * OLD_LINEAR[phase][letter] * sum(old_counts)
                for name, n in counts.items():
                    letter, _, k = name.removeprefix("mobility.").partition(".")
                    for phase, weight in share.items():
                        index = 0 if phase == "mg" else 1
                        value = SCALE[phase] * STOCKFISH_11[letter][int(k)][index]
                        new[phase][letter] += weight * n * value
    weights: dict[str, int] = {}
    for phase, scale in SCALE.items():
        index = 0 if phase == "mg" else 1
        for letter, counts_range in MOBILITY_COUNTS.items():
            shift = (old[phase][letter] - new[phase][letter]) / pieces[phase][letter]
            for k in counts_range:
                value = scale * STOCKFISH_11[letter][k][index] + shift
                weights[f"mobility.{phase}.{letter}.{k}"] = round(value)
    return weights


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--weights", type=Path, default=REPO / "games" / "data" / "chess_weights.json"
    )
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    weights = json.loads(args.weights.read_text(encoding="utf-8"))
    computed = tables()
    if args.check:
        same = all(weights.get(name) == value for name, value in computed.items())
        print("the same" if same else "different")
        return 0 if same else 1
    # The tables take the linear terms' place in the file's order.
    out: dict[str, int] = {}
    for name, value in weights.items():
        group, _, rest = name.partition(".")
        if group == "mobility":
            if rest.count(".") == 1:  # the old linear mobility.mg.N: its table goes here
                phase, _, letter = rest.partition(".")
                for k in MOBILITY_COUNTS[letter]:
                    key = f"mobility.{phase}.{letter}.{k}"
                    out[key] = computed[key]
            continue
        out[name] = value
    for name, value in computed.items():
        out[name] = value  # a file that has the tables already: refreshed in place
    args.weights.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(computed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
