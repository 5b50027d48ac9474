"""The production search: fail-soft principal variation search over any :class:`Game`.

:class:`Searcher` keeps what outlives a search (the transposition table, history, counter
moves) and runs one :class:`Worker` per ``search()`` under the shared
:class:`~engine.driver.Driver` (iterative deepening, aspiration, MultiPV, time, the result).
The worker's ``negamax`` and ``qsearch`` follow Stockfish's ``search.cpp`` step by step, with
one :class:`Stack` record per ply.  A node's entry counts it and, when due, polls
:class:`~engine.stop.StopPoll`, which raises :class:`~engine.driver.SearchStopped`; the driver
pops the moves.  Deterministic: the same position and depth visit the
same nodes (the ``bench`` signature).  The techniques, the order of the steps and why:
docs/search.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields
from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64

from engine.control import SearchControl
from engine.driver import Counters, Driver, Iteration, Line, Root, SearchStopped
from engine.game import (
    Game,
    InternedMoves,
    MoveCodec,
    StaticExchange,
    Tablebase,
)
from engine.info import InfoCallback, SearchInfo, SearchResult, ignore_info
from engine.limits import Limits
from engine.native_game import native
from engine.ordering import (
    STAGE_KILLER,
    STAGE_LOSING,
    STAGE_QUIET,
    STAGE_TT,
    History,
    MovePicker,
    ordered_moves,
)
from engine.score import (
    DRAW,
    INF,
    MATE_BOUND,
    MAX_PLY,
    TB_BOUND,
    TB_WIN,
    from_tt,
    mate_in,
    mated_in,
    outcome_score,
    to_tt,
)
from engine.stop import StopPoll
from engine.tt import (
    EXACT,
    EXHAUSTIVE,
    LOWER,
    NO_EVAL,
    UPPER,
    TranspositionTable,
    entry_bound,
    entry_depth,
    entry_eval,
    entry_score,
)

MAX_DEPTH: Final = 128
"""Deepest iteration; an ``infinite`` search that gets here returns (the session waits)."""

_PLY_CAP: Final = MAX_PLY - 8
"""Nodes this deep evaluate statically (keeps recursion and mate scores in range)."""

_RFP_DEPTH: Final = 3
_RFP_MARGIN: Final = 120
_PROBCUT_DEPTH: Final = 5
_PROBCUT_MARGIN: Final = 150
"""ProbCut: at a non-PV node of this depth or more, a capture whose shallow search (depth - 4)
beats beta by this margin cuts the node."""
_FUT_MARGINS: Final = vec[i64]([0, 150, 300])
_RAZOR_MARGINS: Final = vec[i64]([0, 300, 500])
_LMP_COUNTS: Final = vec[i64]([0, 5, 8, 13])
"""Late-move pruning: at a non-PV node of depth d (index), quiet moves past this many tried
moves are not searched at all (they are the history's worst guesses).  The tables by depth
are native vectors: compiled, a tuple of ints indexed by a variable is boxed into a new tuple
at every read."""
_DELTA_MARGIN: Final = 200
"""Quiescence skips a capture unless its exchange could lift stand-pat to within this of alpha."""
_SEE_CAPTURE_MARGIN: Final = 100
"""Where late-move pruning applies, a capture losing more than this per ply of depth is not
searched either."""
_NULL_MIN_DEPTH: Final = 3
_SE_DEPTH: Final = 7
_SE_TT_DEPTH: Final = 3
_SE_MARGIN: Final = 2
_SE_DOUBLE_MARGIN: Final = 25
_SE_DOUBLE_LIMIT: Final = 6
"""Singular extensions (Step 15): at depth 7 or more, where the table's move has a lower or
exact bound at most 3 plies shallower, the other moves are searched to half the depth against
``tt_score - 2·depth``; a TT move alone above it is extended by a ply (two when the others
fall 25 cp further below, at most 6 times in a line)."""
_IIR_DEPTH: Final = 4
_LMR_MIN_DEPTH: Final = 3
_LMR_MIN_MOVES: Final = 3
_NULL_BASE_R: Final = 3
_NULL_EVAL_DIV: Final = 200
"""Null move reduces ``3 + depth // 3`` plies, one more per 200 cp the static evaluation
stands above beta (at most two more): the further ahead, the less a pass needs proving."""
_TB_DRAFT: Final = 6
"""A tablebase result is stored this much deeper than the node's depth: no search below it
could know better."""
_TB_ROOT_MIN_MS: Final = 200
"""A timed search ranks the root by the tables only with at least this hard budget: python-chess
probes in pure Python, and ranking a root of many moves can take a tenth of a second."""
_CURRMOVE_REPORT_S: Final = 3.0
"""Root moves are reported (``currmove``) once the search has run this long."""

_LMR: Final = tuple(
    tuple(0 if d < 1 or m < 1 else int(0.5 + math.log(d) * math.log(m) / 2.5) for m in range(64))
    for d in range(64)
)
"""Late-move reduction by (depth, moves already searched), conservative."""

_NO_PV: Final[tuple[Any, ...]] = ()

_NONE: Final = INF + 1
"""No value (Stockfish's ``VALUE_NONE``): a pruning step that does not cut, a node without
legal moves."""


def _table_knows_better(tt_score: int, tt_bound: int, ev: int) -> bool:
    """Whether a stored search score should replace the static evaluation ``ev``: its bound
    lies beyond it (a lower bound above it, an upper bound below it, or exact), outside the
    tablebase and mate range.  The searched value knows the tactics the static one does not;
    the main search's pruning and quiescence's stand-pat both ask."""
    return -TB_BOUND < tt_score < TB_BOUND and (
        tt_bound == EXACT
        or (tt_bound == LOWER and tt_score > ev)
        or (tt_bound == UPPER and tt_score < ev)
    )


def _no_tables() -> int | None:
    """Never called: ``tb_wdl`` is used only when the game has tables in use."""
    return None


def _no_pieces() -> int:
    """Never called: ``tb_pieces`` is used only when the game has tables in use."""
    return MAX_PLY


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Switches for the heuristics: the adopted ones on by default, the candidates off.

    Tests turn the value-changing ones off to compare the search with plain minimax; move
    ordering (TT move, killers, history) and aspiration windows never change the value.
    A ``mate`` limit turns null move, LMR and futility off for that search: they buy depth
    in play by hiding quiet moves after a sacrifice, exactly where short mates hide.
    """

    null_move: bool = True
    """Adaptive null move, R = 3 + depth/3 + up to 2 more as the evaluation exceeds beta
    (SPRT in docs/strength.md; the fixed R = 2/3 before it measured no gain and was off)."""
    lmr: bool = True
    futility: bool = True
    quiescence: bool = True
    tt_cutoffs: bool = True
    aspiration: bool = True
    exchange_pruning: bool = True
    """Skip losing or hopeless captures (games that implement
    :class:`~engine.game.StaticExchange`)."""
    check_extension: bool = True
    """Search a position in check one ply deeper (up to twice the nominal depth)."""
    tt_eval: bool = True
    """Prune from the transposition table's score where its bound says the static evaluation
    is wrong in that direction (a lower bound above it, an upper bound below it): the
    searched value knows the tactics the static one does not."""
    counter_moves: bool = False
    """Order the counter move (the quiet move that last refuted the opponent's previous move)
    right after the killers."""
    falling_eval_time: bool = False
    """Spend more of the clock when the score falls between iterations."""
    improving: bool = True
    """Whether the static evaluation rose since this side's previous move steers the pruning:
    reduce and prune more where it fell (the position is getting worse; cut-offs are less
    likely), less where it rose (SPRT in docs/strength.md)."""
    razoring: bool = True
    """At depth 1-2 of a non-PV node whose evaluation lies 300/500 cp below alpha, return
    quiescence's value if it confirms the node fails low (SPRT at 10+0.1 in
    docs/strength.md)."""
    singular: bool = True
    """Singular extensions with multi-cut (Stockfish's Step 15): the table's move is searched
    a ply deeper when no other move comes near its stored score at half the depth, the node
    is cut when another move beats beta too (multi-cut), and the table's move is searched a
    ply shallower when its stored score beats beta but it is not singular."""
    probcut: bool = True
    """ProbCut (Buro's, as Stockfish does it): where a winning capture's search four plies
    shallower beats beta + 150 cp, the full-depth search would almost surely beat beta too
    (SPRT in docs/strength.md)."""
    history_lmr: bool = True
    """Late-move reductions follow the history: a reduced quiet move whose history score is
    positive (it cut off elsewhere more than it failed) is reduced one ply less, one whose
    score is negative one ply more (Stockfish reduces by its history statistics; a fixed
    match in docs/strength.md)."""
    qsearch_tt_eval: bool = True
    """Quiescence stands pat on the transposition table's score where its bound lies beyond
    the static evaluation (as :attr:`tt_eval` does for the pruning of the main search): a
    capture sequence searched before knows what the static value misses (SPRT in
    docs/strength.md)."""

    def __reduce__(self) -> tuple[type[SearchConfig], tuple[bool, ...]]:
        # Pickled by value (it goes to search workers): mypyc compiles this module, and
        # pickle's default would set the fields one by one, which a frozen class refuses.
        return SearchConfig, tuple(getattr(self, field.name) for field in fields(self))


ABLATIONS: Final[dict[str, SearchConfig]] = {
    "pvs-no-nullmove": SearchConfig(null_move=False),
    "pvs-no-lmr": SearchConfig(lmr=False),
    "pvs-no-futility": SearchConfig(futility=False),
    "pvs-no-see": SearchConfig(exchange_pruning=False),
    "pvs-no-checkext": SearchConfig(check_extension=False),
    "pvs-no-tteval": SearchConfig(tt_eval=False),
    "pvs-no-qstteval": SearchConfig(qsearch_tt_eval=False),
    "pvs-no-probcut": SearchConfig(probcut=False),
    "pvs-no-historylmr": SearchConfig(history_lmr=False),
    "pvs-no-improving": SearchConfig(improving=False),
    "pvs-no-singular": SearchConfig(singular=False),
    "pvs-no-razoring": SearchConfig(razoring=False),
    "pvs-countermove": SearchConfig(counter_moves=True),
    "pvs-fallingtime": SearchConfig(falling_eval_time=True),
}
"""The production search with one heuristic switched from its default, by ``Algorithm``
name: a match of ``pvs`` against one of these measures what that heuristic is worth
(``futility`` covers reverse futility, futility and late-move pruning; ``see`` the
exchange-based capture pruning; the candidates not yet adopted are off by default and named
without ``no-``)."""


class Searcher:
    """One engine's search state: the transposition table and the move-ordering memory.

    Not thread-safe: one search at a time (the session runs it on a worker thread and steers
    it through :class:`SearchControl`).  ``clock`` must be the clock the controls use, since
    ``ponderhit`` times are compared with it.  Searching another variant than the previous
    search clears the TT first: its moves would be foreign objects here.
    """

    def __init__(
        self,
        hash_mb: int = 16,
        *,
        config: SearchConfig = SearchConfig(),
        clock: Callable[[], float] = time.monotonic,
        table: TranspositionTable | None = None,
    ) -> None:
        self.config = config
        self.tt = TranspositionTable(hash_mb) if table is None else table
        self._clock = clock
        self._history: tuple[History, History] = (History(), History())
        self._counter_moves: tuple[dict[Any, Any], dict[Any, Any]] = ({}, {})
        self._variant: str | None = None

    def resize_hash(self, hash_mb: int) -> None:
        """Reallocate the transposition table (its contents are lost)."""
        self.tt.resize(hash_mb)

    @property
    def variant(self) -> str | None:
        """The variant the table holds entries of (``None`` before the first search)."""
        return self._variant

    def use_table(self, table: TranspositionTable) -> None:
        """Search with ``table`` from now on (a shared one for Lazy SMP, or back to a private
        one); the variant is forgotten, so the next search starts from a clean slate."""
        self.tt = table
        self._variant = None

    def adopt_variant(self, game: Game[Any]) -> None:
        """Get the table ready for ``game``: another variant's entries would hand this game
        foreign moves as TT moves, so a change of variant clears everything first."""
        if game.variant != self._variant:
            if self._variant is not None:
                self.clear()
            self._variant = game.variant
        self.tt.use_codec(game if isinstance(game, MoveCodec) else None)

    def clear(self) -> None:
        """Forget everything learned (``ucinewgame``, "Clear Hash"): TT, killers, history."""
        self.tt.clear()
        self._history = (History(), History())
        self._counter_moves = ({}, {})

    def _age_history(self) -> None:
        """Halve the history scores so old games' statistics fade instead of dominating."""
        for table in self._history:
            table.age()

    def search(
        self,
        game: Game[Any],
        limits: Limits,
        *,
        config: SearchConfig | None = None,
        control: SearchControl | None = None,
        on_info: InfoCallback = ignore_info,
        multipv: int = 1,
        move_overhead_ms: int = 30,
        skip_depth: Callable[[int], bool] | None = None,
        on_nodes: Callable[[int], None] | None = None,
        age_table: bool = True,
    ) -> SearchResult:
        """Search ``game`` in place (pushes are undone before returning) within ``limits``.

        ``skip_depth`` and ``on_nodes`` are for a Lazy SMP helper (:mod:`engine.smp`): the
        iterations it leaves to others, and a callback told the node count at every poll
        (about every 5 ms) so that the main search can report the nodes of all processes.
        ``age_table=False`` leaves the table's generation alone: the parallel searcher starts
        it before its helpers, so that all of them write entries of the same search.

        ``config`` switches heuristics for this search only (an ablation, :data:`ABLATIONS`;
        default: the searcher's own, the production configuration).  The table and the
        move-ordering memory are the same either way, so an ablation differs from the
        production search by its one switch and nothing else.

        A :class:`Worker` walks the tree; :class:`~engine.driver.Driver` does the iterative
        deepening around it, as it does for every searcher.
        """
        cfg = self.config if config is None else config
        driver = Driver(
            game,
            limits,
            max_depth=MAX_DEPTH,
            control=control,
            on_info=on_info,
            multipv=multipv,
            move_overhead_ms=move_overhead_ms,
            clock=self._clock,
            skip_depth=skip_depth,
            falling_eval=cfg.falling_eval_time,
        )
        self.adopt_variant(game)
        if age_table:
            self.tt.new_search()
        self._age_history()
        worker = Worker(self, game, driver, cfg, on_info, on_nodes)
        root_moves = worker.root_moves(limits, multipv)
        return driver.run(
            root_moves,
            Root(
                search=worker.search_root,
                counters=worker.counters,
                end_iteration=worker.end_iteration,
                begin_iteration=worker.begin_iteration,
                aspiration=cfg.aspiration,
                ponder=worker.ponder,
            ),
        )

    def _ponder_from_tt(self, game: Game[Any], best: Hashable) -> str | None:
        """The expected reply when the PV is one move long: the TT move after ``best``."""
        game.push(best)
        try:
            if game.is_terminal():
                return None
            entry = self.tt.probe(game.key())
            if entry is None or entry.move is None:
                return None
            if entry.move not in game.legal_moves():
                return None
            return game.format_move(entry.move)
        finally:
            game.pop()


class Stack:
    """What the search keeps per ply (Stockfish's ``Stack``): one record per ply of the
    current line, reused by every node at that ply."""

    def __init__(self, picker: MovePicker) -> None:
        self.picker = picker
        """The move picker of this ply's nodes (started afresh by each): a search at the
        same ply (the singular extension search, Step 15) must end before the node's move
        loop starts it (Stockfish searches that one inside its loop: not here)."""
        self.pv: tuple[Any, ...] = _NO_PV
        """The principal variation from this ply (PV nodes only; reset on entry)."""
        self.current_move: Any = None
        """The move being searched here (``None`` for a null move): for counter moves."""
        self.killer1: Any = None
        self.killer2: Any = None
        """The two latest quiet moves that refuted a node at this ply."""
        self.static_eval: i64 = NO_EVAL
        """The static evaluation here (:data:`~engine.tt.NO_EVAL` in check), kept only where
        "improving" is measured: it compares this ply with two before."""
        self.excluded: Any = None
        """The move a singular extension search leaves out of this node (Step 15)."""
        self.double_extensions: i64 = 0
        """Double singular extensions on the line to this ply."""
        self.tried: list[Any] = []
        """The quiet moves a node here searched before its cut-off, the first
        ``search_moves`` counted of them (the rest are left from earlier nodes): one list
        per ply, so that a node allocates none."""


def reduction(depth: int, move_count: int) -> int:
    """Late-move reduction by depth and moves already searched (before adjustments)."""
    return _LMR[depth if depth < 63 else 63][move_count if move_count < 63 else 63]


def _bound_cuts(bound: int, value: int, alpha: int, beta: int) -> bool:
    """Whether a stored (or tablebase) ``value`` with ``bound`` settles a node's window."""
    return (
        bound == EXACT or (bound == LOWER and value >= beta) or (bound == UPPER and value <= alpha)
    )


class Worker:
    """One search's tree walk (Stockfish's ``Search::Worker``): the per-search state as typed
    fields, the per-ply records, and the node methods :meth:`qsearch`, :meth:`negamax` and
    :meth:`search_root`.  Built per search by :meth:`Searcher.search`; the game's optional
    capabilities and the switches of the configuration are read once here, not once per
    node, and the nodes ask the game through :attr:`pos`, a
    :class:`~engine.native_game.NativeGame` (natively for a compiled game)."""

    def __init__(  # noqa: PLR0917 - built in one place, from the search's arguments
        self,
        searcher: Searcher,
        game: Game[Any],
        driver: Driver,
        cfg: SearchConfig,
        on_info: InfoCallback,
        on_nodes: Callable[[int], None] | None,
    ) -> None:
        self.searcher = searcher
        self.game = game
        self.tt = searcher.tt
        self.driver = driver
        self.cfg = cfg
        self.on_info = on_info
        self.clock = searcher._clock
        self.start = driver.start
        # Tuples of any length: compiled, a fixed-length tuple is kept unboxed, and indexing
        # it by the side to move built a new tuple at every node.
        self.hist_tables: tuple[History, ...] = searcher._history
        self.counter_tables: tuple[dict[Any, Any], ...] = searcher._counter_moves
        self.root_side: i64 = game.side & 1
        self.root_key = game.key()
        # Counters, and the poll (stop, node limit, deadline) when ``nodes`` reaches
        # ``next_poll``.  Native words: every node adds to them.
        self.nodes: i64 = 0
        self.events: i64 = 0
        self.events_before: i64 = 0
        self.seldepth: i64 = 0
        self.cutoffs: i64 = 0
        self.first_cutoffs: i64 = 0
        self.tbhits: i64 = 0
        self.ext_limit: i64 = 2
        self.se_limit: i64 = 2
        self.stop = StopPoll(
            node_limit=driver.node_limit,
            control=driver.control,
            deadline=driver.deadline,
            on_poll=on_nodes,
            clock=self.clock,
        )
        self.next_poll: i64 = self.stop.first
        # The game as the search calls it on every node: natively (engine.native_game).
        self.pos = native(game)
        for table in self.hist_tables:  # sized for the game now, so no node allocates
            table.reserve(self.pos.history_size())
        # The switches.  ``go mate N`` asks for a proof of the shortest mate: the heuristics
        # that hide quiet mating moves behind a sacrifice (null move, reductions, futility)
        # are left out.
        proof = driver.mate_limit is not None
        self.proof = proof
        self.use_qs = cfg.quiescence
        self.use_tt_cut = cfg.tt_cutoffs
        self.use_null = cfg.null_move and not proof
        self.use_lmr = cfg.lmr and not proof
        self.use_fut = cfg.futility and not proof
        self.use_razor = cfg.razoring
        self.use_history_lmr = cfg.history_lmr
        self.use_qs_tt_eval = cfg.qsearch_tt_eval
        self.use_counter = cfg.counter_moves
        self.use_improving = cfg.improving and self.use_fut
        self.use_tt_eval = cfg.tt_eval
        self.use_singular = cfg.singular and not proof
        # The optional capabilities (engine.game), asked once per search.
        self.interned = isinstance(game, InternedMoves) and game.moves_interned
        self.use_see = isinstance(game, StaticExchange) and cfg.exchange_pruning and not proof
        # ProbCut tries captures by their exchange and confirms them by quiescence.
        self.use_probcut = cfg.probcut and self.use_null and self.use_qs and self.use_see
        self.lmp_counts = _LMP_COUNTS if self.use_fut else vec[i64]()
        self.stack = [
            Stack(MovePicker(self.pos, self.use_see, self.interned)) for _ in range(MAX_PLY + 2)
        ]
        # Endgame tablebases: without tables in use, ``tb_limit`` stays 0 and nothing changes.
        self.tb_limit: i64 = 0
        self.tb_depth: i64 = 0
        self.tb_draw: i64 = 1
        self.tb_wdl: Callable[[], int | None] = _no_tables
        self.tb_pieces: Callable[[], int] = _no_pieces

    # ----------------------------------------------------------------------------------
    # Set-up and the driver's hooks

    def root_moves(self, limits: Limits, multipv: int) -> list[Any]:
        """The legal root moves in staged order (the driver applies ``searchmoves``), only
        those that keep the tables' result where the tables cover the root."""
        game = self.game
        root_entry = self.tt.probe(self.root_key)
        legal_root = game.noisy_moves() + game.quiet_moves()
        root_tt_move = None
        if root_entry is not None and root_entry.move in legal_root:
            root_tt_move = root_entry.move
        moves = (
            ordered_moves(self.pos, root_tt_move, history=self.hist_tables[self.root_side])
            if legal_root
            else []
        )
        tablebase = game if isinstance(game, Tablebase) else None
        probing = None if tablebase is None else tablebase.tb_probing()
        if tablebase is None or probing is None or probing.limit <= 0:
            return moves
        self.tb_pieces = tablebase.tb_pieces
        # A root the tables cover plays a move that keeps their result; the search chooses
        # among those without probing further (as Stockfish does), so it still finds the
        # mates.  Not for MultiPV or ``searchmoves``, which ask about other moves too, nor in
        # the last moments on the clock.
        covered = False
        budget = self.driver.deadline.budget
        if (
            moves
            and multipv == 1
            and limits.searchmoves is None
            and (budget is None or budget.hard_ms >= _TB_ROOT_MIN_MS)
            and self.tb_pieces() <= probing.limit
        ):
            keep = tablebase.tb_root_moves(probing.rule50)
            if keep:
                self.tbhits += len(moves)
                moves = [m for m in moves if m in keep]
                covered = True
        if not self.proof and not covered:  # a tablebase win is no proof of a mate
            self.tb_limit = probing.limit
            self.tb_depth = probing.depth
            self.tb_draw = 1 if probing.rule50 else 0  # wdl ±1: drawn under the rule
            self.tb_wdl = tablebase.tb_wdl
        return moves

    def begin_iteration(self, depth: int) -> None:
        self.ext_limit = 2 * depth if self.cfg.check_extension else 0
        self.se_limit = 2 * depth
        self.events_before = self.events

    def end_iteration(self, depth: int, lines: list[Line]) -> Iteration:
        """Store the root's result; no horizon event means the position is solved."""
        self.tt.store(self.root_key, lines[0].moves[0], lines[0].score, depth, EXACT)
        return Iteration(exhausted=self.events == self.events_before)

    def counters(self) -> Counters:
        return Counters(
            self.nodes,
            self.seldepth,
            self.tt.hashfull(),
            self.cutoffs,
            self.first_cutoffs,
            self.tbhits,
        )

    def ponder(self, best: Any) -> str | None:
        return self.searcher._ponder_from_tt(self.game, best)

    # ----------------------------------------------------------------------------------
    # The root

    def search_root(self, depth: int, alpha: int, beta: int, moves: list[Any], k: int) -> Line:
        """PVS over the root moves; a move beating alpha with a full window is kept (and
        handed to the driver if the search stops before this returns)."""
        best = -INF
        line: tuple[Any, ...] = _NO_PV
        root = self.stack[0]
        try:
            for i, move in enumerate(moves):
                if self.clock() - self.start >= _CURRMOVE_REPORT_S:
                    self.on_info(
                        SearchInfo(
                            depth=depth,
                            currmove=self.game.format_move(move),
                            currmovenumber=i + 1,
                            multipv=k + 1,
                        )
                    )
                check = self.pos.push_check(move)
                root.current_move = move
                if i == 0:
                    s = -self.negamax(depth - 1, -beta, -alpha, 1, True, True, check)
                else:
                    s = -self.negamax(depth - 1, -alpha - 1, -alpha, 1, False, True, check)
                    if s > alpha:
                        s = -self.negamax(depth - 1, -beta, -alpha, 1, True, True, check)
                self.pos.pop()
                if s > best:
                    best = s
                    if s > alpha:
                        line = (move, *self.stack[1].pv)
                        if s >= beta:
                            break
                        alpha = s
        except SearchStopped as stop:
            # Once a move beat alpha, ``best`` is its score (see the loop).
            stop.improvement = Line(best, line) if line else None
            raise
        return Line(best, line)

    # ----------------------------------------------------------------------------------
    # Quiescence

    def qsearch(self, alpha: i64, beta: i64, ply: i64, in_check: bool) -> i64:
        """Resolve noisy moves so the static evaluation is taken in a quiet position (all
        evasions in check)."""
        # Step 1. Initialize node.  This ply's PV is reset on entry, before any return and
        # whatever the window: a PV parent appends it to its move (also after a null-window
        # child, once its alpha has risen to beta - 1), and a line left there by an earlier
        # branch is not playable after that move.
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self.next_poll = self.stop.check(self.nodes, ply)
        ss = self.stack[ply]
        ss.pv = _NO_PV
        pv_node = beta - alpha > 1

        # Step 2. Check for an immediate draw (the game's end) or maximum ply reached.
        if self.pos.is_terminal():
            return outcome_score(self.pos.terminal_value(), ply)
        if ply > self.seldepth:  # noqa: PLR1730 - hot path: cheaper than a max() call
            self.seldepth = ply
        if ply >= _PLY_CAP:
            self.events += 1
            return self.pos.evaluate()
        events_at_entry = self.events

        # Step 3. Transposition table lookup.
        key = self.pos.folded_key()  # once, native: lookup and store take it so
        entry = self.tt.lookup_folded(key)
        ev: i64 = NO_EVAL
        tt_score = 0
        tt_bound = 0
        if entry:
            tt_score = from_tt(entry_score(entry), ply)
            tt_bound = entry_bound(entry)
            if self.use_tt_cut and not pv_node and _bound_cuts(tt_bound, tt_score, alpha, beta):
                if entry_depth(entry) != EXHAUSTIVE:
                    self.events += 1
                return tt_score
            ev = entry_eval(entry)
        alpha0 = alpha

        # Step 4. Static evaluation of the position (stand pat); in check, no stand pat:
        # every evasion is searched, and none means mate.
        use_see = self.use_see
        if in_check:
            moves = self.pos.legal_moves()
            if not moves:
                return outcome_score(self.pos.terminal_value(), ply)
            best = mated_in(ply)
        else:
            self.events += 1
            if ev == NO_EVAL:
                ev = self.pos.evaluate()
            best = ev
            if self.use_qs_tt_eval and entry and _table_knows_better(tt_score, tt_bound, ev):
                best = tt_score  # a searched score knows the tactics the static one does not
            if best >= beta:
                return best
            if best > alpha:
                alpha = best
            elif use_see and best + self.pos.max_gain() + _DELTA_MARGIN <= alpha:
                return best  # not even the best capture here could reach alpha
            moves = self.pos.noisy_moves()

        # Step 5. Loop through the moves.
        best_move = None
        delta_pruning = use_see and not in_check
        stand_pat = best  # a native int: ``int | None`` would box it
        for move in moves:
            # Step 6. Pruning: captures that lose material, or win too little to reach alpha
            # (delta pruning), are skipped.
            if delta_pruning:
                need = alpha - stand_pat - _DELTA_MARGIN + 1
                if not self.pos.see_ge(move, max(need, 0)):
                    self.events += 1
                    continue

            # Step 7. Make and search the move.
            s = -self.qsearch(-beta, -alpha, ply + 1, self.pos.push_check(move))
            self.pos.pop()

            # Step 8. Check for a new best move.
            if s > best:
                best = s
                if s > alpha:
                    best_move = move
                    if pv_node:
                        ss.pv = (move, *self.stack[ply + 1].pv)
                    if s >= beta:
                        break
                    alpha = s

        # Step 9. Save the result (mate scores made node-relative).
        self.tt.store_folded(
            key,
            best_move,
            to_tt(best, ply),
            EXHAUSTIVE if self.events == events_at_entry else 0,
            LOWER if best >= beta else (EXACT if best > alpha0 else UPPER),
            ev,
        )
        return best

    # ----------------------------------------------------------------------------------
    # The main search

    def negamax(  # noqa: PLR0917 - the steps, positional: hot path
        self,
        depth: i64,
        alpha: i64,
        beta: i64,
        ply: i64,
        pv_node: bool,
        null_ok: bool,
        in_check: bool,
    ) -> i64:
        """Fail-soft PVS node; ``in_check`` is computed by the parent after its push."""
        # Step 1. Initialize node: count it, poll, reset this ply's PV (and the tablebase
        # bounds a PV node's result is kept within).
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self.next_poll = self.stop.check(self.nodes, ply)
        ss = self.stack[ply]
        if pv_node:
            ss.pv = _NO_PV
        excluded = ss.excluded  # a singular extension search of the parent node (Step 15)
        tb_lo = -INF
        tb_hi = INF

        # Step 2. Check for the game's end (by rule or line; never checked at the root).
        if self.pos.is_terminal():
            return outcome_score(self.pos.terminal_value(), ply)

        # Step 3. Mate distance pruning: no line from here beats a mate already in hand.
        lo = mated_in(ply)
        if alpha < lo:
            alpha = lo
            if lo >= beta:
                return lo
        hi = mate_in(ply + 1)
        if beta > hi:
            beta = hi
            if alpha >= hi:
                return alpha

        # Check extension (a node in check searches one ply deeper; Stockfish extends per
        # move in its Step 15), then the horizon: quiescence.
        if in_check and ply < self.ext_limit and excluded is None:
            depth += 1
        if depth <= 0:
            if self.use_qs:
                return self.qsearch(alpha, beta, ply, in_check)
            self.events += 1
            return self.pos.evaluate()
        if ply >= _PLY_CAP:
            self.events += 1
            return self.pos.evaluate()
        if ply > self.seldepth:  # noqa: PLR1730 - hot path: cheaper than a max() call
            self.seldepth = ply
        events_at_entry = self.events

        # Step 4. Transposition table lookup; a singular extension search reads only the
        # static evaluation: the entry is the full node's (and it stores nothing, below).
        key = self.pos.folded_key()  # once, native: lookup and store take it so
        entry = self.tt.lookup_folded(key)
        tt_move = None
        tt_score = 0
        tt_depth = 0
        tt_bound = 0
        ev: i64 = NO_EVAL
        if excluded is not None:
            tt_move = excluded  # first in the order, so that search_moves skips it
            if entry:
                ev = entry_eval(entry)
        elif entry:
            tt_move = self.tt.entry_move(entry)
            tt_score = from_tt(entry_score(entry), ply)
            tt_depth = entry_depth(entry)
            tt_bound = entry_bound(entry)
            ev = entry_eval(entry)
            if (
                self.use_tt_cut
                and not pv_node
                and tt_depth >= depth
                and _bound_cuts(tt_bound, tt_score, alpha, beta)
            ):
                if tt_depth != EXHAUSTIVE:
                    self.events += 1
                return tt_score

        # Step 5. Tablebases probe: a position just reached by a capture or pawn move, within
        # the probe limit, takes the tables' result when its bound settles the node; a PV node
        # searches on, its result kept within the bound (so mates are still found).  A lost
        # position in check is searched too: it may be mate, which WDL does not say.
        if (
            self.tb_limit
            and excluded is None
            and (depth >= self.tb_depth or self.tb_pieces() < self.tb_limit)
        ):
            wdl = self.tb_wdl()
            if wdl is not None and not (in_check and wdl < 0):
                self.tbhits += 1
                self.events += 1
                if wdl > self.tb_draw:
                    tb_value, tb_bound = TB_WIN - ply, LOWER
                elif wdl < -self.tb_draw:
                    tb_value, tb_bound = ply - TB_WIN, UPPER
                else:
                    tb_value, tb_bound = DRAW, EXACT
                if _bound_cuts(tb_bound, tb_value, alpha, beta):
                    self.tt.store_folded(
                        key, None, to_tt(tb_value, ply), depth + _TB_DRAFT, tb_bound, ev
                    )
                    return tb_value
                if pv_node:
                    if tb_bound == LOWER:
                        tb_lo = tb_value
                    else:
                        tb_hi = tb_value

        # Step 10. Internal iterative reductions: no TT move, probably a new area (before the
        # static pruning here, unlike Stockfish: docs/search.md).
        if tt_move is None and depth >= _IIR_DEPTH:
            depth -= 1

        # Step 6. Static evaluation of the position, and whether it rose since this side's
        # previous move ("improving"); the pruning below trusts the stored search result
        # instead where its bound lies beyond the static evaluation.
        futile = False
        improving = False
        if self.use_improving:
            if in_check:
                ss.static_eval = NO_EVAL
            else:
                if ev == NO_EVAL:
                    ev = self.pos.evaluate()
                ss.static_eval = ev
                before: i64 = NO_EVAL
                if ply >= 2:
                    before = self.stack[ply - 2].static_eval
                improving = before == NO_EVAL or ev > before
        if not pv_node and not in_check:
            if ev == NO_EVAL:
                ev = self.pos.evaluate()
            judged = ev
            if self.use_tt_eval and entry and _table_knows_better(tt_score, tt_bound, ev):
                judged = tt_score
            if self.use_fut and -MATE_BOUND < beta < MATE_BOUND:
                # Step 7. Razoring: so far below alpha that only a capture could help; if
                # quiescence confirms it, the node's quiet moves are not generated.
                if (
                    self.use_razor
                    and self.use_qs
                    and depth < len(_RAZOR_MARGINS)
                    and judged + _RAZOR_MARGINS[depth] <= alpha
                ):
                    v = self.qsearch(alpha, alpha + 1, ply, False)
                    if v <= alpha:
                        self.events += 1
                        return v
                # Step 8. Futility pruning: child node (reverse futility): so far above beta
                # that the node fails high; below alpha, its quiet moves are futile (Step 14).
                if (
                    depth <= _RFP_DEPTH
                    and judged - _RFP_MARGIN * depth + (_RFP_MARGIN // 2 if improving else 0)
                    >= beta
                ):
                    self.events += 1
                    return judged
                if depth < len(_FUT_MARGINS) and judged + _FUT_MARGINS[depth] <= alpha:
                    futile = True
            # Step 9. Null move search.
            if (
                self.use_null
                and null_ok
                and depth >= _NULL_MIN_DEPTH
                and judged >= beta
                and beta < MATE_BOUND
                and self.pos.can_null_move()
            ):
                v = self.null_move_search(depth, beta, ply, judged)
                if v != _NONE:
                    return v
            # Step 11. ProbCut, unless the table already knows from a search nearly as deep
            # that nothing reaches that far.
            if (
                self.use_probcut
                and excluded is None
                and depth >= _PROBCUT_DEPTH
                and -MATE_BOUND < beta < MATE_BOUND - _PROBCUT_MARGIN
                and not (entry and tt_depth >= depth - 3 and tt_score < beta + _PROBCUT_MARGIN)
            ):
                v = self.probcut(depth, beta, ply, judged, key, ev)
                if v != _NONE:
                    return v

        # Step 15. Extensions: the table's move singular (searched deeper), or another move
        # beating beta too (multi-cut), found before the loop since only that move is asked
        # about.  The check extension is the node's own, above.
        tt_ext = 0
        if self.use_singular and excluded is None:
            ss.double_extensions = self.stack[ply - 1].double_extensions
            if (
                depth >= _SE_DEPTH
                and tt_move is not None
                and tt_bound & LOWER
                and tt_depth >= depth - _SE_TT_DEPTH
                and -TB_BOUND < tt_score < TB_BOUND
                and ply < self.se_limit
            ):
                events = self.events
                tt_ext = self.singular_extension(
                    depth, beta, ply, pv_node, in_check, tt_move, tt_score
                )
                if tt_ext == _NONE:
                    self.events += 1
                    return tt_score - _SE_MARGIN * depth
                # The verification search only chose the TT move's depth: its horizon does not
                # make this node's result inexact (the move loop's own searches say that).
                self.events = events
                if tt_ext == 2:
                    ss.double_extensions += 1

        # Steps 13-20: the moves.
        best, best_move = self.search_moves(
            depth,
            alpha,
            beta,
            ply,
            pv_node,
            in_check,
            tt_move,
            futile,
            improving,
            tt_ext,
            excluded is not None,
        )

        # Step 21. Check for mate and stalemate (a singular extension search without another
        # move: the table's move is singular).
        if best == _NONE:
            if excluded is not None:
                return alpha
            return outcome_score(self.pos.terminal_value(), ply)
        if excluded is not None:
            return best

        # Save the result (mate and tablebase scores made node-relative).
        if pv_node:
            if best < tb_lo:
                best = tb_lo
            elif best > tb_hi:
                best = tb_hi
        draft = depth  # not ``a if c else b``, which boxes an i64 (docs/search.md)
        if self.events == events_at_entry:
            draft = EXHAUSTIVE
        self.tt.store_folded(
            key,
            best_move,
            to_tt(best, ply),
            draft,
            LOWER if best >= beta else (EXACT if best > alpha else UPPER),
            ev,
        )
        return best

    def null_move_search(self, depth: int, beta: int, ply: int, judged: int) -> int:
        """Step 9: pass, and search the reply ``3 + depth // 3`` plies shallower (up to two
        more the further the evaluation stands above beta); the node's value if the pass
        still beats beta (a mate is not proven by a pass: beta), else :data:`_NONE`."""
        self.pos.push_null()
        self.stack[ply].current_move = None
        gain = (judged - beta) // _NULL_EVAL_DIV
        s = -self.negamax(
            depth - _NULL_BASE_R - depth // 3 - (gain if gain < 2 else 2),
            -beta,
            1 - beta,
            ply + 1,
            False,
            False,
            self.pos.in_check(),
        )
        self.pos.pop()
        if s >= beta:
            self.events += 1
            return beta if s >= MATE_BOUND else s
        return _NONE

    def singular_extension(  # noqa: PLR0917 - called from one place
        self,
        depth: int,
        beta: int,
        ply: int,
        pv_node: bool,
        in_check: bool,
        tt_move: Any,
        tt_score: int,
    ) -> int:
        """Step 15: search the node without ``tt_move`` to half the depth against
        ``tt_score - 2·depth``.  The extension of ``tt_move``: 1 if nothing else comes near
        it (2 when far below, within the line's limit), -1 if it is not singular but its score
        beats beta; :data:`_NONE` when the other moves beat beta too (multi-cut)."""
        singular_beta = tt_score - _SE_MARGIN * depth
        ss = self.stack[ply]
        ss.excluded = tt_move
        try:
            v = self.negamax(
                (depth - 1) // 2, singular_beta - 1, singular_beta, ply, False, False, in_check
            )
        finally:
            ss.excluded = None
        if v < singular_beta:
            if (
                not pv_node
                and v < singular_beta - _SE_DOUBLE_MARGIN
                and ss.double_extensions < _SE_DOUBLE_LIMIT
            ):
                return 2
            return 1
        if singular_beta >= beta:
            return _NONE
        if tt_score >= beta:
            return -1
        return 0

    def probcut(  # noqa: PLR0917 - called from one place
        self, depth: int, beta: int, ply: int, judged: int, key: i64, ev: int
    ) -> int:
        """Step 11: a capture that wins enough at a shallow depth (first by quiescence, then
        by a search four plies shallower) cuts the node: its value, else :data:`_NONE`."""
        probcut_beta = beta + _PROBCUT_MARGIN
        ss = self.stack[ply]
        for move in self.pos.noisy_moves():
            if not self.pos.see_ge(move, probcut_beta - judged):
                continue
            check = self.pos.push_check(move)
            ss.current_move = move
            s = -self.qsearch(-probcut_beta, 1 - probcut_beta, ply + 1, check)
            if s >= probcut_beta:
                s = -self.negamax(
                    depth - 4, -probcut_beta, 1 - probcut_beta, ply + 1, False, True, check
                )
            self.pos.pop()
            if s >= probcut_beta:
                self.events += 1
                if s < MATE_BOUND:
                    self.tt.store_folded(key, move, to_tt(s, ply), depth - 3, LOWER, ev)
                return s
        return _NONE

    def search_moves(  # noqa: PLR0917 - hot path
        self,
        depth: i64,
        alpha: i64,
        beta: i64,
        ply: i64,
        pv_node: bool,
        in_check: bool,
        tt_move: Any,
        futile: bool,
        improving: bool,
        tt_ext: i64,
        excluded: bool,
    ) -> tuple[i64, Any]:
        """Steps 13-20 of :meth:`negamax`: the moves in staged order; the best score and
        move (the score :data:`_NONE` when there is no legal move).  ``tt_move`` is searched
        ``tt_ext`` plies deeper (Step 15), or not at all when ``excluded``."""
        # Step 13. Loop through the moves, in staged order.
        ss = self.stack[ply]
        # Native words: compiled, every tagged int copied, added or negated is checked for
        # a boxed long (scores stay far inside 64 bits).
        best: i64 = -INF
        best_move = None
        searched: i64 = 0
        legal: i64 = 0
        tried = ss.tried
        n_tried: i64 = 0
        hist = self.hist_tables[self.root_side ^ (ply & 1)]
        counters_here = self.counter_tables[self.root_side ^ (ply & 1)]
        previous = self.stack[ply - 1].current_move if self.use_counter and ply else None
        new_depth: i64 = depth - 1
        lmp_counts = self.lmp_counts
        shallow = not pv_node and not in_check and depth < len(lmp_counts)
        move_count: i64 = 0
        if shallow:
            move_count = lmp_counts[depth]
            if improving:
                move_count += depth
        picker = ss.picker
        picker.start(
            tt_move,
            ss.killer1,
            ss.killer2,
            None if previous is None else counters_here.get(previous),
            hist,
        )
        while (move := picker.next_move()) is not None:
            stage = picker.stage
            if stage == STAGE_TT and excluded:
                continue
            legal += 1
            # Step 14. Pruning at shallow depth: futile and late quiet moves (move count
            # pruning), and losing captures near the horizon; a move that gives check is
            # searched anyway (a quiet mate must not hide behind the move count).
            prunable = False
            if shallow and searched and best > -MATE_BOUND:
                if stage == STAGE_QUIET:
                    prunable = futile or legal > move_count
                elif stage == STAGE_LOSING:
                    # Negated after the product: compiled, a tagged product with a
                    # negative operand takes mypyc's slow path through Python longs.
                    prunable = not self.pos.see_ge(move, -(_SEE_CAPTURE_MARGIN * depth))
            if prunable and not self.pos.gives_check(move):
                self.events += 1
                continue

            # Step 16. Make the move.
            check = self.pos.push_check(move)
            ss.current_move = move
            s: i64
            if not searched:
                d = new_depth + tt_ext if stage == STAGE_TT else new_depth
                s = -self.negamax(d, -beta, -alpha, ply + 1, pv_node, True, check)
            else:
                # Step 17. Late moves reduction: quiet moves late in the order, out of check.
                r: i64 = 0
                if (
                    self.use_lmr
                    and stage == STAGE_QUIET
                    and depth >= _LMR_MIN_DEPTH
                    and searched >= _LMR_MIN_MOVES
                    and not in_check
                    and not check
                ):
                    r = reduction(depth, searched)
                    if pv_node and r:
                        r -= 1
                    if self.use_improving and not improving:
                        r += 1
                    if self.use_history_lmr and r:
                        h = hist.score(self.pos, move)
                        if h > 0:
                            r -= 1
                        elif h < 0:
                            r += 1
                    if r >= new_depth:
                        r = new_depth - 1
                s = -self.negamax(new_depth - r, -alpha - 1, -alpha, ply + 1, False, True, check)

                # Step 18. Full-depth search when the reduced one beat alpha; a PV node
                # searches a move beating alpha again with the full window (fail highs too:
                # the PV, and mates cut by mate distance pruning, must come from a PV child).
                if r > 0 and s > alpha:
                    s = -self.negamax(new_depth, -alpha - 1, -alpha, ply + 1, False, True, check)
                if pv_node and s > alpha:
                    s = -self.negamax(new_depth, -beta, -alpha, ply + 1, True, True, check)

            # Step 19. Undo move.
            self.pos.pop()
            searched += 1

            # Step 20. Check for a new best move.
            if s > best:
                best = s
                if s > alpha:
                    best_move = move
                    if pv_node:
                        # Also on a fail high: mate distance pruning lowers beta to the best
                        # mate possible, and that mate's line is the PV.
                        ss.pv = (move, *self.stack[ply + 1].pv)
                    if s >= beta:
                        self.cutoffs += 1
                        if searched == 1:
                            self.first_cutoffs += 1
                        if STAGE_KILLER <= stage <= STAGE_QUIET or (
                            stage == STAGE_TT and not self.pos.is_noisy(move)
                        ):
                            self.update_quiet_stats(ply, move, depth, n_tried, previous)
                        break
                    alpha = s
            if STAGE_KILLER <= stage <= STAGE_QUIET:
                if n_tried < len(tried):
                    tried[n_tried] = move
                else:
                    tried.append(move)
                n_tried += 1
        if not legal:
            best = _NONE
        return best, best_move

    def update_quiet_stats(
        self, ply: int, move: Any, depth: int, n_tried: i64, previous: Any
    ) -> None:
        """A quiet move refuted the node: it becomes the ply's first killer and the counter
        move to ``previous``, its history rises by depth², the ``n_tried`` quiets tried
        before it (the first of the ply's ``Stack.tried``) fall by as much (gravity:
        :meth:`~engine.ordering.History.update`)."""
        ss = self.stack[ply]
        side = self.root_side ^ (ply & 1)
        hist = self.hist_tables[side]
        pos = self.pos
        killer = ss.killer1
        if killer is not move and (self.interned or killer != move):
            ss.killer2 = killer
            ss.killer1 = move
        if previous is not None:
            self.counter_tables[side][previous] = move
        bonus: i64 = depth * depth if depth < 64 else 4096
        hist.update(pos, move, bonus)
        tried = ss.tried
        i: i64
        for i in range(n_tried):
            hist.update(pos, tried[i], -bonus)
