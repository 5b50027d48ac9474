"""The production search: negamax alpha-beta node functions over any :class:`Game`.

Shape (DESIGN.md, engine/): iterative deepening with aspiration windows around the previous
score (the shared :class:`~engine.driver.Driver`); principal variation search (a full window
for the first move, null windows for the rest, re-searched when they fail high); a bounded
transposition table with distance-adjusted mate scores; quiescence over the game's noisy moves
with stand-pat (all evasions when in check); mate-distance pruning; check extension; internal
iterative reduction; null-move pruning; ProbCut (a winning capture whose shallow search beats
beta by a margin cuts the node); late-move reductions; reverse futility, futility and
late-move (move-count) pruning near the horizon, sparing moves that give check, and judged
by the transposition table's score where its bound says the static evaluation errs; killers and
history feeding the staged move ordering of :mod:`engine.ordering`.  Games with captures may
offer a static exchange test (:class:`~engine.game.StaticExchange`): then quiescence skips
captures that lose material or cannot lift stand-pat to alpha (delta pruning), losing captures
are ordered after the quiet moves, and near the horizon those losing too much are not searched.
A game's :class:`~engine.game.CheckTest` lets the pruning spare checks without playing each
move.  A game with endgame tables in use (:class:`~engine.game.Tablebase`) restricts the root
to the moves that keep the tables' result, and decides nodes just reached by a capture or pawn
move within its probe limit by a WDL probe: a win scores ``TB_WIN - ply``, below every mate.
A ``go mate N`` search is a proof search: null move, reductions and all the pruning above
are off for it (they hide quiet mating moves behind sacrifices), so the shortest mate is found
at depth ``2N - 1``; it probes no tables inside the tree (a tablebase win proves no mate).

Why closures: the node functions are created per ``search()`` as closures over locals, so the
hot path reads cells and locals instead of instance attributes, and the game's bound methods
are looked up once per search instead of once per node.

What is here and what is not: this module holds what makes the production search fast and
strong, the node functions (``qsearch``, ``negamax``, the root's PVS) with the table and the
move-ordering memory they share.  Everything around them (root moves and ``searchmoves``,
MultiPV, aspiration windows, soft and hard time, the reports and the result) is the
:class:`~engine.driver.Driver`, the same one every classic algorithm runs under, so a match
between algorithms compares their trees and nothing else.

Stopping: every node counts itself and every 64 to 1,024 nodes (adapted to about 5 ms) polls
the stop event, the node limit (hit exactly) and the hard limit of the search's
:class:`~engine.timeman.Deadline`; the driver checks the soft limit between iterations.  A
stop raises :class:`~engine.driver.SearchStopped` at a node's entry, where the game holds
exactly ``ply`` pushed moves; the driver pops them, so the game is restored without a ``try``
per node.

Exhaustion: a counter of "horizon events" (static evaluations, heuristic prunings, cut-offs on
entries that were not themselves exhaustive) tells whether a subtree was searched to the end
of the game everywhere.  Such results are stored with the draft
:data:`~engine.tt.EXHAUSTIVE` (valid at any depth), and an iteration without events has
solved the position: deeper iterations could not change it, so the search returns (a solved
tic-tac-toe position does not spin until ``stop``).

Determinism: nothing in the tree walk depends on the clock, so a fresh :class:`Searcher`
searching the same position to the same depth visits the same nodes (the ``bench`` signature).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields
from typing import Any, Final

from engine.control import SearchControl
from engine.driver import Counters, Driver, Iteration, Line, Root, SearchStopped
from engine.game import CheckTest, Game, InternedMoves, MoveCodec, StaticExchange, Tablebase
from engine.info import InfoCallback, SearchInfo, SearchResult, ignore_info
from engine.limits import Limits
from engine.ordering import (
    STAGE_KILLER,
    STAGE_LOSING,
    STAGE_QUIET,
    STAGE_TT,
    History,
    ordered_moves,
    staged_moves,
)
from engine.score import DRAW, INF, MATE, MATE_BOUND, MAX_PLY, TB_BOUND, TB_WIN
from engine.tt import (
    EXACT,
    EXHAUSTIVE,
    LOWER,
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

_POLL_MIN: Final = 64
_POLL_MAX: Final = 1024
_POLL_GAP_S: Final = 0.005
"""The poll interval adapts so that stop/deadline checks happen about every 5 ms."""

_RFP_DEPTH: Final = 3
_RFP_MARGIN: Final = 120
_PROBCUT_DEPTH: Final = 5
_PROBCUT_MARGIN: Final = 150
"""ProbCut: at a non-PV node of this depth or more, a capture whose shallow search (depth - 4)
beats beta by this margin cuts the node."""
_FUT_MARGINS: Final = (0, 150, 300)
_RAZOR_MARGINS: Final = (0, 300, 500)
_LMP_COUNTS: Final = (0, 5, 8, 13)
"""Late-move pruning: at a non-PV node of depth d (index), quiet moves past this many tried
moves are not searched at all (they are the history's worst guesses)."""
_DELTA_MARGIN: Final = 200
"""Quiescence skips a capture unless its exchange could lift stand-pat to within this of alpha."""
_SEE_CAPTURE_MARGIN: Final = 100
"""Where late-move pruning applies, a capture losing more than this per ply of depth is not
searched either."""
_NULL_MIN_DEPTH: Final = 3
_IIR_DEPTH: Final = 4
_LMR_MIN_DEPTH: Final = 3
_LMR_MIN_MOVES: Final = 3
_HIST_MAX: Final = 16384
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


def _keeps_material(_move: Any, _threshold: int) -> bool:
    """The stand-in exchange test of a game without :class:`~engine.game.StaticExchange`."""
    return True


def _check_by_playing(game: Game[Any]) -> Callable[[Any], bool]:
    """``gives_check`` for a game without :class:`~engine.game.CheckTest`: play and look."""
    push, pop, in_check = game.push, game.pop, game.in_check

    def gives_check(move: Any) -> bool:
        push(move)
        check = in_check()
        pop()
        return check

    return gives_check


def _no_gain() -> int:
    """Never called: ``max_gain`` is used only together with a game's ``see_ge``."""
    return INF


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
    improving: bool = False
    """Whether the static evaluation rose since this side's previous move steers the pruning:
    reduce and prune more where it fell (the position is getting worse; cut-offs are less
    likely), less where it rose."""
    razoring: bool = False
    """At depth 1-2 of a non-PV node whose evaluation lies 300/500 cp below alpha, return
    quiescence's value if it confirms the node fails low."""
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
    "pvs-countermove": SearchConfig(counter_moves=True),
    "pvs-improving": SearchConfig(improving=True),
    "pvs-fallingtime": SearchConfig(falling_eval_time=True),
    "pvs-razoring": SearchConfig(razoring=True),
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
        self._history: tuple[History, History] = (Counter(), Counter())
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
        self._history = (Counter(), Counter())
        self._counter_moves = ({}, {})

    def _age_history(self) -> None:
        """Halve the history scores so old games' statistics fade instead of dominating."""
        for table in self._history:
            for move, value in list(table.items()):
                halved = value // 2
                if halved:
                    table[move] = halved
                else:
                    del table[move]

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

        The node functions are built here as closures; :class:`~engine.driver.Driver` does
        the iterative deepening around them, as it does for every searcher.
        """
        # Step 1. Set up the per-search state; the driver starts the clock.
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
        clock = self._clock
        start = driver.start
        control = driver.control
        self.adopt_variant(game)
        tt = self.tt
        if age_table:
            tt.new_search()
        self._age_history()
        hist_tables = self._history
        root_side = game.side & 1
        killers: list[list[Any]] = [[None, None] for _ in range(MAX_PLY + 2)]
        counter_tables = self._counter_moves
        # The move played at each ply of the current line (``None`` for a null move), and
        # the static evaluation there (``None`` in check): for counter moves and "improving".
        line_moves: list[Any] = [None] * (MAX_PLY + 2)
        static_evals: list[int | None] = [None] * (MAX_PLY + 2)
        pv_lines: list[tuple[Any, ...]] = [_NO_PV] * (MAX_PLY + 2)

        # Step 2. Root moves: legal ones in staged order (the driver applies ``searchmoves``).
        root_key = game.key()
        root_entry = tt.probe(root_key)
        legal_root = game.noisy_moves() + game.quiet_moves()
        root_tt_move = None
        if root_entry is not None and root_entry.move in legal_root:
            root_tt_move = root_entry.move
        root_moves = (
            ordered_moves(game, root_tt_move, history=hist_tables[root_side]) if legal_root else []
        )

        # Step 3. Limits, as the driver derived them from ``go``: nodes, mate, the deadline.
        node_limit = driver.node_limit
        deadline = driver.deadline
        timed = deadline.timed
        hard_reached = deadline.hard_reached

        # Step 4. Counters shared with the node functions.
        nodes = 0
        events = 0
        events_before = 0
        seldepth = 0
        cutoffs = 0
        first_cutoffs = 0
        tbhits = 0
        ext_limit = 2
        poll_every = _POLL_MIN
        next_poll = poll_every if node_limit is None else min(poll_every, node_limit)
        last_poll = start

        def poll(ply: int) -> None:
            """Every few hundred nodes: adapt the interval, then stop, node limit, deadline."""
            nonlocal next_poll, poll_every, last_poll
            now = clock()
            gap = now - last_poll
            last_poll = now
            if gap > 2 * _POLL_GAP_S and poll_every > _POLL_MIN:
                poll_every >>= 1
            elif gap < _POLL_GAP_S / 2 and poll_every < _POLL_MAX:
                poll_every <<= 1
            next_poll = nodes + poll_every
            if on_nodes is not None:
                on_nodes(nodes)
            if node_limit is not None:
                if nodes >= node_limit:
                    raise SearchStopped(ply)
                next_poll = min(next_poll, node_limit)
            if control.stopped:
                raise SearchStopped(ply)
            if timed and hard_reached(now):
                raise SearchStopped(ply)

        # Step 5. Bound methods, switches and capabilities as closure cells: no attribute
        # lookups (and no capability tests) per node.
        push = game.push
        pop = game.pop
        push_null = game.push_null
        can_null = game.can_null_move
        in_check_fn = game.in_check
        is_terminal = game.is_terminal
        terminal_value = game.terminal_value
        key_fn = game.key
        evaluate = game.evaluate
        legal_moves = game.legal_moves
        noisy_moves = game.noisy_moves
        is_noisy = game.is_noisy
        store = tt.store
        use_qs = cfg.quiescence
        use_tt_cut = cfg.tt_cutoffs
        # ``go mate N`` asks for a proof of the shortest mate: the heuristics that hide quiet
        # mating moves behind a sacrifice (null move, reductions, futility) are left out.
        proof = driver.mate_limit is not None
        use_null = cfg.null_move and not proof
        use_lmr = cfg.lmr and not proof
        use_fut = cfg.futility and not proof
        use_razor = cfg.razoring
        use_history_lmr = cfg.history_lmr
        use_qs_tt_eval = cfg.qsearch_tt_eval
        # The optional capabilities, asked once per search (engine.game).
        exchange = game if isinstance(game, StaticExchange) else None
        interned = isinstance(game, InternedMoves) and game.moves_interned
        use_see = exchange is not None and cfg.exchange_pruning and not proof
        # ProbCut tries captures by their exchange and confirms them by quiescence.
        use_probcut = cfg.probcut and use_null and use_qs and use_see
        see_ge: Callable[[Any, int], bool] = _keeps_material
        max_gain: Callable[[], int] = _no_gain
        if exchange is not None and use_see:
            see_ge = exchange.see_ge
            max_gain = exchange.max_gain
        lmp_counts = _LMP_COUNTS if use_fut else ()
        gives_check: Callable[[Any], bool] = (
            game.gives_check if isinstance(game, CheckTest) else _check_by_playing(game)
        )
        exchange_order = see_ge if use_see else None
        lmr_table = _LMR
        use_counter = cfg.counter_moves
        use_improving = cfg.improving and use_fut
        use_tt_eval = cfg.tt_eval
        fut_margins = _FUT_MARGINS
        # Endgame tablebases: without tables in use, ``tb_limit`` stays 0 and nothing changes.
        tablebase = game if isinstance(game, Tablebase) else None
        probing = None if tablebase is None else tablebase.tb_probing()
        tb_limit = 0
        tb_depth = 0
        tb_draw = 1
        tb_wdl: Callable[[], int | None] = _no_tables
        tb_pieces: Callable[[], int] = _no_pieces
        if tablebase is not None and probing is not None and probing.limit > 0:
            tb_pieces = tablebase.tb_pieces
            # Step 5a. A root the tables cover plays a move that keeps their result; the
            # search chooses among those without probing further (as Stockfish does), so it
            # still finds the mates.  Not for MultiPV or ``searchmoves``, which ask about
            # other moves too, nor in the last moments on the clock.
            covered = False
            budget = deadline.budget
            if (
                root_moves
                and multipv == 1
                and limits.searchmoves is None
                and (budget is None or budget.hard_ms >= _TB_ROOT_MIN_MS)
                and tb_pieces() <= probing.limit
            ):
                keep = tablebase.tb_root_moves(probing.rule50)
                if keep:
                    tbhits += len(root_moves)
                    root_moves = [m for m in root_moves if m in keep]
                    covered = True
            if not proof and not covered:  # a tablebase win is no proof of a mate
                tb_limit = probing.limit
                tb_depth = probing.depth
                tb_draw = 1 if probing.rule50 else 0  # wdl ±1: drawn under the rule
                tb_wdl = tablebase.tb_wdl

        # Step 6. The node functions: quiescence, and the PVS node (its own Steps N1-N9).
        def qsearch(alpha: int, beta: int, ply: int, in_check: bool) -> int:
            """Resolve noisy moves so the static evaluation is taken in a quiet position."""
            nonlocal nodes, events, seldepth
            nodes += 1
            if nodes >= next_poll:
                poll(ply)
            # This ply's line is reset on entry, before any return and whatever the window: a
            # PV parent appends it to its move (also after a null-window child, once its alpha
            # has risen to beta - 1), and a line left there by an earlier branch is not
            # playable after that move.
            pv_lines[ply] = _NO_PV
            pv_node = beta - alpha > 1
            if is_terminal():
                v = terminal_value()
                return MATE - ply if v > 0 else (ply - MATE if v < 0 else DRAW)
            if ply > seldepth:  # noqa: PLR1730 - hot path: cheaper than a max() call
                seldepth = ply
            if ply >= _PLY_CAP:
                events += 1
                return evaluate()
            events_at_entry = events
            key = key_fn()
            entry = tt.lookup(key)
            ev = None
            if entry:
                tt_score = entry_score(entry)
                if tt_score >= MATE_BOUND:
                    tt_score -= ply
                elif tt_score <= -MATE_BOUND:
                    tt_score += ply
                tt_bound = entry_bound(entry)
                if (
                    use_tt_cut
                    and not pv_node
                    and (
                        tt_bound == EXACT
                        or (tt_bound == LOWER and tt_score >= beta)
                        or (tt_bound == UPPER and tt_score <= alpha)
                    )
                ):
                    if entry_depth(entry) != EXHAUSTIVE:
                        events += 1
                    return tt_score
                ev = entry_eval(entry)
            alpha0 = alpha
            if in_check:
                # No stand-pat in check: every evasion is searched, none may mean mate.
                moves = legal_moves()
                if not moves:
                    v = terminal_value()
                    return MATE - ply if v > 0 else (ply - MATE if v < 0 else DRAW)
                best = ply - MATE
            else:
                events += 1
                if ev is None:
                    ev = evaluate()
                best = ev
                if use_qs_tt_eval and entry and _table_knows_better(tt_score, tt_bound, ev):
                    # A searched score knows the tactics the static one does not.
                    best = tt_score
                if best >= beta:
                    return best
                if best > alpha:
                    alpha = best
                elif use_see and best + max_gain() + _DELTA_MARGIN <= alpha:
                    return best  # not even the best capture here could reach alpha
                moves = noisy_moves()
            best_move = None
            # Captures that lose material, or win too little to reach alpha, are skipped.
            stand_pat = best if use_see and not in_check else None
            for move in moves:
                if stand_pat is not None:
                    need = alpha - stand_pat - _DELTA_MARGIN + 1
                    if not see_ge(move, need if need > 0 else 0):
                        events += 1
                        continue
                push(move)
                s = -qsearch(-beta, -alpha, ply + 1, in_check_fn())
                pop()
                if s > best:
                    best = s
                    if s > alpha:
                        best_move = move
                        if pv_node:
                            pv_lines[ply] = (move, *pv_lines[ply + 1])
                        if s >= beta:
                            break
                        alpha = s
            if best >= MATE_BOUND:
                stored = best + ply
            elif best <= -MATE_BOUND:
                stored = best - ply
            else:
                stored = best
            store(
                key,
                best_move,
                stored,
                EXHAUSTIVE if events == events_at_entry else 0,
                LOWER if best >= beta else (EXACT if best > alpha0 else UPPER),
                ev,
            )
            return best

        def negamax(  # noqa: PLR0917 - the hot recursive call stays positional
            depth: int,
            alpha: int,
            beta: int,
            ply: int,
            pv_node: bool,
            null_ok: bool,
            in_check: bool,
        ) -> int:
            """Fail-soft PVS node; ``in_check`` is computed by the parent after its push."""
            nonlocal nodes, events, seldepth, cutoffs, first_cutoffs, tbhits
            # Step N1. Count the node, poll, reset this ply's PV (and the tablebase bounds a
            # PV node's result is kept within).
            nodes += 1
            if nodes >= next_poll:
                poll(ply)
            if pv_node:
                pv_lines[ply] = _NO_PV
                tb_lo = -INF
                tb_hi = INF
            # Step N2. Game over by rule or line (never checked at the root).
            if is_terminal():
                v = terminal_value()
                return MATE - ply if v > 0 else (ply - MATE if v < 0 else DRAW)
            # Step N3. Mate-distance pruning: no line from here beats a mate already in hand.
            lo = ply - MATE
            if alpha < lo:
                alpha = lo
                if lo >= beta:
                    return lo
            hi = MATE - ply - 1
            if beta > hi:
                beta = hi
                if alpha >= hi:
                    return alpha
            # Step N4. Check extension, horizon.
            if in_check and ply < ext_limit:
                depth += 1
            if depth <= 0:
                if use_qs:
                    return qsearch(alpha, beta, ply, in_check)
                events += 1
                return evaluate()
            if ply >= _PLY_CAP:
                events += 1
                return evaluate()
            if ply > seldepth:  # noqa: PLR1730 - hot path: cheaper than a max() call
                seldepth = ply
            events_at_entry = events
            # Step N5. Transposition table.
            key = key_fn()
            entry = tt.lookup(key)
            if entry:
                tt_move = tt.entry_move(entry)
                tt_score = entry_score(entry)
                tt_depth = entry_depth(entry)
                tt_bound = entry_bound(entry)
                ev = entry_eval(entry)
                if tt_score >= MATE_BOUND:
                    tt_score -= ply
                elif tt_score <= -MATE_BOUND:
                    tt_score += ply
                if (
                    use_tt_cut
                    and not pv_node
                    and tt_depth >= depth
                    and (
                        tt_bound == EXACT
                        or (tt_bound == LOWER and tt_score >= beta)
                        or (tt_bound == UPPER and tt_score <= alpha)
                    )
                ):
                    if tt_depth != EXHAUSTIVE:
                        events += 1
                    return tt_score
            else:
                tt_move = None
                ev = None
            # Step N5a. Tablebases: a position just reached by a capture or pawn move, within
            # the probe limit, takes the tables' result when its bound settles the node; a PV
            # node searches on, its result kept within the bound (so mates are still found).
            # A lost position in check is searched too: it may be mate, which WDL does not say.
            if tb_limit and (depth >= tb_depth or tb_pieces() < tb_limit):
                wdl = tb_wdl()
                if wdl is not None and not (in_check and wdl < 0):
                    tbhits += 1
                    events += 1
                    if wdl > tb_draw:
                        tb_value, tb_bound = TB_WIN - ply, LOWER
                    elif wdl < -tb_draw:
                        tb_value, tb_bound = ply - TB_WIN, UPPER
                    else:
                        tb_value, tb_bound = DRAW, EXACT
                    if (
                        tb_bound == EXACT
                        or (tb_bound == LOWER and tb_value >= beta)
                        or (tb_bound == UPPER and tb_value <= alpha)
                    ):
                        store(key, None, tb_value, depth + _TB_DRAFT, tb_bound, ev)
                        return tb_value
                    if pv_node:
                        if tb_bound == LOWER:
                            tb_lo = tb_value
                        else:
                            tb_hi = tb_value
            # Step N5b. Internal iterative reduction: no TT move, probably a new area.
            if tt_move is None and depth >= _IIR_DEPTH:
                depth -= 1
            # Step N6. Static pruning at non-PV nodes out of check (the static evaluation is
            # also kept where "improving" is measured: it compares this ply with two before).
            futile = False
            improving = False
            if use_improving:
                if in_check:
                    static_evals[ply] = None
                else:
                    if ev is None:
                        ev = evaluate()
                    static_evals[ply] = ev
                    before = static_evals[ply - 2] if ply >= 2 else None
                    improving = before is None or ev > before
            if not pv_node and not in_check:
                if ev is None:
                    ev = evaluate()
                # The evaluation the pruning trusts: the stored search result where its bound
                # lies beyond the static evaluation (``ev`` itself is what the table keeps).
                judged = ev
                if use_tt_eval and entry and _table_knows_better(tt_score, tt_bound, ev):
                    judged = tt_score
                if use_fut and -MATE_BOUND < beta < MATE_BOUND:
                    if (
                        depth <= _RFP_DEPTH
                        and judged - _RFP_MARGIN * depth + (_RFP_MARGIN // 2 if improving else 0)
                        >= beta
                    ):
                        events += 1
                        return judged
                    if depth < len(fut_margins) and judged + fut_margins[depth] <= alpha:
                        futile = True
                        # Razoring: so far below alpha that only a capture could help; if
                        # quiescence confirms it, the node's quiet moves are not generated.
                        if use_razor and use_qs and judged + _RAZOR_MARGINS[depth] <= alpha:
                            v = qsearch(alpha, alpha + 1, ply, False)
                            if v <= alpha:
                                events += 1
                                return v
                if (
                    use_null
                    and null_ok
                    and depth >= _NULL_MIN_DEPTH
                    and judged >= beta
                    and beta < MATE_BOUND
                    and can_null()
                ):
                    push_null()
                    line_moves[ply] = None
                    gain = (judged - beta) // _NULL_EVAL_DIV
                    s = -negamax(
                        depth - _NULL_BASE_R - depth // 3 - (gain if gain < 2 else 2),
                        -beta,
                        1 - beta,
                        ply + 1,
                        False,
                        False,
                        in_check_fn(),
                    )
                    pop()
                    if s >= beta:
                        events += 1
                        return beta if s >= MATE_BOUND else s
                # ProbCut: a capture that wins enough at a shallow depth (first by quiescence,
                # then by a search four plies shallower) cuts the node, unless the table
                # already knows from a search nearly as deep that nothing reaches that far.
                if (
                    use_probcut
                    and depth >= _PROBCUT_DEPTH
                    and -MATE_BOUND < beta < MATE_BOUND - _PROBCUT_MARGIN
                    and not (entry and tt_depth >= depth - 3 and tt_score < beta + _PROBCUT_MARGIN)
                ):
                    probcut_beta = beta + _PROBCUT_MARGIN
                    for move in noisy_moves():
                        if not see_ge(move, probcut_beta - judged):
                            continue
                        push(move)
                        line_moves[ply] = move
                        check = in_check_fn()
                        s = -qsearch(-probcut_beta, 1 - probcut_beta, ply + 1, check)
                        if s >= probcut_beta:
                            s = -negamax(
                                depth - 4,
                                -probcut_beta,
                                1 - probcut_beta,
                                ply + 1,
                                False,
                                True,
                                check,
                            )
                        pop()
                        if s >= probcut_beta:
                            events += 1
                            if s < MATE_BOUND:
                                store(key, move, s, depth - 3, LOWER, ev)
                            return s
            # Step N7. The moves, in staged order.
            alpha0 = alpha
            best = -INF
            best_move = None
            searched = 0
            legal = 0
            tried: list[Any] | None = None
            kl = killers[ply]
            hist = hist_tables[root_side ^ (ply & 1)]
            counters_here = counter_tables[root_side ^ (ply & 1)]
            previous = line_moves[ply - 1] if use_counter and ply else None
            new_depth = depth - 1
            shallow = not pv_node and not in_check and depth < len(lmp_counts)
            move_count = lmp_counts[depth] + (depth if improving else 0) if shallow else 0
            for move, stage in staged_moves(
                game,
                tt_move,
                kl[0],
                kl[1],
                hist,
                exchange=exchange_order,
                counter=None if previous is None else counters_here.get(previous),
                interned=interned,
            ):
                legal += 1
                prunable = False
                if shallow and searched and best > -MATE_BOUND:
                    # Step N7a. Futility and late-move pruning of quiet moves, and losing
                    # captures near the horizon; a move that gives check is searched anyway
                    # (a quiet mate must not hide behind the move count).
                    if stage == STAGE_QUIET:
                        prunable = futile or legal > move_count
                    elif stage == STAGE_LOSING:
                        prunable = not see_ge(move, -_SEE_CAPTURE_MARGIN * depth)
                if prunable and not gives_check(move):
                    events += 1
                    continue
                push(move)
                line_moves[ply] = move
                check = in_check_fn()
                if not searched:
                    s = -negamax(new_depth, -beta, -alpha, ply + 1, pv_node, True, check)
                else:
                    r = 0
                    if (
                        use_lmr
                        and stage == STAGE_QUIET
                        and depth >= _LMR_MIN_DEPTH
                        and searched >= _LMR_MIN_MOVES
                        and not in_check
                        and not check
                    ):
                        r = lmr_table[min(depth, 63)][min(searched, 63)]
                        if pv_node and r:
                            r -= 1
                        if use_improving and not improving:
                            r += 1
                        if use_history_lmr and r:
                            h = hist.get(move, 0)
                            if h > 0:
                                r -= 1
                            elif h < 0:
                                r += 1
                        if r >= new_depth:
                            r = new_depth - 1
                    s = -negamax(new_depth - r, -alpha - 1, -alpha, ply + 1, False, True, check)
                    if r > 0 and s > alpha:
                        s = -negamax(new_depth, -alpha - 1, -alpha, ply + 1, False, True, check)
                    if pv_node and s > alpha:
                        # Fail highs too: the PV (and mates cut by mate-distance pruning)
                        # must come from a child searched as a PV node.
                        s = -negamax(new_depth, -beta, -alpha, ply + 1, True, True, check)
                pop()
                searched += 1
                if s > best:
                    best = s
                    if s > alpha:
                        best_move = move
                        if pv_node:
                            # Also on a fail high: mate-distance pruning lowers beta to the
                            # best mate possible, and that mate's line is the PV.
                            pv_lines[ply] = (move, *pv_lines[ply + 1])
                        if s >= beta:
                            cutoffs += 1
                            if searched == 1:
                                first_cutoffs += 1
                            # Step N8. Cut-off: remember quiet moves that refute.
                            if STAGE_KILLER <= stage <= STAGE_QUIET or (
                                stage == STAGE_TT and not is_noisy(move)
                            ):
                                killer = kl[0]
                                if killer is not move and (interned or killer != move):
                                    kl[1] = kl[0]
                                    kl[0] = move
                                if previous is not None:
                                    counters_here[previous] = move
                                bonus = depth * depth if depth < 64 else 4096
                                h = hist.get(move, 0)
                                hist[move] = h + bonus - h * bonus // _HIST_MAX
                                if tried is not None:
                                    for q in tried:
                                        h = hist.get(q, 0)
                                        hist[q] = h - bonus - h * bonus // _HIST_MAX
                            break
                        alpha = s
                if STAGE_KILLER <= stage <= STAGE_QUIET:
                    if tried is None:
                        tried = [move]
                    else:
                        tried.append(move)
            if not legal:
                v = terminal_value()
                return MATE - ply if v > 0 else (ply - MATE if v < 0 else DRAW)
            # Step N9. Store the result (mate scores made node-relative).
            if pv_node:
                if best < tb_lo:
                    best = tb_lo
                elif best > tb_hi:
                    best = tb_hi
            if best >= MATE_BOUND:
                stored = best + ply
            elif best <= -MATE_BOUND:
                stored = best - ply
            else:
                stored = best
            store(
                key,
                best_move,
                stored,
                EXHAUSTIVE if events == events_at_entry else depth,
                LOWER if best >= beta else (EXACT if best > alpha0 else UPPER),
                ev,
            )
            return best

        # Step 7. The root: PVS over the root moves, and what each iteration adds.
        def search_root(depth: int, alpha: int, beta: int, moves: list[Any], k: int) -> Line:
            """PVS over the root moves; a move beating alpha with a full window is kept (and
            handed to the driver if the search stops before this returns)."""
            best = -INF
            line: tuple[Any, ...] = _NO_PV
            try:
                for i, move in enumerate(moves):
                    if clock() - start >= _CURRMOVE_REPORT_S:
                        on_info(
                            SearchInfo(
                                depth=depth,
                                currmove=game.format_move(move),
                                currmovenumber=i + 1,
                                multipv=k + 1,
                            )
                        )
                    push(move)
                    line_moves[0] = move
                    check = in_check_fn()
                    if i == 0:
                        s = -negamax(depth - 1, -beta, -alpha, 1, True, True, check)
                    else:
                        s = -negamax(depth - 1, -alpha - 1, -alpha, 1, False, True, check)
                        if s > alpha:
                            s = -negamax(depth - 1, -beta, -alpha, 1, True, True, check)
                    pop()
                    if s > best:
                        best = s
                        if s > alpha:
                            line = (move, *pv_lines[1])
                            if s >= beta:
                                break
                            alpha = s
            except SearchStopped as stop:
                # Once a move beat alpha, ``best`` is its score (see the loop).
                stop.improvement = Line(best, line) if line else None
                raise
            return Line(best, line)

        def begin_iteration(depth: int) -> None:
            nonlocal ext_limit, events_before
            ext_limit = 2 * depth if cfg.check_extension else 0
            events_before = events

        def end_iteration(depth: int, lines: list[Line]) -> Iteration:
            """Store the root's result; no horizon event means the position is solved."""
            tt.store(root_key, lines[0].moves[0], lines[0].score, depth, EXACT)
            return Iteration(exhausted=events == events_before)

        def counters() -> Counters:
            return Counters(nodes, seldepth, tt.hashfull(), cutoffs, first_cutoffs, tbhits)

        def ponder(best: Any) -> str | None:
            return self._ponder_from_tt(game, best)

        # Step 8. Iterative deepening, aspiration, MultiPV, time and the result: the driver.
        return driver.run(
            root_moves,
            Root(
                search=search_root,
                counters=counters,
                end_iteration=end_iteration,
                begin_iteration=begin_iteration,
                aspiration=cfg.aspiration,
                ponder=ponder,
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
