"""Integer scores, always from the side to move's point of view.

Why integers: the search compares and negates scores billions of times; ints are exact,
hashable and cheap, and a mate score can carry its distance in the low bits.

A mate found ``n`` plies from the *root* is stored as ``MATE - n`` (winning) or ``-(MATE - n)``
(losing), a tablebase win ``TB_WIN - n``.  The transposition table is shared by nodes at
different plies, so entries hold the distance from the *node* instead: :func:`to_tt` on store,
:func:`from_tt` on probe, for mates and tablebase results alike (Stockfish's ``value_to_tt``
and ``value_from_tt``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MATE: Final = 30_000
"""Score of a side that mates on the spot (never reached: a mate is at least one ply away)."""

MAX_PLY: Final = 512
"""Deepest ply a search may reach; bounds mate distances."""

MATE_BOUND: Final = MATE - MAX_PLY
"""Scores with ``abs(score) >= MATE_BOUND`` are mate scores."""

TB_WIN: Final = MATE_BOUND - MAX_PLY
"""Score of a position the tablebases call won, at the node where they say so (a win found
``ply`` plies from the root scores ``TB_WIN - ply``).  Below every mate score, so a mate the
search proves is preferred to a tablebase win, and reported as centipawns (UCI has no word
for "won, distance unknown")."""

TB_BOUND: Final = TB_WIN - MAX_PLY
"""Scores with ``TB_BOUND <= abs(score) < MATE_BOUND`` are tablebase wins or losses."""

INF: Final = MATE + 1
"""Strictly greater than any real score; the open window is (-INF, INF)."""

DRAW: Final = 0


def mate_in(ply: int) -> int:
    """Score for giving mate ``ply`` plies from the root."""
    return MATE - ply


def mated_in(ply: int) -> int:
    """Score for being mated ``ply`` plies from the root."""
    return -MATE + ply


def is_mate(score: int) -> bool:
    return abs(score) >= MATE_BOUND


def to_tt(score: int, ply: int) -> int:
    """Make a root-relative mate or tablebase score node-relative before storing it."""
    if score >= TB_BOUND:
        return score + ply
    if score <= -TB_BOUND:
        return score - ply
    return score


def from_tt(score: int, ply: int) -> int:
    """Inverse of :func:`to_tt`, applied when a node at ``ply`` reads an entry."""
    if score >= TB_BOUND:
        return score - ply
    if score <= -TB_BOUND:
        return score + ply
    return score


def outcome_score(outcome: int, ply: int) -> int:
    """Turn a game outcome (-1 loss, 0 draw, +1 win for the side to move) into a score."""
    if outcome > 0:
        return mate_in(ply)
    if outcome < 0:
        return mated_in(ply)
    return DRAW


@dataclass(frozen=True, slots=True)
class Cp:
    """A heuristic score in centipawns (or the game's equivalent unit)."""

    value: int

    def __reduce__(self) -> tuple[type[Cp], tuple[int]]:
        # Pickled by value: mypyc compiles this module, and pickle's default for a class
        # without __dict__ would set the fields one by one, which a frozen class refuses.
        return Cp, (self.value,)


@dataclass(frozen=True, slots=True)
class Mate:
    """A forced mate in ``moves`` full moves; negative when the side to move gets mated.

    ``Mate(0)`` is the side to move being mated already (as UCI's ``score mate 0``).
    """

    moves: int

    def __reduce__(self) -> tuple[type[Mate], tuple[int]]:
        return Mate, (self.moves,)  # by value, as Cp


Reported = Cp | Mate


def report(score: int) -> Reported:
    """Convert a root score into what UCI reports: ``Cp`` or ``Mate`` in moves (not plies)."""
    if score >= MATE_BOUND:
        return Mate((MATE - score + 1) // 2)
    if score <= -MATE_BOUND:
        return Mate(-((MATE + score) // 2))
    return Cp(score)


def value_of(reported: Reported) -> int:
    """The root score that :func:`report` turned into ``reported`` (mates to the nearest ply:
    a mate in ``n`` moves for the side to move is ``2n - 1`` plies away, a mated in ``n``
    ``2n``), so that reported lines can be compared as numbers again."""
    if isinstance(reported, Cp):
        return reported.value
    if reported.moves > 0:
        return MATE - (2 * reported.moves - 1)
    return -MATE + 2 * -reported.moves


def wdl(score: int, scale: float = 200.0) -> tuple[int, int, int]:
    """Win/draw/loss per mille for a root score (UCI_ShowWDL).

    A logistic expectation E = 1 / (1 + 10^(-cp/scale·…)) split so that draws are likeliest
    near 0 and vanish as |cp| grows; mates are certain.  Game-agnostic: ``scale`` is the
    score at which the side to move is clearly better (two pawns in chess).
    """
    if score >= MATE_BOUND:
        return 1000, 0, 0
    if score <= -MATE_BOUND:
        return 0, 0, 1000
    win = 1.0 / (1.0 + 10.0 ** ((scale - score) / scale))
    loss = 1.0 / (1.0 + 10.0 ** ((scale + score) / scale))
    w = round(1000 * win)
    lo = round(1000 * loss)
    return w, 1000 - w - lo, lo
