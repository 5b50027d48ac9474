"""Native 64-bit bitboards agree with python-chess, h8 (the sign bit) included.

The module must be right both compiled (``i64`` wraps) and as plain Python (``i64`` is an
unbounded ``int``, and the module takes the builtin-based twins of ``bitboard_plain``); the
last test runs its source as plain Python both ways, whatever the suite itself runs.
"""

from __future__ import annotations

import random
from types import ModuleType

import chess
import pytest

from games.chess_game import bitboard64, bitboard_plain
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


def _plain_python_copy(file_name: str) -> ModuleType:
    """The module's source run by the interpreter, whatever the compiled copy is.

    Its ``__file__`` decides which set runs: a name ending in ``.py`` makes it take the
    builtin-based twins, as a pure install does; any other keeps the word arithmetic that
    compiled code runs, here as plain Python.
    """
    path = bitboard64.__file__ or ""
    source = path[: path.rindex("bitboard64") + len("bitboard64")] + ".py"
    module = ModuleType("bitboard64_plain")
    module.__file__ = file_name
    with open(source, encoding="utf-8") as handle:
        code = compile(handle.read(), source, "exec")
    exec(code, module.__dict__)  # our own source, run uncompiled
    return module


@pytest.mark.parametrize("file_name", ["bitboard64.py", "bitboard64.so"])
def test_plain_python_agrees_with_python_chess(file_name: str) -> None:
    plain = _plain_python_copy(file_name)
    swapped = file_name.endswith(".py")
    twins = ("popcount", "lsb", "msb", "rook_attacks", "bishop_attacks")
    assert {getattr(plain, name) is getattr(bitboard_plain, name) for name in twins} == {swapped}
    for bb in BOARDS[:100]:
        value = plain.signed(bb)
        assert plain.popcount(value) == bb.bit_count()
        if bb:
            assert plain.lsb(value) == (bb & -bb).bit_length() - 1
            assert plain.msb(value) == bb.bit_length() - 1
    for square in chess.SQUARES:
        for occupied in BOARDS[:12]:
            occ = plain.signed(occupied)
            rook = chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied]
            rook |= chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied]
            bishop = chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
            assert plain.unsigned(plain.rook_attacks(square, occ)) == rook
            assert plain.unsigned(plain.bishop_attacks(square, occ)) == bishop
