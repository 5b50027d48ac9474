"""The textbook minimax family, written to be read, measured and compared.

Every algorithm here (:data:`ALGORITHMS`, each a method of :class:`_Search`) computes the same
depth-``d`` minimax value (expectiminimax with chance, :mod:`engine.lab.chance`) and differs
only in how much of the tree it looks at: ``minimax``, ``negamax``, ``alphabeta`` (fail-hard),
``failsoft``, ``negascout``, ``aspiration``, ``mtdf``, ``sssstar``, ``dualstar`` (the MT
framework over a table of bounds keyed by ``(key, remaining depth)``), ``expectiminimax``,
``star1``, ``star2``.  All share the game contract, one fixed move order
(:class:`MoveOrder`: ``legal_moves()``, or ``noisy_moves()`` then ``quiet_moves()``) and one
way of counting, which the tests assert exactly:

* **node**: every entry into a position (the root, and every push whose search starts); a
  position entered again, or answered from the MT table, counts again.
* **leaf**: a node valued from the position itself: ``evaluate()`` at the horizon, or a decided
  game (``is_terminal()`` below the root, no legal move, mate at the horizon).
* **passes**: searches started at the root; **researches**: NegaScout's re-searches.

Below the root ``is_terminal()`` ends a line; at the horizon a side in check without a move is
mated, other horizon positions (stalemates too) are evaluated statically.  Decided positions are
never stored in the MT table.  :class:`ClassicSearcher` plays any deterministic algorithm under
the production search's :class:`engine.driver.Driver`, so two algorithms matched over UCI differ
in their trees only.  Each algorithm's history and contract, and why the counts are defined so:
docs/lab.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any, Final, cast

from engine.control import SearchControl
from engine.driver import Counters, Driver, Iteration, Line, Root, SearchStopped
from engine.game import ChanceGame, Game
from engine.info import InfoCallback, SearchResult, ignore_info
from engine.lab.chance import has_chance
from engine.limits import Limits
from engine.score import INF, MAX_PLY, from_tt, outcome_score, to_tt
from engine.stop import PollListener, StopPoll

__all__ = [
    "ALGORITHMS",
    "CHANCE_ALGORITHMS",
    "DEFAULT_WINDOW",
    "DETERMINISTIC_ALGORITHMS",
    "UCI_ALGORITHMS",
    "Algorithm",
    "AlgorithmInfo",
    "ClassicResult",
    "ClassicSearcher",
    "MoveOrder",
    "Value",
    "fixed_order_moves",
    "search",
]

Value = int | Fraction
"""A search value: an ``int`` score, or an exact fraction where chance nodes average."""

DEFAULT_WINDOW: Final = 50
"""Half-width of the aspiration window around the guess (half a pawn in chess)."""

_TT_ENTRY_BYTES: Final = 384
"""What one MT table entry costs in CPython (dict slot, key tuple, bound list, ints, the
move it keeps alive): about 355 bytes measured with ``tracemalloc`` on chess, rounded up.
Sizes the table from the UCI ``Hash`` option."""


class Algorithm(StrEnum):
    """Every algorithm by its command-line / UCI name (see the module docstring)."""

    MINIMAX = "minimax"
    NEGAMAX = "negamax"
    ALPHABETA = "alphabeta"
    FAILSOFT = "failsoft"
    NEGASCOUT = "negascout"
    ASPIRATION = "aspiration"
    MTDF = "mtdf"
    SSSSTAR = "sssstar"
    DUALSTAR = "dualstar"
    EXPECTIMINIMAX = "expectiminimax"
    STAR1 = "star1"
    STAR2 = "star2"


_MT_DRIVERS: Final = frozenset({Algorithm.MTDF, Algorithm.SSSSTAR, Algorithm.DUALSTAR})
"""The algorithms whose principal variation is read back from the MT table."""


@dataclass(frozen=True, slots=True)
class AlgorithmInfo:
    name: Algorithm
    title: str
    chance: bool
    """True for the expectiminimax family (needs an :class:`engine.lab.chance.ChanceGame`)."""
    driver: bool
    """True when the algorithm makes several root passes (MT drivers, aspiration)."""
    reference: str


_A = Algorithm
ALGORITHMS: Final[dict[str, AlgorithmInfo]] = {
    info.name: info
    for info in (
        AlgorithmInfo(_A.MINIMAX, "minimax", False, False, "von Neumann 1928"),
        AlgorithmInfo(_A.NEGAMAX, "negamax", False, False, "Knuth & Moore 1975"),
        AlgorithmInfo(_A.ALPHABETA, "alpha-beta, fail-hard", False, False, "Knuth & Moore 1975"),
        AlgorithmInfo(_A.FAILSOFT, "alpha-beta, fail-soft", False, False, "Fishburn 1983"),
        AlgorithmInfo(_A.NEGASCOUT, "NegaScout", False, False, "Reinefeld 1983"),
        AlgorithmInfo(_A.ASPIRATION, "aspiration search", False, True, "Baudet 1978"),
        AlgorithmInfo(_A.MTDF, "MTD(f)", False, True, "Plaat et al. 1996"),
        AlgorithmInfo(_A.SSSSTAR, "SSS* (as MT-SSS*)", False, True, "Stockman 1979"),
        AlgorithmInfo(_A.DUALSTAR, "DUAL* (as MT-DUAL*)", False, True, "Marsland et al. 1987"),
        AlgorithmInfo(_A.EXPECTIMINIMAX, "expectiminimax", True, False, "Michie 1966"),
        AlgorithmInfo(_A.STAR1, "Star1", True, False, "Ballard 1983"),
        AlgorithmInfo(_A.STAR2, "Star2", True, False, "Ballard 1983"),
    )
}
"""Every algorithm's description, by its name (an :class:`Algorithm`, which is a ``str``)."""
del _A

DETERMINISTIC_ALGORITHMS: Final = tuple(n for n, a in ALGORITHMS.items() if not a.chance)
CHANCE_ALGORITHMS: Final = tuple(n for n, a in ALGORITHMS.items() if a.chance)
UCI_ALGORITHMS: Final = DETERMINISTIC_ALGORITHMS
"""The values the UCI ``Algorithm`` option offers besides ``pvs`` (the production search)."""


class MoveOrder(StrEnum):
    """The fixed move order every algorithm uses (see the module docstring)."""

    NATURAL = "natural"
    TACTICAL = "tactical"


@dataclass(frozen=True, slots=True)
class ClassicResult:
    """One algorithm's search of one position to one depth."""

    algorithm: str
    depth: int
    value: Value
    """The root value, side to move's view (exact for every algorithm)."""
    best: Any
    """A best root move (``None`` when the root has no move or is a chance node)."""
    pv: tuple[Any, ...]
    """The principal variation as moves; for MT drivers read back from the table."""
    nodes: int
    leaves: int
    passes: int
    researches: int
    horizon: int
    """Horizon-dependent leaves (evaluations at depth 0, and table answers resting on them);
    0 means the value is the game's exact value (every line ended the game)."""
    tt_entries: int = 0


_NO_PV: Final[tuple[Any, ...]] = ()


class _Search:
    """One search: the game, the counters and the algorithms as mutually recursive methods.

    Conventions of every node method: ``depth`` is the remaining depth, ``ply`` the distance
    from the root, values are from the side to move's point of view (negamax) unless the
    method says otherwise, and ``(alpha, beta)`` is an open interval: a result strictly
    inside it is exact.
    """

    def __init__(
        self,
        game: Game[Any],
        depth: int,
        order: MoveOrder,
        *,
        tt: dict[tuple[int, int], list[Any]] | None,
        tt_capacity: int | None,
        stop: StopPoll,
    ) -> None:
        self.game = game
        self.tactical = order is MoveOrder.TACTICAL
        self.nodes = 0
        self.leaves = 0
        self.horizon = 0
        self.passes = 0
        self.researches = 0
        self.pv: list[tuple[Any, ...]] = [_NO_PV] * (depth + 2)
        self.tt: dict[tuple[int, int], list[Any]] = {} if tt is None else tt
        self.tt_capacity = tt_capacity
        self.stop = stop
        self.next_poll = stop.first
        self.root_moves: list[Any] = []
        self.root_side = game.side
        self.root_best: Any = None
        self.best: Any = None
        self.chance = cast("ChanceGame[Any]", game)
        """The same game, typed for the chance methods (only they call its chance members)."""
        self.bound = game.value_bound if isinstance(game, ChanceGame) else 0

    # -- bookkeeping shared by every algorithm ---------------------------------------------
    def _enter(self, ply: int) -> None:
        """Count a node; poll the stop conditions when due (:class:`engine.stop.StopPoll`)."""
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self.next_poll = self.stop.check(self.nodes, ply)
        self.pv[ply] = _NO_PV

    def _evaluate(self) -> int:
        """A horizon leaf."""
        self.leaves += 1
        self.horizon += 1
        return self.game.evaluate()

    def _mated(self) -> bool:
        """At the horizon: is the side to move checkmated?  Checked only when in check, so
        a mate at the horizon scores as a mate while quiet leaves cost no move generation."""
        game = self.game
        return game.in_check() and not game.legal_moves()

    def _terminal(self, ply: int) -> int:
        """A decided game: mate-distance scores, or ``±value_bound`` in chance games."""
        self.leaves += 1
        if self.bound:
            return self.game.terminal_value() * self.bound
        return outcome_score(self.game.terminal_value(), ply)

    def _moves(self, ply: int) -> list[Any]:
        if ply == 0:
            return self.root_moves
        game = self.game
        if self.tactical:
            return game.noisy_moves() + game.quiet_moves()
        return game.legal_moves()

    def _open(self, depth: int, ply: int) -> int | list[Any]:
        """Enter a node: its leaf value (``int``), or its moves (a non-empty list)."""
        self._enter(ply)
        if ply and self.game.is_terminal():
            return self._terminal(ply)
        if depth == 0:
            return self._terminal(ply) if self._mated() else self._evaluate()
        moves = self._moves(ply)
        if not moves:
            return self._terminal(ply)
        return moves

    def _improve_pv(self, ply: int, move: Any) -> None:
        self.pv[ply] = (move, *self.pv[ply + 1])

    # -- minimax and negamax ---------------------------------------------------------------
    def minimax(self, depth: int, ply: int) -> int:
        """The minimax value from the *root* side's view: the root side maximises, the
        other minimises.  Visits every node to ``depth``."""
        game = self.game
        maximizing = game.side == self.root_side
        node = self._open(depth, ply)
        if isinstance(node, int):
            return node if maximizing else -node
        best = -INF if maximizing else INF
        for move in node:
            game.push(move)
            value = self.minimax(depth - 1, ply + 1)
            game.pop()
            if (value > best) if maximizing else (value < best):
                best = value
                self._improve_pv(ply, move)
        return best

    def negamax(self, depth: int, ply: int) -> int:
        """The minimax value from the side to move's view: ``max(-value(child))``."""
        game = self.game
        node = self._open(depth, ply)
        if isinstance(node, int):
            return node
        best = -INF
        for move in node:
            game.push(move)
            value = -self.negamax(depth - 1, ply + 1)
            game.pop()
            if value > best:
                best = value
                self._improve_pv(ply, move)
        return best

    # -- alpha-beta ----------------------------------------------------------------------------
    def alphabeta(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Fail-hard alpha-beta: returns ``alpha`` if value <= alpha, ``beta`` if value >=
        beta, else the exact value (leaves are returned unclipped; it changes no decision)."""
        game = self.game
        node = self._open(depth, ply)
        if isinstance(node, int):
            return node
        for move in node:
            game.push(move)
            value = -self.alphabeta(depth - 1, -beta, -alpha, ply + 1)
            game.pop()
            if value >= beta:
                return beta
            if value > alpha:
                alpha = value
                self._improve_pv(ply, move)
        return alpha

    def failsoft(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Fail-soft alpha-beta: a result ``g <= alpha`` means value <= g, ``g >= beta``
        means value >= g, anything in between is exact."""
        game = self.game
        node = self._open(depth, ply)
        if isinstance(node, int):
            return node
        best = -INF
        for move in node:
            game.push(move)
            value = -self.failsoft(depth - 1, -beta, -max(alpha, best), ply + 1)
            game.pop()
            if value > best:
                best = value
                self._improve_pv(ply, move)
                if value >= beta:
                    break
        return best

    def negascout(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Reinefeld's NegaScout, fail-soft (same contract as :meth:`failsoft`).

        Every move after the first is tested with the null window ``(a, a+1)``, ``a`` the best
        value so far (at least ``alpha``).  A test result ``t`` with ``a < t < beta`` is a
        fail-high inside the window: the move is re-searched with ``(t, beta)``, unless the
        remaining depth is at most 2, where a fail-soft test of a child whose children are
        all leaves already returns the exact value.
        """
        game = self.game
        node = self._open(depth, ply)
        if isinstance(node, int):
            return node
        best = -INF
        first = True
        for move in node:
            a = max(alpha, best)
            game.push(move)
            if first:
                value = -self.negascout(depth - 1, -beta, -a, ply + 1)
                first = False
            else:
                value = -self.negascout(depth - 1, -a - 1, -a, ply + 1)
                if a < value < beta and depth > 2:
                    self.researches += 1
                    value = -self.negascout(depth - 1, -beta, -value, ply + 1)
            game.pop()
            if value > best:
                best = value
                self._improve_pv(ply, move)
                if value >= beta:
                    break
        return best

    def aspiration(self, depth: int, guess: int, window: int) -> int:
        """Fail-soft alpha-beta in ``(guess - window, guess + window)``; a fail-low ``g`` is
        re-searched in ``(-INF, g + 1)``, a fail-high in ``(g - 1, INF)``, either of which is
        certain to contain the value.  Returns the exact root value."""
        alpha = max(-INF, guess - window)
        beta = min(INF, guess + window)
        self.passes += 1
        value = self.failsoft(depth, alpha, beta, 0)
        if value <= alpha:
            self.passes += 1
            value = self.failsoft(depth, -INF, value + 1, 0)
        elif value >= beta:
            self.passes += 1
            value = self.failsoft(depth, value - 1, INF, 0)
        return value

    # -- the MT framework ----------------------------------------------------------------------
    def mt(self, depth: int, gamma: int, ply: int) -> int:
        """Memory-enhanced test: fail-soft alpha-beta with the null window ``(gamma-1,
        gamma)``, answering from and storing into the table of bounds.

        Returns ``g``: if ``g >= gamma`` the value is at least ``g``, else at most ``g``.
        Entries are ``[lower, upper, move, open]`` under ``(key, depth)``, mate scores
        node-relative (:func:`engine.score.to_tt`); ``move`` is the move that produced the
        best result, ``open`` whether the result rests on horizon evaluations.  At the root
        nothing is stored (its moves may be restricted) and ``root_best`` records the move of
        a fail-high.
        """
        game = self.game
        self._enter(ply)
        tt = self.tt
        key: tuple[int, int] | None = None
        entry: list[Any] | None = None
        if ply:
            if game.is_terminal():
                return self._terminal(ply)
            key = (game.key(), depth)
            entry = tt.get(key)
            if entry is not None:
                lower = entry[0] if entry[0] == -INF else from_tt(entry[0], ply)
                if lower >= gamma:
                    self.horizon += entry[3]
                    return lower
                upper = entry[1] if entry[1] == INF else from_tt(entry[1], ply)
                if upper < gamma:
                    self.horizon += entry[3]
                    return upper
        if depth == 0:
            if self._mated():
                return self._terminal(ply)
            value = self._evaluate()
            if key is not None:
                self._store(key, entry, lower=value, upper=value, move=None, is_open=True, ply=ply)
            return value
        moves = self._moves(ply)
        if not moves:
            return self._terminal(ply)
        horizon_before = self.horizon
        best = -INF
        best_move = None
        for move in moves:
            game.push(move)
            value = -self.mt(depth - 1, 1 - gamma, ply + 1)
            game.pop()
            if value > best:
                best = value
                best_move = move
                if value >= gamma:
                    break
        if key is None:
            if best >= gamma:
                self.root_best = best_move
            return best
        failed_high = best >= gamma
        self._store(
            key,
            entry,
            lower=best if failed_high else None,
            upper=None if failed_high else best,
            move=best_move,
            is_open=self.horizon > horizon_before,
            ply=ply,
        )
        return best

    def _store(
        self,
        key: tuple[int, int],
        entry: list[Any] | None,
        *,
        lower: int | None,
        upper: int | None,
        move: Any,
        is_open: bool,
        ply: int,
    ) -> None:
        """Tighten the entry's bounds (the other bound is kept, as in Plaat's MT)."""
        if entry is None:
            capacity = self.tt_capacity
            if capacity is not None and len(self.tt) >= capacity:
                return  # full: MT stays correct without the entry, only slower
            entry = [-INF, INF, None, 0]
            self.tt[key] = entry
        if lower is not None:
            entry[0] = to_tt(lower, ply)
        if upper is not None:
            entry[1] = to_tt(upper, ply)
        if move is not None:
            entry[2] = move
        if is_open:
            entry[3] = 1

    def mtd(self, depth: int, first: int) -> int:
        """The MTD driver: null-window tests around the latest result until the lower and
        upper bounds meet.  ``first`` = a guess (MTD(f)), ``INF`` (SSS*) or ``-INF`` (DUAL*).
        Started from the true value it makes exactly two passes (one fails high, one low)."""
        value = first
        lower, upper = -INF, INF
        while lower < upper:
            gamma = value + 1 if value == lower else value
            value = self.mt(depth, gamma, 0)
            self.passes += 1
            if value < gamma:
                upper = value
            else:
                lower = value
                self.best = self.root_best
        return value

    def pv_from_table(self, depth: int) -> tuple[Any, ...]:
        """The line of stored best moves from the root's best move, as far as it is legal."""
        game = self.game
        line: list[Any] = [self.best]
        game.push(self.best)
        remaining = depth - 1
        while remaining > 0 and not game.is_terminal():
            entry = self.tt.get((game.key(), remaining))
            if entry is None or entry[2] is None or entry[2] not in game.legal_moves():
                break
            line.append(entry[2])
            game.push(entry[2])
            remaining -= 1
        for _ in line:
            game.pop()
        return tuple(line)

    # -- chance: expectiminimax, Star1, Star2 --------------------------------------------------
    def _open_chance(self, depth: int, ply: int) -> int | None:
        """Enter a node of a chance game: its leaf value, or ``None`` to expand it."""
        self._enter(ply)
        if ply and self.game.is_terminal():
            return self._terminal(ply)
        if depth == 0:
            return self._terminal(ply) if self._mated() else self._evaluate()
        return None

    def expectiminimax(self, depth: int, ply: int) -> Value:
        """Decision nodes take the best child, chance nodes the probability-weighted mean.
        A child's value is negated when its ``side`` differs from the node's."""
        leaf = self._open_chance(depth, ply)
        if leaf is not None:
            return leaf
        game = self.chance
        side = game.side
        if game.is_chance_node():
            total: Value = 0
            for outcome, probability in game.chance_outcomes():
                game.push(outcome)
                value = self.expectiminimax(depth - 1, ply + 1)
                if game.side != side:
                    value = -value
                game.pop()
                total += probability * value
            return total
        moves = self._moves(ply)
        if not moves:
            return self._terminal(ply)
        best: Value = -INF
        for move in moves:
            game.push(move)
            value = self.expectiminimax(depth - 1, ply + 1)
            if game.side != side:
                value = -value
            game.pop()
            if value > best:
                best = value
                self._improve_pv(ply, move)
        return best

    def star1(self, depth: int, alpha: Value, beta: Value, ply: int) -> Value:
        """Ballard's Star1, fail-soft (same contract as :meth:`failsoft`): alpha-beta at
        decision nodes; at chance nodes each outcome is searched in the window that would
        already decide the node, knowing every value lies in ``[-U, U]``."""
        leaf = self._open_chance(depth, ply)
        if leaf is not None:
            return leaf
        if self.chance.is_chance_node():
            return self._chance_node(depth, alpha, beta, ply, self.star1, probe=False)
        return self._decision_node(depth, alpha, beta, ply, self.star1)

    def star2(self, depth: int, alpha: Value, beta: Value, ply: int) -> Value:
        """Ballard's Star2: Star1 with a probing phase at chance nodes (see
        :meth:`_chance_node`); the same contract and the same value."""
        leaf = self._open_chance(depth, ply)
        if leaf is not None:
            return leaf
        if self.chance.is_chance_node():
            return self._chance_node(depth, alpha, beta, ply, self.star2, probe=True)
        return self._decision_node(depth, alpha, beta, ply, self.star2)

    def _child(  # noqa: PLR0917 - shaped like the node methods it wraps
        self,
        search: Callable[[int, Value, Value, int], Value],
        side: int,
        depth: int,
        alpha: Value,
        beta: Value,
        ply: int,
    ) -> Value:
        """Search the pushed child with the window ``(alpha, beta)`` expressed in the
        parent's view (``side``), and return its value in the parent's view."""
        if self.game.side == side:
            return search(depth - 1, alpha, beta, ply + 1)
        return -search(depth - 1, -beta, -alpha, ply + 1)

    def _decision_node(  # noqa: PLR0917 - shaped like the node methods
        self,
        depth: int,
        alpha: Value,
        beta: Value,
        ply: int,
        search: Callable[[int, Value, Value, int], Value],
        first: Value | None = None,
    ) -> Value:
        """Fail-soft alpha-beta over the moves, children possibly of the same side.

        ``first``, when given, is what a Star2 probe already established for the first move:
        its exact value, or a lower bound at least ``beta``; the move is then not searched
        again."""
        moves = self._moves(ply)
        if not moves:
            return self._terminal(ply)
        game = self.game
        side = game.side
        best: Value = -INF
        if first is not None:
            self.pv[ply + 1] = _NO_PV  # the probe's line below the first move is not kept
        for move in moves:
            if first is not None:
                value, first = first, None
            else:
                game.push(move)
                value = self._child(search, side, depth, max(alpha, best), beta, ply)
                game.pop()
            if value > best:
                best = value
                self._improve_pv(ply, move)
                if value >= beta:
                    break
        return best

    def _chance_node(
        self,
        depth: int,
        alpha: Value,
        beta: Value,
        ply: int,
        search: Callable[[int, Value, Value, int], Value],
        *,
        probe: bool,
    ) -> Value:
        """A chance node under Star1 (``probe=False``) or Star2 (``probe=True``).

        Each outcome ``i`` (probability ``p_i``) has known bounds ``lo_i <= v_i <= hi_i``,
        ``[-U, U]`` to begin with.  After outcomes ``0..i-1`` are known exactly (sum ``S`` of
        ``p_j v_j``), outcome ``i`` decides the node if ``v_i <= A_i`` (then the mean is at
        most alpha) or ``v_i >= B_i`` (at least beta), where::

            A_i = (alpha - S - sum_{j>i} p_j hi_j) / p_i
            B_i = (beta  - S - sum_{j>i} p_j lo_j) / p_i

        so it is searched in the window ``(max(A_i, lo_i), min(B_i, hi_i))`` and the node
        returns a bound as soon as one of the two happens (Star1).  Star2 first *probes*
        (:meth:`_probe`): below each outcome that is a decision node it searches only the
        first move, which bounds that outcome from below (from above when the outcome's
        player is the other side), and returns at once if the probes alone push the mean out
        of the window; the search phase then reuses each probed first move's result instead
        of searching that move again.
        """
        bound = self.bound
        if alpha >= bound:
            return bound  # the mean cannot exceed alpha: fail low
        if beta <= -bound:
            return -bound
        game = self.chance
        side = game.side
        outcomes = game.chance_outcomes()
        n = len(outcomes)
        lo: list[Value] = [-bound] * n
        hi: list[Value] = [bound] * n
        probed: list[tuple[Value, bool] | None] = [None] * n
        if probe:
            decided = self._probe(
                depth, alpha, beta, ply, outcomes=outcomes, lo=lo, hi=hi, probed=probed
            )
            if decided is not None:
                return decided
        done: Value = 0
        rest_lo: Value = sum((p * b for (_, p), b in zip(outcomes, lo, strict=True)), Fraction(0))
        rest_hi: Value = sum((p * b for (_, p), b in zip(outcomes, hi, strict=True)), Fraction(0))
        for i, (outcome, p) in enumerate(outcomes):
            rest_lo -= p * lo[i]
            rest_hi -= p * hi[i]
            a = (alpha - done - rest_hi) / p
            b = (beta - done - rest_lo) / p
            low, high = max(a, lo[i]), min(b, hi[i])
            game.push(outcome)
            same = game.side == side
            if not same:
                low, high = -high, -low
            known = probed[i]
            if known is not None and (known[1] or known[0] >= high):
                # Star2: the outcome's first move is already valued (exactly, or enough to
                # cut): search the outcome's node without that move.
                self._enter(ply + 1)
                value = self._decision_node(depth - 1, low, high, ply + 1, search, known[0])
            else:
                value = search(depth - 1, low, high, ply + 1)
            game.pop()
            if not same:
                value = -value
            if value <= a:
                return done + p * value + rest_hi
            if value >= b:
                return done + p * value + rest_lo
            done += p * value
        return done

    def _probe(
        self,
        depth: int,
        alpha: Value,
        beta: Value,
        ply: int,
        *,
        outcomes: list[tuple[Any, Fraction]],
        lo: list[Value],
        hi: list[Value],
        probed: list[tuple[Value, bool] | None],
    ) -> Value | None:
        """Star2's probing phase: tighten ``lo``/``hi`` from the first move below each
        outcome; return a bound as soon as the bounds decide the node, else ``None``.

        An outcome is probed when it is a decision node with depth to spare: its value is at
        least the value of its first move (in its own view), which bounds the outcome from
        below in the chance node's view (from above when the outcome's player is the other
        side).  The first move is searched, fail-soft, in the window that would decide the
        chance node, so the result is a usable bound exactly when it lands above the
        window's low edge; ``probed[i]`` keeps it, with whether it is exact (inside the
        window) rather than a lower bound, for the search phase.
        """
        game = self.chance
        side = game.side
        for i, (outcome, p) in enumerate(outcomes):
            game.push(outcome)
            if depth > 1 and not game.is_chance_node() and not game.is_terminal():
                self._enter(ply + 1)
                moves = self._moves(ply + 1)
                if moves:
                    same = game.side == side
                    # The window in the outcome's own view: from what is already known about
                    # it up to the value that would decide the chance node.
                    if same:
                        others = sum(q * lo[j] for j, (_, q) in enumerate(outcomes) if j != i)
                        low, high = Fraction(lo[i]), Fraction(beta - others) / p
                    else:
                        others = sum(q * hi[j] for j, (_, q) in enumerate(outcomes) if j != i)
                        low, high = Fraction(-hi[i]), Fraction(others - alpha) / p
                    high = min(high, Fraction(self.bound))
                    if low < high:
                        child_side = game.side
                        game.push(moves[0])
                        value = self._child(self.star2, child_side, depth - 1, low, high, ply + 1)
                        game.pop()
                        if value > low:  # a lower bound on the outcome, in its own view
                            probed[i] = (value, value < high)
                            if same:
                                lo[i] = value
                            else:
                                hi[i] = -value
            game.pop()
            lower = sum(q * lo[j] for j, (_, q) in enumerate(outcomes))
            if lower >= beta:
                return lower
            upper = sum(q * hi[j] for j, (_, q) in enumerate(outcomes))
            if upper <= alpha:
                return upper
        return None


def search(
    algorithm: str,
    game: Game[Any],
    depth: int,
    *,
    order: MoveOrder = MoveOrder.TACTICAL,
    guess: int | None = None,
    window: int = DEFAULT_WINDOW,
    root_moves: Sequence[Any] | None = None,
    tt: dict[tuple[int, int], list[Any]] | None = None,
    tt_capacity: int | None = None,
    node_limit: int | None = None,
    poll: PollListener | None = None,
    stop: StopPoll | None = None,
) -> ClassicResult:
    """Run one algorithm on ``game`` to ``depth`` plies and return its value and counts.

    ``guess``: the first guess of ``mtdf`` and the window centre of ``aspiration`` (default:
    the root's static evaluation, not counted as a leaf).  ``root_moves``: search only these
    (in this order).  ``tt``: the MT drivers' table, to share it between calls (by default a
    fresh unbounded one, as SSS*'s theory assumes); ``tt_capacity`` caps its entries.
    ``stop``: when to stop (:class:`engine.stop.StopPoll`); without it, ``node_limit`` (stop
    when that many nodes have been entered) and ``poll`` (told the node count at every poll,
    stops the search by returning True) make one.  A stop raises
    :class:`~engine.driver.SearchStopped` with the game restored (``ply`` 0, ``nodes`` the
    count); otherwise the game is left as it was found.
    """
    info = ALGORITHMS.get(algorithm)
    if info is None:
        raise ValueError(f"unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    if depth < 1 or depth >= MAX_PLY:
        raise ValueError(f"depth must be in 1..{MAX_PLY - 1}: {depth}")
    chance_game = has_chance(game)
    if info.chance and not chance_game:
        raise ValueError(f"{algorithm} needs a game with chance nodes ({game.variant})")
    if chance_game and not info.chance:
        raise ValueError(f"{algorithm} cannot search a game with chance nodes ({game.variant})")
    if isinstance(game, ChanceGame) and not 0 < game.value_bound < INF:
        raise ValueError(f"value_bound must be in 1..{INF - 1}")

    if stop is None:
        stop = StopPoll(node_limit=node_limit, on_poll=poll)
    elif node_limit is not None or poll is not None:
        raise ValueError("give either stop or node_limit and poll, not both")

    s = _Search(game, depth, order, tt=tt, tt_capacity=tt_capacity, stop=stop)
    s.root_moves = list(root_moves) if root_moves is not None else fixed_order_moves(game, order)
    try:
        value = _dispatch(s, info.name, depth, guess, window)
    except SearchStopped as stopped:
        for _ in range(stopped.ply):
            game.pop()
        stopped.ply = 0
        raise

    if info.name in _MT_DRIVERS:
        pv = s.pv_from_table(depth) if s.best is not None else _NO_PV
    else:
        pv = s.pv[0]
    return ClassicResult(
        algorithm=algorithm,
        depth=depth,
        value=value,
        best=pv[0] if pv else None,
        pv=pv,
        nodes=s.nodes,
        leaves=s.leaves,
        passes=max(1, s.passes),
        researches=s.researches,
        horizon=s.horizon,
        tt_entries=len(s.tt),
    )


def fixed_order_moves(game: Game[Any], order: MoveOrder = MoveOrder.TACTICAL) -> list[Any]:
    """The legal moves in the fixed order the classic algorithms search them."""
    if order is MoveOrder.TACTICAL:
        return game.noisy_moves() + game.quiet_moves()
    return game.legal_moves()


def _dispatch(
    s: _Search, algorithm: Algorithm, depth: int, guess: int | None, window: int
) -> Value:
    if not s.root_moves:
        s._enter(0)
        return s._terminal(0)  # no move at the root: the game is over
    if guess is None and algorithm in (Algorithm.MTDF, Algorithm.ASPIRATION):
        guess = s.game.evaluate()
    match algorithm:
        case Algorithm.MINIMAX:
            return s.minimax(depth, 0)
        case Algorithm.NEGAMAX:
            return s.negamax(depth, 0)
        case Algorithm.ALPHABETA:
            return s.alphabeta(depth, -INF, INF, 0)
        case Algorithm.FAILSOFT:
            return s.failsoft(depth, -INF, INF, 0)
        case Algorithm.NEGASCOUT:
            return s.negascout(depth, -INF, INF, 0)
        case Algorithm.ASPIRATION:
            assert guess is not None
            return s.aspiration(depth, guess, window)
        case Algorithm.MTDF:
            assert guess is not None
            return s.mtd(depth, max(-INF, min(INF, guess)))
        case Algorithm.SSSSTAR:
            return s.mtd(depth, INF)
        case Algorithm.DUALSTAR:
            return s.mtd(depth, -INF)
        case Algorithm.EXPECTIMINIMAX:
            return s.expectiminimax(depth, 0)
        case Algorithm.STAR1:
            return s.star1(depth, -INF, INF, 0)
        case Algorithm.STAR2:
            return s.star2(depth, -INF, INF, 0)


class ClassicSearcher:
    """Plays with one of the classic algorithms, with :class:`engine.search.Searcher`'s call
    shape, so UCI's ``Algorithm`` option can switch between them and matches can compare.

    Each ``search`` is iterative deepening under :class:`engine.driver.Driver`, the production
    search's driver, so limits, ``searchmoves``, MultiPV, time, stop and the result follow the
    same rules for both.  Every root search is one full :func:`search` of the chosen algorithm
    at that depth, in the algorithm's fixed move order and with its own root window (MTD(f)
    and aspiration take the previous iteration's value as their guess); ``nodes`` is never
    exceeded.  After each iteration an ``info string`` gives its leaves and root passes, and
    the iterations stop early when the tree is exhausted (no line reached the horizon: deeper
    searches cannot change anything).

    The MT drivers' table lives for one ``search`` and is capped at ``hash_mb``.
    """

    def __init__(
        self,
        algorithm: str = "alphabeta",
        hash_mb: int = 16,
        *,
        order: MoveOrder = MoveOrder.TACTICAL,
        window: int = DEFAULT_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.algorithm = algorithm
        self.order = order
        self.window = window
        self._clock = clock
        self.hash_mb = 1
        self.resize_hash(hash_mb)

    @property
    def algorithm(self) -> str:
        return self._algorithm

    @algorithm.setter
    def algorithm(self, name: str) -> None:
        if name not in UCI_ALGORITHMS:
            raise ValueError(f"not a playable algorithm: {name!r} ({', '.join(UCI_ALGORITHMS)})")
        self._algorithm = name

    def resize_hash(self, hash_mb: int) -> None:
        """Cap the MT drivers' table at ``hash_mb`` MiB (in real memory)."""
        if hash_mb < 1:
            raise ValueError(f"hash size must be at least 1 MiB: {hash_mb}")
        self.hash_mb = hash_mb

    @property
    def tt_capacity(self) -> int:
        return self.hash_mb * (1 << 20) // _TT_ENTRY_BYTES

    def clear(self) -> None:
        """Nothing persists between searches; present for the runner's interface."""

    def search(
        self,
        game: Game[Any],
        limits: Limits,
        *,
        control: SearchControl | None = None,
        on_info: InfoCallback = ignore_info,
        multipv: int = 1,
        move_overhead_ms: int = 30,
    ) -> SearchResult:
        """Search ``game`` in place (every push undone on return) within ``limits``."""
        driver = Driver(
            game,
            limits,
            max_depth=MAX_PLY - 2,
            control=control,
            on_info=on_info,
            multipv=multipv,
            move_overhead_ms=move_overhead_ms,
            clock=self._clock,
        )
        iterations = _Iterations(self, game, driver)
        return driver.run(list(iterations.fixed_order), iterations.root())


class _Iterations:
    """One :meth:`ClassicSearcher.search` as the driver sees it: every root search is one
    :func:`search` call, with the algorithm's own root window (the driver does not aspirate
    for it) and in the algorithm's fixed move order, whatever order the driver keeps."""

    def __init__(self, searcher: ClassicSearcher, game: Game[Any], driver: Driver) -> None:
        self.algorithm = searcher.algorithm
        self.order = searcher.order
        self.window = searcher.window
        self.tt_capacity = searcher.tt_capacity
        self.game = game
        self.fixed_order = fixed_order_moves(game, self.order)
        self.tt: dict[tuple[int, int], list[Any]] = {}
        self.node_limit = driver.node_limit
        self.control = driver.control
        self.deadline = driver.deadline
        self.clock = searcher._clock
        self.guesses: list[int] = []
        """The previous iteration's values, best first: MTD(f)'s and aspiration's guesses."""
        self.nodes = 0
        self.depth = 0
        self.leaves = 0
        self.passes = 0
        self.horizon = 0

    def root(self) -> Root:
        return Root(
            search=self.search_root,
            counters=self.counters,
            end_iteration=self.end_iteration,
            begin_iteration=self.begin_iteration,
        )

    def search_root(self, depth: int, _alpha: int, _beta: int, moves: list[Any], k: int) -> Line:
        chosen = set(moves)
        root_moves = [m for m in self.fixed_order if m in chosen]
        limit = self.node_limit
        guess = self.guesses[k] if k < len(self.guesses) else None
        try:
            result = search(
                self.algorithm,
                self.game,
                depth,
                order=self.order,
                guess=guess,
                window=self.window,
                root_moves=root_moves,
                tt=self.tt,
                tt_capacity=self.tt_capacity,
                stop=StopPoll(
                    node_limit=None if limit is None else max(1, limit - self.nodes),
                    control=self.control,
                    deadline=self.deadline,
                    clock=self.clock,
                ),
            )
        except SearchStopped as stop:
            self.nodes += stop.nodes  # search() restored the game already
            raise
        self.nodes += result.nodes
        self.leaves += result.leaves
        self.passes += result.passes
        self.horizon += result.horizon
        return Line(int(result.value), result.pv if result.pv else (result.best,))

    def begin_iteration(self, depth: int) -> None:
        self.depth = depth
        self.leaves = self.passes = self.horizon = 0

    def end_iteration(self, depth: int, lines: list[Line]) -> Iteration:
        self.guesses = [line.score for line in lines]
        return Iteration(
            exhausted=self.horizon == 0,
            note=f"{self.algorithm} depth {depth}: leaves {self.leaves} passes {self.passes}",
        )

    def counters(self) -> Counters:
        hashfull = min(1000, len(self.tt) * 1000 // self.tt_capacity)
        return Counters(self.nodes, seldepth=self.depth, hashfull=hashfull)
