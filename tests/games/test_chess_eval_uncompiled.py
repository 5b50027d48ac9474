"""The evaluation's source, run uncompiled, agrees with the compiled module.

CI's lint step and a checkout without a C compiler run the pure Python sources, where an
``i64`` is a Python int: a bit trick that relies on 64-bit wrapping (h8's bit of a board
is the sign bit) loops forever there.  This loads ``evaluation.py`` from source beside the
compiled modules and evaluates positions with pieces on h8 and a1 both ways."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from games.chess_game import evaluation
from games.chess_game.adapter import from_fen
from tests.support.paths import REPO


@pytest.fixture(scope="module")
def source_evaluation() -> ModuleType:
    path = REPO / "games" / "chess_game" / "evaluation.py"
    spec = importlib.util.spec_from_file_location("_evaluation_from_source", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.mark.parametrize(
    "fen",
    [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "6kq/5ppp/8/8/8/8/5PPP/B5KR b - - 0 1",
        "7B/8/8/2k5/8/8/8/N3K2Q w - - 0 1",
        "k6r/8/8/8/8/8/8/B5K1 w - - 0 1",  # a threat on h8's man (its bit is the sign bit)
        "k6q/8/8/4N3/8/8/8/K7 w - - 0 1",  # a lone queen on h8, a knight that can hit it
    ],
)
def test_source_and_compiled_evaluations_agree(source_evaluation: ModuleType, fen: str) -> None:
    game = from_fen(fen)
    node = game._current  # the adapter's boards, as the search passes them
    tables = game._tables
    psq = game._psq
    expected = evaluation.evaluate_fast(node, psq, tables)
    assert source_evaluation.evaluate_fast(node, psq, tables) == expected
