"""Match statistics: Elo difference with a confidence interval, LOS, and the SPRT.

Pure functions of game counts, so the match runner, scripts and tests agree on the numbers.
The model is the logistic Elo model (``-400·log10(1/s - 1)`` for a score fraction ``s``), as
in cutechess, fastchess and the rating lists.  Intervals are the normal approximation on the
score mapped through it (so not symmetric far from 50%), per game (trinomial) or per game pair
(pentanomial).  LOS is ``Φ((W - L) / √(W + L))``.  The SPRT is fishtest's and fastchess's
generalised SPRT on logistic Elo, on pentanomial counts when games come in pairs, with Wald's
bounds.

Why these models, and the GSPRT's maximum-likelihood step: docs/development.md, *Match rules
and statistics*.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "PENTANOMIAL_SCORES",
    "TRINOMIAL_SCORES",
    "EloEstimate",
    "Sprt",
    "SprtDecision",
    "SprtModel",
    "SprtState",
    "elo_estimate",
    "elo_estimate_pentanomial",
    "elo_from_score",
    "gsprt_llr",
    "los",
    "score_from_elo",
]

TRINOMIAL_SCORES: tuple[float, float, float] = (0.0, 0.5, 1.0)
"""Per-game score of a loss, a draw, a win (the order of the W/D/L counts is L, D, W)."""

PENTANOMIAL_SCORES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Per-game score of a game pair worth 0, ½, 1, 1½, 2 points."""

_MAX_ERROR_RATE = 0.5
"""The SPRT's error rates lie below this: at 0.5 a test would be no better than a coin toss."""

_ZERO_COUNT = 1e-3
"""Stand-in for an empty outcome class in the SPRT (fishtest's regularisation): without it a
few early games would declare some outcome impossible and the MLE could not move any mass to
it, which makes the LLR jump."""


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for a score fraction; ±inf at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score fraction of the side that is ``elo`` points stronger."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """A point estimate with its confidence interval, in Elo (possibly ±inf)."""

    elo: float
    lower: float
    upper: float
    confidence: float

    @property
    def margin(self) -> float:
        """Half the interval's width: the ``±`` figure match tools print."""
        return (self.upper - self.lower) / 2.0

    def text(self) -> str:
        """``+12.3 +/- 25.4`` (the form cutechess prints), or ``inf`` when unbounded."""
        return f"{_signed(self.elo)} +/- {_plain(self.margin)}"


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value + 0.0:+.1f}"  # + 0.0 turns -0.0 (a 50% score) into +0.0


def _plain(value: float) -> str:
    if math.isinf(value) or math.isnan(value):
        return "inf"
    return f"{value:.1f}"


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _estimate(counts: Sequence[float], scores: Sequence[float], confidence: float) -> EloEstimate:
    """Mean score of the samples, its normal interval, both mapped to Elo."""
    n = sum(counts)
    if n <= 0:
        return EloEstimate(0.0, -math.inf, math.inf, confidence)
    mean = sum(c * a for c, a in zip(counts, scores, strict=True)) / n
    variance = sum(c * (a - mean) ** 2 for c, a in zip(counts, scores, strict=True)) / n
    half = _z(confidence) * math.sqrt(variance / n)
    return EloEstimate(
        elo_from_score(mean),
        elo_from_score(mean - half),
        elo_from_score(mean + half),
        confidence,
    )


def elo_estimate(wins: int, draws: int, losses: int, confidence: float = 0.95) -> EloEstimate:
    """Elo of the first engine over the second from its W/D/L, with a normal-approximation
    interval on the per-game score (trinomial model)."""
    return _estimate((losses, draws, wins), TRINOMIAL_SCORES, confidence)


def elo_estimate_pentanomial(pairs: Sequence[int], confidence: float = 0.95) -> EloEstimate:
    """Elo from game-pair counts ``[LL, LD+DL, LW+DD+WL, DW+WD, WW]`` (0 to 2 points), with a
    normal-approximation interval on the per-pair score (pentanomial model)."""
    if len(pairs) != len(PENTANOMIAL_SCORES):
        raise ValueError(f"pentanomial counts need 5 entries, got {len(pairs)}")
    return _estimate(pairs, PENTANOMIAL_SCORES, confidence)


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority in [0, 1]: ``Φ((W - L) / √(W + L))``; 0.5 with no decisive
    game (nothing is known)."""
    decisive = wins + losses
    if decisive == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * decisive)))


def _mle_with_mean(probs: Sequence[float], scores: Sequence[float], mean: float) -> list[float]:
    """The distribution closest to ``probs`` (maximum likelihood) whose expected score is
    ``mean``: ``p_i = probs_i / (1 + λ·(a_i - mean))``.

    ``f(λ) = Σ probs_i·(a_i - mean)/(1 + λ·(a_i - mean))`` is strictly decreasing on the
    interval where every denominator is positive, with poles at both ends, so its unique root
    is found by bisection; 200 halvings reach full double precision.
    """
    shifted = [a - mean for a in scores]
    top = max(shifted)
    bottom = min(shifted)
    if top <= 0.0 or bottom >= 0.0:
        raise ValueError(f"the mean {mean} is not strictly inside the outcome scores")
    lo = -1.0 / top
    hi = -1.0 / bottom
    for _ in range(200):
        lam = (lo + hi) / 2.0
        if lam in (lo, hi):
            break
        value = sum(p * x / (1.0 + lam * x) for p, x in zip(probs, shifted, strict=True))
        if value > 0.0:
            lo = lam
        else:
            hi = lam
    lam = (lo + hi) / 2.0
    raw = [p / (1.0 + lam * x) for p, x in zip(probs, shifted, strict=True)]
    total = sum(raw)
    return [r / total for r in raw]


def gsprt_llr(counts: Sequence[float], scores: Sequence[float], elo0: float, elo1: float) -> float:
    """Generalised-SPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``).

    ``counts[i]`` samples had score ``scores[i]`` (games with :data:`TRINOMIAL_SCORES`, pairs
    with :data:`PENTANOMIAL_SCORES`).  Zero when there are no samples.
    """
    if len(counts) != len(scores):
        raise ValueError("counts and scores differ in length")
    n = sum(counts)
    if n <= 0:
        return 0.0
    regular = [c if c > 0 else _ZERO_COUNT for c in counts]
    total = sum(regular)
    empirical = [c / total for c in regular]
    p0 = _mle_with_mean(empirical, scores, score_from_elo(elo0))
    p1 = _mle_with_mean(empirical, scores, score_from_elo(elo1))
    return n * sum(p * math.log(b / a) for p, a, b in zip(empirical, p0, p1, strict=True) if p > 0)


class SprtDecision(enum.StrEnum):
    """What the test says so far; the value is how the match prints it."""

    CONTINUE = "continue"
    H0 = "H0 accepted"
    H1 = "H1 accepted"


class SprtModel(enum.StrEnum):
    """Which counts the LLR is computed from: game pairs, or single games (W/D/L)."""

    PENTANOMIAL = "pentanomial"
    TRINOMIAL = "trinomial"


@dataclass(frozen=True, slots=True)
class SprtState:
    """One evaluation of the test: the LLR, Wald's bounds and what they say."""

    llr: float
    lower: float
    upper: float
    decision: SprtDecision
    model: SprtModel

    @property
    def progress(self) -> float:
        """How far the LLR has gone toward the bound it is heading for, in [-1, 1]
        (fastchess prints it as a percentage)."""
        if self.llr >= 0:
            return min(1.0, self.llr / self.upper)
        return max(-1.0, -self.llr / self.lower)


@dataclass(frozen=True, slots=True)
class Sprt:
    """SPRT parameters: H0 Elo = ``elo0`` against H1 Elo = ``elo1`` (logistic Elo), with
    false-positive rate ``alpha`` and false-negative rate ``beta``."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1 (got {self.elo0} and {self.elo1})")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < value < _MAX_ERROR_RATE:
                raise ValueError(f"{name} must be between 0 and 0.5, not {value}")

    @classmethod
    def parse(cls, words: Sequence[str]) -> Sprt:
        """From ``elo0=0 elo1=10 alpha=0.05 beta=0.05`` (any subset, any order)."""
        values: dict[str, float] = {}
        for word in words:
            name, sep, text = word.partition("=")
            if not sep or name not in ("elo0", "elo1", "alpha", "beta"):
                raise ValueError(f"expected elo0=, elo1=, alpha= or beta=, got {word!r}")
            try:
                values[name] = float(text)
            except ValueError:
                raise ValueError(f"not a number in {word!r}") from None
        return cls(**values)

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def _state(self, llr: float, model: SprtModel) -> SprtState:
        if llr >= self.upper:
            decision = SprtDecision.H1
        elif llr <= self.lower:
            decision = SprtDecision.H0
        else:
            decision = SprtDecision.CONTINUE
        return SprtState(llr, self.lower, self.upper, decision, model)

    def trinomial(self, wins: int, draws: int, losses: int) -> SprtState:
        llr = gsprt_llr((losses, draws, wins), TRINOMIAL_SCORES, self.elo0, self.elo1)
        return self._state(llr, SprtModel.TRINOMIAL)

    def pentanomial(self, pairs: Sequence[int]) -> SprtState:
        llr = gsprt_llr(pairs, PENTANOMIAL_SCORES, self.elo0, self.elo1)
        return self._state(llr, SprtModel.PENTANOMIAL)

    def text(self) -> str:
        return f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g}"
