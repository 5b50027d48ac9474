"""Linear weighted evaluation: eval = Σ wᵢ·fᵢ(position), weights as data.

Why linear: the weights can be read, explained term by term (the ``eval`` command), and
fitted to data by logistic regression (Texel tuning) without touching code.  Games compute
the features; this module owns the weights and the arithmetic.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

T = TypeVar("T")


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

    An evaluator keeps what games derive from its weights (:meth:`derived`); a pickle holds
    the weights only, and unpickling equal weights twice in a row gives the same evaluator
    back, derived tables included (a search worker gets a fresh copy with every ``go``).
    """

    __slots__ = ("_derived", "weights")

    _last_unpickled: ClassVar[LinearEvaluator | None] = None

    def __init__(self, weights: Mapping[str, float]) -> None:
        self.weights: dict[str, float] = dict(weights)
        self._derived: dict[Callable[..., Any], tuple[dict[str, float], Any]] = {}

    def derived(self, build: Callable[[Mapping[str, float]], T]) -> T:
        """``build(weights)``, made once and kept while the weights stay the same (a tuner or
        a match builds many games from one evaluator: they share the tables and their
        caches)."""
        kept = self._derived.get(build)
        if kept is not None and kept[0] == self.weights:
            return cast(T, kept[1])
        value = build(self.weights)
        self._derived[build] = (dict(self.weights), value)
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        return (LinearEvaluator._unpickle, (self.weights,))

    def __copy__(self) -> LinearEvaluator:
        return LinearEvaluator(self.weights)  # a copy of its own, never the one unpickled last

    def __deepcopy__(self, memo: dict[int, Any]) -> LinearEvaluator:
        return LinearEvaluator(self.weights)

    @classmethod
    def _unpickle(cls, weights: dict[str, float]) -> LinearEvaluator:
        """The evaluator unpickled last when its weights are equal, else a new one."""
        last = cls._last_unpickled
        if last is not None and last.weights == weights:
            return last
        evaluator = cls(weights)
        cls._last_unpickled = evaluator
        return evaluator

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
