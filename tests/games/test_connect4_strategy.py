"""Connect Four strategy books (``games.connect4.strategy``): every position such a book holds
has the solver's outcome, its move keeps that outcome, every reply of the opponent leads to a
position the book holds or the play hook proves within the leaf budget, the build is the same
with worker processes and through its script, and the play hook plays the strategy.

The shipped book's roots cost a build of hours, so these tests build strategies from Pascal
Pons' test positions with small leaf budgets, which exercise the same code; the shipped book
itself is checked by sampling (``test_connect4_shipped_book.py``).
"""

from __future__ import annotations

import random
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from engine.control import SearchControl
from engine.info import Bound, SearchInfo
from engine.limits import Limits
from engine.score import report
from games.connect4.board import BOARD, Connect4, drops, has_four
from games.connect4.book import BookFormatError, BookKind, Connect4Book, book_key
from games.connect4.book_builder import position_of
from games.connect4.play import Connect4Player
from games.connect4.solver import Connect4Solver, engine_score
from games.connect4.strategy import BuildPlan, build_strategy
from tests.support.paths import REPO

SCRIPT = REPO / "scripts" / "build_connect4_strategy.py"

WIN_ROOT = "32164625"
"""Pons' Test_L1_R1: the first player to move wins (score 11)."""
DRAW_ROOT = "2611533213357711667431445462"
"""Pons' Test_L1_R1: a draw with the first player to move."""
LEAF_NODES = {WIN_ROOT: 10_000, DRAW_ROOT: 30}
PLAN = BuildPlan(leaf_nodes=0, jobs=1, split_plies=2, tt_entries=1 << 20)


def ignore(_info: SearchInfo) -> None:
    return None


@pytest.fixture(scope="module", params=[WIN_ROOT, DRAW_ROOT])
def strategy(request: pytest.FixtureRequest) -> tuple[str, Connect4Book]:
    root: str = request.param
    plan = BuildPlan(LEAF_NODES[root], PLAN.jobs, PLAN.split_plies, PLAN.tt_entries)
    book, stats = build_strategy([Connect4.from_moves(root)], plan)
    assert stats.inner > 3 and stats.leaves > stats.inner
    return root, book


def outcome(solver: Connect4Solver, current: int, mask: int) -> int:
    solver.reset()
    return solver.score(position_of(current, mask), weak=True)


def test_the_strategy_holds_true_outcomes_and_covers_every_reply(
    strategy: tuple[str, Connect4Book],
) -> None:
    """A walk of the strategy from its root: at each of our positions the book holds, the
    outcome is the solver's and the book's move keeps it; every other of our positions is one
    the play hook (no book, the leaf budget) answers keeping its outcome; the walk meets every
    entry of the book."""
    root_moves, book = strategy
    assert book.kind is BookKind.OUTCOME
    solver = Connect4Solver()
    hook = Connect4Player(lambda: None, node_budget=LEAF_NODES[root_moves])
    root = Connect4.from_moves(root_moves)
    met: set[int] = set()
    stack = [(root.current, root.mask)]
    while stack:
        current, mask = stack.pop()
        position = position_of(current, mask)
        expected = outcome(solver, current, mask)
        held = book.outcome(position)
        if held is None:
            result = hook(
                position, Limits(infinite=True), SearchControl(), ignore, move_overhead_ms=0
            )
            assert result is not None and result.best is not None, position.fen()
            child = position.copy()
            child.push(position.parse_move(result.best))
            assert child.is_terminal() or outcome(solver, child.current, child.mask) == -expected
            continue
        assert held == expected, position.fen()
        met.add(book_key(current, mask))
        moves = book.strategy_moves(position)
        assert moves, position.fen()
        col = moves[0]
        cell = position.drop_cell(col)
        assert cell is not None
        position.push(cell)
        if position.is_terminal():
            continue
        assert outcome(solver, position.current, position.mask) == -expected
        met.add(book_key(position.current, position.mask))
        for _col, mover, reply_mask in drops(position.current, position.mask):
            if not has_four(mover) and reply_mask != BOARD:
                stack.append((mover ^ reply_mask, reply_mask))
    assert met == {key for key, _ in book.items()}


def test_workers_and_the_script_build_the_same_book(tmp_path: Path) -> None:
    """Two worker processes, and the script with two jobs, write the bytes one process
    builds; ``--check`` accepts that file and rejects a damaged one."""
    root = Connect4.from_moves(WIN_ROOT)
    plan = BuildPlan(10_000, 1, 2, 1 << 20)
    alone, _ = build_strategy([root], plan)
    shared, _ = build_strategy([root], BuildPlan(10_000, 2, 2, 1 << 20))
    assert shared.to_bytes() == alone.to_bytes()
    out = tmp_path / "strategy.bin"

    def script(*extra: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(SCRIPT), "--root", WIN_ROOT, "--output", str(out)]
        command += ["--leaf-nodes", "10000", "--tt-entries", str(1 << 20), "--jobs", "2"]
        return subprocess.run([*command, *extra], capture_output=True, text=True, check=False)

    built = script()
    assert built.returncode == 0, built.stderr
    assert f"{len(alone)} entries" in built.stdout and "tasks " in built.stderr
    assert out.read_bytes() == alone.to_bytes()
    assert script("--check").returncode == 0
    out.write_bytes(out.read_bytes()[:-1] + b"\x7f")
    checked = script("--check")
    assert checked.returncode == 1 and "differs" in checked.stderr


def test_the_hook_plays_the_strategy_without_a_solver_node(
    strategy: tuple[str, Connect4Book],
) -> None:
    """At the root the hook answers from the book: 0 nodes, ``info string strategy: ...``, a
    win reported as a lower bound (a draw as exact), and the move is the book's."""
    root_moves, book = strategy
    position = Connect4.from_moves(root_moves)
    infos: list[SearchInfo] = []
    result = Connect4Player(lambda: book, node_budget=1)(
        position.copy(), Limits(infinite=True), SearchControl(), infos.append, move_overhead_ms=0
    )
    assert result is not None and result.best is not None and result.nodes == 0
    held = book.outcome(position)
    assert held is not None and held >= 0
    assert result.score == report(engine_score(held, position.ply))
    note = infos[-2].string
    assert note is not None and note.startswith(f"strategy: strategy keeps at least {held:+d}")
    assert infos[-1].bound is (Bound.LOWER if held > 0 else Bound.EXACT)
    assert position.parse_move(result.best) // 7 == book.strategy_moves(position)[0]


@pytest.mark.parametrize("seed", [1, 2])
def test_self_play_keeps_the_outcome_against_a_random_opponent(
    strategy: tuple[str, Connect4Book], seed: int
) -> None:
    """The hook with the strategy book and the leaf budget against seeded random drops:
    every move keeps the root's outcome by a fresh solver's verdict, and the game ends no
    worse than that outcome."""
    root_moves, book = strategy
    game = Connect4.from_moves(root_moves)
    player = Connect4Player(lambda: book, node_budget=LEAF_NODES[root_moves])
    solver = Connect4Solver()
    ours = game.side
    rng = random.Random(seed)
    sources: set[str] = set()
    while not game.is_terminal():
        if game.side == ours:
            notes: list[SearchInfo] = []
            result = player(
                game.copy(), Limits(infinite=True), SearchControl(), notes.append,
                move_overhead_ms=0,
            )  # fmt: skip
            assert result is not None and result.best is not None, game.fen()
            sources.add(next(n.string for n in notes if n.string is not None).split(":")[0])
            expected = outcome(solver, game.current, game.mask)
            game.push(game.parse_move(result.best))
            if not game.is_terminal():
                assert outcome(solver, game.current, game.mask) == -expected, game.fen()
        else:
            game.push(rng.choice(game.legal_moves()))
    assert game.winner in (None, ours)
    assert "strategy" in sources


def test_outcome_books_round_trip_and_refuse_unknown_kinds() -> None:
    book = Connect4Book(4, array("Q", [3, 9]), array("b", [1, -1]), BookKind.OUTCOME)
    loaded = Connect4Book.from_bytes(book.to_bytes())
    assert loaded.kind is BookKind.OUTCOME and loaded.items() == [(3, 1), (9, -1)]
    data = bytearray(book.to_bytes())
    data[20] = 7
    with pytest.raises(BookFormatError, match="kind 7"):
        Connect4Book.from_bytes(bytes(data))
    data[8] = 1  # format version 1: no kind byte, refused
    with pytest.raises(BookFormatError, match="version 1"):
        Connect4Book.from_bytes(bytes(data))


def test_an_outcome_book_gives_no_exact_scores() -> None:
    """``score`` and ``move_scores`` are for exact books: an outcome book's 1 is not a score."""
    position = Connect4.from_moves(WIN_ROOT)
    key = book_key(position.current, position.mask)
    book = Connect4Book(position.ply, array("Q", [key]), array("b", [1]), BookKind.OUTCOME)
    assert book.outcome(position) == 1
    assert book.score(position) is None and book.move_scores(position) is None
    assert book.strategy_moves(position) == ()  # it holds no child
