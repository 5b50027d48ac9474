"""Adjudication rules of a match: parsing ``--draw``/``--resign`` and judging move by move."""

from __future__ import annotations

import pytest

from brudno.arena.adjudication import Adjudicator, DrawRule, ResignRule
from brudno.arena.players import MoveReply
from brudno.arena.referee import GameResult, Outcome, Termination

DRAW = GameResult.DRAW


# -- adjudication ----------------------------------------------------------------------------
def test_rule_parsing() -> None:
    assert DrawRule.parse(["movenumber=40", "movecount=8", "score=10"]) == DrawRule(40, 8, 10)
    assert ResignRule.parse(["movecount=3", "score=900"]) == ResignRule(3, 900, False)
    assert ResignRule.parse(["movecount=3", "score=900", "twosided=true"]).twosided
    for bad in (["movenumber=40"], ["movenumber=x", "movecount=1", "score=1"], ["depth=3"]):
        with pytest.raises(ValueError):
            DrawRule.parse(bad)
    with pytest.raises(ValueError):
        ResignRule.parse(["movecount=3", "score=900", "twosided=maybe"])


def reply(cp: int | None = None, mate: int | None = None) -> MoveReply:
    return MoveReply("e2e4", 0.01, cp, mate, 5)


def test_draw_adjudication_needs_both_sides_quiet_for_movecount_moves() -> None:
    judge = Adjudicator(DrawRule(movenumber=10, movecount=2, score=20), None)
    # before move 10 nothing happens, however quiet
    for ply in range(6):
        assert judge.after_move(ply % 2, reply(cp=0), fullmove=5) is None
    judge = Adjudicator(DrawRule(movenumber=10, movecount=2, score=20), None)
    assert judge.after_move(0, reply(cp=5), 12) is None
    assert judge.after_move(1, reply(cp=-25), 12) is None  # outside the band: count restarts
    assert judge.after_move(0, reply(cp=20), 13) is None
    assert judge.after_move(1, reply(cp=-3), 13) is None
    assert judge.after_move(0, reply(cp=0), 14) is None
    outcome = judge.after_move(1, reply(cp=1), 14)
    assert outcome == Outcome(DRAW, Termination.ADJUDICATION, "Draw by adjudication")
    judge = Adjudicator(DrawRule(0, 1, 50), None)
    assert judge.after_move(0, reply(mate=9), 30) is None  # a mate score is never "quiet"
    assert judge.after_move(1, reply(cp=None), 30) is None  # nor is a missing one


def test_resign_adjudication() -> None:
    judge = Adjudicator(None, ResignRule(movecount=2, score=500))
    assert judge.after_move(0, reply(cp=-600), 20) is None
    assert judge.after_move(1, reply(cp=650), 20) is None
    outcome = judge.after_move(0, reply(mate=-4), 21)  # white's second hopeless move
    assert outcome is not None
    assert outcome.result == "0-1"
    assert outcome.termination == Termination.ADJUDICATION
    assert outcome.reason == "Black wins by adjudication"


def test_two_sided_resign_needs_the_winner_to_agree() -> None:
    judge = Adjudicator(None, ResignRule(movecount=1, score=300, twosided=True))
    assert judge.after_move(0, reply(cp=100), 1) is None
    assert judge.after_move(1, reply(cp=-400), 1) is None  # white never claimed +300
    assert judge.after_move(0, reply(cp=350), 2) is None
    outcome = judge.after_move(1, reply(cp=-400), 2)
    assert outcome is not None
    assert outcome.result == "1-0"
