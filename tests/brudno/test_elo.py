"""Match statistics: logistic Elo, normal-approximation intervals, LOS, and the GSPRT.

Reference numbers were computed by hand from the formulas in the module docstring; the GSPRT
is checked against a direct maximum-likelihood search and against the normal
approximation it converges to.
"""

from __future__ import annotations

import math

import pytest

from brudno.arena.stats import (
    PENTANOMIAL_SCORES,
    TRINOMIAL_SCORES,
    Sprt,
    SprtDecision,
    elo_estimate,
    elo_estimate_pentanomial,
    elo_from_score,
    gsprt_llr,
    los,
    score_from_elo,
)


def test_elo_and_score_are_inverse_logistic_functions() -> None:
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.75) == pytest.approx(190.8485, abs=1e-4)
    assert elo_from_score(0.25) == pytest.approx(-190.8485, abs=1e-4)
    assert score_from_elo(400.0) == pytest.approx(10 / 11)
    for elo in (-600.0, -35.5, 0.0, 12.0, 800.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo)
    assert elo_from_score(1.0) == math.inf
    assert elo_from_score(0.0) == -math.inf


def test_trinomial_interval() -> None:
    # W 60 D 20 L 20: s = 0.7, per-game variance 0.16, standard error 0.04.
    estimate = elo_estimate(60, 20, 20)
    assert estimate.elo == pytest.approx(147.1907, abs=1e-3)
    assert estimate.lower == pytest.approx(86.2250, abs=1e-3)
    assert estimate.upper == pytest.approx(218.2518, abs=1e-3)
    assert estimate.margin == pytest.approx((218.2518 - 86.2250) / 2, abs=1e-3)
    assert estimate.text() == "+147.2 +/- 66.0"


def test_interval_narrows_with_more_games_and_is_unbounded_at_extremes() -> None:
    assert elo_estimate(600, 200, 200).margin < elo_estimate(60, 20, 20).margin / 3
    assert elo_estimate(0, 10, 0).text() == "+0.0 +/- 0.0"
    assert elo_estimate(5, 0, 0).elo == math.inf
    assert elo_estimate(5, 0, 0).text() == "+inf +/- inf"
    empty = elo_estimate(0, 0, 0)
    assert (empty.lower, empty.upper) == (-math.inf, math.inf)


def test_pentanomial_interval() -> None:
    # 100 pairs [5, 20, 40, 25, 10]: mean pair score 0.5375.
    estimate = elo_estimate_pentanomial([5, 20, 40, 25, 10])
    assert estimate.elo == pytest.approx(26.1067, abs=1e-3)
    assert estimate.lower == pytest.approx(-8.4570, abs=1e-3)
    assert estimate.upper == pytest.approx(61.1958, abs=1e-3)
    with pytest.raises(ValueError):
        elo_estimate_pentanomial([1, 2, 3])


def test_los() -> None:
    assert los(10, 0) == pytest.approx(0.999217, abs=1e-6)
    assert los(30, 20) == pytest.approx(0.921350, abs=1e-6)
    assert los(20, 30) == pytest.approx(1 - 0.921350, abs=1e-6)
    assert los(7, 7) == 0.5
    assert los(0, 0) == 0.5


def test_sprt_bounds_and_parsing() -> None:
    sprt = Sprt.parse(["elo0=0", "elo1=10", "alpha=0.05", "beta=0.05"])
    assert sprt == Sprt(0.0, 10.0, 0.05, 0.05)
    assert sprt.lower == pytest.approx(-2.944439, abs=1e-6)
    assert sprt.upper == pytest.approx(2.944439, abs=1e-6)
    assert Sprt.parse(["elo1=5"]) == Sprt(0.0, 5.0, 0.05, 0.05)
    assert Sprt(0, 5, 0.1, 0.2).lower == pytest.approx(math.log(0.2 / 0.9))
    for bad in (["elo0=5", "elo1=5"], ["gamma=1"], ["elo1=ten"], ["alpha=0.7"], ["elo1"]):
        with pytest.raises(ValueError):
            Sprt.parse(bad)


def _direct_trinomial_llr(losses: int, draws: int, wins: int, elo0: float, elo1: float) -> float:
    """Maximise the trinomial log-likelihood along each hypothesis' constraint line directly:
    with the mean fixed the only free parameter is the draw probability, and the likelihood
    is concave in it (a sum of logs of affine functions), so a ternary search finds its
    maximum.  Independent of the module's Lagrange-multiplier solution."""
    counts = (losses, draws, wins)

    def loglik(score: float, p_draw: float) -> float:
        p_win = score - p_draw / 2
        probs = (1 - p_draw - p_win, p_draw, p_win)
        return sum(c * math.log(p) for c, p in zip(counts, probs, strict=True))

    def best(score: float) -> float:
        lo, hi = 1e-12, min(1.0, 2 * score, 2 * (1 - score)) - 1e-12
        for _ in range(200):
            a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            if loglik(score, a) < loglik(score, b):
                lo = a
            else:
                hi = b
        return loglik(score, (lo + hi) / 2)

    return best(score_from_elo(elo1)) - best(score_from_elo(elo0))


def test_gsprt_matches_a_direct_maximum_likelihood_search() -> None:
    for losses, draws, wins in ((30, 40, 45), (50, 120, 40), (12, 3, 20)):
        llr = gsprt_llr((losses, draws, wins), TRINOMIAL_SCORES, -5.0, 15.0)
        reference = _direct_trinomial_llr(losses, draws, wins, -5.0, 15.0)
        assert llr == pytest.approx(reference, abs=1e-6)


def test_gsprt_agrees_with_the_normal_approximation_for_many_games() -> None:
    losses, draws, wins = 3000, 4200, 3300
    n = losses + draws + wins
    mean = (wins + draws / 2) / n
    var = (wins * (1 - mean) ** 2 + draws * (0.5 - mean) ** 2 + losses * mean**2) / n
    s0, s1 = score_from_elo(0.0), score_from_elo(10.0)
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    llr = gsprt_llr((losses, draws, wins), TRINOMIAL_SCORES, 0.0, 10.0)
    assert llr == pytest.approx(approx, rel=0.02)
    assert llr > 2.94  # +10 Elo over 10,500 games: H1


def test_sprt_decisions() -> None:
    sprt = Sprt(0.0, 10.0)
    assert sprt.trinomial(0, 0, 0).llr == 0.0
    assert sprt.trinomial(0, 0, 0).decision is SprtDecision.CONTINUE
    strong = sprt.pentanomial([100, 400, 900, 500, 300])
    assert strong.decision is SprtDecision.H1
    assert strong.progress == 1.0
    weak = sprt.pentanomial([300, 500, 900, 400, 100])
    assert weak.decision is SprtDecision.H0
    assert weak.progress == -1.0
    even = sprt.pentanomial([10, 40, 60, 40, 10])
    assert even.decision is SprtDecision.CONTINUE
    assert even.llr < 0  # an even score is nearer to H0 (0 Elo) than to H1
    assert even.model == "pentanomial"


def test_pentanomial_llr_is_symmetric_in_the_hypotheses() -> None:
    counts = [8, 30, 50, 35, 9]
    forward = gsprt_llr(counts, PENTANOMIAL_SCORES, -3.0, 7.0)
    backward = gsprt_llr(counts, PENTANOMIAL_SCORES, 7.0, -3.0)
    assert forward == pytest.approx(-backward)
