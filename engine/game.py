"""The game contract: everything the search may ask of a game, and nothing more.

A game is a mutable position with make/unmake (``push``/``pop``).  Outcomes are ``-1`` loss,
``0`` draw, ``+1`` win from the side to move's view (:mod:`engine.score` turns them into
scores).  The search relies on these terminal rules:

* ``legal_moves()`` (= ``noisy_moves()`` + ``quiet_moves()``, disjoint) is empty exactly when
  the game's own move rules end the game; draws by rule do *not* empty it.
* ``is_terminal()`` is cheap and never generates moves: true for a decided game or a draw by
  rule (chess treats the first repetition in search as a draw); it may be ``False`` when no
  move is legal.
* ``terminal_value()`` is valid when ``is_terminal()`` is true *or* the move list is empty.

``evaluate()`` must equal ``evaluator.evaluate(features())``, round(Σ wᵢ·fᵢ) from the side to
move's view, however it computes it.  Optional capabilities are runtime-checkable protocols
below, not members of :class:`Game`; the exact solver is data on the registry's ``Variant``.

Why this shape: docs/design.md, *The game contract, and why it is shaped so*.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from engine.eval import LinearEvaluator

MoveT = TypeVar("MoveT", bound=Hashable)
MoveT_contra = TypeVar("MoveT_contra", bound=Hashable, contravariant=True)


class GameError(ValueError):
    """Base class for a game's complaints about its input."""


class IllegalMoveError(GameError):
    """A move text that does not parse, or names a move that is not legal here."""


class InvalidPositionError(GameError):
    """A position description (FEN or similar) that does not describe a legal position."""


@runtime_checkable
class Game(Protocol[MoveT]):
    """A mutable game position.  Moves are opaque hashable values owned by the adapter."""

    #: Registry name, also the UCI_Variant value ("chess", "tictactoe", ...).
    variant: str

    # -- moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[MoveT]:
        """All legal moves (order unspecified).  Empty when the move rules end the game."""
        ...

    def noisy_moves(self) -> list[MoveT]:
        """Tactical moves for quiescence (captures, promotions), best first by the game's
        cheap hint (MVV-LVA for chess).  May be empty for quiet games."""
        ...

    def quiet_moves(self) -> list[MoveT]:
        """The legal moves that ``noisy_moves()`` does not return, order unspecified.

        Generated only when the search gets past the tactical stage, so a cut-off on a capture
        never pays for quiet move generation."""
        ...

    def is_noisy(self, move: MoveT) -> bool:
        """True when ``move`` is one that ``noisy_moves()`` would return."""
        ...

    def push(self, move: MoveT) -> None:
        """Play a legal move.  Only moves from this position's move lists may be pushed."""
        ...

    def pop(self) -> None:
        """Undo the last ``push`` or ``push_null``."""
        ...

    def can_null_move(self) -> bool:
        """True when passing is a sound heuristic here (null-move pruning): never in check,
        never in zugzwang-prone positions (e.g. chess pawn endings), never in games where
        passing is meaningless."""
        ...

    def push_null(self) -> None:
        """Pass the move to the opponent (only when ``can_null_move()``)."""
        ...

    # -- state ---------------------------------------------------------------------------
    def is_terminal(self) -> bool: ...

    def terminal_value(self) -> int:
        """-1, 0 or +1 for the side to move; see the module docstring for when it is valid."""
        ...

    def in_check(self) -> bool:
        """True when the side to move is in check (drives check extensions); False in games
        without checks."""
        ...

    def key(self) -> int:
        """Transposition key: equal positions (same side to move, same rights) give equal
        keys; deterministic across processes (the bench node count depends on it).  The
        table folds a key to its low 64 bits as a signed word; a key already in that range
        (``-2**63 <= key < 2**63``) takes the fast path."""
        ...

    @property
    def side(self) -> int:
        """0 when the first player (white) is to move, 1 for the second player."""
        ...

    @property
    def ply(self) -> int:
        """Half-moves played since the game's start position (for time management)."""
        ...

    # -- evaluation ----------------------------------------------------------------------
    @property
    def evaluator(self) -> LinearEvaluator:
        """The weights this game evaluates with."""
        ...

    def features(self) -> Mapping[str, float]:
        """Feature values fᵢ, from the side to move's point of view."""
        ...

    def evaluate(self) -> int:
        """Static evaluation from the side to move's point of view, |value| < MATE_BOUND."""
        ...

    # -- notation ------------------------------------------------------------------------
    def parse_move(self, text: str) -> MoveT:
        """Parse a move in the game's UCI notation; raise IllegalMoveError unless legal."""
        ...

    def format_move(self, move: MoveT) -> str:
        """The move in the game's UCI notation (what ``bestmove`` prints)."""
        ...

    def fen(self) -> str:
        """The position in the game's FEN dialect (round-trips through the registry)."""
        ...

    def display(self) -> str:
        """A human-readable board for the ``d`` command (several lines, no trailing newline)."""
        ...

    def copy(self) -> Game[MoveT]:
        """An independent copy with the same position and history (the search runs on a copy,
        so the session's position is never touched by a running search)."""
        ...


@runtime_checkable
class StaticExchange(Protocol[MoveT_contra]):
    """Optional: a game with captures tells whether a noisy move wins material.

    The search asks it to skip captures that lose material or cannot lift the score to alpha
    in quiescence, and losing captures near the horizon.  A game without it (tic-tac-toe,
    Connect Four: nothing is ever taken back) keeps every noisy move.
    """

    def see_ge(self, move: MoveT_contra, threshold: int) -> bool:
        """Whether ``move`` gains at least ``threshold`` (evaluation units) once the best
        sequence of recaptures on its target square has been played out."""
        ...

    def max_gain(self) -> int:
        """An upper bound of what any noisy move of the side to move can gain by exchange
        (the most valuable piece it could take, plus a promotion's gain if one is possible):
        when even that cannot lift the score to alpha, quiescence stops without moves."""
        ...


@runtime_checkable
class CheckTest(Protocol[MoveT_contra]):
    """Optional: a game with checks tells, without playing it, whether a move gives check.

    Pruning near the horizon spares checking moves; without this test the search has to play
    each candidate and ask :meth:`Game.in_check`, which costs about as much as the leaf it
    wants to skip.
    """

    def gives_check(self, move: MoveT_contra) -> bool:
        """Whether the legal ``move`` leaves the opponent in check."""
        ...


@runtime_checkable
class CheckingPush(Protocol[MoveT_contra]):
    """Optional: a game makes a move and says whether it gives check, in one call.

    The search asks :meth:`Game.in_check` after every :meth:`Game.push`; one call instead of
    two saves a call across the protocol per node.  Without it the search makes both calls.
    """

    def push_check(self, move: MoveT_contra) -> bool:
        """Exactly :meth:`Game.push` ``move``, then :meth:`Game.in_check` (a wrapper that
        changes ``push`` must change this too)."""
        ...


MOVE_CODE_LIMIT = 1 << 16
"""Move codes are ``1 .. MOVE_CODE_LIMIT - 1`` (0 means "no move"): 16 bits of a table entry."""


@runtime_checkable
class MoveCodec(Protocol[MoveT]):
    """Optional: a game numbers its moves the same way in every process.

    A transposition table shared by several processes (Lazy SMP, :mod:`engine.smp`) stores
    the best move as a number that another process must turn back into the same move, so
    the number has to be a property of the move, not of whoever saw it first (a private table
    interns moves instead).  A game without a codec still searches in parallel; its shared
    entries just carry no move.
    """

    def move_code(self, move: MoveT) -> int:
        """A number in ``1 .. MOVE_CODE_LIMIT - 1`` that only ``move`` has in this game."""
        ...

    def code_move(self, code: int) -> MoveT:
        """The move whose :meth:`move_code` is ``code`` (independent of the position: the
        table trusts a move stored under the position's full key)."""
        ...


@runtime_checkable
class InternedMoves(Protocol):
    """Optional: the game hands out one object per move, so equal moves are identical.

    Every move a game with ``moves_interned`` true returns (move lists, decoded move codes,
    parsed moves) is the same object each time.  The search then compares moves by identity,
    which matters where moves are Python objects with a Python-level ``__eq__``.
    """

    moves_interned: bool


@dataclass(frozen=True, slots=True)
class TablebaseProbing:
    """How a search may use a game's endgame tablebases (the ``Syzygy*`` UCI options)."""

    limit: int
    """Positions with at most this many pieces are probed: the smaller of the probe limit
    and the most pieces any table holds."""
    depth: int = 1
    """Inside the tree, a position with exactly :attr:`limit` pieces is probed only at this
    remaining depth or more (fewer pieces: at any depth); Stockfish's ``SyzygyProbeDepth``."""
    rule50: bool = True
    """Wins and losses the fifty-move rule turns into draws count as draws."""


@runtime_checkable
class Tablebase(Protocol[MoveT]):
    """Optional: a game that can look positions with few pieces up in endgame tablebases.

    The search asks :meth:`tb_probing` once; ``None`` (no tables in use) leaves the search
    exactly as without the capability.  Otherwise the root's moves are restricted to
    :meth:`tb_root_moves`, and inside the tree, after a move that resets the fifty-move
    counter, :meth:`tb_wdl` may end the node with a tablebase win, draw or loss.
    """

    def tb_probing(self) -> TablebaseProbing | None:
        """The probe settings, or ``None`` when no tables are in use."""
        ...

    def tb_pieces(self) -> int:
        """The number of pieces on the board, kings included (cheap)."""
        ...

    def tb_wdl(self) -> int | None:
        """Win/draw/loss for the side to move, Syzygy's way: 2 win, 1 win that the
        fifty-move rule spoils, 0 draw, -1 loss the rule saves, -2 loss.

        ``None`` unless the position was just reached by a move that reset the fifty-move
        counter (a capture or pawn move: only then does WDL ignore the counter correctly),
        is within :attr:`TablebaseProbing.limit` pieces, and the tables have it."""
        ...

    def tb_root_moves(self, rule50: bool) -> list[MoveT] | None:
        """The legal moves that keep the best result the tables promise (best first):
        winning moves that keep the win within the fifty-move rule (``rule50``), else the
        ones closest to zeroing; the drawing moves when drawn; when lost, the moves that
        lose slowest where that matters.  ``None`` when the tables do not cover the
        position."""
        ...


@runtime_checkable
class ChanceGame(Game[MoveT], Protocol[MoveT]):
    """Optional: a :class:`Game` with chance nodes, where an outcome happens with a known
    probability instead of being chosen (dice, a card draw).

    The rules are in :mod:`engine.lab.chance`; the searches that understand chance
    (expectiminimax, Star1, Star2 in :mod:`engine.lab.classic`) ask for it, and the others
    refuse a game that has it.
    """

    def is_chance_node(self) -> bool:
        """True when the next event is random rather than chosen."""
        ...

    def chance_outcomes(self) -> list[tuple[MoveT, Fraction]]:
        """Every outcome of this chance node with its probability (exact, summing to 1)."""
        ...

    @property
    def value_bound(self) -> int:
        """``U`` with ``|evaluate()| <= U`` everywhere; decided games score ``±U``."""
        ...
