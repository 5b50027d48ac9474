"""The iterative-deepening driver, with scripted root searches on tic-tac-toe's empty board.

A scripted root gives every move a fixed score, so what is checked is the driver alone: which
moves each root search gets, the windows, the MultiPV lines, when it stops and what it plays.
(That the real searchers agree with it is checked in test_search.py and lab/test_classic*.)
"""

from __future__ import annotations

from typing import Any

from engine.driver import Counters, Driver, Iteration, Line, Root, SearchStopped
from engine.game import Game
from engine.info import SearchInfo, SearchResult
from engine.limits import Limits
from engine.score import INF, Cp, Mate, mate_in
from games.registry import get_variant

CORNERS = {"P@a1": 30, "P@c1": 20, "P@a3": 10, "P@c3": 5}


def board() -> Game[Any]:
    return get_variant("tictactoe").new()


class Scripted:
    """A root search whose move scores come from a table (other moves score 0).

    ``stop_at`` = (depth, k, plies, improvement): at that search, push ``plies`` moves and
    raise :class:`SearchStopped` carrying ``improvement`` (a move text), as a node would.
    """

    def __init__(
        self,
        game: Game[Any],
        scores: dict[str, int] | None = None,
        *,
        stop_at: tuple[int, int, int, str | None] | None = None,
        exhausted_at: int | None = None,
        aspiration: bool = False,
    ) -> None:
        self.game = game
        self.scores = CORNERS if scores is None else scores
        self.stop_at = stop_at
        self.exhausted_at = exhausted_at
        self.aspiration = aspiration
        self.calls: list[tuple[int, int, tuple[str, ...], tuple[int, int]]] = []
        self.nodes = 0

    def score(self, move: Any) -> int:
        return self.scores.get(self.game.format_move(move), 0)

    def search(self, depth: int, alpha: int, beta: int, moves: list[Any], k: int) -> Line:
        texts = tuple(self.game.format_move(m) for m in moves)
        self.calls.append((depth, k, texts, (alpha, beta)))
        self.nodes += len(moves)
        if self.stop_at is not None and self.stop_at[:2] == (depth, k):
            plies, improvement = self.stop_at[2], self.stop_at[3]
            for move in self.game.legal_moves()[:plies]:
                self.game.push(move)
            stop = SearchStopped(plies)
            if improvement is not None:
                move = self.game_move(improvement)
                stop.improvement = Line(self.score(move), (move,))
            raise stop
        best = max(moves, key=self.score)  # the first of the best
        return Line(self.score(best), (best,))

    def game_move(self, text: str) -> Any:
        """The root move ``text`` names (the scripted pushes have moved the game on)."""
        return next(m for m in self.root_moves if self.root_text[m] == text)

    def end_iteration(self, depth: int, lines: list[Line]) -> Iteration:
        return Iteration(exhausted=depth == self.exhausted_at, note=f"depth {depth} done")

    def root(self) -> Root:
        self.root_moves = self.game.legal_moves()
        self.root_text = {m: self.game.format_move(m) for m in self.root_moves}
        return Root(
            search=self.search,
            counters=lambda: Counters(self.nodes),
            end_iteration=self.end_iteration,
            aspiration=self.aspiration,
        )


def run(
    script: Scripted, limits: Limits, multipv: int = 1
) -> tuple[SearchResult, list[SearchInfo]]:
    infos: list[SearchInfo] = []
    driver = Driver(script.game, limits, max_depth=64, on_info=infos.append, multipv=multipv)
    root = script.root()
    return driver.run(list(script.root_moves), root), infos


def test_multipv_lines_take_the_best_of_the_moves_left() -> None:
    script = Scripted(board())
    result, infos = run(script, Limits(depth=2), multipv=3)
    assert [line.pv[0] for line in result.lines] == ["P@a1", "P@c1", "P@a3"]
    assert [line.score for line in result.lines] == [Cp(30), Cp(20), Cp(10)]
    assert [line.multipv for line in result.lines] == [1, 2, 3]
    depth1 = [moves for depth, _, moves, _ in script.calls if depth == 1]
    assert [len(moves) for moves in depth1] == [9, 8, 7]
    assert "P@a1" not in depth1[1] and "P@c1" not in depth1[2]
    # The next iteration starts with the best moves, best first; the window is open.
    depth2 = [(moves, window) for depth, _, moves, window in script.calls if depth == 2]
    assert depth2[0][0][:3] == ("P@a1", "P@c1", "P@a3")
    assert all(window == (-INF, INF) for _, window in depth2)
    assert [i.string for i in infos if i.string] == ["depth 1 done", "depth 2 done"]
    assert infos[-1].string == "depth 2 done"  # the note follows the iteration's lines


def test_searchmoves_restricts_the_root() -> None:
    script = Scripted(board())
    result, _ = run(script, Limits(depth=1, searchmoves=("c3", "0000", "b2")))
    assert script.calls[0][2] == tuple(
        m for m in (board().format_move(x) for x in board().legal_moves()) if m in {"P@b2", "P@c3"}
    )
    assert result.best == "P@c3"
    everything = Scripted(board())
    run(everything, Limits(depth=1, searchmoves=("0000", "zz")))
    assert len(everything.calls[0][2]) == 9  # nothing parsed: every move


def test_a_stop_plays_the_first_lines_completed_improvement() -> None:
    game = board()
    fen = game.fen()
    script = Scripted(game, stop_at=(3, 0, 2, "P@c1"))
    result, infos = run(script, Limits(infinite=True))
    assert game.fen() == fen  # the two plies the "node" left pushed were popped
    assert (result.best, result.depth, result.score) == ("P@c1", 2, Cp(20))
    assert infos[-1].depth == 3 and infos[-1].pv == ("P@c1",)


def test_a_stop_without_improvement_plays_the_last_iteration() -> None:
    script = Scripted(board(), stop_at=(3, 0, 1, None))
    result, _ = run(script, Limits(infinite=True))
    assert (result.best, result.depth, result.score) == ("P@a1", 2, Cp(30))


def test_multipv_ignores_an_improvement_once_an_iteration_is_complete() -> None:
    script = Scripted(board(), stop_at=(2, 1, 0, None))
    result, _ = run(script, Limits(infinite=True), multipv=2)
    assert result.depth == 1
    assert [line.pv[0] for line in result.lines] == ["P@a1", "P@c1"]


def test_a_stop_in_the_first_iteration_plays_the_first_root_move() -> None:
    game = board()
    script = Scripted(game, stop_at=(1, 0, 0, None))
    first = game.format_move(game.legal_moves()[0])
    result, _ = run(script, Limits(infinite=True))
    assert (result.best, result.depth, result.score, result.pv) == (first, 0, None, (first,))


def test_an_exhausted_tree_ends_an_infinite_search() -> None:
    script = Scripted(board(), exhausted_at=3)
    result, _ = run(script, Limits(infinite=True))
    assert result.depth == 3


def test_the_node_limit_ends_the_iterations() -> None:
    script = Scripted(board())
    result, _ = run(script, Limits(nodes=20))
    assert (result.depth, result.nodes) == (3, 27)  # 9 nodes an iteration


def test_a_proven_mate_within_the_limit_ends_the_search() -> None:
    script = Scripted(board(), {"P@b2": mate_in(3)})
    result, _ = run(script, Limits(mate=2, infinite=True))
    assert (result.depth, result.score) == (1, Mate(2))
    longer = Scripted(board(), {"P@b2": mate_in(5)})
    assert run(longer, Limits(mate=2, depth=4))[0].depth == 4  # mate in 3 is not in 2


def test_aspiration_widens_the_window_that_failed() -> None:
    class Rising(Scripted):
        """Every move's score jumps by 100 at depth 4: the window around 30 fails high."""

        def search(self, depth: int, alpha: int, beta: int, moves: list[Any], k: int) -> Line:
            line = super().search(depth, alpha, beta, moves, k)
            return Line(line.score + (100 if depth >= 4 else 0), line.moves)

    script = Rising(board(), aspiration=True)
    result, _ = run(script, Limits(depth=4))
    windows = [window for depth, _, _, window in script.calls if depth >= 3]
    assert windows == [(-INF, INF), (5, 55), (5, 155)]
    assert result.score == Cp(130)


def test_no_legal_move_reports_the_outcome() -> None:
    game = get_variant("tictactoe").new("PPP/pp1/3[PPpp] b - - 0 3")
    script = Scripted(game)
    result, infos = run(script, Limits(depth=3))
    assert (result.best, result.score, result.nodes) == (None, Mate(0), 0)
    assert script.calls == []
    assert infos[0].depth == 0 and infos[0].score == Mate(0)


class Falling(Scripted):
    """Each iteration takes 50 ms of a fake clock and scores 50 cp worse than the one before;
    the best move never changes (so only the falling score can stretch the time)."""

    def __init__(self, game: Game[Any]) -> None:
        super().__init__(game)
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def search(self, depth: int, alpha: int, beta: int, moves: list[Any], k: int) -> Line:
        self.now += 0.050
        return Line(-50 * depth, (moves[0],))


def test_a_falling_score_buys_more_iterations() -> None:
    depths = {}
    for falling_eval in (False, True):
        script = Falling(board())
        driver = Driver(
            script.game,
            Limits(wtime=10_000, btime=10_000),  # soft about 330 ms, hard about 1.6 s
            max_depth=64,
            clock=script.clock,
            falling_eval=falling_eval,
            move_overhead_ms=0,
        )
        depths[falling_eval] = driver.run(list(script.game.legal_moves()), script.root()).depth
    # A stable search stops at 0.6 of the soft budget (4 iterations of 50 ms); a score that
    # fell 100 cp doubles that (twice as many iterations), still well within the hard limit.
    assert depths == {False: 4, True: 8}
