"""Connect Four's play policy (``games.connect4.play``): the UCI hook's reports and declines,
its book answers, the loss-delaying choice, and self-play from won positions in which every
move Brudno makes keeps the win by the solver's own verdict.

Budgets are node budgets (``go infinite``), never clocks, except where the test is about a
clock running out.  Books are built here, rooted a few plies before the position played,
with the same builder as the shipped one.
"""

from __future__ import annotations

import random

import pytest

from engine.control import SearchControl
from engine.info import Bound, SearchInfo
from engine.limits import Limits
from engine.score import Cp, Mate, report
from games.connect4.board import Connect4
from games.connect4.book_builder import build_book
from games.connect4.play import Connect4Player, pv_text, solve_for_uci
from games.connect4.solver import Connect4Solver, SolveAbortedError, engine_score
from games.registry import get_variant
from games.tictactoe import TicTacToe
from tests.support.pons import pons_cases


def ignore(_info: SearchInfo) -> None:
    return None


def column_of(position: Connect4, move_text: str) -> int:
    return position.parse_move(move_text) // 7


# -- the hook without a book ---------------------------------------------------------------
def test_uci_hook_reports_the_exact_score_as_a_mate() -> None:
    moves, expected = pons_cases("Test_L2_R1")[0]
    position = Connect4.from_moves(moves)
    infos: list[SearchInfo] = []
    result = solve_for_uci(
        position.copy(), Limits(infinite=True), SearchControl(), infos.append, move_overhead_ms=0
    )
    assert result is not None
    assert result.score == report(engine_score(expected, position.ply))
    assert isinstance(result.score, Mate)
    assert result.depth == 42 - position.ply
    assert result.best == result.pv[0]
    best = Connect4Solver().solve_position(position).best_moves
    assert result.best in {pv_text(position, [col])[0] for col in best}
    final = infos[-1]
    assert final.bound is Bound.EXACT and final.score == result.score and final.pv == result.pv
    assert final.wdl == ((1000, 0, 0) if expected > 0 else (0, 0, 1000))
    assert final.string is None
    note = infos[-2].string
    assert note is not None and note.startswith(f"exact: solver score {expected:+d}")
    # The probes' bounds, then the exact score as soon as they meet (no PV yet).
    assert all(info.bound is not Bound.EXACT for info in infos[:-3])
    assert all(info.score is not None for info in infos[:-2])
    proven = infos[-3]
    assert proven.bound is Bound.EXACT and proven.score == result.score and not proven.pv


def test_uci_hook_for_go_mate_and_a_draw() -> None:
    draws = [(m, s) for m, s in pons_cases("Test_L3_R1") if s == 0]
    moves, _ = draws[0]
    position = Connect4.from_moves(moves)
    infos: list[SearchInfo] = []
    control = SearchControl()
    result = solve_for_uci(position, Limits(mate=3), control, infos.append, move_overhead_ms=0)
    assert result is not None and result.score == Cp(0)
    assert infos[-1].wdl == (0, 1000, 0)


def test_uci_hook_declines_what_it_should() -> None:
    position = Connect4.from_moves("4455")
    control = SearchControl()
    assert solve_for_uci(position, Limits(depth=4), control, ignore, move_overhead_ms=0) is None
    assert solve_for_uci(position, Limits(nodes=99), control, ignore, move_overhead_ms=0) is None
    assert (
        solve_for_uci(position, Limits(searchmoves=("d3",)), control, ignore, move_overhead_ms=0)
        is None
    )
    assert solve_for_uci(TicTacToe(), Limits(), control, ignore, move_overhead_ms=0) is None
    finished = Connect4.from_moves("1212121")
    assert solve_for_uci(finished, Limits(), control, ignore, move_overhead_ms=0) is None
    # depth with infinite/mate still solves: the exact answer is what was asked for
    assert solve_for_uci(position, Limits(depth=4, mate=2), control, ignore, move_overhead_ms=0)
    stopped = SearchControl()
    stopped.stop()
    moves, _ = pons_cases("Test_L2_R2")[0]
    hard = Connect4.from_moves(moves)
    assert solve_for_uci(hard, Limits(infinite=True), stopped, ignore, move_overhead_ms=0) is None


def test_uci_hook_gives_up_when_the_clock_is_short() -> None:
    """With 10 ms for the move, a middle-game proof does not fit: the hook hands over."""
    moves, _ = pons_cases("Test_L2_R2")[0]
    position = Connect4.from_moves(moves)
    result = solve_for_uci(
        position, Limits(movetime=10), SearchControl(), lambda _info: None, move_overhead_ms=0
    )
    assert result is None


def test_registry_hook_is_the_solver() -> None:
    hook = get_variant("cfour").solve
    assert hook is not None
    result = hook(
        Connect4.from_moves("4455"),
        Limits(infinite=True),
        SearchControl(),
        lambda _info: None,
        move_overhead_ms=0,
    )
    assert result is not None
    assert result.score == Mate(2)
    assert result.best in ("P@c1", "P@f1")


# -- the book ---------------------------------------------------------------------------------
def test_the_book_answers_where_the_solvers_budget_does_not_reach() -> None:
    """With 2,000 nodes the solver gives up on this won middle-game position; a book that
    knows its children answers at once (no solver node), with the solver's best move."""
    moves, expected = pons_cases("Test_L2_R1")[10]
    position = Connect4.from_moves(moves)
    book, _ = build_book(position.ply + 1, root=position)
    limits = Limits(infinite=True)
    without = Connect4Player(lambda: None, node_budget=2_000)
    assert without(position.copy(), limits, SearchControl(), ignore, move_overhead_ms=0) is None
    infos: list[SearchInfo] = []
    result = Connect4Player(lambda: book, node_budget=2_000)(
        position.copy(), limits, SearchControl(), infos.append, move_overhead_ms=0
    )
    assert result is not None and result.nodes == 0
    assert result.score == report(engine_score(expected, position.ply))
    solution = Connect4Solver().solve_position(position)
    assert column_of(position, result.best) == solution.best_moves[0]
    note = infos[-2].string
    assert note is not None and note.startswith(f"book: book score {expected:+d}")
    assert infos[-1].bound is Bound.EXACT and infos[-1].pv == result.pv


def test_the_books_score_at_its_depth_saves_the_narrowing() -> None:
    """At the book's deepest ply the score comes from the book and only the best-move probes
    run: fewer nodes than a proof from scratch, the same move and score."""
    moves, expected = pons_cases("Test_L2_R1")[11]
    position = Connect4.from_moves(moves)
    book, _ = build_book(position.ply, root=Connect4.from_moves(moves[:-1]))
    assert book.score(position) == expected and book.move_scores(position) is None
    with_book = Connect4Player(lambda: book)(
        position.copy(), Limits(infinite=True), SearchControl(), ignore, move_overhead_ms=0
    )
    without = Connect4Player(lambda: None)(
        position.copy(), Limits(infinite=True), SearchControl(), ignore, move_overhead_ms=0
    )
    assert with_book is not None and without is not None
    assert with_book.score == without.score == report(engine_score(expected, position.ply))
    assert with_book.best == without.best
    assert with_book.nodes < without.nodes


# -- lost positions ---------------------------------------------------------------------------
def lost_position_with_choices() -> tuple[Connect4, dict[int, int]]:
    """The first end-game test position the side to move loses, whose drops lose at
    different speeds (their scores differ)."""
    solver = Connect4Solver()
    for moves, score in pons_cases("Test_L3_R1"):
        if score >= 0:
            continue
        position = Connect4.from_moves(moves)
        scores = solver.move_scores(position)
        if len(set(scores.values())) > 2:
            return position, scores
    raise AssertionError("no such position in Test_L3_R1")


def test_a_lost_position_plays_the_move_that_delays_the_loss_longest() -> None:
    position, scores = lost_position_with_choices()
    result = solve_for_uci(
        position.copy(), Limits(infinite=True), SearchControl(), ignore, move_overhead_ms=0
    )
    assert result is not None and isinstance(result.score, Mate) and result.score.moves < 0
    chosen = scores[column_of(position, result.best)]
    assert chosen == max(scores.values()) < 0
    assert min(scores.values()) < chosen  # some other drop loses sooner
    assert result.score == report(engine_score(chosen, position.ply))


# -- self-play --------------------------------------------------------------------------------
def not_suicidal_move(position: Connect4, rng: random.Random) -> int:
    """A seeded random move that wins at once when it can, blocks the opponent's immediate
    win when it must, and otherwise avoids drops that hand the opponent one."""
    moves = position.legal_moves()
    wins = []
    for move in moves:
        position.push(move)
        if position.is_terminal() and position.winner is not None:
            wins.append(move)
        position.pop()
    if wins:
        return wins[0]
    safe = []
    for move in moves:
        position.push(move)
        hands_over = any(_wins_at_once(position, reply) for reply in position.legal_moves())
        position.pop()
        if not hands_over:
            safe.append(move)
    return rng.choice(safe or moves)


def _wins_at_once(position: Connect4, move: int) -> bool:
    position.push(move)
    won = position.winner is not None
    position.pop()
    return won


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_self_play_from_a_won_position_plays_only_winning_moves(seed: int) -> None:
    """From a won opening position (ply 14) with the first player to move, Brudno (a book of
    its first move, then the solver within ``go infinite``'s node budget) against a seeded
    not-suicidal opponent: every move it plays leaves the opponent lost by a fresh solver's
    verdict, and it wins."""
    moves, score = pons_cases("Test_L1_R2")[9]
    assert (len(moves), score) == (14, 2)  # the first player to move, winning with its 20th stone
    game = Connect4.from_moves(moves)
    book, _ = build_book(game.ply + 1, root=game)
    player = Connect4Player(lambda: book)
    rng = random.Random(seed)
    sources: list[str] = []
    while not game.is_terminal():
        if game.side == 0:
            notes: list[SearchInfo] = []
            result = player(
                game.copy(),
                Limits(infinite=True),
                SearchControl(),
                notes.append,
                move_overhead_ms=0,
            )
            assert result is not None, game.fen()
            sources.append(next(n.string for n in notes if n.string is not None).split(":")[0])
            game.push(game.parse_move(result.best))
            if not game.is_terminal():
                assert Connect4Solver().score(game) < 0, game.fen()
        else:
            game.push(not_suicidal_move(game, rng))
    assert game.winner == 0
    assert sources[0] == "book" and "exact" in sources


# -- out of budget ----------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "index"), [("Test_L1_R2", 40), ("Test_L2_R2", 39)])
def test_a_proven_win_is_kept_when_the_exact_score_is_out_of_reach(name: str, index: int) -> None:
    """With 20,000 nodes the exact score does not fit, but the narrowing's first probes prove
    the win: the hook plays a drop that keeps it (a fresh solver's verdict) and reports the
    bound as ``lowerbound``, where it used to hand the move to the heuristic search."""
    moves, score = pons_cases(name)[index]
    assert score > 0
    position = Connect4.from_moves(moves)
    limited = Connect4Solver()
    limited.limit(max_nodes=20_000)
    with pytest.raises(SolveAbortedError):
        limited.solve_position(position)
    infos: list[SearchInfo] = []
    result = Connect4Player(lambda: None, node_budget=20_000)(
        position.copy(), Limits(infinite=True), SearchControl(), infos.append, move_overhead_ms=0
    )
    assert result is not None
    note = infos[-2].string
    assert note is not None and note.startswith("bound: proven at least +")
    proven = int(note.split("+")[1].split(",")[0])
    assert 0 < proven <= score
    assert infos[-1].bound is Bound.LOWER and infos[-1].wdl == (1000, 0, 0)
    assert result.score == report(engine_score(proven, position.ply))
    child = position.copy()
    child.push(position.parse_move(result.best))
    assert Connect4Solver().score(child, weak=True) == -1
