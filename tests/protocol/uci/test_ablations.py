"""``Algorithm pvs-no-X`` / ``pvs-X``: the production search with one heuristic switched from
its default, for ablation matches.

Each name must run exactly the search that its :class:`SearchConfig` describes (same nodes,
same move), on the session's own Searcher (its table survives), and leave the Searcher's own
configuration as it was.
"""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from engine.control import SearchControl
from engine.info import SearchInfo
from engine.limits import Limits
from engine.search import ABLATIONS, SearchConfig, Searcher
from games.registry import get_variant
from protocol.uci.runner import PRODUCTION, run_search

# A middlegame with checks, captures and quiet moves (WAC 2).
FEN = "8/7p/5k2/5p2/p1p2P2/Pr1pPK2/1P1R3P/8 b - - 0 1"


def _ignore(_info: SearchInfo) -> None:
    pass


def _search(searcher: Searcher, algorithm: str, depth: int) -> tuple[str | None, int]:
    game = get_variant("chess").new(FEN)
    result = run_search(
        searcher,
        algorithm,
        game,
        Limits(depth=depth),
        control=SearchControl(),
        on_info=_ignore,
        multipv=1,
        move_overhead_ms=0,
    )
    return (None if result.best is None else str(result.best)), result.nodes


_SHORT = {
    "null_move": "nullmove",
    "lmr": "lmr",
    "futility": "futility",
    "exchange_pruning": "see",
    "check_extension": "checkext",
    "tt_eval": "tteval",
    "counter_moves": "countermove",
    "improving": "improving",
    "falling_eval_time": "fallingtime",
    "razoring": "razoring",
    "qsearch_tt_eval": "qstteval",
    "probcut": "probcut",
    "history_lmr": "historylmr",
    "singular": "singular",
}


@pytest.mark.parametrize("name", sorted(ABLATIONS))
def test_an_ablation_crosses_a_pickle_unchanged(name: str) -> None:
    """Configs travel to search workers by pickle (also when mypyc compiles the search,
    whose frozen classes cannot be filled in field by field)."""
    assert pickle.loads(pickle.dumps(ABLATIONS[name])) == ABLATIONS[name]


def test_every_switch_has_an_ablation() -> None:
    default = SearchConfig()
    switched = set()
    for config in ABLATIONS.values():
        (changed,) = [
            field.name
            for field in dataclasses.fields(SearchConfig)
            if getattr(config, field.name) != getattr(default, field.name)
        ]
        switched.add(changed)
    # quiescence, TT cut-offs and aspiration windows are not heuristics one would drop.
    assert switched == set(_SHORT)
    assert all(
        name == f"pvs-{'' if getattr(config, attr) else 'no-'}{short}"
        for name, config in ABLATIONS.items()
        for attr, short in _SHORT.items()
        if getattr(config, attr) != getattr(default, attr)
    )


@pytest.mark.parametrize("name", sorted(ABLATIONS))
def test_an_ablation_runs_its_config_and_restores_the_searcher(name: str) -> None:
    searcher = Searcher(1)
    # Depth 8: below it, with null move on and the threat terms in the evaluation, the
    # counter-move switch leaves this tree unchanged.
    got = _search(searcher, name, 8)
    assert searcher.config == SearchConfig()
    expected = _search(Searcher(1, config=ABLATIONS[name]), PRODUCTION, 8)
    production = _search(Searcher(1), PRODUCTION, 8)
    assert got == expected
    if ABLATIONS[name].falling_eval_time:
        # A switch of the clock's use: a search to a fixed depth must not change at all.
        assert got == production
    else:
        assert got[1] != production[1], "the switch must change the search"
