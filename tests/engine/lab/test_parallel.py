"""The simulated parallel schemes: exact values, the serial case, and sane accounting."""

from __future__ import annotations

import pytest

from engine.lab.parallel import SCHEMES, Scheme, serial_nodes, simulate
from engine.lab.trees import Order, UniformTree

TREES = [
    UniformTree(2, 6, Order.RANDOM, 3),
    UniformTree(3, 5, Order.RANDOM, 1),
    UniformTree(4, 5, Order.RANDOM, 7),
    UniformTree(3, 5, Order.PERFECT, 2),
    UniformTree(3, 4, Order.WORST, 4),
    UniformTree(5, 4, Order.RANDOM, 11),
]
PROCESSORS = [1, 2, 3, 4, 8, 16]


def tree_id(tree: UniformTree) -> str:
    return f"{tree.branching}:{tree.depth}-{tree.order.value}-{tree.seed}"


@pytest.mark.parametrize("tree", TREES, ids=tree_id)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_scheme_finds_the_serial_value(tree: UniformTree, scheme: str) -> None:
    value, serial = serial_nodes(tree)
    for p in PROCESSORS:
        result = simulate(scheme, tree, p)
        assert result.value == value, (scheme, p)
        assert result.serial == serial
        assert result.processors == p
        assert p * result.time == result.nodes + result.idle
        assert 0.0 <= result.idle_fraction <= 1.0
        assert result.nodes >= result.time  # someone works in every counted step


@pytest.mark.parametrize("tree", TREES, ids=tree_id)
@pytest.mark.parametrize("scheme", [Scheme.PV_SPLIT, Scheme.YBWC])
def test_one_processor_is_serial_alphabeta_exactly(tree: UniformTree, scheme: Scheme) -> None:
    _, serial = serial_nodes(tree)
    result = simulate(scheme, tree, 1)
    assert (result.time, result.nodes, result.idle) == (serial, serial, 0)
    assert result.speedup == 1.0
    assert result.overhead == 0.0


@pytest.mark.parametrize("tree", TREES, ids=tree_id)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_speedup_is_at_most_the_processor_count(tree: UniformTree, scheme: str) -> None:
    # Not a theorem (a helper can find a cut-off the serial search meets late: superlinear
    # speedup), but it holds on these trees, and a violation here is more likely a bug.
    # Lazy SMP is measured against its own one-processor search, iterative deepening with a
    # table, which can beat plain alpha-beta (on worst-order trees the table's move fixes
    # the order), so its speedup over alpha-beta can exceed P.
    one = simulate(scheme, tree, 1).time
    for p in PROCESSORS:
        result = simulate(scheme, tree, p)
        assert one / result.time <= p
        if scheme != Scheme.LAZY_SMP:
            assert result.speedup <= p


def test_lazy_smp_on_one_processor_is_iterative_deepening() -> None:
    tree = UniformTree(3, 5, Order.RANDOM, 1)
    result = simulate(Scheme.LAZY_SMP, tree, 1)
    assert result.idle == 0
    assert result.time == result.nodes


def test_perfect_order_ybwc_has_no_search_overhead() -> None:
    # Every cut-off comes from an eldest brother, which YBWC always searches first.
    tree = UniformTree(3, 6, Order.PERFECT, 5)
    for p in PROCESSORS:
        assert simulate(Scheme.YBWC, tree, p).overhead == 0.0


def test_parallelism_helps() -> None:
    tree = UniformTree(4, 6, Order.RANDOM, 1)
    ybwc = [simulate(Scheme.YBWC, tree, p).time for p in (1, 2, 4, 8)]
    assert ybwc == sorted(ybwc, reverse=True) and ybwc[-1] < ybwc[0] / 3
    pv = [simulate(Scheme.PV_SPLIT, tree, p).time for p in (1, 2, 4)]
    assert pv[2] < pv[0]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_deterministic(scheme: str) -> None:
    tree = UniformTree(4, 5, Order.RANDOM, 2)
    assert simulate(scheme, tree, 8) == simulate(scheme, tree, 8)


def test_bad_arguments() -> None:
    tree = UniformTree(2, 3)
    with pytest.raises(ValueError, match="processors"):
        simulate(Scheme.YBWC, tree, 0)
    with pytest.raises(ValueError):
        simulate("nosuchscheme", tree, 2)
