"""Staged, lazy move ordering: the cheapest good guesses first, generation only when needed.

Alpha-beta prunes most when the best move comes first, and a node that cuts off on its first
move never needs the rest of its move list.  So moves are produced in stages:

1. the transposition-table move, before any move generation (the table stores full 64-bit
   keys, so its move is trusted to be legal here; see :mod:`engine.tt`);
2. the noisy moves (captures, promotions), in the game's own order (MVV-LVA for chess);
3. the killer moves of this ply that are legal here (quiet moves that cut off in a sibling),
   then the counter move, the quiet move that last refuted the opponent's previous move
   wherever it was played (a reply to a move tends to stay good across the tree);
4. the remaining quiet moves, by history score, highest first;
5. when the caller asks for the exchange test (:class:`~engine.game.StaticExchange`), the noisy
   moves that lose material: a queen taking a defended pawn refutes less often than a
   killer, and trying it second costs a whole subtree.

Quiet moves are generated only when the consumer asks for a move past stage 2, so a cut-off on
the TT move or a capture never pays for quiet move generation.  Each move comes with its stage
so the search can tell quiet moves (for reductions, pruning and history) from noisy ones
without asking the game again.  The search asks a :class:`MovePicker` (one per ply, reused);
:func:`staged_moves` iterates one.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64

from engine.game import Game
from engine.native_game import NativeGame, native

# The stages stay plain ints, not an IntEnum: the search compares the stage of every move it
# tries, and CPython 3.11 specialises comparisons of exact ints only (an IntEnum member makes
# ``STAGE_KILLER <= stage <= STAGE_QUIET`` several times slower).
STAGE_TT: Final = 0
"""The transposition-table move (noisy or quiet: ask ``game.is_noisy`` if it matters)."""
STAGE_NOISY: Final = 1
STAGE_KILLER: Final = 2
STAGE_QUIET: Final = 3
STAGE_LOSING: Final = 4
"""Noisy moves that lose material by static exchange, after the quiet moves."""

HISTORY_MAX: Final = 16384
"""History scores stay within plus and minus this (the gravity of :meth:`History.update`)."""


class History:
    """One side's history scores of quiet moves (Stockfish's butterfly history): a native
    table of scores indexed by the game's history index
    (:meth:`~engine.native_game.NativeGame.history_index`), 0 for a move never scored.

    A game that numbers no moves (index -1: a game behind
    :class:`~engine.native_game.ProtocolGame`) has its moves numbered here instead, by
    equality, as each is first scored; reading a move not numbered yet scores 0 and numbers
    nothing.  The table holds :meth:`reserve`'s size from the start (the game's
    :meth:`~engine.native_game.NativeGame.history_size`: a compiled game's search allocates
    nothing), and grows when a score lands beyond it.  Until this table the history was a
    ``Counter`` keyed by the move; the scores, the updates and the halving are the same.
    """

    def __init__(self) -> None:
        self.scores = vec[i64]()
        """The scores by history index."""
        self.numbers: dict[Any, int] = {}
        """The numbers given here to moves the game does not number."""
        self.used: i64 = 0
        """Every index from this one on scores 0 (:meth:`age` walks only those below)."""

    def reserve(self, size: i64) -> None:
        """Make room for the indices below ``size`` (scores kept, the new ones 0)."""
        if size > len(self.scores):
            grown = vec[i64]([0] * size)  # compiled: one zeroed buffer, no list of zeros first
            old = self.scores
            i: i64
            for i in range(len(old)):
                grown[i] = old[i]
            self.scores = grown

    def score(self, game: NativeGame, move: Any) -> i64:
        """``move``'s score (0 if it never had one)."""
        index = game.history_index(move)
        if index < 0:
            index = self.number(move)
        scores = self.scores
        if 0 <= index < len(scores):
            return scores[index]
        return 0  # compiled, ``a if c else 0`` would box an i64 ``a`` and unbox it

    def number(self, move: Any) -> i64:
        """The number this history gave ``move`` (of a game that numbers none), or -1."""
        number = self.numbers.get(move)
        return -1 if number is None else number

    def update(self, game: NativeGame, move: Any, bonus: i64) -> None:
        """Add ``bonus`` (a malus when negative) to ``move``'s score, less the score times
        ``|bonus|`` over :data:`HISTORY_MAX` (Stockfish's gravity: a score nears the bound
        ever more slowly, and never passes it while ``|bonus|`` is at most the bound)."""
        index = game.history_index(move)
        if index < 0:
            index = self.number(move)
            if index < 0:
                index = len(self.numbers)
                self.numbers[move] = index
        if index >= len(self.scores):
            self.reserve(max(index + 1, 2 * len(self.scores)))
        h = self.scores[index]
        # Native words: compiled, a tagged product or floor division with a negative operand
        # (a falling score) takes mypyc's slow path through Python longs.
        weight = bonus if bonus >= 0 else -bonus
        self.scores[index] = h + bonus - h * weight // HISTORY_MAX
        if index >= self.used:
            self.used = index + 1

    def age(self) -> None:
        """Halve every score, rounding down (-1 stays -1), as ``Counter`` halving by
        ``value // 2`` did: old searches' statistics fade instead of dominating."""
        scores = self.scores
        used: i64 = 0
        i: i64
        for i in range(self.used):
            h = scores[i] // 2
            scores[i] = h
            if h:
                used = i + 1
        self.used = used


_START: Final = 0
_NOISY_GEN: Final = 1
_NOISY: Final = 2
_QUIET_GEN: Final = 3
_KILLER1: Final = 4
_KILLER2: Final = 5
_COUNTER: Final = 6
_SORT: Final = 7
_QUIET: Final = 8
_LOSING: Final = 9
_DONE: Final = 10
"""The picker's phases, in order (``_START`` returns the TT move)."""

_NO_HISTORY: Final = History()
"""The history of a picker not started yet (never written)."""


class MovePicker:
    """The stages above as a reusable object (Stockfish's ``MovePicker``): :meth:`start` a
    node, then :meth:`next_move` until it returns ``None``; :attr:`stage` is the stage of the
    move last returned.  The search keeps one per ply, so a node allocates no generator and
    no ``(move, stage)`` tuple per move.

    ``exchange`` sends losing noisy moves to the last stage, by the game's
    ``see_ge(move, 0)`` (:class:`~engine.game.StaticExchange`; without it nothing loses).
    ``interned`` says equal moves are the same object (see :func:`take`).  The game must not
    be changed between calls except by balanced push/pop pairs, and a picker serves one node
    at a time: a nested search that starts it again (the search's singular extension search
    at the same ply) must finish before the node's own walk begins.
    """

    def __init__(
        self,
        game: Game[Any] | NativeGame,
        exchange: bool = False,
        interned: bool = False,
    ) -> None:
        self.game = native(game)
        self.exchange = exchange
        self.interned = interned
        # The stage, phase and index as native words: compiled, a tagged int attribute is
        # checked for a boxed long at every write.
        self.stage: i64 = STAGE_TT
        """The stage of the move :meth:`next_move` returned last."""
        self.phase: i64 = _DONE
        self.tt_move: Any = None
        self.tt_noisy = False
        self.killer1: Any = None
        self.killer2: Any = None
        self.counter: Any = None
        self.history = _NO_HISTORY
        self.moves: list[Any] = []
        """The list being walked: the noisy moves, the quiet ones, then the losing ones."""
        self.index: i64 = 0
        self.losing: list[Any] = []
        self.keys = vec[i64]()
        """The sort's buffer (:func:`sort_by_history`), grown to the longest quiet list."""

    def start(
        self,
        tt_move: Hashable | None,
        killer1: Hashable | None,
        killer2: Hashable | None,
        counter: Hashable | None,
        history: History,
    ) -> None:
        """Begin a node: its table move, killers, counter move and history (the side to
        move's).  Nothing is generated until :meth:`next_move` needs it."""
        self.phase = _START
        self.tt_move = tt_move
        self.tt_noisy = False
        self.killer1 = killer1
        self.killer2 = killer2
        self.counter = counter
        self.history = history
        self.losing.clear()

    def next_move(self) -> Any:
        """The next move in staged order, ``None`` after the last (every legal move once)."""
        if self.phase == _START:
            self.phase = _NOISY_GEN
            if self.tt_move is not None:
                self.stage = STAGE_TT
                return self.tt_move
        if self.phase == _NOISY_GEN:
            self._generate_noisy()
        if self.phase == _NOISY:
            move = self._next_noisy()
            if move is not None:
                return move
        if self.phase == _QUIET_GEN:
            self._generate_quiets()
        while _KILLER1 <= self.phase <= _COUNTER:
            move = self._next_special()
            if move is not None:
                return move
        if self.phase == _SORT:
            n = len(self.moves)
            if n > 1:
                if n > len(self.keys):
                    self.keys = vec[i64]([0] * max(n, 64))
                _sort_packed(self.moves, self.history, self.game, self.keys)
            self.phase = _QUIET
        return self._next_listed()

    def _generate_noisy(self) -> None:
        """Stage 2 begins: the noisy moves, without the TT move."""
        noisy = self.game.noisy_moves()
        if noisy and self.tt_move is not None and take(noisy, self.tt_move, self.interned):
            self.tt_noisy = True
        self.moves = noisy
        self.index = 0
        self.phase = _NOISY

    def _next_noisy(self) -> Any:
        """The next noisy move that keeps material (the others wait in :attr:`losing`);
        ``None`` once they are all seen."""
        moves = self.moves
        exchange = self.exchange
        game = self.game
        i = self.index
        while i < len(moves):
            move = moves[i]
            i += 1
            if exchange and not game.see_ge(move, 0):
                self.losing.append(move)
            else:
                self.index = i
                self.stage = STAGE_NOISY
                return move
        self.phase = _QUIET_GEN
        return None

    def _generate_quiets(self) -> None:
        """Stage 3 begins: the quiet moves, without the TT move (no quiet move: the losing
        noisy ones come next)."""
        quiets = self.game.quiet_moves()
        self.index = 0
        if not quiets:
            self.moves = self.losing
            self.phase = _LOSING
            return
        if self.tt_move is not None and not self.tt_noisy:
            take(quiets, self.tt_move, self.interned)
        self.moves = quiets
        self.phase = _KILLER1

    def _next_special(self) -> Any:
        """The killer or counter move of this phase, taken out of the quiet moves, if it is
        one of them here, else ``None``; the phase moves on either way."""
        phase = self.phase
        self.phase = phase + 1
        if phase == _KILLER1:
            move = self.killer1
        elif phase == _KILLER2:
            move = self.killer2
        else:
            move = self.counter
        if move is not None and take(self.moves, move, self.interned):
            self.stage = STAGE_KILLER
            return move
        return None

    def _next_listed(self) -> Any:
        """The next quiet move (history order), then the next losing noisy move; ``None``
        after them."""
        i = self.index
        if i < len(self.moves):
            self.index = i + 1
            self.stage = STAGE_QUIET if self.phase == _QUIET else STAGE_LOSING
            return self.moves[i]
        if self.phase == _QUIET:
            self.moves = self.losing
            self.index = 0
            self.phase = _LOSING
            return self._next_listed()
        self.phase = _DONE
        return None


def staged_moves(
    game: Game[Any] | NativeGame,
    tt_move: Hashable | None,
    killer1: Hashable | None,
    killer2: Hashable | None,
    history: History,
    *,
    exchange: bool = False,
    counter: Hashable | None = None,
    interned: bool = False,
) -> Iterator[tuple[Any, int]]:
    """Yield ``(move, stage)`` for every legal move of ``game`` exactly once, best guess
    first: a :class:`MovePicker` as an iterator (for the root and for tests)."""
    picker = MovePicker(game, exchange, interned)
    picker.start(tt_move, killer1, killer2, counter, history)
    move = picker.next_move()
    while move is not None:
        yield move, picker.stage
        move = picker.next_move()


_INDEX_BITS: Final = 16
"""The low bits of a sort key hold the move's index (a move list shorter than 65,536)."""


def sort_by_history(moves: list[Any], history: History, game: NativeGame) -> None:
    """Sort ``moves`` by history score, highest first, equal scores in the order they came:
    what the stable ``moves.sort(key=..., reverse=True)`` gives.  Compiled, without a Python
    call per move: each score is looked up once (by ``game``'s history index) and packed with
    the move's index into one native word (higher score, then lower index, is the larger
    word), the words are sorted by insertion (a few dozen), and the moves are put in their
    order.  A list of 65,536 moves or more (no game here comes near) is sorted by
    ``list.sort``."""
    _sort_packed(moves, history, game, vec[i64]([0] * len(moves)))


def _sort_packed(moves: list[Any], history: History, game: NativeGame, keys: vec[i64]) -> None:
    """:func:`sort_by_history` in ``keys``, a buffer at least as long as ``moves`` (a
    :class:`MovePicker` keeps one, so that a node's sort allocates only the list's copy, and
    not even that when the moves are in order already)."""
    n: i64 = len(moves)
    last: i64 = (1 << _INDEX_BITS) - 1
    if n > last:
        _sort_long(moves, history, game)
        return
    scores = history.scores  # :meth:`History.score`, inlined
    size: i64 = len(scores)
    i: i64  # native loop indices: compiled, a tagged int is checked at every step
    for i, move in enumerate(moves):
        index = game.history_index(move)
        if index < 0:
            index = history.number(move)
        score: i64 = 0
        if 0 <= index < size:
            score = scores[index]
        keys[i] = (score << _INDEX_BITS) | (last - i)
    first_moved: i64 = n  # the lowest place a key left its own: before it, moves stay
    for i in range(1, n):
        key = keys[i]
        if keys[i - 1] > key:
            continue  # already in place
        j: i64 = i - 1
        while j >= 0 and keys[j] < key:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = key
        if j + 1 < first_moved:  # noqa: PLR1730 - hot path: cheaper than a min() call
            first_moved = j + 1
    if first_moved == n:
        return  # in order already (every score equal, often all 0): nothing to move
    original = moves.copy()
    for i in range(first_moved, n):
        moves[i] = original[last - (keys[i] & last)]


def _sort_long(moves: list[Any], history: History, game: NativeGame) -> None:
    """:func:`sort_by_history` for a list too long for its packed index.  A function of its
    own: compiled, a lambda in :func:`sort_by_history` would make every call of it allocate
    the lambda's closure."""
    moves.sort(key=lambda move: history.score(game, move), reverse=True)


def take(moves: list[Any], move: Any, interned: bool) -> bool:
    """Remove ``move`` from ``moves`` if it is there, and say whether it was.

    Moves are looked for by identity first: the table, killer and counter moves are usually
    the very objects the game generated, and ``==`` on a move object is a Python-level call
    per list element (python-chess's ``Move.__eq__``), where ``is`` is one pointer compare.
    When ``interned`` (the game hands out one object per move), identity is the whole test;
    otherwise an equal move is looked for too.  A move list holds each move once, so either
    way the same element is removed as by ``list.remove``.
    """
    for i in range(len(moves)):
        if moves[i] is move:
            del moves[i]
            return True
    if interned or move not in moves:
        return False
    moves.remove(move)
    return True


def ordered_moves(
    game: Game[Any] | NativeGame,
    tt_move: Hashable | None = None,
    killers: tuple[Hashable | None, Hashable | None] = (None, None),
    history: History | None = None,
) -> list[Any]:
    """All legal moves in staged order, as a list (for the root and for tests)."""
    return [
        move
        for move, _ in staged_moves(
            game,
            tt_move,
            killers[0],
            killers[1],
            History() if history is None else history,
        )
    ]
