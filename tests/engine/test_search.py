"""The production search against plain minimax, and its limits, reports and bookkeeping.

Most checks run on :mod:`toy_game` (a synthetic game with checks, noisy moves,
transpositions, null moves and early ends) and on tic-tac-toe, whose positions are small
enough to solve exactly.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.control import SearchControl
from engine.game import Game
from engine.info import Bound, SearchInfo, SearchResult
from engine.limits import Limits
from engine.native_game import native
from engine.ordering import (
    STAGE_KILLER,
    STAGE_NOISY,
    STAGE_QUIET,
    STAGE_TT,
    History,
    ordered_moves,
    staged_moves,
)
from engine.score import Cp, Mate, mate_in, report
from engine.search import MAX_DEPTH, SearchConfig, Searcher
from games.registry import get_variant
from tests.support.toy_game import ToyGame, reference_move_values, solve

PLAIN = SearchConfig(null_move=False, lmr=False, futility=False, tt_cutoffs=False, quiescence=False)
"""Every value-changing heuristic off: the search must agree with minimax exactly."""
PLAIN_QS = SearchConfig(
    null_move=False, lmr=False, futility=False, tt_cutoffs=False, qsearch_tt_eval=False
)
"""As PLAIN, with quiescence (the oracle has the same quiescence)."""

NEVER = 10**9
"""``end_every``/``stuck_every`` for toy games that practically never end early."""


def big_toy() -> ToyGame:
    """A toy tree far too big to exhaust: the search only stops when told."""
    return ToyGame(seed=7, length=400, end_every=NEVER, stuck_every=NEVER)


def ttt(*moves: str) -> Game[Any]:
    game = get_variant("tictactoe").new()
    for text in moves:
        game.push(game.parse_move(text))
    return game


def play_prefix(game: Game[Any], choices: list[int]) -> Game[Any]:
    """Follow ``choices`` (indices into the legal move list) while the game goes on."""
    for c in choices:
        moves = game.legal_moves()
        if not moves or game.is_terminal():
            break
        game.push(moves[c % len(moves)])
    return game


def replay_pv(game: Game[Any], pv: tuple[str, ...]) -> None:
    """Every PV move parses as legal in turn (raises otherwise); the game is restored."""
    copy = game.copy()
    for text in pv:
        copy.push(copy.parse_move(text))


# -- values ------------------------------------------------------------------------------------


@settings(max_examples=120, derandomize=True, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=10**6),
    prefix=st.lists(st.integers(min_value=0, max_value=3), max_size=4),
    depth=st.integers(min_value=1, max_value=5),
    quiescence=st.booleans(),
)
def test_toy_value_equals_minimax(
    seed: int, prefix: list[int], depth: int, quiescence: bool
) -> None:
    game = play_prefix(ToyGame(seed=seed, length=9), prefix)
    if not game.legal_moves():
        return
    values = reference_move_values(game, depth, quiescence=quiescence)
    before = game.fen()
    result = Searcher(1, config=PLAIN_QS if quiescence else PLAIN).search(game, Limits(depth=depth))
    assert game.fen() == before
    best_value = max(values.values())
    assert result.score == report(best_value)
    assert result.best is not None
    assert values[game.parse_move(result.best)] == best_value


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    prefix=st.lists(st.integers(min_value=0, max_value=8), max_size=6),
    depth=st.integers(min_value=1, max_value=4),
    quiescence=st.booleans(),
)
def test_tictactoe_value_equals_minimax(prefix: list[int], depth: int, quiescence: bool) -> None:
    game = play_prefix(ttt(), prefix)
    if not game.legal_moves():
        return
    values = reference_move_values(game, depth, quiescence=quiescence)
    result = Searcher(1, config=PLAIN_QS if quiescence else PLAIN).search(game, Limits(depth=depth))
    best_value = max(values.values())
    assert result.score == report(best_value)
    assert result.best is not None
    assert values[game.parse_move(result.best)] == best_value


@settings(max_examples=150, derandomize=True, deadline=None)
@given(prefix=st.lists(st.integers(min_value=0, max_value=8), max_size=7))
def test_tictactoe_full_config_finds_the_exact_value(prefix: list[int]) -> None:
    """With every heuristic on and no depth limit, the search solves the position exactly
    (mate distances included) and then stops by itself."""
    game = play_prefix(ttt(), prefix)
    if not game.legal_moves():
        return
    result = Searcher(1).search(game, Limits())
    exact = solve(game)
    assert result.score == report(exact)
    assert result.best is not None
    child = game.copy()
    child.push(child.parse_move(result.best))
    assert -solve(child, 1) == exact  # the move played keeps the value
    assert result.depth < MAX_DEPTH


def test_tictactoe_start_is_a_draw_and_the_search_ends_by_itself() -> None:
    infos: list[SearchInfo] = []
    result = Searcher(1).search(ttt(), Limits(infinite=True), on_info=infos.append)
    assert result.score == Cp(0)
    assert result.depth == infos[-1].depth < 20
    assert len(result.pv) >= 5


def test_full_config_on_toy_returns_legal_moves_and_restores_the_game() -> None:
    for seed in range(30):
        game = ToyGame(seed=seed, length=30)
        result = Searcher(1).search(game, Limits(depth=7))
        assert (game.total, game.plies) == (0, 0)
        assert result.best is not None
        replay_pv(game, result.pv)


# -- limits -----------------------------------------------------------------------------------


def test_depth_limit_and_info_stream() -> None:
    game = big_toy()
    infos: list[SearchInfo] = []
    result = Searcher(4).search(game, Limits(depth=6), on_info=infos.append)
    lines = [i for i in infos if i.pv]
    assert [i.depth for i in lines] == [1, 2, 3, 4, 5, 6]
    assert all(i.multipv == 1 and i.score is not None and i.wdl is not None for i in lines)
    assert [i.nodes for i in lines] == sorted(i.nodes for i in lines)
    assert all(i.seldepth >= i.depth for i in lines)
    for info in lines:
        replay_pv(game, info.pv)
    assert result.depth == 6
    assert result.pv == lines[-1].pv
    assert result.best == result.pv[0]
    assert result.ponder == result.pv[1]
    assert result.lines == (lines[-1],)
    assert result.nodes == lines[-1].nodes


@pytest.mark.parametrize("limit", [1, 2, 10, 500, 3000])
def test_node_limit_is_exact_and_still_gives_a_move(limit: int) -> None:
    game = big_toy()
    result = Searcher(1).search(game, Limits(nodes=limit))
    assert result.nodes == limit
    assert result.best in {game.format_move(m) for m in game.legal_moves()}
    assert game.plies == 0 and game.total == 0 and game.pushes > 0


def test_node_limit_result_comes_from_a_completed_iteration() -> None:
    game = big_toy()
    infos: list[SearchInfo] = []
    result = Searcher(1).search(game, Limits(nodes=5000), on_info=infos.append)
    completed = [i for i in infos if i.pv]
    assert result.depth == completed[-1].depth or result.depth == completed[-2].depth
    assert result.best == completed[-1].pv[0]


def test_interrupted_iteration_keeps_a_completed_root_improvement() -> None:
    """A root move that beat the previous best with a completed full-window search is played
    even when its iteration is cut off; its line is reported one iteration deeper."""
    improvements = 0
    for seed in (3, 14, 21):
        game = ToyGame(seed=seed, length=400, end_every=NEVER, stuck_every=NEVER)
        for limit in range(200, 1600, 61):
            infos: list[SearchInfo] = []
            result = Searcher(1).search(game, Limits(nodes=limit), on_info=infos.append)
            # Lines only: on a slow machine a search past 1 s also reports aspiration bounds.
            lines = [i for i in infos if i.pv and i.bound is Bound.EXACT]
            completed = [i for i in lines if i.depth == result.depth]
            last = lines[-1]
            assert result.best == last.pv[0] and result.lines == (last,)
            if last.depth == result.depth + 1 and completed:
                assert last.score is not None and last.nodes == limit
                improvements += result.best != completed[-1].pv[0]
    assert improvements > 0


def test_same_search_visits_the_same_nodes() -> None:
    def run(game: Game[Any]) -> tuple[int, str | None, tuple[str, ...]]:
        result = Searcher(2).search(game, Limits(depth=7))
        return result.nodes, result.best, result.pv

    assert run(big_toy()) == run(big_toy())
    assert run(ttt("P@a1")) == run(ttt("P@a1"))


def test_a_config_given_to_search_is_that_search_only() -> None:
    """An ablation is an argument of ``search``: the searcher's own config is untouched, and
    the search is the one a searcher built with that config makes."""
    ablation = PLAIN
    searcher = Searcher(1)
    given = searcher.search(big_toy(), Limits(depth=6), config=ablation)
    built = Searcher(1, config=ablation).search(big_toy(), Limits(depth=6))
    assert searcher.config == SearchConfig()
    assert (given.nodes, given.best, given.pv) == (built.nodes, built.best, built.pv)
    assert given.nodes != Searcher(1).search(big_toy(), Limits(depth=6)).nodes


def test_stop_from_the_info_callback_keeps_the_last_iteration() -> None:
    control = SearchControl()
    seen: list[SearchInfo] = []

    def on_info(info: SearchInfo) -> None:
        seen.append(info)
        if info.depth == 4 and info.pv:
            control.stop()

    result = Searcher(1).search(big_toy(), Limits(infinite=True), control=control, on_info=on_info)
    assert result.depth == 4
    assert result.pv == seen[-1].pv


def run_in_thread(fn: Any) -> tuple[threading.Thread, list[SearchResult]]:
    out: list[SearchResult] = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    return thread, out


def test_stop_from_another_thread() -> None:
    control = SearchControl()
    reached = threading.Event()

    def on_info(info: SearchInfo) -> None:
        if info.depth >= 3 and info.pv:
            reached.set()

    game = big_toy()
    thread, out = run_in_thread(
        lambda: Searcher(1).search(game, Limits(infinite=True), control=control, on_info=on_info)
    )
    assert reached.wait(60)
    assert thread.is_alive()  # infinite: it keeps searching until told
    control.stop()
    thread.join(60)
    assert out and out[0].best is not None and out[0].depth >= 3
    assert (game.total, game.plies) == (0, 0)


def test_ponder_ignores_the_clock_until_ponderhit() -> None:
    control = SearchControl(pondering=True)
    deep = threading.Event()

    def on_info(info: SearchInfo) -> None:
        if info.depth >= 6 and info.pv:
            deep.set()

    game = big_toy()
    thread, out = run_in_thread(
        lambda: Searcher(1).search(
            game, Limits(movetime=1, ponder=True), control=control, on_info=on_info
        )
    )
    # A 1 ms move time is long gone by depth 6, yet a pondering search goes on.
    assert deep.wait(60)
    assert thread.is_alive()
    control.ponderhit()
    thread.join(60)  # the clock now runs: the 1 ms budget ends the search without a stop
    assert not thread.is_alive()
    assert not control.stopped
    assert out and out[0].depth >= 6 and out[0].best is not None


def test_ponder_ended_by_stop() -> None:
    control = SearchControl(pondering=True)
    started = threading.Event()

    def on_info(info: SearchInfo) -> None:
        if info.depth >= 2:
            started.set()

    thread, out = run_in_thread(
        lambda: Searcher(1).search(
            big_toy(), Limits(wtime=10, btime=10, ponder=True), control=control, on_info=on_info
        )
    )
    assert started.wait(60)
    control.stop()
    thread.join(60)
    assert out and out[0].best is not None


class FakeClock:
    """A clock that advances a fixed step per reading: time-based logic, deterministically."""

    def __init__(self, step: float) -> None:
        self.now = 100.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("limits", [Limits(movetime=50), Limits(wtime=1000, winc=10)])
def test_time_limits_end_the_search(limits: Limits) -> None:
    clock = FakeClock(0.001)  # one millisecond per clock reading
    result = Searcher(1, clock=clock).search(big_toy(), limits, move_overhead_ms=10)
    assert result.best is not None
    assert result.depth >= 1
    assert result.time_ms <= 1000


@pytest.mark.parametrize("wtime", [0, -100, 1])
def test_zero_or_negative_clock_still_moves(wtime: int) -> None:
    game = big_toy()
    result = Searcher(1, clock=FakeClock(0.01)).search(game, Limits(wtime=wtime, btime=wtime))
    assert result.best in {game.format_move(m) for m in game.legal_moves()}


def test_single_legal_move_in_timed_play_returns_after_depth_one() -> None:
    game = ToyGame(seed=0, length=400, end_every=NEVER, stuck_every=NEVER)
    while len(game.legal_moves()) != 1:
        game.push(game.legal_moves()[-1])
    frozen = FakeClock(0.0)
    result = Searcher(1, clock=frozen).search(game, Limits(wtime=60_000, btime=60_000))
    assert result.depth == 1
    assert result.best == game.format_move(game.legal_moves()[0])
    untimed = Searcher(1).search(game, Limits(depth=5))
    assert untimed.depth == 5


def aspiration_toy() -> ToyGame:
    """A toy position whose scores swing enough between iterations to fail both ways."""
    return ToyGame(seed=3, length=400, end_every=NEVER, stuck_every=NEVER)


def test_slow_searches_report_currmove_and_bounds() -> None:
    infos: list[SearchInfo] = []
    slow = FakeClock(0.5)  # half a second per clock reading: "long" searches
    Searcher(1, clock=slow).search(aspiration_toy(), Limits(depth=9), on_info=infos.append)
    game = aspiration_toy()
    root = {game.format_move(m) for m in game.legal_moves()}
    currmoves = [i for i in infos if i.currmove is not None]
    assert currmoves and any(i.currmovenumber == 1 for i in currmoves)
    for info in currmoves:
        assert info.currmove in root
        assert info.currmovenumber is not None and 1 <= info.currmovenumber <= len(root)
    bounds = {i.bound for i in infos if i.pv and i.bound is not Bound.EXACT}
    assert bounds == {Bound.LOWER, Bound.UPPER}
    for info in infos:
        if info.bound is not Bound.EXACT:
            assert info.score is not None and info.pv


def test_fast_searches_stay_quiet() -> None:
    infos: list[SearchInfo] = []
    fast = FakeClock(0.0)
    Searcher(1, clock=fast).search(aspiration_toy(), Limits(depth=9), on_info=infos.append)
    assert all(i.currmove is None and i.pv for i in infos)
    assert all(i.bound is Bound.EXACT for i in infos)
    assert [i.depth for i in infos] == list(range(1, 10))


# -- root options -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_multipv_lines_are_the_best_moves_in_order(seed: int) -> None:
    game = ToyGame(seed=seed, length=9)
    if len(game.legal_moves()) < 2:
        game.push(1)
    values = reference_move_values(game, 4, quiescence=False)
    result = Searcher(1, config=PLAIN).search(game, Limits(depth=4), multipv=3)
    expected = sorted(values.values(), reverse=True)[:3]
    assert [line.multipv for line in result.lines] == list(range(1, len(expected) + 1))
    assert [line.score for line in result.lines] == [report(v) for v in expected]
    firsts = [line.pv[0] for line in result.lines]
    assert len(set(firsts)) == len(firsts)
    for line in result.lines:
        assert values[game.parse_move(line.pv[0])] == max(
            v for m, v in values.items() if game.format_move(m) not in firsts[: line.multipv - 1]
        )
    assert result.pv == result.lines[0].pv


def test_multipv_reports_every_line_each_iteration() -> None:
    infos: list[SearchInfo] = []
    game = big_toy()
    n = len(game.legal_moves())
    Searcher(1).search(game, Limits(depth=3), multipv=10, on_info=infos.append)
    per_depth = [[i.multipv for i in infos if i.depth == d] for d in (1, 2, 3)]
    assert per_depth == [list(range(1, n + 1))] * 3


def test_searchmoves_restricts_the_root() -> None:
    game = ToyGame(seed=3, length=9)
    moves = [game.format_move(m) for m in game.legal_moves()]
    assert len(moves) >= 2
    values = reference_move_values(game, 4, quiescence=False)
    for text in moves:
        limits = Limits(depth=4, searchmoves=("0000", text, "bogus"))
        result = Searcher(1, config=PLAIN).search(game, limits)
        assert result.best == text
        assert result.score == report(values[game.parse_move(text)])
    # Nothing usable left: all moves are searched.
    result = Searcher(1, config=PLAIN).search(game, Limits(depth=4, searchmoves=("0000",)))
    assert result.score == report(max(values.values()))


def test_root_searches_on_even_if_the_game_could_end_here() -> None:
    """The root always gets a move while moves exist (a repeated position is playable)."""
    for seed in range(2000):
        game = ToyGame(seed=seed, length=9)
        for move in game.legal_moves():
            game.push(move)
            if game.is_terminal() and game.legal_moves():
                result = Searcher(1).search(game, Limits(depth=3))
                assert result.best is not None and result.depth == 3
                return
            game.pop()
    pytest.fail("no toy position that is terminal yet has moves")


# -- ends of the game -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moves", "score"),
    [
        # X: a1 b1 c1 — O is to move and has lost.
        (("P@a1", "P@a2", "P@b1", "P@b2", "P@c1"), Mate(0)),
        # A full board without a line: a draw.
        (
            ("P@a1", "P@b1", "P@c1", "P@b2", "P@a2", "P@c2", "P@b3", "P@a3", "P@c3"),
            Cp(0),
        ),
    ],
)
def test_no_legal_move(moves: tuple[str, ...], score: Cp | Mate) -> None:
    infos: list[SearchInfo] = []
    result = Searcher(1).search(ttt(*moves), Limits(depth=5), on_info=infos.append)
    assert result.best is None and result.ponder is None
    assert result.score == score
    assert result.nodes == 0 and result.pv == ()
    assert infos[-1].score == score and infos[-1].depth == 0


def fork_position() -> Game[Any]:
    """X to move wins on its second move (3 plies) with a fork::

    3  . X .
    2  X . O      X a3 threatens a1 (a-file) and c3 (third rank); O blocks one,
    1  . O .      X completes the other.
       a b c
    """
    return ttt("P@b3", "P@c2", "P@a2", "P@b1")


def test_fork_position_is_a_win_in_three_plies() -> None:
    assert solve(fork_position()) == mate_in(3)


def test_mate_limit_stops_at_the_first_proven_mate() -> None:
    game = fork_position()
    infos: list[SearchInfo] = []
    result = Searcher(1).search(game, Limits(mate=2), on_info=infos.append)
    assert result.score == Mate(2)
    # Nothing deeper was started once the mate was proven (quiescence may prove it early).
    assert [i.score for i in infos][-1] == Mate(2)
    assert all(i.score != Mate(2) for i in infos[:-1])
    assert result.depth == infos[-1].depth <= 3
    replay_pv(game, result.pv)
    # Asking for a mate in 1 does not stop there; the solved position ends the search anyway.
    deeper = Searcher(1).search(game, Limits(mate=1))
    assert deeper.score == Mate(2) and deeper.depth > result.depth


def test_mated_side_reports_negative_mate() -> None:
    game = fork_position()
    game.push(game.parse_move("P@a3"))
    result = Searcher(1).search(game, Limits())
    assert result.score == Mate(-1)


def test_switching_games_forgets_the_other_games_moves() -> None:
    searcher = Searcher(1)
    toy = ToyGame(seed=1, length=30)
    searcher.search(toy, Limits(depth=5))
    assert searcher.tt.hashfull() > 0
    # Tic-tac-toe keys are small integers; nothing of the toy game may be trusted there.
    result = searcher.search(ttt(), Limits())
    assert result.score == Cp(0)
    again = searcher.search(toy, Limits(depth=5))
    assert again.best is not None


def test_clear_forgets_and_resize_keeps_working() -> None:
    searcher = Searcher(1)
    game = big_toy()
    first = searcher.search(game, Limits(depth=6))
    searcher.clear()
    assert searcher.tt.hashfull() == 0
    assert searcher.search(game, Limits(depth=6)).nodes == first.nodes  # as fresh again
    searcher.resize_hash(2)
    assert searcher.tt.size_mb == 2
    assert searcher.search(game, Limits(depth=6)).best == first.best


# -- move ordering ----------------------------------------------------------------------------


class CountingTicTacToe:
    """Counts quiet move generation, to show that a cut-off on an early stage skips it (the
    rest of the game is the wrapped one's)."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game
        self.quiet_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.game, name)

    def noisy_moves(self) -> list[Any]:
        return self.game.noisy_moves()

    def quiet_moves(self) -> list[Any]:
        self.quiet_calls += 1
        return self.game.quiet_moves()


def test_staged_order_and_laziness() -> None:
    """O to move::

    3  . . .
    2  . O .      b1 blocks X's line: the only noisy move; the others are quiet.
    1  X . X
    """
    game = ttt("P@a1", "P@b2", "P@c1")
    legal = set(game.legal_moves())
    history = History()
    c3, a3 = game.parse_move("P@c3"), game.parse_move("P@a3")
    history.update(native(game), c3, 50)
    history.update(native(game), a3, 10)
    tt_move = game.parse_move("P@a2")
    killer = game.parse_move("P@b3")
    stream = list(staged_moves(game, tt_move, killer, None, history))
    moves = [m for m, _ in stream]
    stages = [st for _, st in stream]
    assert sorted(moves) == sorted(legal)  # each legal move exactly once
    assert moves[0] == tt_move and stages[0] == STAGE_TT
    assert moves[1] == game.parse_move("P@b1") and stages[1] == STAGE_NOISY
    assert moves[2] == killer and stages[2] == STAGE_KILLER
    assert moves[3:5] == [c3, a3] and set(stages[3:]) == {STAGE_QUIET}
    assert ordered_moves(game, tt_move, (killer, None), history) == moves
    # A consumer that stops after the noisy stage never pays for quiet generation.
    counting = CountingTicTacToe(game)
    picker = staged_moves(counting, tt_move, killer, None, history)
    assert [next(picker)[1], next(picker)[1]] == [STAGE_TT, STAGE_NOISY]
    assert counting.quiet_calls == 0
    next(picker)
    assert counting.quiet_calls == 1


def test_counter_move_follows_the_killers_once() -> None:
    """The counter move is tried after the killers and before the history order; one that
    is also a killer or a noisy move here is not yielded twice."""
    game = ttt("P@a1", "P@b2", "P@c1")
    history = History()
    history.update(native(game), game.parse_move("P@c3"), 50)
    killer, counter = game.parse_move("P@b3"), game.parse_move("P@a3")
    moves = [m for m, _ in staged_moves(game, None, killer, None, history, counter=counter)]
    assert moves[1:4] == [killer, counter, game.parse_move("P@c3")]
    assert sorted(moves) == sorted(game.legal_moves())
    for repeated in (killer, game.parse_move("P@b1")):
        stream = list(staged_moves(game, None, killer, None, history, counter=repeated))
        assert sorted(m for m, _ in stream) == sorted(game.legal_moves())
    stages = dict(staged_moves(game, None, killer, None, history, counter=counter))
    assert stages[counter] == STAGE_KILLER


def test_clear_forgets_the_counter_moves() -> None:
    searcher = Searcher(1, config=SearchConfig(counter_moves=True))
    searcher.search(get_variant("chess").new(), Limits(depth=5))
    assert any(searcher._counter_moves)
    searcher.clear()
    assert searcher._counter_moves == ({}, {})
