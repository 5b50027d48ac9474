"""What a game gives the registry: its name, start position, FEN reader, and optional
capabilities (an exact solver, a replaceable weights table, an Elo scale, opening books,
endgame tablebases).  Declared as data, not discovered.

A variant is chosen by name (the UCI_Variant option); each entry knows its start position and
how to build a position from its FEN dialect.  Games import only the engine's contract.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.control import SearchControl
from engine.eval import LinearEvaluator
from engine.game import Game
from engine.info import InfoCallback, SearchResult
from engine.limits import Limits
from engine.skill import EloScale


class ExactSolver(Protocol):
    """A game's exact solver, tried before the normal search (``Variant.solve``).

    It returns the proven result (``score`` exact: ``Mate`` for a forced win or loss,
    ``Cp(0)`` for a draw; ``best``/``pv`` in the game's move notation), after reporting it
    through ``on_info``; or ``None`` when it declines the position or the limits, runs out of
    its own budget, or is stopped, in which case the caller runs the normal search.  It never
    waits for ``stop``/``ponderhit`` itself: holding ``bestmove`` is the session's job.
    ``game`` may be mutated (pass a copy).
    """

    def __call__(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        on_info: InfoCallback,
        *,
        move_overhead_ms: int,
    ) -> SearchResult | None: ...


class WeightedFromFen(Protocol):
    """Build a position that evaluates with ``evaluator`` (the flag is UCI_Chess960)."""

    def __call__(
        self, fen: str, chess960: bool, /, *, evaluator: LinearEvaluator | None
    ) -> Game[Any]: ...


@dataclass(frozen=True, slots=True)
class Weights:
    """A game whose whole evaluation is one :class:`LinearEvaluator` a user may replace
    (the ``EvalFile`` option).

    ``shipped`` is the default table: its feature names are the ones a replacement may use.
    ``from_fen`` builds positions with another table; ``evaluator=None`` means the shipped one.
    """

    shipped: Callable[[], LinearEvaluator]
    from_fen: WeightedFromFen


class GameFileError(ValueError):
    """A file a game's capability cannot use (a book, a tablebase directory): the message
    names it, as it was given, and says why."""


@dataclass(frozen=True, slots=True)
class BookMove:
    """The move a book chose: its text in the game's notation, its weight, and the sum of the
    weights of the position's playable book moves (``weight / total`` is its probability)."""

    move: str
    weight: int
    total: int
    candidates: int
    """How many playable book moves the position has."""


class OpenBook(Protocol):
    """An open opening book; :meth:`close` releases it."""

    def summary(self) -> str:
        """One line for the client confirming what is now in use."""
        ...

    def choose(self, game: Game[Any], seed: int = 0) -> BookMove | None:
        """A book move for ``game``, drawn by weight with ``seed``; ``None``: none there."""
        ...

    def close(self) -> None: ...


class BookOpener(Protocol):
    """Check and open a book file; :class:`GameFileError` (naming it ``shown_as``) if unusable."""

    def __call__(self, path: Path, *, shown_as: str | None = None) -> OpenBook: ...


class FoundTables(Protocol):
    """Endgame tables found in a set of directories, checked."""

    def summary(self) -> str:
        """One line for the client saying what was found."""
        ...


@dataclass(frozen=True, slots=True)
class TableSettings:
    """How a game probes its tables (Stockfish's ``SyzygyProbeDepth``, ``SyzygyProbeLimit``
    and ``Syzygy50MoveRule``)."""

    depth: int
    limit: int
    rule50: bool


@dataclass(frozen=True, slots=True)
class Tablebases:
    """A game with endgame tables (the ``SyzygyPath`` option).

    ``find`` checks directories (shown to the client as the second argument names them) and
    raises :class:`GameFileError`; ``use`` gives a position the tables (``None``: none).
    """

    find: Callable[[Sequence[Path], Sequence[str]], FoundTables]
    use: Callable[[Game[Any], FoundTables | None, TableSettings], None]


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    start_fen: str
    from_fen: Callable[[str, bool], Game[Any]]
    """Build a position from FEN; the flag is UCI_Chess960 (ignored by games without it)."""
    description: str = ""
    solve: ExactSolver | None = None
    """The game's exact solver, if it has one (see :class:`ExactSolver`)."""
    weights: Weights | None = None
    """Set when the evaluation is a replaceable weights table (see :class:`Weights`)."""
    elo_scale: EloScale | None = None
    """The measured ``UCI_Elo`` scale of its playing levels, if there is one (every game has
    ``Skill Level``; an Elo needs matches against a reference engine, which chess has)."""
    open_book: BookOpener | None = None
    """Opens the game's opening books (the ``BookFile`` option), if it has any."""
    tablebases: Tablebases | None = None
    """The game's endgame tables (the ``SyzygyPath`` option), if it has any."""

    def new(
        self,
        fen: str | None = None,
        *,
        chess960: bool = False,
        evaluator: LinearEvaluator | None = None,
    ) -> Game[Any]:
        """The start position, or the given FEN; raises InvalidPositionError.

        ``evaluator`` replaces the game's shipped weights; only a game with :attr:`weights`
        takes one (``ValueError`` otherwise: silently evaluating with the shipped table
        instead would make a comparison of two tables meaningless).
        """
        text = self.start_fen if fen is None else fen
        if evaluator is None:
            return self.from_fen(text, chess960)
        if self.weights is None:
            raise ValueError(f"{self.name} has no weights table to replace")
        return self.weights.from_fen(text, chess960, evaluator=evaluator)
