"""Linear weighted evaluation: eval = Σ wᵢ·fᵢ(position), weights as data.

Why linear: the weights can be read, explained term by term (the ``eval`` command), and
fitted to data by logistic regression (Texel tuning) without touching code.  Games compute
the features; this module owns the weights and the arithmetic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Term:
    """One line of an explanation: a feature group, its summed value and contribution."""

    name: str
    value: float
    contribution: float


class LinearEvaluator:
    """Weights by feature name.  Features missing from the table weigh zero.

    Feature names may be dotted (``psqt.mg.N.e4``); :meth:`explain` groups terms by the part
    before the first dot, so a table of hundreds of weights still explains in a few lines.
    """

    __slots__ = ("weights",)

    def __init__(self, weights: Mapping[str, float]) -> None:
        self.weights: dict[str, float] = dict(weights)

    @classmethod
    def from_json(cls, path: Path) -> LinearEvaluator:
        """Load a flat ``{"feature": weight}`` JSON object."""
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not all(isinstance(v, int | float) for v in data.values()):
            raise ValueError(f"{path}: expected a JSON object of feature weights")
        return cls(data)

    def to_json(self, path: Path) -> None:
        path.write_text(json.dumps(self.weights, indent=1, sort_keys=True) + "\n", "utf-8")

    def evaluate(self, features: Mapping[str, float]) -> int:
        weights = self.weights
        return round(sum(weights.get(name, 0.0) * value for name, value in features.items()))

    def explain(self, features: Mapping[str, float]) -> list[Term]:
        """Per-group breakdown, in first-seen order; contributions add up to the evaluation."""
        values: dict[str, float] = {}
        contributions: dict[str, float] = {}
        weights = self.weights
        for name, value in features.items():
            group = name.split(".", 1)[0]
            values[group] = values.get(group, 0.0) + value
            contributions[group] = contributions.get(group, 0.0) + weights.get(name, 0.0) * value
        return [Term(g, values[g], contributions[g]) for g in values]
