"""Synthetic trees: reproducible, contract-abiding, and ordered exactly as they claim."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from engine.game import Game, GameError, IllegalMoveError
from engine.lab.chance import ChanceGame, check_outcomes, has_chance
from engine.lab.trees import (
    CHANCE_BOUND,
    LEAF_RANGE,
    ChanceTree,
    Order,
    TreeSpec,
    UniformTree,
    effective_branching_factor,
    knuth_moore_leaves,
    pearl_branching_factor,
)
from engine.score import MATE_BOUND


def subtree_value(tree: UniformTree, depth: int) -> int:
    """Plain negamax over the tree's static values at ``depth`` (the test's own oracle)."""
    if depth == 0:
        return tree.evaluate()
    best = -(10**9)
    for move in tree.legal_moves():
        tree.push(move)
        best = max(best, -subtree_value(tree, depth - 1))
        tree.pop()
    return best


def walk(tree: UniformTree | ChanceTree, depth: int) -> list[int]:
    """Every node number of the tree to ``depth``, in depth-first order."""
    nodes = [tree.key()]
    if depth:
        for move in tree.legal_moves():
            tree.push(move)
            nodes += walk(tree, depth - 1)
            tree.pop()
    return nodes


def test_trees_implement_the_game_contracts() -> None:
    assert isinstance(UniformTree(2, 3), Game)
    assert not has_chance(UniformTree(2, 3))
    chance = ChanceTree(2, 3, 3)
    assert isinstance(chance, Game)
    assert isinstance(chance, ChanceGame)
    assert has_chance(chance)


@pytest.mark.parametrize(("b", "d"), [(1, 4), (2, 5), (3, 4), (5, 2)])
def test_node_numbers_are_unique_heap_numbers(b: int, d: int) -> None:
    nodes = walk(UniformTree(b, d), d)
    assert len(nodes) == sum(b**k for k in range(d + 1))
    assert sorted(nodes) == list(range(len(nodes)))  # heap numbering: 0 .. N-1, no gaps


def test_chance_tree_node_numbers_are_unique() -> None:
    tree = ChanceTree(2, 4, 3)
    nodes = walk(tree, 4)
    assert len(nodes) == 1 + 2 + 2 * 3 + 2 * 3 * 2 + 2 * 3 * 2 * 3
    assert len(set(nodes)) == len(nodes)


@pytest.mark.parametrize("order", list(Order))
def test_values_are_a_function_of_seed_and_path(order: Order) -> None:
    a = UniformTree(3, 4, order, seed=11)
    b = UniformTree(3, 4, order, seed=11)
    for path in ([0, 1, 2, 0], [2, 2, 2, 2], [1, 0, 1, 0]):
        for move in path:
            a.push(move)
            b.push(move)
        assert a.evaluate() == b.evaluate()
        for _ in path:
            a.pop()
            b.pop()
    # The seed moves the root value (and every value of a random tree).
    assert UniformTree(3, 4, order, seed=11).evaluate() != UniformTree(3, 4, order, 12).evaluate()


def test_random_leaves_look_uniform() -> None:
    tree = UniformTree(4, 6, Order.RANDOM, seed=3)
    values = []
    for node_path in range(4096):
        path = [(node_path >> (2 * k)) & 3 for k in range(6)]
        for move in path:
            tree.push(move)
        values.append(tree.evaluate())
        for _ in path:
            tree.pop()
    assert all(-LEAF_RANGE <= v <= LEAF_RANGE for v in values)
    # 4096 uniform draws from 20,001 values: about 20001 * (1 - exp(-4096/20001)) = 3707
    # distinct ones (a tie between two given nodes has probability 1/20001).
    assert 3600 < len(set(values)) < 3800
    mean = sum(values) / len(values)
    assert abs(mean) < LEAF_RANGE * 0.05
    positive = sum(v > 0 for v in values)
    assert 1900 < positive < 2200


@pytest.mark.parametrize("order", [Order.PERFECT, Order.WORST])
@pytest.mark.parametrize(("b", "d"), [(2, 6), (3, 4), (4, 3), (5, 2)])
def test_ordered_trees_know_their_values(order: Order, b: int, d: int) -> None:
    """Every node's static value is its depth-``d`` minimax value, and the children come
    best first (perfect) or worst first, strictly (worst)."""
    tree = UniformTree(b, d, order, seed=5)
    assert subtree_value(tree, d) == tree.root_value == tree.evaluate()

    def check(level: int) -> None:
        if level == d:
            return
        own = tree.evaluate()
        merits = []
        for move in tree.legal_moves():
            tree.push(move)
            merits.append(-tree.evaluate())
            assert subtree_value(tree, d - level - 1) == tree.evaluate()
            check(level + 1)
            tree.pop()
        assert max(merits) == own
        if order is Order.PERFECT:
            assert merits == sorted(merits, reverse=True)
            assert merits[0] > merits[-1] or b == 1
        else:
            assert all(x < y for x, y in itertools.pairwise(merits))

    check(0)


def test_worst_trees_refuse_values_beyond_the_contract() -> None:
    assert UniformTree(10, 6, Order.WORST).max_value < MATE_BOUND
    with pytest.raises(ValueError, match="beyond"):
        UniformTree(8, 12, Order.WORST)
    UniformTree(8, 12, Order.RANDOM)  # random trees have no such limit
    UniformTree(3, 40, Order.PERFECT)  # nor do perfect ones: their steps are 1


def test_ordered_trees_stay_consistent_below_their_depth() -> None:
    tree = UniformTree(3, 2, Order.WORST, seed=1)
    assert subtree_value(tree, 4) == tree.root_value  # gaps are 0 below depth 2


def test_push_pop_restores_everything() -> None:
    tree = UniformTree(3, 5, Order.WORST, seed=2)
    before = (tree.key(), tree.evaluate(), tree.side, tree.ply, tree.fen())
    for move in (2, 0, 1, 1):
        tree.push(move)
    assert tree.ply == 4
    assert tree.side == 0
    assert tree.path == (2, 0, 1, 1)
    for _ in range(4):
        tree.pop()
    assert (tree.key(), tree.evaluate(), tree.side, tree.ply, tree.fen()) == before


def test_copy_is_independent() -> None:
    tree = UniformTree(2, 3, Order.PERFECT)
    tree.push(1)
    clone = tree.copy()
    clone.push(0)
    assert tree.path == (1,)
    assert clone.path == (1, 0)
    tree.push(0)
    assert clone.evaluate() == tree.evaluate()
    assert clone.key() == tree.key()


def test_contract_details() -> None:
    tree = UniformTree(3, 2)
    assert tree.legal_moves() == [0, 1, 2]
    assert tree.quiet_moves() == [0, 1, 2]
    assert tree.noisy_moves() == []
    assert not tree.is_noisy(0)
    assert not tree.is_terminal()
    assert not tree.in_check()
    assert not tree.can_null_move()
    with pytest.raises(GameError):
        tree.push_null()
    assert tree.features() == {"value": float(tree.evaluate())}
    assert tree.evaluator.evaluate(tree.features()) == tree.evaluate()
    assert tree.parse_move("2") == 2
    assert tree.format_move(2) == "2"
    for bad in ("3", "-1", "x", ""):
        with pytest.raises(IllegalMoveError):
            tree.parse_move(bad)
    assert tree.fen() == "tree 3:2 random seed 0 path root"
    tree.push(1)
    assert "path: 1 (node 2, ply 1)" in tree.display()


def test_trace_records_evaluations_only() -> None:
    tree = UniformTree(2, 2)
    tree.trace = []
    tree.features()  # explaining a position is not an evaluation
    tree.push(1)
    tree.evaluate()
    assert tree.trace == [2]


def test_chance_tree_structure() -> None:
    tree = ChanceTree(2, 5, 3, seed=4)
    assert not tree.is_chance_node()
    assert tree.legal_moves() == [0, 1]
    assert tree.side == 0
    tree.push(1)
    assert tree.is_chance_node()
    assert tree.side == 1  # "next": the player who moves after the event
    outcomes = tree.chance_outcomes()
    check_outcomes(outcomes)
    assert [m for m, _ in outcomes] == tree.legal_moves() == [0, 1, 2]
    assert all(isinstance(p, Fraction) for _, p in outcomes)
    tree.push(2)
    assert not tree.is_chance_node()
    assert tree.side == 1
    assert tree.value_bound == CHANCE_BOUND
    assert -CHANCE_BOUND <= tree.evaluate() <= CHANCE_BOUND
    previous = ChanceTree(2, 5, 3, seed=4, chance_side="previous")
    previous.push(1)
    assert previous.side == 0


def test_chance_probabilities_vary_and_are_exact() -> None:
    tree = ChanceTree(3, 2, 4, seed=9)
    seen = set()
    for move in range(3):
        tree.push(move)
        outcomes = tree.chance_outcomes()
        check_outcomes(outcomes)
        seen.add(tuple(p for _, p in outcomes))
        tree.pop()
    assert len(seen) > 1


def test_check_outcomes_rejects_bad_distributions() -> None:
    with pytest.raises(ValueError, match="sum"):
        check_outcomes([(0, Fraction(1, 2)), (1, Fraction(1, 3))])
    with pytest.raises(ValueError, match="positive"):
        check_outcomes([(0, Fraction(3, 2)), (1, Fraction(-1, 2))])
    with pytest.raises(ValueError, match="at least one"):
        check_outcomes([])


def test_tree_spec_parsing() -> None:
    spec = TreeSpec.parse("4:6", Order.WORST, seed=3)
    assert spec == TreeSpec(4, 6, Order.WORST, 3)
    assert spec.leaves == 4096
    assert spec.with_depth(2).leaves == 16
    assert isinstance(spec.build(), UniformTree)
    assert spec.label() == "tree 4:6, worst order, seed 3"
    chance = TreeSpec.parse("3:5", chance=2)
    assert isinstance(chance.build(), ChanceTree)
    assert chance.leaves == 3**3 * 2**2
    for bad in ("4", "4:", "a:3", "4:6:1", "-1:3"):
        with pytest.raises(ValueError, match="B:D"):
            TreeSpec.parse(bad)
    with pytest.raises(ValueError, match="depth"):
        TreeSpec.parse("3:0")
    with pytest.raises(ValueError, match="random"):
        TreeSpec(3, 3, Order.WORST, chance=2)


def test_knuth_moore_formula() -> None:
    # b^ceil(d/2) + b^floor(d/2) - 1, written out for small cases.
    assert knuth_moore_leaves(2, 1) == 2
    assert knuth_moore_leaves(2, 2) == 3
    assert knuth_moore_leaves(3, 3) == 9 + 3 - 1
    assert knuth_moore_leaves(4, 4) == 16 + 16 - 1
    assert knuth_moore_leaves(10, 5) == 1000 + 100 - 1


def test_pearl_branching_factor() -> None:
    golden = (1 + math.sqrt(5)) / 2  # b = 2: x**2 + x - 1 = 0 gives x = 1/golden
    assert pearl_branching_factor(2) == pytest.approx(golden, rel=1e-12)
    for b in range(2, 30):
        r = pearl_branching_factor(b)
        x = r / (1 + r)
        assert x**b + x - 1 == pytest.approx(0, abs=1e-12)
        assert 1 < r < b
    assert pearl_branching_factor(1) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        pearl_branching_factor(0)


def test_effective_branching_factor() -> None:
    assert effective_branching_factor(81, 4) == pytest.approx(3.0)
    assert math.isnan(effective_branching_factor(0, 3))
