"""One iterative-deepening driver, shared by every searcher (the production search and the
classic algorithms, so that a match between them compares their trees, not their drivers:
docs/search.md, *Shape*).

A searcher hands the driver a :class:`Root`: a function that searches the root to depth ``d``
in the window ``(alpha, beta)`` over the given moves and returns the best :class:`Line`
(fail-soft: a score outside the window is a bound), and a few hooks (its counters, iteration
start and end, a ponder move).  For one ``go`` the driver:

1. restricts the root moves to ``searchmoves`` (texts that do not parse are skipped; if none
   is left, every move is searched) and MultiPV to the number of moves;
2. iterates depth 1, 2, ...: MultiPV line ``k`` is the best line among the moves the lines
   before it did not take, through aspiration windows when the searcher wants them; the lines
   are sorted best first and lead the next iteration's order;
3. reports the lines after each iteration and stops after ``stop``, the node limit, an
   exhausted tree, a mate proven within ``go mate N``, or the soft deadline;
4. returns the last completed iteration, or the first line of an interrupted one when it
   already found a better root move with a completed full-window search.

A searcher's :class:`engine.stop.StopPoll` raises :class:`SearchStopped` with the number of
moves still pushed; the driver pops them, so a node function needs no ``try`` of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from engine.control import SearchControl
from engine.game import Game
from engine.info import Bound, InfoCallback, SearchInfo, SearchResult, ignore_info
from engine.limits import Limits
from engine.score import INF, MATE, MATE_BOUND, outcome_score, report, wdl
from engine.timeman import Deadline, allocate

__all__ = [
    "Counters",
    "Driver",
    "Iteration",
    "Line",
    "Root",
    "RootSearch",
    "SearchStopped",
    "format_line",
    "parse_moves",
]

ASP_MIN_DEPTH: Final = 4
"""Aspiration windows from this depth on (shallower iterations are cheap and jumpy)."""
ASP_DELTA: Final = 25
"""The first window's half-width around the previous score; doubled after each failure."""
ASP_GIVE_UP: Final = 1000
"""Past this half-width the window opens fully."""
BOUND_REPORT_S: Final = 1.0
"""Aspiration failures are reported (as bounds) once the search has run this long."""


@dataclass(slots=True)
class Line:
    """A root line found in one iteration: its score and moves (game objects, not text)."""

    score: int
    moves: tuple[Any, ...]


class SearchStopped(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by a searcher that must stop now (``stop``, node limit, hard deadline), the
    one stop signal of every searcher (raised by :class:`engine.stop.StopPoll`).

    ``ply`` moves are still pushed where it is raised (whoever restores the game pops them
    and sets ``ply`` to 0); ``nodes`` is the searcher's node count at the stop.
    ``improvement`` is the root search's best line so far, if a root move beat alpha with a
    completed search; the driver plays it when it is the first line of the iteration.
    """

    def __init__(self, ply: int = 0, nodes: int = 0) -> None:
        super().__init__(ply, nodes)
        self.ply = ply
        self.nodes = nodes
        self.improvement: Line | None = None


@dataclass(frozen=True, slots=True)
class Counters:
    """What a searcher has counted so far in this search (for reports and the result)."""

    nodes: int
    seldepth: int = 0
    hashfull: int = 0
    cutoffs: int = 0
    first_cutoffs: int = 0
    tbhits: int = 0
    """Tablebase probes that found the position (root moves ranked, WDL probes in the tree)."""


@dataclass(frozen=True, slots=True)
class Iteration:
    """What a searcher says about an iteration that just completed."""

    exhausted: bool
    """No line reached the horizon: every leaf was the end of the game, deeper is the same."""
    note: str | None = None
    """Reported as ``info string`` after the iteration's lines."""


RootSearch = Callable[[int, int, int, list[Any], int], Line]
"""``(depth, alpha, beta, moves, k) -> Line``: search the root to ``depth`` in the window
``(alpha, beta)`` over ``moves`` (in that order) for MultiPV line ``k`` (0-based).  Returns the
best score and, when a move beat ``alpha``, its line (else no moves); fail-soft."""


_FALLING_SPAN = 2
"""A falling score is measured against the iteration this many before (two: odd and even
depths differ by the side that moves last)."""


def _nothing(_depth: int) -> None:
    """The default ``begin_iteration``: nothing to prepare."""


def _no_ponder(_best: Any) -> str | None:
    """The default ``ponder``: no opinion on the reply beyond the PV."""
    return None


@dataclass(frozen=True, slots=True)
class Root:
    """What a searcher supplies to :meth:`Driver.run` for one search.

    Only ``search`` walks the tree.  The hooks are there because the driver cannot know them:
    the counters live in the searcher's node functions (the production search's worker
    fields, so they are read through a function), only the searcher can tell whether an
    iteration reached the horizon anywhere, and what it keeps per iteration (the production
    search's check-extension limit and root table entry, a classic algorithm's guesses).
    """

    search: RootSearch
    """Search the root to a depth in a window (see :data:`RootSearch`)."""
    counters: Callable[[], Counters]
    end_iteration: Callable[[int, list[Line]], Iteration]
    """Called with the depth and the iteration's lines (best first) before they are reported."""
    begin_iteration: Callable[[int], None] = _nothing
    """Called with the depth before the iteration's first root search."""
    aspiration: bool = False
    """Narrow the window around the previous iteration's score (re-search when it fails)."""
    ponder: Callable[[Any], str | None] = _no_ponder
    """The expected reply to the best move when the PV has only that move."""


class Driver:
    """Iterative deepening for one search: limits, root moves, MultiPV, time, the result.

    Built first (it reads the clock: the search starts here), so that the searcher can set up
    its node functions with :attr:`node_limit`, :attr:`mate_limit` and :attr:`deadline`; then
    :meth:`run` searches.
    """

    def __init__(
        self,
        game: Game[Any],
        limits: Limits,
        *,
        max_depth: int,
        control: SearchControl | None = None,
        on_info: InfoCallback = ignore_info,
        multipv: int = 1,
        move_overhead_ms: int = 30,
        clock: Callable[[], float] = time.monotonic,
        skip_depth: Callable[[int], bool] | None = None,
        falling_eval: bool = False,
    ) -> None:
        self.start = clock()
        self._falling_eval = falling_eval
        """Give more time when the score falls (see :meth:`Deadline.soft_reached`)."""
        self._skip = skip_depth
        """Iterations to leave out (a Lazy SMP helper's share, :mod:`engine.smp`); never the
        first nor the last allowed."""
        self._clock = clock
        self.game = game
        self.limits = limits
        self.control = SearchControl() if control is None else control
        self.on_info = on_info
        self.multipv = multipv
        self.max_depth = max_depth if limits.depth is None else max(1, min(limits.depth, max_depth))
        self.node_limit = None if limits.nodes is None else max(1, limits.nodes)
        self.mate_limit = limits.mate if limits.mate is not None and limits.mate > 0 else None
        """``go mate N`` with N > 0: stop when a mate in at most N moves is proven."""
        self.deadline = Deadline(
            allocate(limits, game.side, game.ply, move_overhead_ms),
            start=self.start,
            clock=clock,
            control=self.control,
        )
        self._pending: Line | None = None

    def ms(self) -> int:
        """Milliseconds since the search started."""
        return int((self._clock() - self.start) * 1000)

    def run(self, moves: list[Any], root: Root) -> SearchResult:
        """Search ``moves`` (the root's legal moves in the searcher's order) with ``root``."""
        game = self.game
        on_info = self.on_info
        deadline = self.deadline
        # Step 1. Root moves: none means the game is over; ``searchmoves``; MultiPV.
        if not moves:
            score = outcome_score(game.terminal_value(), 0)
            on_info(SearchInfo(depth=0, score=report(score), wdl=wdl(score)))
            return SearchResult(None, None, report(score), 0, 0, self.ms())
        moves = self._searched_moves(moves)
        if len(moves) == 1:
            deadline.single_reply()
        n_lines = max(1, min(self.multipv, len(moves)))

        # Step 2. Iterative deepening: each MultiPV line among the moves not yet taken.
        lines: list[Line] = []
        infos: list[SearchInfo] = []
        completed = 0
        searching = 1
        prev_best: Any = None
        instability = 0.0
        scores: list[int] = []
        try:
            skip = self._skip
            for depth in range(1, self.max_depth + 1):
                if skip is not None and completed and depth < self.max_depth and skip(depth):
                    continue
                searching = depth
                root.begin_iteration(depth)
                self._pending = None
                lines = self._iteration(root, depth, moves, lines, n_lines)
                completed = depth
                self._pending = None
                deadline.iteration_completed()
                bests = [ln.moves[0] for ln in lines]
                moves = bests + [m for m in moves if m not in bests]
                verdict = root.end_iteration(depth, lines)
                infos = [self._line_info(root, depth, i + 1, ln) for i, ln in enumerate(lines)]
                for info in infos:
                    on_info(info)
                if verdict.note is not None:
                    on_info(SearchInfo(depth=depth, string=verdict.note))
                # Step 3. Decide whether another iteration is worth starting.
                if depth > 1:
                    instability = instability / 2 + (1.0 if bests[0] != prev_best else 0.0)
                prev_best = bests[0]
                scores.append(lines[0].score)
                if self._enough(root, verdict, lines[0].score, instability, self._falling(scores)):
                    break
        except SearchStopped as stop:
            for _ in range(stop.ply):
                game.pop()

        # Step 4. The result: last completed iteration, or a completed root improvement.
        pending = self._pending
        if pending is not None and (n_lines == 1 or not lines):
            info = self._line_info(root, searching, 1, pending)
            on_info(info)
            lines, infos = [pending], [info]
        return self._result(root, moves, lines, infos, completed)

    def _searched_moves(self, moves: list[Any]) -> list[Any]:
        """The root moves ``go searchmoves`` keeps (all of them when it names none legal)."""
        if self.limits.searchmoves is not None:
            chosen = parse_moves(self.game, self.limits.searchmoves)
            restricted = [m for m in moves if m in chosen]
            if restricted:
                return restricted
        return moves

    def _iteration(
        self, root: Root, depth: int, moves: list[Any], lines: list[Line], n_lines: int
    ) -> list[Line]:
        """One iteration's ``n_lines`` lines, best first: each line searches the moves the
        lines before it did not take, around the previous iteration's line (``lines``)."""
        found: list[Line] = []
        excluded: list[Any] = []
        for k in range(n_lines):
            candidates = [m for m in moves if m not in excluded]
            prev = lines[k] if k < len(lines) else None
            line = self._aspirate(root, depth, candidates, prev, k)
            found.append(line)
            excluded.append(line.moves[0])
        found.sort(key=lambda ln: -ln.score)
        return found

    def _falling(self, scores: list[int]) -> int:
        """How far the best score fell lately (0 when that does not steer the time)."""
        if self._falling_eval and len(scores) > _FALLING_SPAN:
            return scores[-1 - _FALLING_SPAN] - scores[-1]
        return 0

    def _enough(
        self, root: Root, verdict: Iteration, top: int, instability: float, falling: int
    ) -> bool:
        """Whether the search ends after an iteration whose best score is ``top``."""
        if self.control.stopped:
            return True
        if self.node_limit is not None and root.counters().nodes >= self.node_limit:
            return True
        if verdict.exhausted:
            return True  # solved: every leaf was the end of the game
        mate_limit = self.mate_limit
        if mate_limit is not None and top >= MATE_BOUND and MATE - top <= 2 * mate_limit:
            return True  # a mate in at most ``mate_limit`` moves, with an exact score
        return self.deadline.soft_reached(instability, falling)

    def _result(
        self,
        root: Root,
        moves: list[Any],
        final: list[Line],
        infos: list[SearchInfo],
        completed: int,
    ) -> SearchResult:
        """The result from the ``final`` lines (none: the first move, unsearched)."""
        game = self.game
        ms = self.ms()
        counted = root.counters()
        if not final:
            text = game.format_move(moves[0])
            return SearchResult(
                text,
                None,
                None,
                0,
                counted.nodes,
                ms,
                (text,),
                (),
                counted.cutoffs,
                counted.first_cutoffs,
            )
        best_line = final[0]
        pv_text = format_line(game, best_line.moves)
        ponder = pv_text[1] if len(pv_text) > 1 else root.ponder(best_line.moves[0])
        return SearchResult(
            best=pv_text[0],
            ponder=ponder,
            score=report(best_line.score),
            depth=completed,
            nodes=counted.nodes,
            time_ms=ms,
            pv=pv_text,
            lines=tuple(infos),
            cutoffs=counted.cutoffs,
            first_cutoffs=counted.first_cutoffs,
        )

    def _first_window(self, root: Root, depth: int, prev: Line | None) -> tuple[int, int, int]:
        """``(delta, alpha, beta)``: a window ``delta`` either side of the previous score, or
        the open window (delta 0) without aspiration, before :data:`ASP_MIN_DEPTH` or around
        a mate score."""
        if (
            root.aspiration
            and depth >= ASP_MIN_DEPTH
            and prev is not None
            and -MATE_BOUND < prev.score < MATE_BOUND
        ):
            delta = ASP_DELTA
            return delta, max(prev.score - delta, -INF), min(prev.score + delta, INF)
        return 0, -INF, INF

    def _aspirate(
        self, root: Root, depth: int, moves: list[Any], prev: Line | None, k: int
    ) -> Line:
        """Search a narrow window around the previous score, widening after failures.

        Without aspiration (or before :data:`ASP_MIN_DEPTH`, or around a mate score) the window
        is open and the first search is the answer.
        """
        delta, alpha, beta = self._first_window(root, depth, prev)
        while True:
            try:
                found = root.search(depth, alpha, beta, moves, k)
            except SearchStopped as stop:
                if k == 0 and stop.improvement is not None:
                    self._pending = stop.improvement
                raise
            if k == 0 and found.moves:
                self._pending = found  # the first line's best so far, in case of a stop
            if found.moves and found.moves[0] is not moves[0]:
                # The fail-high (or new best) move leads the re-search.
                moves.remove(found.moves[0])
                moves.insert(0, found.moves[0])
            if found.score <= alpha and alpha > -INF:
                bound = Bound.UPPER
                beta = (alpha + beta) // 2
                alpha = max(found.score - delta, -INF)
            elif found.score >= beta and beta < INF:
                bound = Bound.LOWER
                beta = min(found.score + delta, INF)
            else:
                return found
            if self._clock() - self.start >= BOUND_REPORT_S:
                # A fail low has no new line: report the bound with the previous one, unless
                # its move now belongs to an earlier MultiPV line (this line searches without it).
                earlier = prev.moves if prev and prev.moves and prev.moves[0] in moves else ()
                shown = found if found.moves else Line(found.score, earlier)
                if shown.moves:
                    self.on_info(self._line_info(root, depth, k + 1, shown, bound))
            delta += delta
            if delta > ASP_GIVE_UP:
                alpha, beta = -INF, INF

    def _line_info(
        self, root: Root, depth: int, k: int, line: Line, bound: Bound = Bound.EXACT
    ) -> SearchInfo:
        ms = self.ms()
        counted = root.counters()
        return SearchInfo(
            depth=depth,
            seldepth=max(counted.seldepth, len(line.moves)),
            multipv=k,
            score=report(line.score),
            bound=bound,
            nodes=counted.nodes,
            nps=counted.nodes * 1000 // max(ms, 1),
            time_ms=ms,
            hashfull=counted.hashfull,
            tbhits=counted.tbhits,
            pv=format_line(self.game, line.moves),
            wdl=wdl(line.score),
        )


def parse_moves(game: Game[Any], texts: Sequence[str]) -> list[Any]:
    """Moves named by ``texts``; texts that do not parse (``0000``, illegal) are skipped."""
    moves = []
    for text in texts:
        try:
            moves.append(game.parse_move(text))
        except ValueError:
            continue
    return moves


def format_line(game: Game[Any], moves: Sequence[Any]) -> tuple[str, ...]:
    """Move texts, each formatted in the position where it is played (the game is restored
    even when a move does not format)."""
    texts: list[str] = []
    pushed = 0
    try:
        for move in moves:
            texts.append(game.format_move(move))
            game.push(move)
            pushed += 1
    finally:
        for _ in range(pushed):
            game.pop()
    return tuple(texts)
