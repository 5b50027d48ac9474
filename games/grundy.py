"""Grundy's game ("Division Nim"): split one heap of matches into two unequal heaps.

**Rules.**  A position is a collection of heaps of matches.  A move takes one heap and splits it
into two non-empty heaps of *different* sizes (so heaps of 1 and 2 can never be split).  The
player who cannot move loses: ``legal_moves()`` is empty exactly when every heap has one or two
matches, and then ``terminal_value()`` is -1.  The game always ends (each move lowers the sum of
the squares of the heap sizes), so no position repeats.

**FEN.**  ``<heaps> [<side> [<fullmove>]]``: the heap sizes separated by ``/``, then ``w`` or
``b`` for the player to move (the first player is *white*) and the fullmove number, as in chess.
The start position is one heap of seven, ``7 w 1``.  Heaps are a multiset: ``3/4 b 2`` and
``4/3 b 2`` are the same position, and :meth:`Grundy.fen` lists them largest first.  A position
holds at most :data:`MAX_MATCHES` matches, so that a game fits the engine's ply limit.

**Moves.**  ``7=3+4``: the heap of 7 becomes heaps of 3 and 4 (the smaller part first; either
order is accepted), or the short form ``7-3`` ("split 3 off the 7").

**Evaluation.**  The theory is complete: by the Sprague-Grundy theorem the position is lost for
the side to move exactly when the XOR of its heaps' Grundy values is 0, the Grundy value of a
heap being the minimum excluded value (mex) of the values of the positions one split away
(OEIS A002188: 0, 0, 0, 1, 0, 2, 1, 0, 2, ...).  The single feature ``grundy`` is +1 for a
won position and -1 for a lost one; the search still proves each result by reaching the end.
"""

from __future__ import annotations

import bisect
import re
import threading
from typing import TYPE_CHECKING, Final

from engine.eval import LinearEvaluator
from engine.game import GameError, IllegalMoveError, InvalidPositionError
from games.variant import Variant

if TYPE_CHECKING:
    from engine.game import Game

__all__ = [
    "DEFAULT_WEIGHTS",
    "MAX_MATCHES",
    "START_FEN",
    "VARIANT",
    "Grundy",
    "from_fen",
    "grundy_value",
    "grundy_values",
    "nim_sum",
]

START_FEN: Final = "7 w 1"

MAX_MATCHES: Final = 500
"""Matches in a position at most.  A game from ``n`` matches lasts at most ``n - 1`` plies (every
move adds a heap, and there are never more heaps than matches), so every game stays within the
engine's 512-ply mate-distance range."""

DEFAULT_WEIGHTS: Final[dict[str, float]] = {"grundy": 100}
"""A won position (non-zero nim-sum) is worth a pawn-like 100 to the side to move."""

Move = tuple[int, int]
"""``(heap, smaller)``: split a heap of ``heap`` matches into ``smaller`` and
``heap - smaller``, with ``0 < smaller < heap - smaller``."""

_LIVE_HEAP: Final = 3
"""The smallest heap that can be split: heaps of 1 and 2 are dead (the parts must differ).
:meth:`Grundy.push` and :meth:`Grundy.pop` write it as the literal 3, a constant per node."""

_CODE_BASE: Final = tuple(
    1 + sum((h - 1) // 2 for h in range(_LIVE_HEAP, heap)) for heap in range(MAX_MATCHES + 1)
)
"""Move codes count the splits heap by heap: ``(heap, smaller)`` is number
``_CODE_BASE[heap] + smaller - 1`` (a heap of ``h`` has ``(h - 1) // 2`` splits), so the
splits of heaps up to :data:`MAX_MATCHES` take 62,250 codes and fit a table entry's 16 bits."""

# -- Grundy values -----------------------------------------------------------------------------
_VALUES: list[int] = [0, 0, 0]
_VALUES_LOCK: Final = threading.Lock()


def grundy_values(limit: int) -> tuple[int, ...]:
    """Grundy values of single heaps of 0..``limit`` matches, by the mex rule.

    Splitting ``n`` into ``a`` and ``n - a`` leaves two heaps whose value is ``G(a) ^ G(n - a)``
    (the Sprague-Grundy value of a sum is the XOR); ``G(n)`` is the smallest value not among
    them.  Computed once and cached (quadratic: 500 heaps take a few milliseconds).
    """
    if limit < 0:
        raise ValueError(f"heap size must not be negative ({limit})")
    with _VALUES_LOCK:
        values = _VALUES
        for n in range(len(values), limit + 1):
            seen = {values[a] ^ values[n - a] for a in range(1, (n + 1) // 2)}
            mex = 0
            while mex in seen:
                mex += 1
            values.append(mex)
        return tuple(values[: limit + 1])


def grundy_value(heap: int) -> int:
    """The Grundy value of one heap."""
    if heap < len(_VALUES):
        return _VALUES[heap]
    return grundy_values(heap)[heap]


def nim_sum(heaps: list[int] | tuple[int, ...]) -> int:
    """XOR of the heaps' Grundy values: 0 exactly when the side to move loses."""
    total = 0
    for heap in heaps:
        total ^= grundy_value(heap)
    return total


# -- keys --------------------------------------------------------------------------------------
_MASK64: Final = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    """A fixed 64-bit mixing function: deterministic keys across processes."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


_HEAP_KEY: Final = tuple(0 if n < _LIVE_HEAP else _splitmix64(n) for n in range(MAX_MATCHES + 1))
"""Per heap size, its key term.  Dead heaps (1 and 2) weigh nothing: positions that differ only
in them have the same game tree, so they share table entries."""

_MOVES_OF: Final = tuple(
    tuple((n, a) for a in range((n - 1) // 2, 0, -1)) for n in range(MAX_MATCHES + 1)
)
"""Per heap size, its splits, most even first (prebuilt: move generation allocates no tuples)."""


class Grundy:
    """A Grundy's game position with make/unmake (``engine.game.Game[tuple[int, int]]``).

    Heaps are kept as counts per size, so a split is three counter updates; the key (a sum
    of per-heap terms modulo 2**64, so equal heaps do not cancel as they would under XOR) and
    the nim-sum are updated with them.
    """

    __slots__ = (
        "_counts",
        "_evaluator",
        "_key",
        "_live",
        "_nim",
        "_ply",
        "_stack",
        "_values",
    )

    variant: str = "grundy"

    def __init__(
        self,
        heaps: list[int] | tuple[int, ...] = (7,),
        side: int = 0,
        fullmove: int = 1,
        *,
        evaluator: LinearEvaluator | None = None,
    ) -> None:
        """The position with these heaps, ``side`` (0 first player, 1 second) to move at
        move ``fullmove``.  Raises InvalidPositionError for an empty, non-positive or
        oversized collection of heaps."""
        problem = _heaps_problem(heaps)
        if problem is not None:
            raise InvalidPositionError(problem)
        if side not in (0, 1):
            raise InvalidPositionError(f"side must be 0 or 1 ({side})")
        if fullmove < 1:
            raise InvalidPositionError(f"the fullmove number must be at least 1 ({fullmove})")
        # The position's own table of Grundy values: pickled with it, so a worker process
        # (whose module-level cache starts empty) has every value its moves can reach.
        values = grundy_values(max(heaps))
        counts = [0] * (max(heaps) + 1)
        key = 0
        nim = 0
        live = 0
        for heap in heaps:
            counts[heap] += 1
            key += _HEAP_KEY[heap]
            nim ^= values[heap]
            live += heap >= _LIVE_HEAP
        self._counts = counts
        self._key = key & _MASK64
        self._nim = nim
        self._live = live
        self._ply = 2 * (fullmove - 1) + side
        self._stack: list[Move] = []
        self._values = values
        self._evaluator = _DEFAULT_EVALUATOR if evaluator is None else evaluator

    @classmethod
    def from_fen(cls, fen: str, *, evaluator: LinearEvaluator | None = None) -> Grundy:
        heaps, side, fullmove = _parse_fen(fen)
        return cls(heaps, side, fullmove, evaluator=evaluator)

    # -- moves -----------------------------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        """Every split of every distinct heap size, largest heaps first."""
        moves: list[Move] = []
        if not self._live:
            return moves
        counts = self._counts
        for n in range(len(counts) - 1, 2, -1):
            if counts[n]:
                moves += _MOVES_OF[n]
        return moves

    def noisy_moves(self) -> list[Move]:
        """None: no move is more forcing than another, so quiescence has nothing to do."""
        return []

    def quiet_moves(self) -> list[Move]:
        return self.legal_moves()

    def is_noisy(self, move: Move) -> bool:
        return False

    def push(self, move: Move) -> None:
        heap, smaller = move
        larger = heap - smaller
        counts = self._counts
        counts[heap] -= 1
        counts[smaller] += 1
        counts[larger] += 1
        values = self._values
        heap_key = _HEAP_KEY
        self._key = (self._key - heap_key[heap] + heap_key[smaller] + heap_key[larger]) & _MASK64
        self._nim ^= values[heap] ^ values[smaller] ^ values[larger]
        self._live += (smaller >= 3) + (larger >= 3) - 1
        self._ply += 1
        self._stack.append(move)

    def pop(self) -> None:
        """Undo the last push (IndexError, state unchanged, when there is none)."""
        heap, smaller = self._stack.pop()
        larger = heap - smaller
        counts = self._counts
        counts[heap] += 1
        counts[smaller] -= 1
        counts[larger] -= 1
        values = self._values
        heap_key = _HEAP_KEY
        self._key = (self._key + heap_key[heap] - heap_key[smaller] - heap_key[larger]) & _MASK64
        self._nim ^= values[heap] ^ values[smaller] ^ values[larger]
        self._live -= (smaller >= 3) + (larger >= 3) - 1
        self._ply -= 1

    def can_null_move(self) -> bool:
        """Never: a pass is not a move here, and in a game won by parity of moves it would
        invert every result."""
        return False

    def push_null(self) -> None:
        raise GameError("Grundy's game has no null move")

    # -- state -----------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        """No heap has three or more matches: the side to move cannot move (a counter, so
        this is as cheap as the contract asks)."""
        return not self._live

    def terminal_value(self) -> int:
        """-1 when the side to move cannot move (it loses); 0 for an unfinished game."""
        return -1 if not self._live else 0

    def in_check(self) -> bool:
        return False

    def key(self) -> int:
        """The sum of the live heaps' terms, modulo 2**64.

        Neither the side to move nor the dead heaps (1 and 2 matches) enter it: the game is
        impartial, so the value of a position for the player to move does not depend on who
        that is, and dead heaps never move again.  Positions that share a key therefore have
        the same game tree, score and legal moves.  (Keys of different trees collide only by
        64-bit chance, as with Zobrist keys.)
        """
        return self._key

    @property
    def side(self) -> int:
        return self._ply & 1

    @property
    def ply(self) -> int:
        """Half-moves since the game's start: from the FEN's fullmove number and side."""
        return self._ply

    @property
    def heaps(self) -> tuple[int, ...]:
        """The heap sizes, largest first."""
        counts = self._counts
        return tuple(n for n in range(len(counts) - 1, 0, -1) for _ in range(counts[n]))

    @property
    def nim_sum(self) -> int:
        """XOR of the heaps' Grundy values (0: the side to move loses with best play)."""
        return self._nim

    @property
    def moves_played(self) -> tuple[Move, ...]:
        return tuple(self._stack)

    # -- evaluation ------------------------------------------------------------------------
    @property
    def evaluator(self) -> LinearEvaluator:
        return self._evaluator

    def features(self) -> dict[str, float]:
        """``grundy``: +1 when the nim-sum of the heaps is non-zero (the side to move wins),
        -1 when it is zero; recomputed from the heaps, not from the running nim-sum."""
        return {"grundy": 1 if nim_sum(self.heaps) else -1}

    def evaluate(self) -> int:
        return round(self._evaluator.weights.get("grundy", 0.0) * (1 if self._nim else -1))

    # -- notation --------------------------------------------------------------------------
    def parse_move(self, text: str) -> Move:
        """``7=3+4`` (either part first) or ``7-3``; IllegalMoveError unless legal here."""
        match = _MOVE_RE.fullmatch(text.strip())
        if match is None:
            raise IllegalMoveError(
                f"not a Grundy's game move: expected a split such as 7=3+4 or 7-3 ({text})"
            )
        heap_text, left_text, right_text, part_text = match.group("heap", "a", "b", "part")
        heap = int(heap_text)
        if part_text is not None:
            left = int(part_text)
            right = heap - left
        else:
            left = int(left_text)
            right = int(right_text)
            if left + right != heap:
                raise IllegalMoveError(f"{left} + {right} is not {heap} ({text})")
        if left <= 0 or right <= 0:
            raise IllegalMoveError(f"both new heaps must have at least one match ({text})")
        if left == right:
            raise IllegalMoveError(f"the two new heaps must differ in size ({text})")
        counts = self._counts
        if heap >= len(counts) or not counts[heap]:
            raise IllegalMoveError(f"there is no heap of {heap} (heaps: {self._heaps_text()})")
        return (heap, min(left, right))

    def move_code(self, move: Move) -> int:
        heap, smaller = move
        return _CODE_BASE[heap] + smaller - 1

    def code_move(self, code: int) -> Move:
        heap = bisect.bisect_right(_CODE_BASE, code) - 1
        return heap, code - _CODE_BASE[heap] + 1

    def format_move(self, move: Move) -> str:
        heap, smaller = move
        return f"{heap}={smaller}+{heap - smaller}"

    def fen(self) -> str:
        side = "b" if self.side else "w"
        return f"{self._heaps_text()} {side} {1 + self._ply // 2}"

    def display(self) -> str:
        rows = [f"{heap:>3}  {'|' * heap}" for heap in self.heaps]
        rows.append(f"Fen: {self.fen()}")
        return "\n".join(rows)

    def copy(self) -> Grundy:
        clone = object.__new__(Grundy)
        clone._counts = self._counts.copy()
        clone._key = self._key
        clone._nim = self._nim
        clone._live = self._live
        clone._ply = self._ply
        clone._stack = self._stack.copy()
        clone._values = self._values
        clone._evaluator = self._evaluator
        return clone

    def __repr__(self) -> str:
        return f"Grundy.from_fen({self.fen()!r})"

    def _heaps_text(self) -> str:
        return "/".join(str(heap) for heap in self.heaps)


_DEFAULT_EVALUATOR: Final = LinearEvaluator(DEFAULT_WEIGHTS)
_MOVE_RE: Final = re.compile(r"(?P<heap>[0-9]+)(?:=(?P<a>[0-9]+)\+(?P<b>[0-9]+)|-(?P<part>[0-9]+))")
_HEAPS_RE: Final = re.compile(r"[0-9]+(?:/[0-9]+)*")
_COUNTER_RE: Final = re.compile(r"[0-9]+")
_FEN_FIELDS: Final = 3
"""The fields of a full FEN: heaps, side to move, fullmove number."""


def _heaps_problem(heaps: list[int] | tuple[int, ...]) -> str | None:
    if not heaps:
        return "a position needs at least one heap"
    if any(heap < 1 for heap in heaps):
        return f"every heap needs at least one match ({'/'.join(map(str, heaps))})"
    total = sum(heaps)
    if total > MAX_MATCHES:
        return f"at most {MAX_MATCHES} matches in all, not {total}"
    return None


def _parse_fen(fen: str) -> tuple[list[int], int, int]:
    """Heaps, side and fullmove number from a FEN; InvalidPositionError names the offending
    text.  The side defaults to ``w`` and the fullmove number to 1."""
    fields = fen.split()
    if not 1 <= len(fields) <= _FEN_FIELDS:
        raise InvalidPositionError(
            f"a Grundy's game FEN is heap sizes separated by '/', the side to move and the "
            f"move number, e.g. {START_FEN} or 4/2/1 b 2 ({fen})"
        )
    heaps_text, *rest = fields
    if _HEAPS_RE.fullmatch(heaps_text) is None:
        raise InvalidPositionError(
            f"expected heap sizes separated by '/', e.g. 5/3/1 ({heaps_text})"
        )
    if len(heaps_text) > 4 * MAX_MATCHES:
        raise InvalidPositionError(f"too many heaps ({heaps_text[:40]}...)")
    heaps = [int(text) for text in heaps_text.split("/")]
    problem = _heaps_problem(heaps)
    if problem is not None:
        raise InvalidPositionError(problem)
    side_text = rest[0] if rest else "w"
    fullmove_text = rest[1] if len(rest) > 1 else "1"
    if side_text not in ("w", "b"):
        raise InvalidPositionError(f"side to move must be 'w' or 'b' ({side_text})")
    if _COUNTER_RE.fullmatch(fullmove_text) is None or int(fullmove_text) < 1:
        raise InvalidPositionError(f"the fullmove number must be at least 1 ({fullmove_text})")
    return heaps, "wb".index(side_text), int(fullmove_text)


def from_fen(fen: str, chess960: bool = False) -> Grundy:
    """Build a position from a FEN such as ``7 w 1`` or ``5/3/1 b 2`` (see the module
    docstring).  ``chess960`` is the registry's UCI_Chess960 flag and means nothing here."""
    del chess960
    return Grundy.from_fen(fen)


if TYPE_CHECKING:
    # Static proof that the adapter satisfies the contract.
    _contract_check: Game[Move] = Grundy()


VARIANT: Final = Variant(
    "grundy", START_FEN, from_fen, "Grundy's game: split a heap into two unequal heaps"
)
