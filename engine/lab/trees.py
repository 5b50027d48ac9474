"""Synthetic game trees whose minimax theory is known, to verify and compare search algorithms.

A uniform tree has ``b`` moves at every node and no terminal node; its *depth* ``d`` is the
search depth it was built for.  A node is named by its heap number (root 0, child ``j`` of
node ``n`` is ``n*b + j + 1``), which is also its transposition key and, through a seeded
splitmix64 hash, its random values.  Every tree is a full :class:`engine.game.Game`.

Orderings (:class:`Order`): **random** (Pearl's model: each node's static value an independent
uniform draw from ``[-LEAF_RANGE, LEAF_RANGE]``); **perfect** (best move first everywhere:
alpha-beta examines exactly the minimal tree) and **worst** (children sorted worst first, and
alpha-beta prunes nothing at all).  In the last two a node's value is consistent with its
children at every level, so ``evaluate()`` returns the depth-``d`` value anywhere; trees too
large for values within ``±MATE_BOUND`` are refused with ``ValueError``.
:class:`ChanceTree` alternates decision levels (``b`` moves) and chance levels (``c`` outcomes
with seeded exact probabilities).  Setting ``trace`` to a list records every evaluated node.

How the perfect and worst orders are built, and why their value steps are what they are:
docs/lab.md, *Synthetic trees*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Final

from engine.eval import LinearEvaluator
from engine.game import GameError, IllegalMoveError
from engine.score import MATE_BOUND

__all__ = [
    "CHANCE_BOUND",
    "LEAF_RANGE",
    "ROOT_RANGE",
    "ChanceSide",
    "ChanceTree",
    "Order",
    "TreeSpec",
    "UniformTree",
    "effective_branching_factor",
    "knuth_moore_leaves",
    "pearl_branching_factor",
]

LEAF_RANGE: Final = 10_000
"""Static values of random trees are uniform in ``[-LEAF_RANGE, LEAF_RANGE]``; wide enough
that ties (which Pearl's continuous model excludes) are rare."""

ROOT_RANGE: Final = 1_000
"""The root value of perfect and worst trees is drawn from ``[-ROOT_RANGE, ROOT_RANGE]``."""

CHANCE_BOUND: Final = 1_000
"""Static values of chance trees lie in ``[-CHANCE_BOUND, CHANCE_BOUND]`` (their
``value_bound``)."""

_MASK64: Final = (1 << 64) - 1
_EVALUATOR: Final = LinearEvaluator({"value": 1.0})


def _mix(x: int) -> int:
    """splitmix64's finaliser: a well-spread 64-bit hash, identical in every process."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _hash(seed: int, node: int, salt: int = 0) -> int:
    """A 64-bit hash of (seed, node, salt); node numbers may exceed 64 bits."""
    h = _mix((seed & _MASK64) ^ _mix(salt))
    while True:
        h = _mix(h ^ (node & _MASK64))
        node >>= 64
        if not node:
            return h


def _uniform(seed: int, node: int, bound: int) -> int:
    """A value uniform (up to a 2**-50 bias) in ``[-bound, bound]``."""
    return _hash(seed, node) % (2 * bound + 1) - bound


def knuth_moore_leaves(branching: int, depth: int) -> int:
    """Leaves of the minimal tree: ``b**ceil(d/2) + b**floor(d/2) - 1`` (Knuth & Moore 1975).

    Alpha-beta evaluates exactly this many leaves of a perfectly ordered uniform tree, and
    no algorithm that proves the minimax value of every such tree can evaluate fewer."""
    return int(branching ** ((depth + 1) // 2)) + int(branching ** (depth // 2)) - 1


def pearl_branching_factor(branching: int) -> float:
    """Pearl's asymptotic branching factor of alpha-beta on random uniform trees (1982):
    ``R(b) = x / (1 - x)`` with ``x`` the root in (0, 1) of ``x**b + x - 1 = 0``."""
    if branching < 1:
        raise ValueError(f"branching factor must be at least 1: {branching}")
    lo, hi = 0.0, 1.0
    for _ in range(200):  # bisection: f(x) = x**b + x - 1 rises from -1 to 1 on [0, 1]
        mid = (lo + hi) / 2
        if mid**branching + mid - 1 < 0:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    return x / (1 - x)


class Order(StrEnum):
    """How a uniform tree orders each node's moves (see the module docstring)."""

    PERFECT = "perfect"
    WORST = "worst"
    RANDOM = "random"


class ChanceSide(StrEnum):
    """Whose point of view a :class:`ChanceTree`'s chance node takes."""

    NEXT = "next"
    """The player who moves after the event (backgammon: the roll precedes the move)."""
    PREVIOUS = "previous"
    """The player who just moved."""


class _Tree:
    """What uniform and chance trees share: node numbering, the move stack, notation."""

    __slots__ = ("_fanout", "_ids", "_moves", "depth", "seed", "trace")

    variant: str = "tree"

    def __init__(self, depth: int, seed: int, fanout: int) -> None:
        if depth < 0:
            raise ValueError(f"tree depth must be at least 0: {depth}")
        self.depth = depth
        self.seed = seed
        self._fanout = fanout
        self._ids: list[int] = [0]
        self._moves: list[int] = []
        self.trace: list[int] | None = None
        """When a list, every ``evaluate()`` appends the evaluated node's number."""

    # -- moves: subclasses define legal_moves/push/pop ------------------------------------
    def noisy_moves(self) -> list[int]:
        return []

    def is_noisy(self, move: int) -> bool:
        return False

    def can_null_move(self) -> bool:
        """Never: a synthetic tree has no notion of passing."""
        return False

    def push_null(self) -> None:
        raise GameError("synthetic trees have no null move")

    # -- state -----------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        """Never: the tree goes on below its depth; the search horizon ends it."""
        return False

    def terminal_value(self) -> int:
        return 0

    def in_check(self) -> bool:
        return False

    def key(self) -> int:
        """The node's heap number: unique, so a transposition table never merges nodes."""
        return self._ids[-1]

    @property
    def node(self) -> int:
        """The current node's heap number (the same as :meth:`key`)."""
        return self._ids[-1]

    @property
    def ply(self) -> int:
        return len(self._moves)

    @property
    def path(self) -> tuple[int, ...]:
        """The moves from the root to the current node."""
        return tuple(self._moves)

    @property
    def evaluator(self) -> LinearEvaluator:
        return _EVALUATOR

    def features(self) -> dict[str, float]:
        """The static value itself is the only feature (weight 1)."""
        trace = self.trace
        self.trace = None
        try:
            return {"value": float(self.evaluate())}
        finally:
            self.trace = trace

    def evaluate(self) -> int:
        raise NotImplementedError  # each tree defines its values

    # -- notation ----------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        """A move is the child's index, ``0`` .. ``fan-out - 1``."""
        moves = self.legal_moves()
        try:
            move = int(text)
        except ValueError:
            raise IllegalMoveError(f"not a tree move: expected a child index ({text})") from None
        if move not in moves:
            raise IllegalMoveError(f"no child {move} here: 0..{len(moves) - 1} ({text})")
        return move

    def format_move(self, move: int) -> str:
        return str(move)

    def legal_moves(self) -> list[int]:
        raise NotImplementedError  # each tree defines its fan-out

    def _path_text(self) -> str:
        return ".".join(map(str, self._moves)) if self._moves else "root"


class UniformTree(_Tree):
    """A uniform tree of branching ``b`` built for depth ``d`` (``Game[int]``; moves 0..b-1)."""

    __slots__ = (
        "_all",
        "_ordered",
        "_steps",
        "_values",
        "branching",
        "max_value",
        "order",
        "root_value",
    )

    def __init__(
        self, branching: int, depth: int, order: Order = Order.RANDOM, seed: int = 0
    ) -> None:
        if branching < 1:
            raise ValueError(f"branching factor must be at least 1: {branching}")
        super().__init__(depth, seed, branching)
        self.branching = branching
        self.order = order
        self._all = list(range(branching))
        self._ordered = order is not Order.RANDOM
        if not self._ordered:
            self._steps: tuple[int, ...] = ()
            self.root_value: int | None = None
            self.max_value = LEAF_RANGE
        else:
            if order is Order.PERFECT:
                steps = [1] * depth
            else:
                steps = [
                    int(branching ** len(range(level + 2, depth, 2))) for level in range(depth)
                ]
            self._steps = tuple(steps)
            self.root_value = _uniform(seed, 0, ROOT_RANGE)
            self.max_value = abs(self.root_value) + sum((branching - 1) * s for s in steps)
            if self.max_value >= MATE_BOUND:
                raise ValueError(
                    f"a {order.value}-ordered tree with b={branching}, d={depth} needs values "
                    f"up to {self.max_value}, beyond the game contract's {MATE_BOUND - 1}"
                )
        self._values: list[int] = [0 if self.root_value is None else self.root_value]

    # -- moves -------------------------------------------------------------------------------
    def legal_moves(self) -> list[int]:
        return self._all.copy()

    def quiet_moves(self) -> list[int]:
        return self._all.copy()

    def push(self, move: int) -> None:
        level = len(self._moves)
        self._ids.append(self._ids[-1] * self.branching + move + 1)
        self._moves.append(move)
        if self._ordered:
            rank = move if self.order is Order.PERFECT else self.branching - 1 - move
            gap = rank * self._steps[level] if level < self.depth else 0
            self._values.append(gap - self._values[-1])

    def pop(self) -> None:
        self._moves.pop()
        self._ids.pop()
        if self._ordered:
            self._values.pop()

    # -- state -------------------------------------------------------------------------------
    @property
    def side(self) -> int:
        return len(self._moves) & 1

    def evaluate(self) -> int:
        """Perfect/worst: the node's exact value by construction.  Random: an independent
        uniform draw (at depth ``d`` the leaf value; above it an uninformative heuristic)."""
        node = self._ids[-1]
        if self.trace is not None:
            self.trace.append(node)
        if self._ordered:
            return self._values[-1]
        return _uniform(self.seed, node, LEAF_RANGE)

    # -- notation ----------------------------------------------------------------------------
    def fen(self) -> str:
        return (
            f"tree {self.branching}:{self.depth} {self.order.value} seed {self.seed} "
            f"path {self._path_text()}"
        )

    def display(self) -> str:
        return "\n".join(
            [
                f"uniform tree b={self.branching} d={self.depth} order={self.order.value} "
                f"seed={self.seed}",
                f"path: {self._path_text()} (node {self.node}, ply {self.ply})",
                f"static value: {self.features()['value']:.0f} (side to move's view)",
            ]
        )

    def copy(self) -> UniformTree:
        clone = UniformTree(self.branching, self.depth, self.order, self.seed)
        clone._ids = self._ids.copy()
        clone._moves = self._moves.copy()
        clone._values = self._values.copy()
        return clone


class ChanceTree(_Tree):
    """Decision levels of ``b`` moves alternating with chance levels of ``c`` outcomes
    (``engine.lab.chance.ChanceGame[int]``).

    Level 0 (the root) is a decision node; levels 1, 3, 5, ... are chance nodes.  The two
    players alternate between decision levels.  ``chance_side`` (a :class:`ChanceSide`) says whose
    point of view a chance node takes: ``"next"`` (the player who moves after the event, as in
    backgammon where the roll precedes the move) or ``"previous"`` (the player who just moved).
    Outcome probabilities are seeded weights 1..6 normalised to exact fractions.
    """

    __slots__ = ("_chance_offset", "branching", "chance", "chance_side")

    def __init__(
        self,
        branching: int,
        depth: int,
        chance: int,
        seed: int = 0,
        chance_side: ChanceSide | str = ChanceSide.NEXT,
    ) -> None:
        if branching < 1 or chance < 1:
            raise ValueError(f"fan-outs must be at least 1: b={branching}, chance={chance}")
        if chance_side not in tuple(ChanceSide):
            raise ValueError(f"chance_side must be 'next' or 'previous': {chance_side!r}")
        super().__init__(depth, seed, max(branching, chance))
        self.branching = branching
        self.chance = chance
        self.chance_side = ChanceSide(chance_side)
        self._chance_offset = 1 if self.chance_side is ChanceSide.NEXT else 0

    # -- chance contract ---------------------------------------------------------------------
    def is_chance_node(self) -> bool:
        return len(self._moves) & 1 == 1

    def chance_outcomes(self) -> list[tuple[int, Fraction]]:
        node = self._ids[-1]
        weights = [1 + _hash(self.seed, node, salt=i + 1) % 6 for i in range(self.chance)]
        total = sum(weights)
        return [(i, Fraction(w, total)) for i, w in enumerate(weights)]

    @property
    def value_bound(self) -> int:
        return CHANCE_BOUND

    # -- moves -------------------------------------------------------------------------------
    def legal_moves(self) -> list[int]:
        return list(range(self.chance if len(self._moves) & 1 else self.branching))

    def quiet_moves(self) -> list[int]:
        return self.legal_moves()

    def push(self, move: int) -> None:
        self._ids.append(self._ids[-1] * self._fanout + move + 1)
        self._moves.append(move)

    def pop(self) -> None:
        self._moves.pop()
        self._ids.pop()

    # -- state -------------------------------------------------------------------------------
    @property
    def side(self) -> int:
        """Decision level ``2k`` belongs to player ``k % 2``; a chance level takes the side of
        the next or the previous decision level (``chance_side``)."""
        level = len(self._moves)
        if level & 1:
            return ((level >> 1) + self._chance_offset) & 1
        return (level >> 1) & 1

    def evaluate(self) -> int:
        node = self._ids[-1]
        if self.trace is not None:
            self.trace.append(node)
        return _uniform(self.seed, node, CHANCE_BOUND)

    # -- notation ----------------------------------------------------------------------------
    def fen(self) -> str:
        return (
            f"tree {self.branching}:{self.depth} chance {self.chance} seed {self.seed} "
            f"path {self._path_text()}"
        )

    def display(self) -> str:
        kind = "chance" if self.is_chance_node() else "decision"
        return "\n".join(
            [
                f"chance tree b={self.branching} c={self.chance} d={self.depth} "
                f"seed={self.seed} ({self.chance_side} player's view at chance nodes)",
                f"path: {self._path_text()} (node {self.node}, ply {self.ply}, {kind})",
                f"static value: {self.features()['value']:.0f} (side to move's view)",
            ]
        )

    def copy(self) -> ChanceTree:
        clone = ChanceTree(self.branching, self.depth, self.chance, self.seed, self.chance_side)
        clone._ids = self._ids.copy()
        clone._moves = self._moves.copy()
        return clone


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """A tree by its parameters, as the lab's ``--tree B:D --order --seed --chance`` give it."""

    branching: int
    depth: int
    order: Order = Order.RANDOM
    seed: int = 0
    chance: int = 0
    """Chance fan-out; 0 builds a deterministic :class:`UniformTree`."""

    def __post_init__(self) -> None:
        if self.branching < 1:
            raise ValueError(f"branching factor must be at least 1: {self.branching}")
        if self.depth < 1:
            raise ValueError(f"tree depth must be at least 1: {self.depth}")
        if self.chance < 0:
            raise ValueError(f"chance fan-out must be at least 0: {self.chance}")
        if self.chance and self.order is not Order.RANDOM:
            raise ValueError("chance trees have random values only (no ordering)")

    @classmethod
    def parse(
        cls, text: str, order: Order = Order.RANDOM, seed: int = 0, chance: int = 0
    ) -> TreeSpec:
        """``"B:D"``, e.g. ``"4:6"``; raises ``ValueError`` with the offending text."""
        match text.split(":"):
            case [branching, depth] if branching.strip().isdigit() and depth.strip().isdigit():
                return cls(int(branching), int(depth), order, seed, chance)
        raise ValueError(f"a tree is B:D, branching and depth, e.g. 4:6 ({text!r})")

    def with_depth(self, depth: int) -> TreeSpec:
        return TreeSpec(self.branching, depth, self.order, self.seed, self.chance)

    def build(self) -> UniformTree | ChanceTree:
        if self.chance:
            return ChanceTree(self.branching, self.depth, self.chance, self.seed)
        return UniformTree(self.branching, self.depth, self.order, self.seed)

    def label(self) -> str:
        kind = f"chance {self.chance}" if self.chance else f"{self.order.value} order"
        return f"tree {self.branching}:{self.depth}, {kind}, seed {self.seed}"

    @property
    def leaves(self) -> int:
        """Leaves of the full tree to this depth (``b**d``, chance levels included)."""
        if not self.chance:
            return int(self.branching**self.depth)
        decisions = (self.depth + 1) // 2
        return int(self.branching**decisions) * int(self.chance ** (self.depth - decisions))


def effective_branching_factor(leaves: int, depth: int) -> float:
    """``leaves ** (1/depth)``: the branching factor of the uniform tree with as many leaves."""
    if depth < 1 or leaves < 1:
        return float("nan")
    return math.exp(math.log(leaves) / depth)
