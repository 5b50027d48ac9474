"""Adjudication: ending a match game before the rules do, so a match does not spend its time
on games whose result is already clear.

Each rule is optional and checked after every engine move (the wording of the options is in
:mod:`brudno.arena.match`'s docstring).  The score rules (:class:`DrawRule`,
:class:`ResignRule`) judge by the engines' own last reported scores, each from its own point of
view, with a mate score beyond any threshold; the others by the position: a move cap
(:func:`max_moves_outcome`) and Syzygy tablebases for chess (:func:`tablebase_outcome`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import chess
import chess.syzygy

from brudno.arena.players import MoveReply
from brudno.arena.referee import COLOUR_NAMES, Outcome, Termination

__all__ = [
    "Adjudicator",
    "DrawRule",
    "ResignRule",
    "max_moves_outcome",
    "tablebase_outcome",
]

_TABLEBASE_MAX_PIECES = 7
"""The most pieces (kings included) a position may have for the Syzygy tables to cover it."""
_WDL_WIN = 2
"""Syzygy's WDL value of a win for the side to move (1 is a cursed win, a draw by the
fifty-move rule)."""
_WDL_LOSS = -2
"""Syzygy's WDL value of a loss for the side to move (-1 is a blessed loss)."""


def _rule_words(words: Sequence[str], names: Sequence[str], what: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or name not in names:
            raise ValueError(f"{what}: expected {'=, '.join(names)}=, got {word!r}")
        values[name] = value
    return values


def _int_field(values: dict[str, str], name: str, what: str, minimum: int = 0) -> int:
    try:
        value = int(values[name])
    except KeyError:
        raise ValueError(f"{what} needs {name}=") from None
    except ValueError:
        raise ValueError(f"{what}: {name} must be an integer, not {values[name]!r}") from None
    if value < minimum:
        raise ValueError(f"{what}: {name} must be at least {minimum}")
    return value


@dataclass(frozen=True, slots=True)
class DrawRule:
    """From move ``movenumber`` on, a draw once both engines' scores have stayed within
    ``score`` centipawns of zero for ``movecount`` consecutive moves each."""

    movenumber: int
    movecount: int
    score: int

    @classmethod
    def parse(cls, words: Sequence[str]) -> DrawRule:
        values = _rule_words(words, ("movenumber", "movecount", "score"), "--draw")
        return cls(
            _int_field(values, "movenumber", "--draw"),
            _int_field(values, "movecount", "--draw", 1),
            _int_field(values, "score", "--draw"),
        )


@dataclass(frozen=True, slots=True)
class ResignRule:
    """An engine loses once its own score has been ``score`` or more centipawns below zero
    for ``movecount`` consecutive moves (``twosided``: and its opponent agrees)."""

    movecount: int
    score: int
    twosided: bool = False

    @classmethod
    def parse(cls, words: Sequence[str]) -> ResignRule:
        values = _rule_words(words, ("movecount", "score", "twosided"), "--resign")
        twosided = values.get("twosided", "false").lower()
        if twosided not in ("true", "false"):
            raise ValueError(f"--resign: twosided must be true or false, not {twosided!r}")
        return cls(
            _int_field(values, "movecount", "--resign", 1),
            _int_field(values, "score", "--resign", 1),
            twosided == "true",
        )


def _reply_score(reply: MoveReply) -> float | None:
    """The mover's score in centipawns; a mate is ±inf (beyond every threshold)."""
    if reply.mate is not None:
        return math.inf if reply.mate > 0 else -math.inf
    return None if reply.cp is None else float(reply.cp)


class Adjudicator:
    """The optional score-based rules, fed one engine move at a time (one per game: it
    counts consecutive moves)."""

    def __init__(self, draw: DrawRule | None, resign: ResignRule | None) -> None:
        self._draw = draw
        self._resign = resign
        self._quiet_plies = 0
        self._losing = [0, 0]
        self._winning = [0, 0]

    def after_move(self, side: int, reply: MoveReply, fullmove: int) -> Outcome | None:
        """Judge after ``side`` moved with ``reply``; ``fullmove`` is the move number now."""
        score = _reply_score(reply)
        draw = self._draw
        if draw is not None:
            within = score is not None and abs(score) <= draw.score
            self._quiet_plies = self._quiet_plies + 1 if within else 0
            if fullmove >= draw.movenumber and self._quiet_plies >= 2 * draw.movecount:
                return Outcome.draw(Termination.ADJUDICATION, "Draw by adjudication")
        resign = self._resign
        if resign is not None:
            losing = score is not None and score <= -resign.score
            winning = score is not None and score >= resign.score
            self._losing[side] = self._losing[side] + 1 if losing else 0
            self._winning[side] = self._winning[side] + 1 if winning else 0
            other = 1 - side
            if self._losing[side] >= resign.movecount and (
                not resign.twosided or self._winning[other] >= resign.movecount
            ):
                return Outcome.win(
                    other, Termination.ADJUDICATION, f"{COLOUR_NAMES[other]} wins by adjudication"
                )
        return None


def max_moves_outcome(fullmove: int, maxmoves: int | None) -> Outcome | None:
    """A draw when move ``maxmoves + 1`` would start (``maxmoves`` None: never)."""
    if maxmoves is not None and fullmove > maxmoves:
        return Outcome.draw(Termination.ADJUDICATION, "Draw by adjudication: maximum moves")
    return None


def tablebase_outcome(tablebase: chess.syzygy.Tablebase, board: chess.Board) -> Outcome | None:
    """The tables' verdict on a position they cover, else None.  Cursed wins and blessed
    losses are draws, as the fifty-move rule makes them."""
    if chess.popcount(board.occupied) > _TABLEBASE_MAX_PIECES or board.castling_rights:
        return None
    try:
        wdl = tablebase.probe_wdl(board)
    except (KeyError, IndexError, OSError, chess.syzygy.MissingTableError):
        return None
    side = 0 if board.turn == chess.WHITE else 1
    if wdl == _WDL_WIN:
        winner = side
    elif wdl == _WDL_LOSS:
        winner = 1 - side
    else:
        return Outcome.draw(Termination.ADJUDICATION, "Draw by adjudication: SyzygyTB")
    return Outcome.win(
        winner, Termination.ADJUDICATION, f"{COLOUR_NAMES[winner]} wins by adjudication: SyzygyTB"
    )
