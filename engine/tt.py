"""A bounded transposition table whose size is honest about CPython's memory.

Why packed arrays: a table of Python objects costs 150-250 bytes per entry (list slot, tuple,
boxed ints), so "16 MB" would hold fewer than 100,000 entries.  Here every slot is two unsigned
64-bit words in :mod:`array` buffers (16 bytes): the full key, and the entry packed as

    bits  0-15  score + 32768          (node-relative: the caller applies ``to_tt``/``from_tt``)
    bits 16-31  static eval + 32768    (0 means "no eval stored")
    bits 32-39  draft (depth), 0..255  (:data:`EXHAUSTIVE` = the subtree was searched to the end)
    bits 40-41  bound (:data:`UPPER` = 1, :data:`LOWER` = 2, :data:`EXACT` = 3; 0 = empty slot)
    bits 42-49  generation (the search that wrote it, modulo 256)
    bits 50-63  move id (0 = no move)

Moves are opaque hashable values owned by the game, so they cannot be packed; they are
*interned* instead: each distinct move is kept once and entries store its small id.  Chess has
fewer than 2,000 distinct moves, tic-tac-toe nine.  The intern table is charged against the
same byte budget (a share of the table, at most :data:`_INTERN_BUDGET_MAX`), estimating each
move's real cost from ``sys.getsizeof``; once the share is spent, entries for new moves are
stored without a move (ordering degrades gracefully, correctness does not depend on it).

Sizing: of ``size_mb`` MiB, a quarter (at most 1 MiB) is the move share, a few KiB cover the
containers' headers, and the rest is divided into 16-byte slots; the tests check with
``tracemalloc`` that a completely filled table stays within ``size_mb``.  ``hashfull()`` is
UCI's: per mille of the first 1,000 slots holding an entry written by the current search.

The table trusts a move whose slot carries the full 64-bit key: the search may play it before
generating moves.  Keys wider than 64 bits are folded to their low 64 bits.

Indexing: ``key % buckets`` with a prime number of buckets, so keys that are small encodings
or multiples of a power of two still spread over the whole table.

Replacement rule.  Slots come in buckets of two: the first is *depth-preferred*, the second is
*always-replace*.  A store for key K

1. overwrites the slot already holding K, unless that is the depth-preferred slot with a draft
   more than 2 plies deeper from the current search and the new entry is not EXACT;
2. otherwise goes into the depth-preferred slot when that slot is empty, from an older search,
   no deeper than the new draft, or non-EXACT while the new entry is EXACT (and at most 2 plies
   shallower); the entry it displaces moves to the always-replace slot;
3. otherwise goes into the always-replace slot.

A store without a move keeps the move already stored for the same key.  Deep, exact and recent
entries therefore survive, while the always-replace slot keeps the newest positions available.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Hashable
from typing import NamedTuple

# The bound flags stay plain ints, not an IntEnum: the node functions compare them on every
# probe, and CPython 3.11 specialises comparisons of exact ints only (an IntEnum member makes
# them several times slower).  They are also bits packed into the entry word.
UPPER = 1
"""The stored score is an upper bound (the node failed low)."""
LOWER = 2
"""The stored score is a lower bound (the node failed high)."""
EXACT = 3
"""The stored score is exact (``EXACT == UPPER | LOWER``)."""

EXHAUSTIVE = 255
"""Draft of an entry whose subtree reached the end of the game everywhere: valid at any depth."""
MAX_DRAFT = EXHAUSTIVE - 1

_MASK64 = (1 << 64) - 1
_OFFSET = 32768
_SHIFT_EVAL = 16
_SHIFT_DEPTH = 32
_SHIFT_BOUND = 40
_SHIFT_GEN = 42
_SHIFT_MOVE = 50
_MAX_MOVE_IDS = (1 << 14) - 1

_SLOT_BYTES = 16
"""Two 64-bit words per slot."""
_FIXED_BYTES = 8192
"""Allowance for the table object, the array headers and the intern containers' headers."""
_INTERN_OVERHEAD = 96
"""Per interned move: dict slot with its growth slack, list slot, boxed id."""
_MANAGED_DICT = 64
"""Extra allowance for move objects that carry an instance ``__dict__``."""
_INTERN_BUDGET_MAX = 1 << 20
_CACHED_INTS = range(-5, 257)
"""The small ints CPython preallocates: every use shares them, so they cost nothing."""
_MIN_BUCKETS = 2
"""The fewest buckets: 2, the smallest prime."""


class Entry(NamedTuple):
    """One probed entry.  ``score`` is node-relative; ``depth`` may be :data:`EXHAUSTIVE`."""

    move: Hashable | None
    score: int
    depth: int
    bound: int
    static_eval: int | None


def _object_bytes(obj: object) -> int:
    """What keeping ``obj`` alive costs, rounded to pymalloc's 16-byte blocks.

    Tuples (and frozensets) count their items too, except the small ints CPython caches;
    other objects count their own size plus an allowance for an instance ``__dict__``.
    """
    if type(obj) is int and obj in _CACHED_INTS:
        return 0
    try:
        size = (sys.getsizeof(obj) + 15) & ~15
    except TypeError:  # interpreters without getsizeof (PyPy): a generous guess
        size = 128
    if isinstance(obj, tuple | frozenset):
        size += sum(_object_bytes(item) for item in obj)
    elif getattr(type(obj), "__dictoffset__", 0) != 0:
        # Looked up on the type: touching ``obj.__dict__`` would allocate it in CPython 3.11+.
        size += _MANAGED_DICT
    return size


def _bucket_count(slots: int) -> int:
    """The largest prime number of two-slot buckets that fits: indexing is ``key % buckets``,
    and a prime modulus spreads structured keys (small encodings, multiples) evenly."""
    n = max(_MIN_BUCKETS, slots // 2)
    while n > _MIN_BUCKETS:
        if n % 2 and all(n % d for d in range(3, math.isqrt(n) + 1, 2)):
            return n
        n -= 1
    return n


class TranspositionTable:
    """Fixed-capacity hash table of search results, sized in MiB of real memory."""

    __slots__ = (
        "_buckets",
        "_data",
        "_gen",
        "_intern_left",
        "_keys",
        "_move_ids",
        "_moves",
        "_size_mb",
        "entries",
    )

    def __init__(self, size_mb: int) -> None:
        self._size_mb = 0
        self._buckets = 1
        self.entries = 2
        self._keys = array("Q")
        self._data = array("Q")
        self._gen = 0
        self._moves: list[Hashable | None] = [None]
        self._move_ids: dict[Hashable, int] = {}
        self._intern_left = 0
        self.resize(size_mb)

    # -- size ----------------------------------------------------------------------------------
    @property
    def size_mb(self) -> int:
        return self._size_mb

    def resize(self, size_mb: int) -> None:
        """Reallocate for ``size_mb`` MiB (at least 1); the contents are discarded."""
        size_mb = max(1, int(size_mb))
        total = size_mb << 20
        intern_budget = min(total // 4, _INTERN_BUDGET_MAX)
        slots = (total - intern_budget - _FIXED_BYTES) // _SLOT_BYTES
        self._size_mb = size_mb
        self._buckets = _bucket_count(slots)
        self.entries = self._buckets * 2
        # Release the old buffers before allocating the new ones, so peak memory stays bounded.
        self._keys = array("Q")
        self._data = array("Q")
        self._keys = array("Q", bytes(8 * self.entries))
        self._data = array("Q", bytes(8 * self.entries))
        self._reset_interning(intern_budget)
        self._gen = 0

    def clear(self) -> None:
        """Forget everything (``ucinewgame``), keeping the capacity."""
        n = self.entries
        self._keys = array("Q")
        self._data = array("Q")
        self._keys = array("Q", bytes(8 * n))
        self._data = array("Q", bytes(8 * n))
        self._reset_interning(min((self._size_mb << 20) // 4, _INTERN_BUDGET_MAX))
        self._gen = 0

    def _reset_interning(self, budget: int) -> None:
        self._moves = [None]
        self._move_ids = {}
        self._intern_left = budget

    def new_search(self) -> None:
        """Start a new generation: older entries become the first to be replaced."""
        self._gen = (self._gen + 1) & 0xFF

    # -- access --------------------------------------------------------------------------------
    def probe(self, key: int) -> Entry | None:
        """The entry stored for ``key``, or ``None``."""
        key &= _MASK64
        i = (key % self._buckets) << 1
        keys = self._keys
        if keys[i] == key:
            d = self._data[i]
            if d:
                return self._unpack(d)
        i += 1
        if keys[i] == key:
            d = self._data[i]
            if d:
                return self._unpack(d)
        return None

    def _unpack(self, d: int) -> Entry:
        ev = (d >> _SHIFT_EVAL) & 0xFFFF
        return Entry(
            self._moves[d >> _SHIFT_MOVE],
            (d & 0xFFFF) - _OFFSET,
            (d >> _SHIFT_DEPTH) & 0xFF,
            (d >> _SHIFT_BOUND) & 3,
            ev - _OFFSET if ev else None,
        )

    def store(  # noqa: PLR0917 - called once per node: positional is cheapest
        self,
        key: int,
        move: Hashable | None,
        score: int,
        depth: int,
        bound: int,
        static_eval: int | None = None,
    ) -> None:
        """Record a search result; ``score`` must already be node-relative (``to_tt``).

        ``depth`` is clamped to 0..:data:`MAX_DRAFT` unless it is :data:`EXHAUSTIVE`.
        """
        key &= _MASK64
        if depth < 0:
            depth = 0
        elif depth > MAX_DRAFT and depth != EXHAUSTIVE:
            depth = MAX_DRAFT
        mid = 0 if move is None else self._move_ids.get(move, 0) or self._intern(move)
        ev = (
            static_eval + _OFFSET
            if static_eval is not None and -_OFFSET < static_eval < _OFFSET
            else 0
        )
        keys = self._keys
        data = self._data
        gen = self._gen
        i = (key % self._buckets) << 1
        j = i + 1
        old = data[i]
        if keys[i] == key and old:
            old_depth = (old >> _SHIFT_DEPTH) & 0xFF
            if bound != EXACT and old_depth > depth + 2 and (old >> _SHIFT_GEN) & 0xFF == gen:
                return
            if not mid:
                mid = old >> _SHIFT_MOVE
            target = i
        else:
            old_depth = (old >> _SHIFT_DEPTH) & 0xFF
            prefer = (
                not old
                or (old >> _SHIFT_GEN) & 0xFF != gen
                or depth >= old_depth
                or (
                    bound == EXACT and (old >> _SHIFT_BOUND) & 3 != EXACT and depth + 2 >= old_depth
                )
            )
            if keys[j] == key and data[j]:
                if not mid:
                    mid = data[j] >> _SHIFT_MOVE
                if prefer:
                    # Promote: the displaced entry takes this key's always-replace slot.
                    keys[j] = keys[i]
                    data[j] = old
                    target = i
                else:
                    target = j
            elif prefer:
                if old:
                    keys[j] = keys[i]
                    data[j] = old
                target = i
            else:
                target = j
        keys[target] = key
        data[target] = (
            (score + _OFFSET)
            | (ev << _SHIFT_EVAL)
            | (depth << _SHIFT_DEPTH)
            | (bound << _SHIFT_BOUND)
            | (gen << _SHIFT_GEN)
            | (mid << _SHIFT_MOVE)
        )

    def _intern(self, move: Hashable) -> int:
        """Give ``move`` an id, or 0 when the intern budget is spent."""
        cost = _INTERN_OVERHEAD + _object_bytes(move)
        moves = self._moves
        if cost > self._intern_left or len(moves) > _MAX_MOVE_IDS:
            return 0
        self._intern_left -= cost
        mid = len(moves)
        moves.append(move)
        self._move_ids[move] = mid
        return mid

    # -- statistics ----------------------------------------------------------------------------
    def hashfull(self) -> int:
        """Per mille of the first 1,000 slots holding an entry of the current search (UCI)."""
        data = self._data
        n = min(1000, self.entries)
        gen = self._gen
        used = 0
        for i in range(n):
            d = data[i]
            if d and (d >> _SHIFT_GEN) & 0xFF == gen:
                used += 1
        return used * 1000 // n
