"""What the lab searches: a synthetic tree (:class:`TreeSource`) or a position of a
registered game (:class:`GameSource`), each a fresh position per run."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine.game import Game, GameError
from engine.lab.chance import has_chance
from engine.lab.classic import Value
from engine.lab.trees import TreeSpec, knuth_moore_leaves
from engine.score import report
from games.registry import get_variant
from protocol.uci.formatting import score_text

__all__ = ["GameSource", "LabError", "PlotMetric", "Source", "TreeSource"]


class PlotMetric(enum.StrEnum):
    """What ``--plot`` draws against depth: a count of :class:`engine.lab.classic.ClassicResult`
    (the value is its attribute name)."""

    NODES = "nodes"
    LEAVES = "leaves"


class LabError(Exception):
    """A request the lab cannot run; the message says why (exit status 2)."""


class Source(Protocol):
    """Something to search at a given depth: a synthetic tree or a game position."""

    @property
    def label(self) -> str: ...

    @property
    def chance(self) -> bool:
        """True when the positions have chance nodes (the expectiminimax family applies)."""
        ...

    @property
    def max_depth(self) -> int: ...

    def position(self, depth: int) -> Game[Any]:
        """A fresh position to search to ``depth`` (every run gets its own)."""
        ...

    def score(self, value: Value) -> str:
        """How a root value reads in this source's units ("" when the raw value is all)."""
        ...

    def references(self, depths: Sequence[int], metric: PlotMetric) -> dict[str, list[int]]:
        """Theoretical curves to draw beside the measured ones, by label."""
        ...


@dataclass(frozen=True)
class TreeSource:
    """A synthetic tree; a sweep builds the tree for each depth (orderings depend on it)."""

    spec: TreeSpec

    @property
    def label(self) -> str:
        return self.spec.label()

    @property
    def chance(self) -> bool:
        return self.spec.chance > 0

    @property
    def max_depth(self) -> int:
        return self.spec.depth

    def position(self, depth: int) -> Game[Any]:
        return self.spec.with_depth(depth).build()

    def score(self, value: Value) -> str:
        del value
        return ""

    def references(self, depths: Sequence[int], metric: PlotMetric) -> dict[str, list[int]]:
        spec = self.spec
        if spec.chance:
            return {}
        b = spec.branching
        if metric == PlotMetric.LEAVES:
            return {
                "full tree (b^d)": [b**d for d in depths],
                "minimal tree (Knuth-Moore)": [knuth_moore_leaves(b, d) for d in depths],
            }
        return {"full tree": [sum(b**k for k in range(d + 1)) for d in depths]}


@dataclass(frozen=True)
class GameSource:
    """A position of a registered game, searched at every requested depth."""

    variant: str
    fen: str | None
    depth: int
    chess960: bool = False

    def __post_init__(self) -> None:
        self.position(self.depth)  # fail early on a bad FEN

    @property
    def label(self) -> str:
        return f"{self.variant}, {self.position(0).fen()}"

    @property
    def chance(self) -> bool:
        return has_chance(self.position(0))

    @property
    def max_depth(self) -> int:
        return self.depth

    def position(self, depth: int) -> Game[Any]:
        del depth
        try:
            return get_variant(self.variant).new(self.fen, chess960=self.chess960)
        except GameError as exc:
            raise LabError(str(exc)) from None

    def references(self, depths: Sequence[int], metric: PlotMetric) -> dict[str, list[int]]:
        del depths, metric
        return {}

    def score(self, value: Value) -> str:
        if isinstance(value, int) and not self.chance:
            return score_text(report(value))
        return ""
