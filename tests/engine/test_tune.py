"""The Texel tuner on synthetic data from a known linear model: it recovers the weights and K,
lowers the error, is deterministic, and respects frozen and unseen weights."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from engine.tune import SCALE, FitConfig, Sample, fit_k, mean_squared_error, sigmoid, tune

TRUE = {"material": 100, "mobility": -40, "king": 25, "phase_term": 7}
TRUE_K = 1.3


def synthetic(count: int = 400, seed: int = 1) -> list[Sample]:
    """Noise-free targets from the model itself, so the optimum is exactly TRUE (error 0).
    One feature takes 32nds, like the chess taper, so the fit is not only on integers."""
    rng = random.Random(seed)
    samples: list[Sample] = []
    for _ in range(count):
        features = {name: float(rng.randint(-3, 3)) for name in TRUE}
        features["phase_term"] = rng.randint(0, 32) / 32
        score = sum(TRUE[name] * value for name, value in features.items())
        samples.append((features, sigmoid(TRUE_K * score / SCALE)))
    return samples


def test_sigmoid_is_the_logistic_and_does_not_overflow() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(2.0) == pytest.approx(0.8807970779778823)
    assert sigmoid(-2.0) == pytest.approx(1.0 - 0.8807970779778823)
    assert sigmoid(-1e6) == 0.0
    assert sigmoid(1e6) == 1.0


def test_error_of_the_true_model_is_zero_and_of_zero_weights_known() -> None:
    samples = synthetic()
    assert mean_squared_error(samples, TRUE, TRUE_K) == pytest.approx(0.0, abs=1e-30)
    expected = sum((0.5 - target) ** 2 for _, target in samples) / len(samples)
    assert mean_squared_error(samples, {}, TRUE_K) == pytest.approx(expected)


def test_fit_k_recovers_the_generating_k() -> None:
    assert fit_k(synthetic(), TRUE) == pytest.approx(TRUE_K, abs=1e-3)


def test_tune_recovers_the_known_weights_exactly_after_rounding() -> None:
    """From all-zero weights and the true K, 600 Adam steps land within 0.5 of every true
    weight, so the rounded result is the generating model exactly."""
    samples = synthetic()
    result = tune(samples, {}, FitConfig(k=TRUE_K, iterations=600, learning_rate=4.0))
    assert result.weights == TRUE
    assert result.error_after == pytest.approx(0.0, abs=1e-20)
    assert result.error_before > 0.02
    assert result.samples == 400
    assert result.tuned == 4
    assert result.k == TRUE_K


def test_k_is_fitted_on_the_start_weights_then_weights_move_toward_the_truth() -> None:
    samples = synthetic()
    start = {"material": 80, "mobility": -20, "king": 0, "phase_term": 0}
    k_on_start = fit_k(samples, start)
    result = tune(samples, start, FitConfig(iterations=300))
    assert result.k == k_on_start
    assert result.error_after < result.error_before / 10
    # K absorbed part of the scale, so the weights recover the truth's proportions.
    ratio = result.weights["material"] / TRUE["material"]
    assert result.weights["mobility"] == pytest.approx(TRUE["mobility"] * ratio, abs=2)
    assert result.weights["king"] == pytest.approx(TRUE["king"] * ratio, abs=2)


def test_error_decreases_with_more_iterations() -> None:
    samples = synthetic()
    errors = [
        tune(samples, {}, FitConfig(k=TRUE_K, iterations=n)).error_after for n in (0, 10, 100)
    ]
    assert errors[0] > errors[1] > errors[2]


def test_tuning_is_deterministic() -> None:
    samples = synthetic(200, seed=7)
    first = tune(samples, {"material": 50}, FitConfig(iterations=80))
    second = tune(samples, {"material": 50}, FitConfig(iterations=80))
    assert first == second


def test_frozen_and_unseen_weights_keep_their_values_and_order() -> None:
    samples = synthetic()
    start = {"unseen": 12, "material": 100, "mobility": 0}
    result = tune(
        samples, start, FitConfig(k=TRUE_K, iterations=600, frozen={"material"}, learning_rate=4.0)
    )
    assert list(result.weights) == ["unseen", "material", "mobility", "king", "phase_term"]
    assert result.weights["unseen"] == 12
    assert result.weights["material"] == 100
    assert result.weights["mobility"] == TRUE["mobility"]
    assert result.tuned == 3
    assert all(isinstance(value, int) for value in result.weights.values())


def test_progress_reports_the_error_of_each_reported_iteration() -> None:
    samples = synthetic(100)
    seen: list[tuple[int, float]] = []
    tune(
        samples,
        {},
        FitConfig(k=TRUE_K, iterations=20, report_every=10),
        progress=lambda i, e: seen.append((i, e)),
    )
    assert [i for i, _ in seen] == [0, 9, 19]
    assert seen[0][1] == pytest.approx(mean_squared_error(samples, {}, TRUE_K))
    assert seen[0][1] > seen[-1][1]


@pytest.mark.parametrize(
    ("samples", "message"),
    [([], "no samples"), ([({"a": 1.0}, 1.5)], "outside")],
)
def test_bad_samples_are_refused(samples: list[Sample], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tune(samples, {})


def test_regularization_pulls_weights_toward_the_start() -> None:
    """A strong pull keeps every weight at its start; a mild one lands between start and truth
    and pays for it in training error (which the result reports without the penalty)."""
    samples = synthetic()
    start = {"material": 60, "mobility": 0, "king": 0, "phase_term": 0}
    free = tune(samples, start, FitConfig(k=TRUE_K, iterations=400, learning_rate=4.0))
    held = tune(
        samples, start, FitConfig(k=TRUE_K, iterations=400, learning_rate=4.0, regularization=1.0)
    )
    mild = tune(
        samples, start, FitConfig(k=TRUE_K, iterations=400, learning_rate=4.0, regularization=1e-7)
    )
    assert held.weights == start
    assert free.weights == TRUE
    assert 60 < mild.weights["material"] < 100
    assert free.error_after < mild.error_after < held.error_after
    with pytest.raises(ValueError, match="regularization"):
        tune(samples, start, FitConfig(regularization=-1.0))


def test_regularization_by_pattern_overrides_the_default() -> None:
    """The last pattern a name matches sets its pull: held everywhere but ``material``, which
    a pattern frees, the fit moves only it, to the truth; a later pattern holds it again."""
    samples = synthetic()
    start = dict(TRUE, material=60)

    def fit(default: float, patterns: tuple[tuple[str, float], ...]) -> dict[str, int]:
        config = FitConfig(
            k=TRUE_K,
            iterations=400,
            learning_rate=4.0,
            regularization=default,
            regularization_for=patterns,
        )
        return tune(samples, start, config).weights

    assert fit(1.0, (("mat*", 1.0), ("*erial", 0.0))) == TRUE
    assert fit(0.0, (("*erial", 0.0), ("mat*", 1.0)))["material"] == 60
    with pytest.raises(ValueError, match="regularization"):
        tune(samples, start, FitConfig(regularization_for=(("*", -1.0),)))


def test_the_playing_engine_never_imports_numpy() -> None:
    """numpy is for the tuner only: a UCI engine (and a server) starts without it."""
    code = (
        "import sys, brudno.commands.uci, brudno.commands.serve, protocol.uci.session; "
        "sys.exit('numpy' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
