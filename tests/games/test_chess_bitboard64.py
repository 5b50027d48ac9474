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

from games.chess_game import bitboard64, bitboard_plain, magics
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
from games.chess_game.magics import BISHOP_MAGICS, ROOK_MAGICS


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


def _assert_attacks_match_python_chess(square: chess.Square, occupied: int) -> None:
    """Rook, bishop and queen attacks from ``square`` equal python-chess's tables'."""
    occ = signed(occupied)
    rook = chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied]
    rook |= chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied]
    bishop = chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
    assert unsigned(rook_attacks(square, occ)) == rook
    assert unsigned(bishop_attacks(square, occ)) == bishop
    assert unsigned(queen_attacks(square, occ)) == rook | bishop


@pytest.mark.parametrize("square", chess.SQUARES)
def test_slider_attacks_match_python_chess(square: chess.Square) -> None:
    for occupied in BOARDS[:80]:
        _assert_attacks_match_python_chess(square, occupied)


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


# -- magic bitboards --------------------------------------------------------------------------
_MASK_64 = (1 << 64) - 1
MAGIC_BOARDS = _boards(400, seed=46)


def _rook_mask(square: chess.Square) -> int:
    return chess.BB_RANK_MASKS[square] | chess.BB_FILE_MASKS[square]


@pytest.mark.parametrize("square", chess.SQUARES)
def test_magic_lookups_match_python_chess_where_the_product_wraps(square: chess.Square) -> None:
    """The lookup multiplies two ``i64`` (compiled: C's signed product, which the build makes
    wrap with -fwrapv); most of these products exceed 2**64, so a product that did not wrap
    modulo 2**64 would give other indices and other attacks."""
    wrapped = 0
    for occupied in MAGIC_BOARDS:
        _assert_attacks_match_python_chess(square, occupied)
        wrapped += (occupied & _rook_mask(square)) * ROOK_MAGICS[square] > _MASK_64
        wrapped += (occupied & chess.BB_DIAG_MASKS[square]) * BISHOP_MAGICS[square] > _MASK_64
    assert wrapped > len(MAGIC_BOARDS)


def test_magic_lookups_equal_the_pure_python_twins() -> None:
    """What this build runs (compiled magic lookups, or the twins under BRUDNO_PURE_PYTHON)
    against the twins a pure install runs, and the module's word arithmetic run uncompiled
    (its products never wrap) against both."""
    words = _plain_python_copy("bitboard64.so")
    for square in chess.SQUARES:
        for occupied in MAGIC_BOARDS[:40]:
            occ = signed(occupied)
            rook = bitboard_plain.rook_attacks(square, occ)
            bishop = bitboard_plain.bishop_attacks(square, occ)
            assert rook_attacks(square, occ) == words.rook_attacks(square, occ) == rook
            assert bishop_attacks(square, occ) == words.bishop_attacks(square, occ) == bishop


def test_a_magic_that_collides_fails_the_import(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables are filled through the magics at import, which check them: a multiplier
    that maps two occupancies with different attacks to one index stops the import."""
    bad = (1, *ROOK_MAGICS[1:])  # every subset of a1's mask (bits 1-48) lands on index 0
    monkeypatch.setattr(magics, "ROOK_MAGICS", bad)
    with pytest.raises(AssertionError, match="square 0 collides"):
        _plain_python_copy("bitboard64.so")


def test_the_tables_are_built_only_where_the_lookups_run() -> None:
    """A pure install takes python-chess's tables (the twins): no table build at import."""
    assert len(_plain_python_copy("bitboard64.py")._SLIDER_ATTACKS) == 0
    assert len(_plain_python_copy("bitboard64.so")._SLIDER_ATTACKS) == 6 * 64 + 107_648
