"""Native 64-bit bitboards agree with python-chess, h8 (the sign bit) included.

The module must be right both compiled (``i64`` wraps) and as plain Python (``i64`` is an
unbounded ``int``); the last test loads its source as plain Python beside the compiled copy
and checks that the two agree.
"""

from __future__ import annotations

import importlib.util
import random
from types import ModuleType

import chess
import pytest

from games.chess_game import bitboard64
from games.chess_game.bitboard64 import (
    SQUARE,
    bishop_attacks,
    lsb,
    msb,
    popcount,
    queen_attacks,
    rook_attacks,
    signed,
    unsigned,
)


def _boards(count: int, seed: int) -> list[int]:
    """Random boards of every density, plus the edge cases: empty, full, h8 alone, a1 and h8."""
    rng = random.Random(seed)
    boards = [0, chess.BB_ALL, chess.BB_H8, chess.BB_A1 | chess.BB_H8, chess.BB_RANK_8]
    for _ in range(count):
        density = rng.choice((0.05, 0.2, 0.5, 0.9))
        boards.append(sum(1 << sq for sq in range(64) if rng.random() < density))
    return boards


BOARDS = _boards(300, seed=16)


def test_signed_keeps_the_bits_and_unsigned_undoes_it() -> None:
    for bb in BOARDS:
        value = signed(bb)
        assert -(1 << 63) <= value < 1 << 63
        assert value & ((1 << 64) - 1) == bb
        assert unsigned(value) == bb
    assert signed(chess.BB_H8) == -(1 << 63)
    assert SQUARE[chess.H8] == -(1 << 63)
    assert [unsigned(SQUARE[sq]) for sq in chess.SQUARES] == chess.BB_SQUARES


def test_popcount_lsb_msb_match_python_ints() -> None:
    for bb in BOARDS:
        assert popcount(signed(bb)) == bb.bit_count()
        if bb:
            assert lsb(signed(bb)) == (bb & -bb).bit_length() - 1
            assert msb(signed(bb)) == bb.bit_length() - 1
    for sq in chess.SQUARES:
        assert lsb(SQUARE[sq]) == sq
        assert msb(SQUARE[sq]) == sq


@pytest.mark.parametrize("square", chess.SQUARES)
def test_slider_attacks_match_python_chess(square: chess.Square) -> None:
    for occupied in BOARDS[:80]:
        occ = signed(occupied)
        rook = chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied]
        rook |= chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied]
        bishop = chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
        assert unsigned(rook_attacks(square, occ)) == rook
        assert unsigned(bishop_attacks(square, occ)) == bishop
        assert unsigned(queen_attacks(square, occ)) == rook | bishop


def _plain_python_copy() -> ModuleType:
    """The module's source run by the interpreter, whatever the compiled copy is."""
    path = bitboard64.__file__ or ""
    source = path[: path.rindex("bitboard64") + len("bitboard64")] + ".py"
    spec = importlib.util.spec_from_file_location("bitboard64_plain", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plain_python_agrees_with_the_compiled_module() -> None:
    plain = _plain_python_copy()
    for bb in BOARDS[:100]:
        value = signed(bb)
        assert plain.signed(bb) == value
        assert plain.popcount(value) == popcount(value)
        if bb:
            assert plain.lsb(value) == lsb(value)
            assert plain.msb(value) == msb(value)
        for square in (chess.A1, chess.D4, chess.H8, chess.G7):
            assert plain.rook_attacks(square, value) == rook_attacks(square, value)
            assert plain.bishop_attacks(square, value) == bishop_attacks(square, value)
