"""Texel tuning: fit the weights of a linear evaluation to labelled positions.

A sample is a position's features (side to move's view, as ``Game.features()`` returns them)
and a target in [0, 1], the side to move's expected score (a game result, or a strong engine's
evaluation as a win probability).  :func:`tune` fits the scale K on the current weights (unless
given), then the weights, minimising the mean squared error of ``sigmoid(K · Σ wᵢ·fᵢ / 400)``,
and returns integer weights in the same centipawn scale; the error reported "after" is that of
the rounded weights.  Deterministic: the same data and options give the same weights.

Pure functions: nothing here reads files or knows about chess.  Only this module imports
numpy: the engine that plays never loads it.

Why K first, sparse features, full-batch Adam, numpy and rounding: docs/development.md, *How
the tuner fits, and why*.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "SCALE",
    "FitConfig",
    "Sample",
    "TuneResult",
    "fit_k",
    "mean_squared_error",
    "sigmoid",
    "tune",
]

SCALE = 400.0
"""Centipawns per unit of K·score in the logistic (the Elo convention Texel uses)."""

Sample = tuple[Mapping[str, float], float]
"""(features from the side to move's view, target in [0, 1] from the side to move's view)."""

_K_LOW, _K_HIGH, _K_TOLERANCE = 0.05, 10.0, 1e-4
"""The bracket and precision of :func:`fit_k`'s search for K."""

Progress = Callable[[int, float], None]
"""Called as ``progress(iteration, error)`` every ``report_every`` iterations."""


@dataclass(frozen=True, slots=True)
class _Compiled:
    """The samples' non-zero features as flat arrays: ``values[j]`` of weight ``columns[j]``
    in sample ``rows[j]``; ``targets[r]`` is sample r's target."""

    rows: NDArray[np.intp]
    columns: NDArray[np.intp]
    values: NDArray[np.float64]
    targets: NDArray[np.float64]

    def scores(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """Σ wᵢ·fᵢ of every sample."""
        # bincount with weights sums floats (its stubs say ints): ``astype`` copies nothing.
        return np.bincount(
            self.rows, weights=self.values * w[self.columns], minlength=len(self.targets)
        ).astype(np.float64, copy=False)


@dataclass(frozen=True, slots=True)
class TuneResult:
    """The outcome of :func:`tune`: integer weights and the errors that justify them."""

    weights: dict[str, int]
    """Every weight of the starting table (in its order), then features only the data had."""
    k: float
    error_before: float
    """Mean squared error of the starting weights with the fitted K."""
    error_after: float
    """Mean squared error of the returned (rounded) weights with the same K."""
    iterations: int
    samples: int
    tuned: int
    """How many weights were free to move (features present in the data, not frozen)."""


def sigmoid(x: float) -> float:
    """Logistic function that does not overflow for large scores (mates, bad weights)."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _check(samples: Sequence[Sample]) -> None:
    if not samples:
        raise ValueError("no samples to tune on")
    for _, target in samples:
        if not 0.0 <= target <= 1.0:
            raise ValueError(f"target {target!r} is outside [0, 1]")


def mean_squared_error(samples: Sequence[Sample], weights: Mapping[str, float], k: float) -> float:
    """Texel's error of ``weights`` on ``samples`` (features absent from ``weights`` weigh 0)."""
    _, compiled, w = _compile_with(samples, weights)
    return _error_of(compiled, w, k / SCALE)


def fit_k(
    samples: Sequence[Sample],
    weights: Mapping[str, float],
    *,
    low: float = _K_LOW,
    high: float = _K_HIGH,
    tolerance: float = _K_TOLERANCE,
) -> float:
    """The K in [low, high] that minimises the error of ``weights`` (golden-section search).

    The error is unimodal in K for fixed scores (one logistic slope fits best), so a
    bracketing search is enough, and it is deterministic.  The scores are computed once.
    """
    if not 0.0 < low < high:
        raise ValueError("need 0 < low < high")
    _, compiled, w = _compile_with(samples, weights)
    return _fit_k(compiled, w, low, high, tolerance)


def _fit_k(
    compiled: _Compiled, w: NDArray[np.float64], low: float, high: float, tolerance: float
) -> float:
    values = compiled.scores(w) / SCALE
    targets = compiled.targets

    def error(k: float) -> float:
        diff = _probabilities(k * values) - targets
        return float(np.dot(diff, diff))

    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = low, high
    c = b - ratio * (b - a)
    d = a + ratio * (b - a)
    fc, fd = error(c), error(d)
    while b - a > tolerance:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = error(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = error(d)
    return (a + b) / 2.0


def _compile(samples: Sequence[Sample], index: Mapping[str, int]) -> _Compiled:
    rows: list[int] = []
    columns: list[int] = []
    values: list[float] = []
    for row, (features, _) in enumerate(samples):
        for name, value in features.items():
            if value:
                rows.append(row)
                columns.append(index[name])
                values.append(value)
    return _Compiled(
        np.array(rows, dtype=np.intp),
        np.array(columns, dtype=np.intp),
        np.array(values, dtype=np.float64),
        np.array([target for _, target in samples], dtype=np.float64),
    )


def _compile_with(
    samples: Sequence[Sample], weights: Mapping[str, float]
) -> tuple[list[str], _Compiled, NDArray[np.float64]]:
    """Every weight's name by index (see :func:`_weight_index`), the samples compiled, and
    ``weights`` as the vector they index (0 where absent)."""
    _check(samples)
    names, index = _weight_index(samples, weights)
    w = np.array([float(weights.get(name, 0.0)) for name in names], dtype=np.float64)
    return names, _compile(samples, index), w


def _probabilities(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The logistic of every element, without overflow for large magnitudes."""
    result: NDArray[np.float64] = np.exp(-np.logaddexp(0.0, -x))
    return result


def _error_of(compiled: _Compiled, w: NDArray[np.float64], scale: float) -> float:
    diff = _probabilities(scale * compiled.scores(w)) - compiled.targets
    return float(np.dot(diff, diff)) / len(compiled.targets)


def _check_options(iterations: int, learning_rate: float, regularization: float) -> None:
    if iterations < 0:
        raise ValueError("iterations must not be negative")
    if learning_rate <= 0.0:
        raise ValueError("learning_rate must be positive")
    if regularization < 0.0:
        raise ValueError("regularization must not be negative")


def _weight_index(
    samples: Sequence[Sample], weights: Mapping[str, float]
) -> tuple[list[str], dict[str, int]]:
    """Every weight's name by index, and the index by name: the table's weights in its
    order, then the features the table lacks in the order the samples show them."""
    names: list[str] = list(weights)
    index: dict[str, int] = {name: i for i, name in enumerate(names)}
    for features, _ in samples:
        for name in features:
            if name not in index:
                index[name] = len(names)
                names.append(name)
    return names, index


def _gradient(
    compiled: _Compiled, w: NDArray[np.float64], scale: float
) -> tuple[NDArray[np.float64], float]:
    """Σ over samples of diff·p·(1-p)·fᵢ for every weight i, and the sum of squared errors.

    d(diff²)/dwᵢ = 2·diff·p·(1-p)·scale·fᵢ; the constant 2·scale/n is the caller's."""
    p = _probabilities(scale * compiled.scores(w))
    diff = p - compiled.targets
    g = diff * p * (1.0 - p)
    grad = np.bincount(
        compiled.columns, weights=g[compiled.rows] * compiled.values, minlength=len(w)
    ).astype(np.float64, copy=False)
    return grad, float(np.dot(diff, diff))


@dataclass(frozen=True, slots=True)
class FitConfig:
    """How :func:`tune` fits: Adam's ``iterations`` and largest step ``learning_rate``, the
    scale ``k`` (``None``: fitted first), the ``frozen`` weights, the ``regularization`` λ,
    and how often (in iterations) progress is reported."""

    iterations: int = 500
    learning_rate: float = 2.0
    k: float | None = None
    frozen: Collection[str] = ()
    regularization: float = 0.0
    regularization_for: Sequence[tuple[str, float]] = ()
    """(pattern, λ) pairs: the weights whose names match a shell-style pattern (``fnmatch``,
    ``*`` crosses dots) take its λ instead of ``regularization``; the last match counts."""
    report_every: int = 50


def _per_weight(
    names: Sequence[str], default: float, patterns: Sequence[tuple[str, float]]
) -> NDArray[np.float64]:
    """Every weight's λ: the last pattern its name matches, else ``default``."""
    strengths = np.full(len(names), default, dtype=np.float64)
    for pattern, strength in patterns:
        strengths[[fnmatchcase(name, pattern) for name in names]] = strength
    return strengths


def tune(
    samples: Sequence[Sample],
    weights: Mapping[str, float],
    config: FitConfig = FitConfig(),
    *,
    progress: Progress | None = None,
) -> TuneResult:
    """Fit ``weights`` to ``samples``; return integer weights and the error before and after.

    ``k`` None fits K on the starting weights first (with all-zero weights every K predicts
    0.5, so K is then 1).  ``learning_rate`` is Adam's largest step in weight units
    (centipawns for chess) and decays linearly to 1% of itself.  ``frozen`` names weights that
    keep their value (to anchor a scale, or to tune one group at a time).
    ``regularization`` λ adds λ·Σ(wᵢ - startᵢ)² to the objective: with hundreds of weights
    and a few thousand positions the fit also learns the sample's noise, and pulling each
    weight toward the hand-set table trades a little training error for held-out error.
    ``regularization_for`` sets another λ for some weights: the error's pull on a weight
    grows with how many samples show its feature, the penalty's does not, so one λ that keeps
    common weights near the table holds rare ones (a one-hot bucket) almost at their start.
    The errors in the result are always the plain mean squared error.  Weights of
    features the data never shows keep their value too; features the data shows but the table
    lacks start at 0 and are added.
    """
    iterations, learning_rate, k = config.iterations, config.learning_rate, config.k
    frozen = config.frozen
    weakest = min((config.regularization, *(lam for _, lam in config.regularization_for)))
    _check_options(iterations, learning_rate, weakest)
    names, compiled, start_w = _compile_with(samples, weights)
    regularization = _per_weight(names, config.regularization, config.regularization_for)
    if k is None:
        k = _fit_k(compiled, start_w, _K_LOW, _K_HIGH, _K_TOLERANCE) if start_w.any() else 1.0
    if k <= 0.0:
        raise ValueError("K must be positive")
    seen = np.unique(compiled.columns)
    free_mask = np.zeros(len(names), dtype=bool)
    free_mask[[i for i in seen.tolist() if names[i] not in frozen]] = True
    scale = k / SCALE
    n = len(samples)
    error_before = _error_of(compiled, start_w, scale)

    w = start_w.copy()
    m = np.zeros(len(names))
    v = np.zeros(len(names))
    beta1, beta2, eps = 0.9, 0.999, 1e-12
    for t in range(1, iterations + 1):
        grad, total = _gradient(compiled, w, scale)
        if progress is not None and (t == 1 or t % config.report_every == 0):
            progress(t - 1, total / n)
        rate = learning_rate * (1.0 - 0.99 * (t - 1) / max(iterations - 1, 1))
        g = grad * (2.0 * scale / n) + 2.0 * regularization * (w - start_w)
        m = np.where(free_mask, beta1 * m + (1.0 - beta1) * g, m)
        v = np.where(free_mask, beta2 * v + (1.0 - beta2) * g * g, v)
        step = rate * (m / (1.0 - beta1**t)) / (np.sqrt(v / (1.0 - beta2**t)) + eps)
        w = np.where(free_mask, w - step, w)

    rounded = [round(x) for x in w.tolist()]
    # Every weight is rounded, tuned or not: the fast evaluation needs integers throughout.
    result = {name: rounded[i] for i, name in enumerate(names)}
    error_after = _error_of(compiled, np.array(rounded, dtype=np.float64), scale)
    tuned = int(np.count_nonzero(free_mask))
    return TuneResult(result, k, error_before, error_after, iterations, n, tuned)
