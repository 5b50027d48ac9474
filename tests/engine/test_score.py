"""Integer scores: mate encoding, TT ply adjustment, UCI reporting and WDL."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.score import (
    DRAW,
    INF,
    MATE,
    MATE_BOUND,
    MAX_PLY,
    TB_BOUND,
    TB_WIN,
    Cp,
    Mate,
    from_tt,
    is_mate,
    mate_in,
    mated_in,
    outcome_score,
    report,
    to_tt,
    value_of,
    wdl,
)


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (0, Cp(0)),
        (137, Cp(137)),
        (-42, Cp(-42)),
        (MATE_BOUND - 1, Cp(MATE_BOUND - 1)),
        (mate_in(1), Mate(1)),
        (mate_in(2), Mate(1)),  # never produced by a search, but rounds to the same move
        (mate_in(3), Mate(2)),
        (mate_in(5), Mate(3)),
        (mated_in(0), Mate(0)),
        (mated_in(2), Mate(-1)),
        (mated_in(4), Mate(-2)),
        (mated_in(6), Mate(-3)),
    ],
)
def test_report_converts_plies_to_moves(score: int, expected: Cp | Mate) -> None:
    assert report(score) == expected


def test_mate_constants_are_ordered() -> None:
    assert INF > MATE > MATE_BOUND > 0
    assert MATE_BOUND == MATE - MAX_PLY
    assert is_mate(mate_in(MAX_PLY)) and is_mate(mated_in(MAX_PLY))
    assert not is_mate(MATE_BOUND - 1)


def test_outcome_score_is_distance_adjusted() -> None:
    assert outcome_score(1, 3) == MATE - 3
    assert outcome_score(-1, 4) == -MATE + 4
    assert outcome_score(0, 7) == DRAW
    # A quicker win scores higher, a later loss scores higher.
    assert outcome_score(1, 1) > outcome_score(1, 5)
    assert outcome_score(-1, 6) > outcome_score(-1, 2)


@settings(max_examples=300, derandomize=True)
@given(
    score=st.integers(min_value=-(MATE - 1), max_value=MATE - 1),
    ply=st.integers(min_value=0, max_value=MAX_PLY - 1),
)
def test_tt_adjustment_round_trips(score: int, ply: int) -> None:
    # Only mate scores reachable at this ply are meaningful there.
    if is_mate(score) and MATE - abs(score) < ply:
        return
    assert from_tt(to_tt(score, ply), ply) == score


def test_tt_adjustment_makes_mates_node_relative() -> None:
    # Mate found 7 plies from the root, stored at a node 3 plies deep: mate in 4 from there.
    assert to_tt(mate_in(7), 3) == mate_in(4)
    assert to_tt(mated_in(7), 3) == mated_in(4)
    # Read back at a node 5 plies deep (a transposition): mate 9 plies from the root.
    assert from_tt(mate_in(4), 5) == mate_in(9)
    assert from_tt(mated_in(4), 5) == mated_in(9)
    assert to_tt(250, 9) == 250 and from_tt(-250, 9) == -250


def test_tt_adjustment_makes_tablebase_results_node_relative() -> None:
    # As mates (Stockfish's value_to_tt): a tablebase win 7 plies from the root, stored at a
    # node 3 plies deep, is a win 4 plies from there, and read back 5 plies deep 9 from the root.
    assert to_tt(TB_WIN - 7, 3) == TB_WIN - 4
    assert to_tt(-(TB_WIN - 7), 3) == -(TB_WIN - 4)
    assert from_tt(TB_WIN - 4, 5) == TB_WIN - 9
    assert from_tt(-(TB_WIN - 4), 5) == -(TB_WIN - 9)
    # The largest score below the tablebase range is an ordinary one.
    assert to_tt(TB_BOUND - 1, 9) == TB_BOUND - 1 and from_tt(1 - TB_BOUND, 9) == 1 - TB_BOUND


@settings(max_examples=300, derandomize=True)
@given(score=st.integers(min_value=-(MATE - 1), max_value=MATE - 1))
def test_wdl_sums_to_1000(score: int) -> None:
    w, d, lo = wdl(score)
    assert w + d + lo == 1000
    assert min(w, d, lo) >= 0


def test_wdl_shape() -> None:
    assert wdl(mate_in(3)) == (1000, 0, 0)
    assert wdl(mated_in(3)) == (0, 0, 1000)
    w, d, lo = wdl(0)
    assert w == lo and d > 500
    assert wdl(300)[0] > wdl(100)[0] > wdl(0)[0]
    assert wdl(-300)[2] > wdl(-100)[2] > wdl(0)[2]


@pytest.mark.parametrize("score", [0, 37, -412, mate_in(1), mate_in(7), mated_in(0), mated_in(4)])
def test_value_of_undoes_report(score: int) -> None:
    """Exact for the plies a mate can be at (odd for the side to move, even against it)."""
    assert value_of(report(score)) == score


@pytest.mark.parametrize("reported", [Cp(-35), Cp(0), Mate(3), Mate(-1), Mate(0)])
def test_reported_scores_cross_a_pickle_unchanged(reported: Cp | Mate) -> None:
    """Scores travel from search workers to sessions by pickle (also when mypyc compiles
    this module, whose frozen classes cannot be filled in field by field)."""
    assert pickle.loads(pickle.dumps(reported)) == reported
