"""What a UCI session configures: the options, each declared once with what happens when it
changes (as Stockfish's ``engine.cpp`` declares them), and the position they shape.

:func:`option_table` is the one declaration: the ``uci`` listing, ``setoption``'s checks and
a docs generator all read it.  An option without a handler is only read when it is used (at
the next ``go``).  :class:`Engine` holds the values, the variant, the position and what the
file options loaded (weights, book, tablebases); the session schedules and calls it only
between jobs.  Errors reach the client as ``info string error: …`` and change nothing.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine.game import Game, GameError, IllegalMoveError
from engine.lab.classic import UCI_ALGORITHMS
from engine.limits import Limits
from engine.search import ABLATIONS
from engine.shm import SharedMemoryFullError
from engine.skill import FULL_STRENGTH, EloScale, Skill
from engine.smp.searcher import MAX_THREADS
from games.registry import GAMES, get_variant
from games.variant import BookMove, Variant
from protocol.errors import OptionError
from protocol.uci.books import SessionBook
from protocol.uci.formatting import explanation_lines
from protocol.uci.options import (
    ANY_PATH,
    Button,
    Check,
    Combo,
    EvalFileAccess,
    OptionName,
    Options,
    OptionSpec,
    Spin,
    String,
)
from protocol.uci.runner import SearchRunner
from protocol.uci.syzygy import ANY_SYZYGY_PATH, SessionTablebases, SyzygyAccess
from protocol.uci.weights import SessionWeights, is_default_eval_file

__all__ = [
    "Declared",
    "Engine",
    "Reporter",
    "declared_elo_scale",
    "default_specs",
    "option_table",
]

N = OptionName

HASH_MAX_MIB = 4096
BOOK_DEPTH_DEFAULT = 16
"""Plies from the game's start within which the book is asked."""
BOOK_DEPTH_MAX = 255
BOOK_SEED_MAX = (1 << 31) - 1


class Reporter(Protocol):
    """Where the engine's messages to the client go (the session's output)."""

    def say(self, text: str) -> None:
        """``info string text``."""

    def error(self, what: str, offending: str) -> None:
        """``info string error: what (offending)``."""

    def internal_error(self, during: str, exc: BaseException, offending: str) -> None:
        """A bug: logged in full, one short line to the client."""


@dataclass(frozen=True, slots=True)
class Change:
    """A ``setoption`` that was accepted: the option's declared name, the value before it,
    and the command line (for errors)."""

    name: str
    before: object
    shown: str


Handler = Callable[["Engine", Change], Awaitable[None]]


class When(enum.Enum):
    """When an option's handler runs."""

    CHANGED = "changed"
    """Only when the value differs from the one before."""
    ALWAYS = "always"
    """At every ``setoption`` (a file option rereads its file; a button acts)."""


@dataclass(frozen=True, slots=True)
class Declared:
    """One option: its spec (type, default, range) and what happens when it is set."""

    spec: OptionSpec
    on_change: Handler | None = None
    when: When = When.CHANGED

    def __post_init__(self) -> None:
        if isinstance(self.spec, Button) and self.when is not When.ALWAYS:
            raise ValueError(f"{self.spec.name}: a button has no value to compare; it acts ALWAYS")


def option_table(
    variants: Sequence[str], elo_scale: EloScale | None = None
) -> tuple[Declared, ...]:
    """Every option, in the order ``uci`` lists them, with ``UCI_Variant`` offering
    ``variants`` (default ``chess`` when offered, else the first) and ``UCI_LimitStrength`` /
    ``UCI_Elo`` declared only with an ``elo_scale``, over its measured range.

    What each option means is in docs/uci.md; ``Threads`` is the number of search processes
    (:mod:`engine.smp`), ``Algorithm`` the searcher (``pvs``, an ablation, or a classic
    algorithm of :mod:`engine.lab.classic`).
    """
    if not variants:
        raise ValueError("at least one variant is needed for UCI_Variant")
    variant_default = "chess" if "chess" in variants else variants[0]
    always = When.ALWAYS
    table = (
        Declared(Spin(N.HASH, 16, 1, HASH_MAX_MIB), Engine.on_hash),
        Declared(Spin(N.THREADS, 1, 1, MAX_THREADS), Engine.on_threads),
        Declared(Spin(N.MULTI_PV, 1, 1, 256)),
        Declared(Check(N.PONDER, False)),
        Declared(Spin(N.MOVE_OVERHEAD, 30, 0, 5000)),
        Declared(Button(N.CLEAR_HASH), Engine.on_clear_hash, always),
        Declared(Combo(N.VARIANT, variant_default, tuple(variants)), Engine.on_variant),
        Declared(Check(N.CHESS960, False), Engine.on_chess960),
        Declared(Check(N.SHOW_WDL, False)),
        Declared(Check(N.ANALYSE_MODE, False)),
        Declared(String(N.OPPONENT, "")),
        Declared(Combo(N.ALGORITHM, "pvs", ("pvs", *ABLATIONS, *UCI_ALGORITHMS))),
        Declared(String(N.EVAL_FILE, ""), Engine.on_eval_file, always),
        Declared(String(N.SYZYGY_PATH, ""), Engine.on_syzygy, always),
        Declared(Spin(N.SYZYGY_PROBE_DEPTH, 1, 1, 100), Engine.on_syzygy),
        Declared(Check(N.SYZYGY_50_MOVE_RULE, True), Engine.on_syzygy),
        Declared(Spin(N.SYZYGY_PROBE_LIMIT, 7, 0, 7), Engine.on_syzygy),
        Declared(Check(N.OWN_BOOK, False), Engine.on_own_book, always),
        Declared(String(N.BOOK_FILE, ""), Engine.on_book_file, always),
        Declared(Spin(N.BOOK_DEPTH, BOOK_DEPTH_DEFAULT, 1, BOOK_DEPTH_MAX)),
        Declared(Spin(N.BOOK_SEED, 0, 0, BOOK_SEED_MAX)),
        Declared(Spin(N.SKILL_LEVEL, FULL_STRENGTH, 0, FULL_STRENGTH)),
    )
    if elo_scale is None:
        return table
    return (
        *table,
        Declared(Check(N.LIMIT_STRENGTH, False), Engine.on_limit_strength),
        Declared(Spin(N.ELO, elo_scale.lowest, elo_scale.lowest, elo_scale.highest)),
    )


def default_specs(
    variants: Sequence[str], elo_scale: EloScale | None = None
) -> tuple[OptionSpec, ...]:
    """The specs of :func:`option_table`, in order."""
    return tuple(declared.spec for declared in option_table(variants, elo_scale))


def declared_elo_scale() -> EloScale | None:
    """The Elo scale ``UCI_Elo`` is declared over: the first variant's that has one (chess;
    the others have ``Skill Level`` only, and the session plays them by it)."""
    return next((v.elo_scale for v in GAMES.values() if v.elo_scale is not None), None)


@dataclass(frozen=True, slots=True)
class Policies:
    """What a transport lets one client touch (see :class:`~protocol.uci.session.
    EngineSession`): server budgets for ``Hash`` and ``Threads``, and the files
    ``EvalFile``, ``SyzygyPath`` and ``BookFile`` may read."""

    hash_budget: Callable[[int], str | None] | None = None
    """Asked before ``Hash`` grows or shrinks: called with the requested MiB, it returns
    ``None`` to allow (and account) the new size, or the reason to refuse, which the client
    gets as an error; nothing changes."""
    thread_budget: Callable[[int], tuple[int, str]] | None = None
    """Asked before ``Threads`` changes: called with the requested count, it returns the
    count granted (and accounted) and, when that is fewer, why."""
    eval_files: EvalFileAccess = ANY_PATH
    syzygy: SyzygyAccess = ANY_SYZYGY_PATH
    book_files: EvalFileAccess = ANY_PATH


class Engine:
    """One client's options and position, and the runner they configure."""

    def __init__(
        self,
        runner_factory: Callable[[int], SearchRunner],
        out: Reporter,
        policies: Policies,
    ) -> None:
        self._out = out
        self._policies = policies
        self._table = {d.spec.name: d for d in option_table(list(GAMES), declared_elo_scale())}
        self.options = Options(tuple(d.spec for d in self._table.values()))
        self.runner = runner_factory(self.options.get_int(N.HASH))
        self.variant: Variant = get_variant(self.options.get_str(N.VARIANT))
        self._weights = SessionWeights(
            policies.eval_files, [n for n, v in GAMES.items() if v.weights]
        )
        self.book = SessionBook(policies.book_files, [n for n, v in GAMES.items() if v.open_book])
        self._tablebases = SessionTablebases(
            policies.syzygy, next((v.tablebases for v in GAMES.values() if v.tablebases), None)
        )
        self._start_fen: str | None = None
        self._moves: tuple[str, ...] = ()
        self.game: Game[Any] = self.variant.new()

    # -- setoption -------------------------------------------------------------------------
    async def set_option(self, name: str, value: str | None) -> None:
        """``setoption``: check and store the value, then run the option's handler."""
        options = self.options
        shown = f"setoption name {name}" + ("" if value is None else f" value {value}")
        try:
            before = None if isinstance(options.spec(name), Button) else options[name]
            spec = options.set(name, value)
        except OptionError as exc:
            self._out.error(str(exc), shown)
            return
        declared = self._table[spec.name]
        if declared.on_change is None:
            return
        if declared.when is When.CHANGED and options[spec.name] == before:
            return
        await declared.on_change(self, Change(spec.name, before, shown))

    async def on_clear_hash(self, _: Change) -> None:
        await self.runner.clear()

    async def on_hash(self, change: Change) -> None:
        """A new table, if a server's ``hash_budget`` has room for it (else nothing changes)."""
        hash_mb = self.options.get_int(N.HASH)
        budget = self._policies.hash_budget
        if budget is not None:
            refusal = budget(hash_mb)
            if refusal is not None:
                self.options.set(N.HASH, str(change.before))
                self._out.error(refusal, change.shown)
                return
        try:
            await self.runner.resize_hash(hash_mb)
        except SharedMemoryFullError as exc:
            self._lost_threads(exc, change.shown)

    async def on_threads(self, change: Change) -> None:
        """Start or end search helpers; a server may grant fewer threads than asked (its
        ``thread_budget``), which the client is told, and the option shows what was granted."""
        threads = granted = self.options.get_int(N.THREADS)
        before = change.before
        budget = self._policies.thread_budget
        if budget is not None:
            granted, why = budget(threads)
            if granted != threads:
                self.options.set(N.THREADS, str(granted))
                self._out.say(f"Threads {threads} asked, {granted} granted: {why}")
                if granted == before:
                    return
        try:
            await self.runner.set_threads(granted)
        except SharedMemoryFullError as exc:
            self._lost_threads(exc, change.shown)
        except BaseException:
            # Nothing changed after all: the option and the budget go back to what they were.
            self.options.set(N.THREADS, str(before))
            if budget is not None and isinstance(before, int):
                budget(before)
            raise

    def _lost_threads(self, exc: SharedMemoryFullError, shown: str) -> None:
        """The table for ``Threads`` above 1 did not fit in shared memory: the runner went
        back to one thread with a private table, and the client and the server are told."""
        asked = self.options.get_int(N.THREADS)
        self.options.set(N.THREADS, "1")
        if self._policies.thread_budget is not None:
            self._policies.thread_budget(1)
        self._out.error(f"Threads {asked}: {exc}; searching with Threads 1", shown)

    async def on_variant(self, _: Change) -> None:
        """A new variant starts from its start position."""
        self.variant = get_variant(self.options.get_str(N.VARIANT))
        self._start_fen, self._moves = None, ()
        self.game = self._new_game()
        if self.options.get_bool(N.OWN_BOOK) and self.variant.open_book is None:
            self._out.say(self.book.note(self.variant))  # said once, here, not at every go
        self._note_no_elo_scale()

    async def on_chess960(self, _: Change) -> None:
        self._rebuild()

    async def on_limit_strength(self, _: Change) -> None:
        self._note_no_elo_scale()

    def _note_no_elo_scale(self) -> None:
        """Say once (when it becomes true) that ``UCI_Elo`` does not apply to this variant."""
        options = self.options
        if N.LIMIT_STRENGTH not in options or not options.get_bool(N.LIMIT_STRENGTH):
            return
        if self.variant.elo_scale is None:
            self._out.say(
                f"UCI_LimitStrength: {self.variant.name} has no measured Elo scale; "
                f"Skill Level ({options.get_int(N.SKILL_LEVEL)}) sets its level"
            )

    async def on_eval_file(self, change: Change) -> None:
        """Load the table ``EvalFile`` now names, or go back to the shipped one.

        The file is read and checked here, not at the next ``go``: a bad file is reported
        against the ``setoption`` that named it and the old value and weights stay.  New
        weights rebuild the position and empty the hash table, whose scores were computed
        with the old ones.  The table belongs to the game it was checked against.
        """
        value = self.options.get_str(N.EVAL_FILE)
        try:
            changed, said = self._weights.load(value, self.variant)
        except OptionError as exc:
            self.options.set(N.EVAL_FILE, str(change.before))
            self._out.error(str(exc), change.shown)
            return
        if is_default_eval_file(value):
            self.options.set(N.EVAL_FILE, "")  # one spelling for "shipped", the default
        if said is not None:
            self._out.say(said)
        if changed:
            self._rebuild()
            await self.runner.clear()

    async def on_syzygy(self, change: Change) -> None:
        """Check a new ``SyzygyPath`` (a bad one is refused and the old value stays), then
        give the current position the tables under the current probe options."""
        try:
            said = await self._tablebases.option_set(self.options, change.name, change.before)
        except OptionError as exc:
            self._out.error(str(exc), change.shown)
            return
        if said is not None:
            self._out.say(said)
        self._tablebases.apply(self.game, self.variant, self.options)

    async def on_own_book(self, change: Change) -> None:
        """``OwnBook`` on under a variant without books is refused."""
        if self.options.get_bool(N.OWN_BOOK) and self.variant.open_book is None:
            self.options.set(N.OWN_BOOK, "true" if change.before else "false")
            self._out.error(self.book.refusal(N.OWN_BOOK, self.variant), change.shown)

    async def on_book_file(self, change: Change) -> None:
        """Open the book ``BookFile`` now names, or close it (the empty value); a bad file
        or a variant without books is refused and the old value and book stay."""
        value = self.options.get_str(N.BOOK_FILE)
        if not value.strip():
            self.options.set(N.BOOK_FILE, "")  # one spelling for "no book"
            self.book.close()
            return
        try:
            said = await self.book.open(value, self.variant)
        except OptionError as exc:
            self.options.set(N.BOOK_FILE, str(change.before))
            self._out.error(str(exc), change.shown)
            return
        self._out.say(said)

    # -- the position ----------------------------------------------------------------------
    def _new_game(self, fen: str | None = None) -> Game[Any]:
        game = self.variant.new(
            fen,
            chess960=self.options.get_bool(N.CHESS960),
            evaluator=self._weights.evaluator(self.variant),
        )
        self._tablebases.apply(game, self.variant, self.options)
        return game

    def _rebuild(self) -> None:
        """Rebuild the current position under new options (Chess960, weights), or start over
        if it cannot be."""
        try:
            self.game = self._build(self._start_fen, self._moves)
        except GameError as exc:
            self._out.say(f"position reset to the start position: {exc}")
            self._start_fen, self._moves = None, ()
            self.game = self._new_game()

    def _build(self, fen: str | None, moves: Iterable[str]) -> Game[Any]:
        game = self._new_game(fen)
        play(game, moves)
        return game

    def set_position(self, fen: str | None, moves: tuple[str, ...]) -> None:
        """``position``: a bad FEN or move is reported and the position stays as it was."""
        try:
            if self._extend(fen, moves):
                return
            game = self._build(fen, moves)
        except GameError as exc:
            shown = "position " + (f"fen {fen}" if fen is not None else "startpos")
            if moves:
                shown += " moves " + " ".join(moves)
            self._out.error(str(exc), shown)
            return
        self._start_fen, self._moves, self.game = fen, moves, game

    def _extend(self, fen: str | None, moves: tuple[str, ...]) -> bool:
        """Play only the new moves when ``position`` repeats the current line and adds some.

        A GUI sends the whole game before every ``go``; replaying 150 moves costs a few
        milliseconds, which a bullet game cannot spare.  Searches and perft work on copies, so
        the game may be advanced in place; a bad move takes the pushed ones back (the position
        stays as it was) and raises.
        """
        known = self._moves
        if fen != self._start_fen or len(moves) < len(known) or moves[: len(known)] != known:
            return False
        play(self.game, moves[len(known) :])
        self._moves = moves
        return True

    def eval_lines(self) -> list[str]:
        """``eval``: the weights in use (for a game that has a table), the terms, the total."""
        game = self.game
        lines: list[str] = []
        if self.variant.weights is not None:
            lines.append(f"Weights: {self._weights.shown(self.variant)}")
        features = game.features()
        total = game.evaluate()
        lines.extend(explanation_lines(game.evaluator.explain(features), total))
        lines.append(f"Evaluation: {total} (side to move's point of view)")
        return lines

    # -- what a go uses --------------------------------------------------------------------
    def book_move(self, limits: Limits) -> BookMove | None:
        """The book's move for this ``go``, or ``None`` to search.

        The book is asked when ``OwnBook`` is on, a ``BookFile`` is open for this variant,
        the game's ply is below ``BookDepth``, and the ``go`` asks for a move to play: a
        clock, ``movetime`` or nothing.  A ``go`` with ``infinite``, ``ponder``,
        ``searchmoves``, ``depth``, ``nodes`` or ``mate`` is searched.
        """
        options = self.options
        if (
            not self.book.is_open_for(self.variant)
            or not options.get_bool(N.OWN_BOOK)
            or limits.waits_for_stop
            or limits.searchmoves is not None
            or limits.depth is not None
            or limits.nodes is not None
            or limits.mate is not None
            or self.game.ply >= options.get_int(N.BOOK_DEPTH)
        ):
            return None
        try:
            return self.book.choose(self.game, options.get_int(N.BOOK_SEED))
        except Exception as exc:  # a book changed under the engine: search instead
            self._out.internal_error("book probe", exc, self.game.fen())
            return None

    def skill(self) -> Skill | None:
        """The playing level of the next search: ``UCI_Elo`` on the variant's Elo scale when
        ``UCI_LimitStrength`` is on and the variant has a scale, else ``Skill Level``;
        ``None`` at full strength."""
        options = self.options
        scale = self.variant.elo_scale
        if scale is not None and N.LIMIT_STRENGTH in options and options.get_bool(N.LIMIT_STRENGTH):
            return scale.skill(options.get_int(N.ELO))
        level = options.get_int(N.SKILL_LEVEL)
        return None if level >= FULL_STRENGTH else Skill(level)


def play(game: Game[Any], moves: Iterable[str]) -> None:
    """Push ``moves`` onto ``game``; on a bad one, take back those pushed and raise."""
    pushed = 0
    try:
        for text in moves:
            try:
                move = game.parse_move(text)
            except IllegalMoveError as exc:
                raise IllegalMoveError(f"illegal move {text} in position {game.fen()}") from exc
            game.push(move)
            pushed += 1
    except GameError:
        for _ in range(pushed):
            game.pop()
        raise
