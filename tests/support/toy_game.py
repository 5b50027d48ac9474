"""A small synthetic game implementing :class:`engine.game.Game`, for testing the search alone.

Why synthetic: the search must be checked against plain minimax on many positions, including
ones with checks, noisy moves, transpositions, null moves, early game ends and empty move
lists, without depending on a real adapter being fast or finished.

The position is a running ``total`` and the number of ``plies`` played; a move adds its value
(1..4) to the total.  Because addition commutes, different move orders reach the same position
(transpositions for the TT).  Everything else is a deterministic hash of ``(total, plies)``:

* the number of legal moves (0..4; 0 ends the game by "move rules", like a checkmate, in
  about one position in ``stuck_every``);
* whether the game is decided (``is_terminal``, about one position in ``end_every``) and its
  outcome for the side to move;
* whether the side to move is "in check" (an extension; no stand-pat in quiescence);
* the static evaluation, in -100..100;
* which moves are noisy: those making the total divisible by 3.

The game always ends after ``length`` plies.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from engine.eval import LinearEvaluator
from engine.game import Game, IllegalMoveError
from engine.score import INF, MATE_BOUND, outcome_score

_MASK64 = (1 << 64) - 1
_EVALUATOR = LinearEvaluator({"noise": 1.0})


def mix(x: int) -> int:
    """splitmix64 finaliser: a deterministic, well-spread 64-bit hash of ``x``."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


class ToyGame:
    """A mutable toy position (``Game[int]``); moves are the ints 1..4."""

    variant = "toy"

    def __init__(
        self,
        total: int = 0,
        plies: int = 0,
        *,
        length: int = 10,
        seed: int = 0,
        checks: bool = True,
        nulls: bool = True,
        end_every: int = 23,
        stuck_every: int = 19,
    ) -> None:
        self.end_every = end_every
        self.stuck_every = stuck_every
        self.total = total
        self.plies = plies
        self.length = length
        self.seed = seed
        self.checks = checks
        self.nulls = nulls
        self._stack: list[int | None] = []
        self.pushes = 0

    def _h(self) -> int:
        return mix((self.total * 1_000_003 + self.plies) ^ (self.seed * 0x5851F42D4C957F2D))

    # -- moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[int]:
        if self.plies >= self.length:
            return []
        h = self._h()
        n = 0 if self.plies > 0 and h % self.stuck_every == 0 else 1 + (h >> 5) % 4
        return list(range(1, n + 1))

    def noisy_moves(self) -> list[int]:
        return [m for m in self.legal_moves() if (self.total + m) % 3 == 0]

    def quiet_moves(self) -> list[int]:
        return [m for m in self.legal_moves() if (self.total + m) % 3 != 0]

    def is_noisy(self, move: int) -> bool:
        return (self.total + move) % 3 == 0

    def push(self, move: int) -> None:
        self.total += move
        self.plies += 1
        self._stack.append(move)
        self.pushes += 1

    def pop(self) -> None:
        move = self._stack.pop()
        if move is not None:
            self.total -= move
        self.plies -= 1

    def can_null_move(self) -> bool:
        return self.nulls and not self.in_check()

    def push_null(self) -> None:
        self.plies += 1
        self._stack.append(None)
        self.pushes += 1

    # -- state ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        if self.plies >= self.length:
            return True
        return self.plies > 0 and (self._h() >> 12) % self.end_every == 0

    def terminal_value(self) -> int:
        return int((self._h() >> 20) % 3) - 1

    def in_check(self) -> bool:
        return self.checks and (self._h() >> 28) % 7 == 0

    def key(self) -> int:
        return mix(self.total * 7919 + self.plies * 104_729 + self.seed)

    @property
    def side(self) -> int:
        return self.plies & 1

    @property
    def ply(self) -> int:
        return self.plies

    # -- evaluation ----------------------------------------------------------------------
    @property
    def evaluator(self) -> LinearEvaluator:
        return _EVALUATOR

    def features(self) -> dict[str, float]:
        return {"noise": float(self.evaluate())}

    def evaluate(self) -> int:
        return int((self._h() >> 36) % 201) - 100

    # -- notation ------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        if text.isdigit() and int(text) in self.legal_moves():
            return int(text)
        raise IllegalMoveError(f"not a legal toy move ({text})")

    def format_move(self, move: Hashable) -> str:
        return str(move)

    def fen(self) -> str:
        return f"{self.total} {self.plies}"

    def display(self) -> str:
        return f"total {self.total}, ply {self.plies}"

    def copy(self) -> ToyGame:
        clone = ToyGame(
            self.total,
            self.plies,
            length=self.length,
            seed=self.seed,
            checks=self.checks,
            nulls=self.nulls,
            end_every=self.end_every,
            stuck_every=self.stuck_every,
        )
        clone._stack = self._stack.copy()
        return clone


def reference_move_values(g: Game[Any], depth: int, *, quiescence: bool) -> dict[Any, int]:
    """Plain negamax value of every root move, with the search's leaf rules and no pruning
    (the tests' oracle); the root value is the maximum.

    Root: never checks ``is_terminal``.  Nodes: terminal → outcome; check extension (+1 while
    ``ply < 2·depth``); at depth 0, quiescence or the static evaluation; no moves → outcome.
    Quiescence: terminal → outcome; in check → all moves (none → outcome); otherwise the
    maximum of stand-pat and the noisy moves.
    """

    def qs(ply: int) -> int:
        if g.is_terminal():
            return outcome_score(g.terminal_value(), ply)
        if g.in_check():
            moves = g.legal_moves()
            if not moves:
                return outcome_score(g.terminal_value(), ply)
            best = -INF
        else:
            best = g.evaluate()
            moves = g.noisy_moves()
        for m in moves:
            g.push(m)
            best = max(best, -qs(ply + 1))
            g.pop()
        return best

    def node(d: int, ply: int) -> int:
        if g.is_terminal():
            return outcome_score(g.terminal_value(), ply)
        if g.in_check() and ply < 2 * depth:
            d += 1
        if d <= 0:
            return qs(ply) if quiescence else g.evaluate()
        moves = g.legal_moves()
        if not moves:
            return outcome_score(g.terminal_value(), ply)
        best = -INF
        for m in moves:
            g.push(m)
            best = max(best, -node(d - 1, ply + 1))
            g.pop()
        return best

    values = {}
    for m in g.legal_moves():
        g.push(m)
        values[m] = -node(depth - 1, 1)
        g.pop()
    return values


_SOLVED: dict[tuple[str, int], int] = {}


def solve(g: Game[Any], ply: int = 0) -> int:
    """Exact game value by plain negamax to the end of the game (small games only), as a
    score at ``ply``.  The root never checks ``is_terminal``, like the search."""
    moves = g.legal_moves()
    if not moves:
        return outcome_score(g.terminal_value(), ply)
    return _shift(max(-_solve_node(g, m) for m in moves), ply + 1)


def _solve_node(g: Game[Any], move: Any) -> int:
    """Value (relative to the position after ``move``, i.e. at ply 0) of the child."""
    g.push(move)
    try:
        memo_key = (g.variant, g.key())
        value = _SOLVED.get(memo_key)
        if value is None:
            if g.is_terminal() or not g.legal_moves():
                value = outcome_score(g.terminal_value(), 0)
            else:
                value = max(-_solve_node(g, m) for m in g.legal_moves())
                value = _shift(value, 1)
            _SOLVED[memo_key] = value
        return value
    finally:
        g.pop()


def _shift(value: int, plies: int) -> int:
    """Move a mate score ``plies`` further from the root (a child's score seen from above)."""
    if value >= MATE_BOUND:
        return value - plies
    if value <= -MATE_BOUND:
        return value + plies
    return value
