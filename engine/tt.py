"""A bounded transposition table whose size is honest about CPython's memory, private to
one search process or shared by several (Lazy SMP).

Each slot is two 64-bit words (a check word and a packed data word: score, static eval,
draft, bound, generation, move code), so a filled table of ``size_mb`` MiB stays within
``size_mb`` MiB and a probe allocates nothing (decode a probed word with the ``entry_*``
functions).  Scores are node-relative: callers apply ``to_tt``/``from_tt``.  A shared table
lives in ``/dev/shm`` and is written without locks; a torn entry reads as a miss, never as
another position's data.  Moves are stored as 16-bit codes: from the game's
:class:`~engine.game.MoveCodec` (:meth:`TranspositionTable.use_codec`), else interned in a
private table within a bounded share (beyond it, and in a shared table without a codec,
entries carry no move).  A move whose slot carries the full 64-bit key may be played before
generating moves; wider keys are folded to their low 64 bits.  ``hashfull()`` is UCI's (per
mille of the first 1,000 slots written by the current search).

Layout, locking, sizing, replacement and why: docs/search.md, *The transposition table*.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from librt.vecs import vec
from mypy_extensions import i64

from engine.game import MoveCodec
from engine.shm import SharedWords

# The bound flags stay plain ints, not an IntEnum: the node functions compare them on every
# probe, and CPython 3.11 specialises comparisons of exact ints only (an IntEnum member makes
# them several times slower).  They are also bits packed into the entry word.
UPPER: Final = 1
"""The stored score is an upper bound (the node failed low)."""
LOWER: Final = 2
"""The stored score is a lower bound (the node failed high)."""
EXACT: Final = 3
"""The stored score is exact (``EXACT == UPPER | LOWER``)."""

EXHAUSTIVE: Final = 255
"""Draft of an entry whose subtree reached the end of the game everywhere: valid at any depth."""
MAX_DRAFT: Final = EXHAUSTIVE - 1

_MASK64: Final = (1 << 64) - 1
_MIN_KEY: Final[i64] = -(1 << 63)
_MAX_KEY: Final[i64] = (1 << 63) - 1
_TWO_64: Final = 1 << 64
_OFFSET: Final = 32768
NO_EVAL: Final = _OFFSET
"""No static evaluation, as a native int (boxing ``None`` or an int beyond 256 costs the
search an object per node): :meth:`TranspositionTable.store_folded` stores none for it, and
:func:`entry_eval` returns it for an entry without one.  Outside every evaluation (those
stay within ±``MATE_BOUND``)."""
_SHIFT_EVAL: Final = 16
_SHIFT_DEPTH: Final = 32
_SHIFT_BOUND: Final = 40
_SHIFT_GEN: Final = 42
_GEN_MASK: Final = 0x1F
_SHIFT_MOVE: Final = 47
_MAX_MOVE_IDS: Final = (1 << 16) - 1

_SLOT_BYTES: Final = 16
"""Two 64-bit words per slot."""
_HEADER_WORDS: Final = 8
"""A shared block starts with 64 bytes of header: word 0 is the generation."""
_FIXED_BYTES: Final = 8192
"""Allowance for the table object, the slot vector's header and the intern containers'."""
_INTERN_OVERHEAD: Final = 96
"""Per interned move: dict slot with its growth slack, list slot, boxed id."""
_MANAGED_DICT: Final = 64
"""Extra allowance for move objects that carry an instance ``__dict__``."""
_INTERN_BUDGET_MAX: Final = 1 << 20
_CACHED_INTS = range(-5, 257)
"""The small ints CPython preallocates: every use shares them, so they cost nothing."""
_MIN_BUCKETS: Final = 2
"""The fewest buckets: 2, the smallest prime."""
_CLEAR_CHUNK_WORDS: Final = 1 << 17
"""A shared table is cleared 1 MiB at a time (no second table-sized buffer)."""


class Entry(NamedTuple):
    """One probed entry.  ``score`` is node-relative; ``depth`` may be :data:`EXHAUSTIVE`."""

    move: Hashable | None
    score: int
    depth: int
    bound: int
    static_eval: int | None


@dataclass(frozen=True, slots=True)
class SharedTable:
    """What another process needs to attach to a shared table (it pickles small)."""

    name: str
    size_mb: int
    buckets: int

    def __reduce__(self) -> tuple[type[SharedTable], tuple[str, int, int]]:
        # Pickled by value: mypyc compiles this module, and pickle's default would set the
        # fields one by one, which a frozen class refuses.
        return SharedTable, (self.name, self.size_mb, self.buckets)


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


def _no_code(_move: Hashable) -> int:
    """The encoder of a shared table for a game without a codec: entries carry no move."""
    return 0


class _PendingBlock:
    """Marks a shared table between its blocks (before the first, after :meth:`close`)."""

    name = ""


_PENDING_BLOCK: Any = _PendingBlock()


class TranspositionTable:
    """Fixed-capacity hash table of search results, sized in MiB of real memory.

    ``TranspositionTable(size_mb)`` is private to this process; ``shared=True`` puts it in a
    shared memory block that other processes :meth:`attach` to with its :attr:`shared`
    handle.  Only the creator resizes, clears and ages a shared table (its generation lives
    in the block, so every process writes entries of the same search), and the creator
    deletes the block in :meth:`close`.  A closed table must not be used again.
    """

    __slots__ = (
        "_block",
        "_buckets",
        "_decode",
        "_encode",
        "_gen",
        "_header",
        "_intern_left",
        "_move_ids",
        "_moves",
        "_owner",
        "_size_mb",
        "_slots",
        "_view",
        "_wrap",
        "entries",
    )
    _slots: vec[i64]
    _view: memoryview | None
    _header: memoryview | None
    _block: SharedWords | None
    _moves: list[Hashable | None]
    _move_ids: dict[Hashable, int]
    _encode: Callable[[Any], int]
    _decode: Callable[[int], Hashable | None]

    def __init__(self, size_mb: int, *, shared: bool = False) -> None:
        self._init_fields(owner=True)
        if shared:
            self._block = _PENDING_BLOCK
        self.resize(size_mb)

    def _init_fields(self, *, owner: bool) -> None:
        self._size_mb = 0
        self._buckets: i64 = 1
        self.entries = 2
        self._slots = vec[i64]()
        self._view = None
        self._wrap: i64 = 0
        self._header = None
        self._block = None
        self._owner = owner
        self._gen = 0
        self._moves = [None]
        self._move_ids = {}
        self._intern_left = 0
        self._encode = self._intern_id
        self._decode = self._moves.__getitem__

    # -- shared memory ---------------------------------------------------------------------
    @classmethod
    def attach(cls, shared: SharedTable) -> TranspositionTable:
        """Another process's shared table, from its :attr:`shared` handle."""
        # Built through __init__ (mypyc's compiled classes cannot skip it) as the smallest
        # private table, whose 1 MiB is dropped at once for a view of the shared block.
        table = cls(1)
        table._init_fields(owner=False)
        block = SharedWords(name=shared.name)
        table._map(block)
        table._size_mb = shared.size_mb
        table._set_buckets(shared.buckets)
        table._encode = _no_code
        return table

    def _map(self, block: SharedWords) -> None:
        self._block = block
        self._header = block.view(0, _HEADER_WORDS)
        self._view = block.view(_HEADER_WORDS, signed=True)

    @property
    def shared(self) -> SharedTable | None:
        """The handle other processes attach with; ``None`` for a private table."""
        block = self._block
        if block is None or block is _PENDING_BLOCK:
            return None
        return SharedTable(block.name, self._size_mb, self._buckets)

    @property
    def is_shared(self) -> bool:
        return self._block is not None

    def close(self) -> None:
        """Let go of a shared block (its creator also deletes it); nothing for a private one."""
        block = self._block
        if block is None or block is _PENDING_BLOCK:
            return
        self._view, self._header = None, None
        block.close()
        self._block = _PENDING_BLOCK  # still shared: a resize makes a new block

    # -- size ----------------------------------------------------------------------------------
    @property
    def size_mb(self) -> int:
        return self._size_mb

    def resize(self, size_mb: int) -> None:
        """Reallocate for ``size_mb`` MiB (at least 1); the contents are discarded.

        A shared table gets a new block: attached processes must attach again."""
        if not self._owner:
            raise RuntimeError("only the process that created a shared table resizes it")
        size_mb = max(1, int(size_mb))
        total = size_mb << 20
        shared = self._block is not None
        intern_budget = 0 if shared else min(total // 4, _INTERN_BUDGET_MAX)
        fixed = _HEADER_WORDS * 8 if shared else _FIXED_BYTES
        slots = (total - intern_budget - fixed) // _SLOT_BYTES
        self._size_mb = size_mb
        self._set_buckets(_bucket_count(slots))
        # Release the old buffers before allocating the new ones, so peak memory stays bounded.
        if shared:
            self.close()
            self._map(SharedWords(words=_HEADER_WORDS + 2 * self.entries))
        else:
            self._allocate_slots()
        self._reset_interning(intern_budget)
        self._set_generation(0)

    def clear(self) -> None:
        """Forget everything (``ucinewgame``), keeping the capacity.  Only the creator clears a
        shared table (between searches); an attached process has nothing of its own to forget."""
        if not self._owner:
            return
        view = self._view
        if view is not None:
            zeros = array("q", bytes(8 * _CLEAR_CHUNK_WORDS))
            for start in range(0, len(view), _CLEAR_CHUNK_WORDS):
                end = min(len(view), start + _CLEAR_CHUNK_WORDS)
                view[start:end] = zeros[: end - start]
        else:
            self._allocate_slots()
            self._reset_interning(min((self._size_mb << 20) // 4, _INTERN_BUDGET_MAX))
        self._set_generation(0)

    def _set_buckets(self, buckets: int) -> None:
        """``_wrap`` is 2⁶³ modulo the buckets: what a negative key's sign bit adds to its
        unsigned index (see :meth:`_index`)."""
        self._buckets = buckets
        self.entries = buckets * 2
        self._wrap = (1 << 63) % buckets

    def _allocate_slots(self) -> None:
        """Zeroed private slots: the old buffer zeroed in place when its size is right (every
        ``ucinewgame``), else a new one.  Compiled, ``vec[i64]([0] * n)`` allocates one zeroed
        buffer (no list of zeros first), and the zeroing loop is native."""
        words: i64 = 2 * self.entries
        if len(self._slots) == words:
            slots = self._slots
            for i in range(words):
                slots[i] = 0
            return
        self._slots = vec[i64]()
        self._slots = vec[i64]([0] * words)

    def _reset_interning(self, budget: int) -> None:
        interning = self._encode == self._intern_id
        self._moves = [None]
        self._move_ids = {}
        self._intern_left = budget
        if interning:
            self._decode = self._moves.__getitem__

    def use_codec(self, codec: MoveCodec[Any] | None) -> None:
        """Store moves as ``codec``'s numbers (the game being searched) or, with ``None``,
        intern them (a shared table then stores no moves).  Entries written under another
        codec must not be probed afterwards: clear the table when the game changes."""
        if codec is not None:
            self._encode = codec.move_code
            self._decode = codec.code_move
        elif self.is_shared:
            self._encode = _no_code
            self._decode = self._moves.__getitem__
        else:
            self._encode = self._intern_id
            self._decode = self._moves.__getitem__

    # -- generations ---------------------------------------------------------------------------
    def _set_generation(self, gen: int) -> None:
        self._gen = gen & _GEN_MASK
        if self._header is not None and self._owner:
            self._header[0] = self._gen

    def new_search(self) -> None:
        """Start a new generation: older entries become the first to be replaced.

        A process attached to a shared table adopts its creator's generation instead (the
        creator starts each search before its helpers do)."""
        if self._owner:
            self._set_generation(self._gen + 1)
        elif self._header is not None:
            self._gen = self._header[0] & _GEN_MASK

    # -- access --------------------------------------------------------------------------------
    def _index(self, key: i64) -> i64:
        """The first word of ``key``'s bucket: the unsigned key modulo the (prime) number of
        buckets, from signed arithmetic (a negative key is 2⁶³ plus its low 63 bits)."""
        n: i64 = self._buckets
        if key >= 0:
            return (key % n) * 4
        # The mask built from 32-bit halves, which the C compiler folds: compiled, a literal
        # above 2⁶², such as ``(1 << 63) - 1``, is a boxed int unboxed on every use.
        low_63: i64 = 0x7FFF_FFFF
        low_63 = (low_63 << 32) | 0xFFFF_FFFF
        return (((key & low_63) % n + self._wrap) % n) * 4

    def _word(self, i: i64) -> i64:
        """Slot word ``i``: a private table's natively, a shared one's through its view (a
        ``vec`` cannot live in shared memory)."""
        view = self._view
        if view is None:
            return self._slots[i]
        return i64(view[i])

    def _put(self, i: i64, value: i64) -> None:
        """Write slot word ``i`` (one aligned 8-byte store either way)."""
        view = self._view
        if view is None:
            self._slots[i] = value
        else:
            view[i] = value

    def lookup(self, key: int) -> i64:
        """The data word stored for ``key``, or 0 (also for a torn entry): the search's probe,
        decoded with :func:`entry_score`, :func:`entry_bound`, :func:`entry_depth`,
        :func:`entry_eval` and :meth:`entry_move` only as far as it needs."""
        return self.lookup_folded(fold_key(key))

    def lookup_folded(self, k: i64) -> i64:
        """:meth:`lookup` of a key already folded by :func:`fold_key`: the search folds a
        node's key once, for its probe and its store (compiled, unboxing a 64-bit key is a
        slow call)."""
        i = self._index(k)
        d = self._word(i + 1)
        if d and self._word(i) ^ d == k:
            return d
        d = self._word(i + 3)
        if d and self._word(i + 2) ^ d == k:
            return d
        return 0

    def probe(self, key: int) -> Entry | None:
        """The entry stored for ``key``, or ``None`` (also for a torn entry)."""
        d = self.lookup(key)
        if not d:
            return None
        ev = entry_eval(d)
        return Entry(
            self.entry_move(d),
            entry_score(d),
            entry_depth(d),
            entry_bound(d),
            None if ev == NO_EVAL else ev,
        )

    def entry_move(self, data: i64) -> Hashable | None:
        """The move of a probed data word (``None``: no move stored)."""
        code = data >> _SHIFT_MOVE
        return self._decode(int(code)) if code else None

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
        self.store_folded(
            fold_key(key),
            move,
            score,
            depth,
            bound,
            NO_EVAL if static_eval is None else static_eval,
        )

    def store_folded(  # noqa: PLR0917 - called once per node: positional is cheapest
        self,
        k: i64,
        move: Hashable | None,
        score: i64,
        depth: i64,
        bound: i64,
        static_eval: i64 = NO_EVAL,
    ) -> None:
        """:meth:`store` under a key already folded by :func:`fold_key`, with
        :data:`NO_EVAL` for no static evaluation (the numbers as native words, as the search
        has them)."""
        draft = depth
        if draft < 0:
            draft = 0
        elif draft > MAX_DRAFT and draft != EXHAUSTIVE:
            draft = MAX_DRAFT
        mid: i64 = 0 if move is None else self._encode(move)
        ev: i64 = 0  # an if, not ``a if c else 0``: compiled, that boxes an i64
        if -_OFFSET < static_eval < _OFFSET:
            ev = static_eval + _OFFSET
        gen: i64 = self._gen
        i = self._index(k)
        j = i + 2
        old = self._word(i + 1)
        if old and self._word(i) ^ old == k:
            old_depth = (old >> _SHIFT_DEPTH) & 0xFF
            if bound != EXACT and old_depth > draft + 2 and (old >> _SHIFT_GEN) & _GEN_MASK == gen:
                return
            if not mid:
                mid = old >> _SHIFT_MOVE
            target = i
        else:
            old_depth = (old >> _SHIFT_DEPTH) & 0xFF
            prefer = (
                not old
                or (old >> _SHIFT_GEN) & _GEN_MASK != gen
                or draft >= old_depth
                or (
                    bound == EXACT and (old >> _SHIFT_BOUND) & 3 != EXACT and draft + 2 >= old_depth
                )
            )
            second = self._word(j + 1)
            if second and self._word(j) ^ second == k:
                if not mid:
                    mid = second >> _SHIFT_MOVE
                if prefer:
                    # Promote: the displaced entry takes this key's always-replace slot.
                    self._put(j, self._word(i))
                    self._put(j + 1, old)
                    target = i
                else:
                    target = j
            elif prefer:
                if old:
                    self._put(j, self._word(i))
                    self._put(j + 1, old)
                target = i
            else:
                target = j
        data: i64 = (
            (score + _OFFSET)
            | (ev << _SHIFT_EVAL)
            | (draft << _SHIFT_DEPTH)
            | (bound << _SHIFT_BOUND)
            | (gen << _SHIFT_GEN)
            | ((mid & 0xFFFF) << _SHIFT_MOVE)
        )
        self._put(target + 1, data)
        self._put(target, k ^ data)

    def _intern_id(self, move: Hashable) -> int:
        """``move``'s id in a private table, interning it if the budget allows (else 0)."""
        mid = self._move_ids.get(move)
        if mid is not None:
            return mid
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
        n = min(1000, self.entries)
        gen = self._gen
        used = 0
        for i in range(1, 2 * n, 2):
            d = self._word(i)
            if d and (d >> _SHIFT_GEN) & _GEN_MASK == gen:
                used += 1
        return used * 1000 // n


def fold_key(key: int) -> i64:
    """``key``'s low 64 bits as a signed word: the table indexes and checks with it.

    A key already in the signed range (chess's) converts at once.  Compiled, ``i64()``
    raises ``ValueError`` for any other key (mypyc's choice, where CPython would say
    overflow), and the range test is on native words: comparing a Python int with 2⁶³ would
    cost two slow comparisons per probe.  Interpreted, ``i64()`` checks nothing and the
    range test does the work."""
    try:
        k = i64(key)
    except ValueError:
        return _fold_wide(key)
    if _MIN_KEY <= k <= _MAX_KEY:
        return k
    return _fold_wide(key)


def _fold_wide(key: int) -> i64:
    key &= _MASK64
    return i64(key - _TWO_64) if key >> 63 else i64(key)


def entry_score(data: i64) -> int:
    """The node-relative score of a probed data word."""
    return int((data & 0xFFFF) - _OFFSET)


def entry_depth(data: i64) -> int:
    """The draft of a probed data word (:data:`EXHAUSTIVE`: valid at any depth)."""
    return int((data >> _SHIFT_DEPTH) & 0xFF)


def entry_bound(data: i64) -> int:
    """The bound of a probed data word: :data:`UPPER`, :data:`LOWER` or :data:`EXACT`."""
    return int((data >> _SHIFT_BOUND) & 3)


def entry_eval(data: i64) -> int:
    """The static evaluation stored with a probed data word, :data:`NO_EVAL` if none."""
    ev = (data >> _SHIFT_EVAL) & 0xFFFF
    return int(ev - _OFFSET) if ev else NO_EVAL
