"""The Connect Four solver's recursion on native words, compiled by mypyc.

:class:`Negamax` searches one null window (or any window) of a position given as Pons'
bitboards: the side to move's stones, the mask of all stones, the stone count, each an
``i64`` (a board of 7 by 6 takes 49 bits).  It owns a fixed transposition table of native
words (``entries`` slots rounded up to a prime, ``key % entries`` indexes one; a slot holds
the whole 49-bit key and the bound, so a hit is never another position's) and a move sorter
preallocated per stone count: a node allocates nothing.
:class:`games.connect4.solver.Connect4Solver` drives it (root narrowing, best moves, limits)
and gives it ``check``, called every :data:`CHECK_INTERVAL` nodes, which may raise to abort
the search.

The same source runs as plain Python (``BRUDNO_PURE_PYTHON=1``), where ``i64`` is an
unbounded ``int``: the left shifts below may pass bit 63, where compiled words wrap and Python
ints do not, but every such value is masked to the board's 49 bits before it is used, so both
give the same bits, scores and node counts.  Why and what it measured: docs/playing.md,
*Connect Four's solver*.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

__all__ = [
    "CHECK_INTERVAL",
    "EMPTY",
    "NO_NODE_LIMIT",
    "Negamax",
    "bound_entry",
    "can_win_next",
    "prime_at_least",
]

_COMPILED: Final = not __file__.endswith(".py")
"""Whether this module runs as mypyc's extension (``False`` with ``BRUDNO_PURE_PYTHON``)."""

CHECK_INTERVAL: Final[i64] = 1024
"""Nodes between two calls of the search's ``check`` (stop flag, budgets, progress)."""
NO_NODE_LIMIT: Final[i64] = (1 << 62) - 1
"""The ``node_limit`` of :meth:`Negamax.narrow` when there is none."""

_CELLS: Final[i64] = 42
_BOTTOM: Final[i64] = 0x40810204081
"""The bottom cell of every column (Pons' layout: seven bits a column, the top one a guard)."""
_BOARD: Final[i64] = 0xFDFBF7EFDFBF
"""Every playable cell."""
_COLUMN_3: Final[i64] = 0x3F << 21
_COLUMN_2: Final[i64] = 0x3F << 14
_COLUMN_4: Final[i64] = 0x3F << 28
_COLUMN_1: Final[i64] = 0x3F << 7
_COLUMN_5: Final[i64] = 0x3F << 35
_COLUMN_0: Final[i64] = 0x3F
_COLUMN_6: Final[i64] = 0x3F << 42
"""The columns' cells, named by column (0 = a); searched centre first."""

_DROP_BITS: Final[i64] = (1 << 48) - 1
"""A sorter item's low bits: the drop's cell (the board's cells are bits 0-47)."""
_ORDER_SHIFT: Final[i64] = 48
"""A sorter item's ordering key above the drop: threats created << 3 | centre rank."""
_SORT_SLOTS: Final[i64] = 8
"""Sorter words per stone count (seven drops at most)."""

_KEY_SHIFT: Final[i64] = 8
"""A table word is ``(generation << 49 | key) << 8 | bound``; the generation is never 0, so
an empty slot (0) matches no key."""
_BOUND_BITS: Final[i64] = 0xFF
_GENERATION_SHIFT: Final[i64] = 49
_GENERATIONS: Final[i64] = 63
"""Clears between two real zeroings: :meth:`Negamax.clear` only moves to the next generation
(bits 57-62 of a word), which makes every older word a miss."""
_SCORE_OFFSET: Final[i64] = 64
EMPTY: Final = 0
"""An empty table slot."""

_PAIRS: Final[i64] = 0x5555_5555_5555_5555
_NIBBLES: Final[i64] = 0x3333_3333_3333_3333
_BYTES: Final[i64] = 0x0F0F_0F0F_0F0F_0F0F
_BYTE_SUM: Final[i64] = 0x0101_0101_0101_0101


def prime_at_least(n: i64) -> i64:
    """The smallest prime ``>= n`` (2 for less): the table's size, so that ``key % size``
    spreads keys whose low bits are the board's left columns over every slot."""
    candidate = max(n, 2)
    while True:
        divisor: i64 = 2
        while divisor * divisor <= candidate and candidate % divisor != 0:
            divisor += 1
        if divisor * divisor > candidate:
            return candidate
        candidate += 1


def bound_entry(score: i64, lower: bool) -> i64:
    """The bound part of a table word: ``(score + 64) << 1 | lower`` (always 1..255)."""
    return (score + _SCORE_OFFSET) << 1 | (1 if lower else 0)


def _popcount(bits: i64) -> i64:
    """Cells in ``bits`` (below 2⁴⁹: SWAR, its last product read only through bits 56-63)."""
    bits = bits - ((bits >> 1) & _PAIRS)
    bits = (bits & _NIBBLES) + ((bits >> 2) & _NIBBLES)
    bits = (bits + (bits >> 4)) & _BYTES
    return (bits * _BYTE_SUM >> 56) & 0xFF


def _winning_cells(p: i64, free: i64) -> i64:
    """The ``free`` cells where one more stone gives ``p`` a four (as
    :func:`games.connect4.board.winning_cells`, the four directions' shifts folded)."""
    r = (p << 1) & (p << 2) & (p << 3)
    a = p << 7
    b = a << 7
    c = p >> 7
    d = c >> 7
    r |= a & b & ((b << 7) | c) | c & d & (a | (d >> 7))
    a = p << 6
    b = a << 6
    c = p >> 6
    d = c >> 6
    r |= a & b & ((b << 6) | c) | c & d & (a | (d >> 6))
    a = p << 8
    b = a << 8
    c = p >> 8
    d = c >> 8
    r |= a & b & ((b << 8) | c) | c & d & (a | (d >> 8))
    return r & free


def can_win_next(current: i64, mask: i64) -> bool:
    """True when the side to move (stones ``current``) has a winning drop right now (as
    :func:`games.connect4.board.can_win_next`, natively)."""
    return _winning_cells(current, _BOARD ^ mask) & (mask + _BOTTOM) & _BOARD != 0


def _trunc_half(x: i64) -> i64:
    """``x / 2`` rounded towards zero (C division, as the bisection rule is stated)."""
    return x // 2 if x >= 0 else -(-x // 2)


@final
class Negamax:
    """Alpha-beta negamax with a transposition table of ``entries`` native words.

    ``nodes`` counts calls of the recursion (Pons' "nb pos") and is the caller's to read and
    reset; ``check()`` runs when ``nodes`` reaches ``next_check`` (after which the search sets
    ``next_check`` ``CHECK_INTERVAL`` further).  ``filled`` counts the table's used slots.
    """

    __slots__ = (
        "check",
        "entries",
        "filled",
        "generation",
        "next_check",
        "nodes",
        "sorter",
        "stamp",
        "table",
    )

    def __init__(self, entries: i64, check: Callable[[], None]) -> None:
        if entries < 1:
            raise ValueError(f"the table needs at least one entry ({entries})")
        self.entries: i64 = prime_at_least(entries)
        self.table: vec[i64] = vec[i64]([EMPTY] * self.entries)
        self.filled: i64 = 0
        self.generation: i64 = 1
        self.stamp: i64 = 1 << _GENERATION_SHIFT
        """The generation's bits, as they sit above a key."""
        self.nodes: i64 = 0
        self.next_check: i64 = CHECK_INTERVAL
        self.check = check
        self.sorter: vec[i64] = vec[i64]([0] * ((_CELLS + 1) * _SORT_SLOTS))
        """Each stone count's drops, ordered best first (one level of the recursion each)."""

    # -- the transposition table ------------------------------------------------------------
    def clear(self) -> None:
        """Forget every entry: the next generation, and every 63rd time a real zeroing (in
        place when compiled, a native loop; a fresh table as plain Python, where the loop
        would take seconds)."""
        if self.filled == 0:
            return
        self.filled = 0
        self.generation += 1
        if self.generation > _GENERATIONS:
            self.generation = 1
            if _COMPILED:
                table = self.table
                for i in range(self.entries):
                    table[i] = EMPTY
            else:
                self.table = vec[i64]([EMPTY] * self.entries)
        self.stamp = self.generation << _GENERATION_SHIFT

    def probe(self, key: i64) -> i64:
        """The bound stored for ``key`` (see :func:`bound_entry`), 0 when its slot holds none."""
        word = self.table[key % self.entries]
        if word >> _KEY_SHIFT == key | self.stamp:
            return word & _BOUND_BITS
        return 0

    def store(self, key: i64, bound: i64) -> None:
        """Keep ``bound`` for ``key`` in its slot, replacing whatever the slot held (the most
        recent result is the likeliest to be asked for again: Pons' rule)."""
        index = key % self.entries
        if self.table[index] >> (_KEY_SHIFT + _GENERATION_SHIFT) != self.generation:
            self.filled += 1
        self.table[index] = (key | self.stamp) << _KEY_SHIFT | bound

    # -- the search -------------------------------------------------------------------------
    def narrow(
        self,
        current: i64,
        mask: i64,
        stones: i64,
        low: i64,
        high: i64,
        node_limit: i64,
        on_probe: Callable[[tuple[int, int]], None] | None,
    ) -> i64:
        """The score, known to lie in ``[low, high]``, by null-window probes: each
        ``search(med, med + 1)`` proves it above or below ``med`` (a bisection biased towards
        zero, where most scores are), and the table carries each proof into the next probe.
        ``on_probe`` gets the bounds ``(low, high)`` after each probe.  A probe about to start
        with ``nodes >= node_limit`` calls ``check()``, which must raise: the budget is spent.
        """
        while low < high:
            med = low + (high - low) // 2
            if med <= 0 and _trunc_half(low) < med:
                med = _trunc_half(low)
            elif med >= 0 and _trunc_half(high) > med:
                med = _trunc_half(high)
            if self.nodes >= node_limit:
                self.check()
            self.next_check = self.nodes + CHECK_INTERVAL
            result = self.search(current, mask, stones, med, med + 1)
            if result <= med:
                high = result
            else:
                low = result
            if on_probe is not None:
                on_probe((low, high))
        return low

    def search(self, current: i64, mask: i64, stones: i64, alpha: i64, beta: i64) -> i64:
        """The score of the position within ``(alpha, beta)``, fail-soft inside the bounds:
        exact when it lies strictly inside, else a bound on the side it fell out of.

        Invariant on entry: the side to move cannot win with its next drop (the caller checks
        it; every node only plays drops after which the opponent cannot either).
        """
        self.nodes += 1
        if self.nodes >= self.next_check:
            self.next_check = self.nodes + CHECK_INTERVAL
            self.check()
        # Step 1: the drops that do not lose at once.
        opponent = current ^ mask
        free = _BOARD ^ mask
        threats = _winning_cells(opponent, free)
        possible = (mask + _BOTTOM) & _BOARD
        forced = possible & threats
        if forced != 0:
            if forced & (forced - 1) != 0:
                return -((_CELLS - stones) // 2)  # two threats to block: lost
            possible = forced
        possible &= ~(threats >> 1)  # never drop right under an opponent's threat
        if possible == 0:
            return -((_CELLS - stones) // 2)
        if stones >= _CELLS - 2:
            return 0
        # Step 2: bounds from the stone count and the table.
        low = -((_CELLS - 2 - stones) // 2)
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
        high = (_CELLS - 1 - stones) // 2
        key = current + mask
        entry = self.probe(key)
        if entry != 0:
            value = (entry >> 1) - _SCORE_OFFSET
            if entry & 1:
                if alpha < value:
                    alpha = value
                    if alpha >= beta:
                        return alpha
            elif value < high:
                high = value
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
        # Step 3: order the drops by the threats they create, centre first on ties.
        base = stones * _SORT_SLOTS
        count: i64 = 0
        if possible & (possible - 1) != 0:
            count = self._add(base, count, current, possible & _COLUMN_3, free, 7)
            count = self._add(base, count, current, possible & _COLUMN_2, free, 6)
            count = self._add(base, count, current, possible & _COLUMN_4, free, 5)
            count = self._add(base, count, current, possible & _COLUMN_1, free, 4)
            count = self._add(base, count, current, possible & _COLUMN_5, free, 3)
            count = self._add(base, count, current, possible & _COLUMN_0, free, 2)
            count = self._add(base, count, current, possible & _COLUMN_6, free, 1)
        else:
            self.sorter[base] = possible
            count = 1
        # Step 4: search.
        for i in range(base, base + count):
            drop = self.sorter[i] & _DROP_BITS
            score = -self.search(opponent, mask | drop, stones + 1, -beta, -alpha)
            if score >= beta:
                self.store(key, bound_entry(score, True))
                return score
            if score > alpha:  # noqa: PLR1730 (hot path: max() is a call)
                alpha = score
        self.store(key, bound_entry(alpha, False))
        return alpha

    def _add(self, base: i64, count: i64, current: i64, drop: i64, free: i64, rank: i64) -> i64:
        """Insert ``drop`` (if any) into the level's sorted drops at ``base``, keyed by the
        threats it creates, then by ``rank`` (centre highest); returns the new count."""
        if drop == 0:
            return count
        threats = _popcount(_winning_cells(current | drop, free))
        item = ((threats << 3 | rank) << _ORDER_SHIFT) | drop
        sorter = self.sorter
        i = base + count
        while i > base and sorter[i - 1] < item:
            sorter[i] = sorter[i - 1]
            i -= 1
        sorter[i] = item
        return count + 1
