"""Chess evaluation as a linear function of named features: the search's fast route.

eval = Σ wᵢ·fᵢ from the side to move's view; middlegame and endgame features are tapered by
the game phase in 32nds inside the feature values, so the evaluation stays linear in the
weights (Texel tuning fits them).  :func:`evaluate_fast` computes, on integer bitboards with
incremental material and a pawn-and-king cache, exactly the integer that the readable route
(:func:`games.chess_game.features.features` weighted and rounded) gives for integer weights;
scores are packed ``mg + eg·2²¹`` (:func:`unpack`).  Known rook-pawn draws score an exact 0.
The features, the taper's arithmetic and why: docs/evaluation.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import chess
from librt.vecs import vec
from mypy_extensions import i64

from games.chess_game.bitboard64 import (
    DEBRUIJN,
    KING_ATTACKS,
    KNIGHT_ATTACKS,
    LSB_SQUARE,
    SQUARE,
    Bitboards,
    bishop_attacks,
    lsb,
    msb,
    popcount,
    queen_attacks,
    rook_attacks,
    signed,
    signed_table,
    wrapped,
)

__all__ = [
    "DANGER_BASE",
    "DANGER_KNIGHT_GUARD",
    "DANGER_SAFE_CHECK",
    "DANGER_SHIFT",
    "DANGER_THRESHOLD",
    "DANGER_UNITS",
    "DANGER_UNSAFE_CHECK",
    "DANGER_WEAK_ZONE",
    "DANGER_ZONE_ATTACK",
    "EVAL_SLOT_MASK",
    "EVAL_STORED",
    "MOBILITY_COUNTS",
    "PASSED_RANKS",
    "PHASE_MAX",
    "PIECE_LETTERS",
    "TAPER",
    "TAPER_MAX",
    "EvalTables",
    "evaluate_fast",
    "known_draw",
    "material_psq",
    "pack",
    "psq_index",
    "unpack",
]

PHASE_MAX: Final = 24
"""Phase with all pieces on the board (2·2 N + 2·2 B + 2·2·2 R + 2·4 Q)."""

TAPER_MAX: Final = 32
"""The taper's denominator: a power of two, so tapered feature values are exact floats."""
_TAPER_BITS: Final = 5
assert 1 << _TAPER_BITS == TAPER_MAX

TAPER: Final = tuple((4 * phase + 1) // 3 for phase in range(PHASE_MAX + 1))
"""``TAPER[phase]`` = round(phase · 32 / 24) (thirds never tie)."""
_TAPER64: Final = vec[i64](list(TAPER))
""":data:`TAPER` as a native array, for the fast route."""

PAWN_CACHE_SIZE: Final = 1 << 14
"""Slots of the pawn-and-king cache (pawn structures repeat a lot in a tree), a power of two."""
_PAWN_SLOT_MASK: Final = PAWN_CACHE_SIZE - 1
_PAWN_MIX: Final = signed(0x9E37_79B9_7F4A_7C15)
"""An odd multiplier (2⁶⁴ / golden ratio): its products' top bits spread the slots."""
_NO_PAWNS_STORED: Final = -1
"""The white-pawn word of an empty slot: no pawn board has all 64 bits."""

EVAL_CACHE_SIZE: Final = 1 << 16
"""Slots of the evaluation cache (by position key), a power of two."""
EVAL_SLOT_MASK: Final = EVAL_CACHE_SIZE - 1
EVAL_STORED: Final = 1 << 32
"""Added to a cached evaluation, so an empty slot (0) never reads as one."""

_SHIFT: Final = 21
_HALF: Final = 1 << (_SHIFT - 1)

PIECE_LETTERS: Final = ("", "P", "N", "B", "R", "Q", "K")
"""The letter of each piece type in feature names (``material.mg.N``)."""
PASSED_RANKS: Final = range(2, 8)
"""The relative ranks a passed pawn has a feature for (``passed.r2`` .. ``passed.r7``)."""
MOBILITY_COUNTS: Final = {"N": range(9), "B": range(14), "R": range(15), "Q": range(28)}
"""The mobility counts a piece of each type can have (``mobility.N.0`` .. ``mobility.N.8``)."""


def pack(mg: int, eg: int) -> int:
    """One int carrying a middlegame and an endgame value (sums of packed values stay packed)."""
    return mg + (eg << _SHIFT)


def unpack(score: int) -> tuple[int, int]:
    eg = (score + _HALF) >> _SHIFT
    return score - (eg << _SHIFT), eg


# -- bitboard constants ----------------------------------------------------------------------

_ALL: Final = chess.BB_ALL
_NOT_A: Final = _ALL & ~chess.BB_FILE_A
_NOT_H: Final = _ALL & ~chess.BB_FILE_H
_ZONE64: Final = signed_table(
    [chess.BB_KING_ATTACKS[sq] | chess.BB_SQUARES[sq] for sq in chess.SQUARES]
)
_NOT_A64: Final = signed(_NOT_A)
_NOT_H64: Final = signed(_NOT_H)
_LOW_RANKS_W64: Final = signed(chess.BB_RANK_2 | chess.BB_RANK_3)
_RANK_3_64: Final = signed(chess.BB_RANK_3)
_RANK_6_64: Final = signed(chess.BB_RANK_6)
_LOW_RANKS_B64: Final = signed(chess.BB_RANK_6 | chess.BB_RANK_7)
_FILE_OF64: Final = signed_table([chess.BB_FILES[sq & 7] for sq in chess.SQUARES])
_FILE_A64: Final = signed(chess.BB_FILE_A)
_FILE_H64: Final = signed(chess.BB_FILE_H)
_FILES_AB64: Final = signed(chess.BB_FILE_A | chess.BB_FILE_B)
_FILES_GH64: Final = signed(chess.BB_FILE_G | chess.BB_FILE_H)
_LIGHT64: Final = signed(chess.BB_LIGHT_SQUARES)


def _rank_mask_ahead(square: chess.Square, distance: int) -> chess.Bitboard:
    """Files beside and at ``square``, ``distance`` ranks up (white's view); 0 off the board."""
    rank = chess.square_rank(square) + distance
    if rank > 7:
        return 0
    file = chess.square_file(square)
    mask = 0
    for f in (file - 1, file, file + 1):
        if 0 <= f < 8:
            mask |= chess.BB_SQUARES[chess.square(f, rank)]
    return mask


_LOW24: Final = (1 << 24) - 1
_LOW40: Final = (1 << 40) - 1
_LOW48: Final = (1 << 48) - 1
_NOT_A_UP: Final = _NOT_A >> 8
_NOT_H_UP: Final = _NOT_H >> 8
_SHIELD1_UP: Final = vec[i64]([_rank_mask_ahead(sq, 1) >> 8 for sq in chess.SQUARES])
_SHIELD2_UP: Final = vec[i64]([_rank_mask_ahead(sq, 2) >> 8 for sq in chess.SQUARES])
"""The pawn terms' masks in their frame shifted down a rank (see :func:`_pawn_king_side`)."""
_KING_RACE_DISTANCE: Final = vec[i64](
    [min(chess.square_distance(a, b), 5) for a in chess.SQUARES for b in chess.SQUARES]
)
"""``[king * 64 + square]``: Chebyshev distance, capped at 5 (further is as good as lost)."""
_URGENCY: Final = vec[i64]([5 * r - 13 if r >= 3 else 0 for r in range(8)])
"""A passed pawn's weight in the king race by its rank index (rank 4 is 2, rank 7 is 17)."""
_NEAR_FILES: Final = vec[i64](
    [sum(1 << f for f in (sq % 8 - 1, sq % 8, sq % 8 + 1) if 0 <= f < 8) for sq in chess.SQUARES]
)
"""``[king]``: the files at and beside the king's, one bit per file (bit 0 is the a-file)."""
_RANK_2_UP: Final = 0xFF
"""The lowest rank of the pawn terms' frame (rank 2): after a fill, one bit per pawn file."""


def _north_fill(bb: i64) -> i64:
    """Every square of ``bb`` and all above it, within the rank-shifted frame of the pawn
    terms (bits 0-55): masked before each shift, so no value passes 2⁵⁶."""
    bb |= (bb & _LOW48) << 8
    bb |= (bb & _LOW40) << 16
    return bb | (bb & _LOW24) << 32


def _south_fill(bb: i64) -> i64:
    bb |= bb >> 8
    bb |= bb >> 16
    bb |= bb >> 32
    return bb


# King danger's units (Stockfish 11's classical ``king()``, in its internal centipawns, where
# a pawn is 128): per attacking piece by type, per zone square attacked, per weak zone
# square, per unsafe check, per safe check by the checking piece, a constant, and less with
# a knight beside the king.  Above the threshold the feature is danger² / 2¹³, about
# Stockfish's danger² / 4096 in its units scaled to ours (a pawn 67 in the middlegame).
DANGER_KNIGHT: Final = 81
DANGER_BISHOP: Final = 52
DANGER_ROOK: Final = 44
DANGER_QUEEN: Final = 10
DANGER_ZONE_ATTACK: Final = 69
DANGER_WEAK_ZONE: Final = 185
DANGER_UNSAFE_CHECK: Final = 148
DANGER_CHECK_QUEEN: Final = 772
DANGER_CHECK_ROOK: Final = 1084
DANGER_CHECK_BISHOP: Final = 645
DANGER_CHECK_KNIGHT: Final = 792
DANGER_KNIGHT_GUARD: Final = 100
DANGER_BASE: Final = 37
DANGER_THRESHOLD: Final = 100
DANGER_SHIFT: Final = 13
DANGER_UNITS: Final = {
    chess.KNIGHT: DANGER_KNIGHT,
    chess.BISHOP: DANGER_BISHOP,
    chess.ROOK: DANGER_ROOK,
    chess.QUEEN: DANGER_QUEEN,
}
"""The per-piece units by piece type, for the readable route."""
DANGER_SAFE_CHECK: Final = {
    chess.KNIGHT: DANGER_CHECK_KNIGHT,
    chess.BISHOP: DANGER_CHECK_BISHOP,
    chess.ROOK: DANGER_CHECK_ROOK,
    chess.QUEEN: DANGER_CHECK_QUEEN,
}

# -- weights as integer tables -----------------------------------------------------------------


class EvalTables:
    """The weights of one evaluator laid out for the fast route, plus its caches.

    Built once per weight table (the adapter shares it between copies of a game); weights
    changed in the evaluator afterwards are not seen (build a new game).  ``exact`` is False
    when some weight is not an integer: the fast route cannot reproduce a fractional sum
    exactly, so the adapter evaluates through the feature dictionary instead.
    """

    __slots__ = (
        "backward",
        "bishop_pair",
        "connected",
        "doubled",
        "eval_keys",
        "eval_values",
        "exact",
        "isolated",
        "king_attackers",
        "king_danger",
        "king_open_file",
        "king_shield1",
        "king_shield2",
        "king_zone_attacks",
        "mob_b",
        "mob_n",
        "mob_q",
        "mob_r",
        "passed",
        "passed_king_them",
        "passed_king_us",
        "pawn_black",
        "pawn_kings",
        "pawn_score",
        "pawn_white",
        "psq",
        "rook_open",
        "rook_semi",
        "tempo",
        "threat_hanging",
        "threat_king",
        "threat_knight_on_queen",
        "threat_minor",
        "threat_pawn_push",
        "threat_restricted",
        "threat_rook",
        "threat_safe_pawn",
        "threat_slider_on_queen",
        "threat_weak_queen_protection",
    )

    def __init__(self, weights: Mapping[str, float]) -> None:
        self.exact = all(float(v).is_integer() for v in weights.values())

        # The weights as native words: compiled, tagged ``int`` attributes cost a check of
        # their tag on every use in the fast route.
        def weight(name: str) -> i64:
            value = weights.get(name, 0)
            return int(value) if self.exact else 0

        def both(name: str) -> i64:
            group, _, rest = name.partition(".")
            suffix = f".{rest}" if rest else ""
            return pack(weight(f"{group}.mg{suffix}"), weight(f"{group}.eg{suffix}"))

        psq: list[i64] = []
        for color in (chess.BLACK, chess.WHITE):
            sign = 1 if color else -1
            psq += [0] * 64  # piece type 0: none
            for piece_type in chess.PIECE_TYPES:
                letter = PIECE_LETTERS[piece_type]
                material = both(f"material.{letter}") if piece_type != chess.KING else 0
                for square in chess.SQUARES:
                    rel = square if color else chess.square_mirror(square)
                    value = material + both(f"psqt.{letter}.{chess.SQUARE_NAMES[rel]}")
                    psq.append(sign * value)
        self.psq = vec[i64](psq)
        """``psq[psq_index(color, piece_type, square)]``: material plus square value, signed
        for white (a native array: the adapter reads it at every move, where nested tuples
        cost two lookups and an unboxing)."""

        self.mob_n = vec[i64]([both(f"mobility.N.{k}") for k in MOBILITY_COUNTS["N"]])
        self.mob_b = vec[i64]([both(f"mobility.B.{k}") for k in MOBILITY_COUNTS["B"]])
        self.mob_r = vec[i64]([both(f"mobility.R.{k}") for k in MOBILITY_COUNTS["R"]])
        self.mob_q = vec[i64]([both(f"mobility.Q.{k}") for k in MOBILITY_COUNTS["Q"]])
        """A piece's value by the squares it reaches in its mobility area (0 to the most)."""
        self.doubled = both("pawns.doubled")
        self.isolated = both("pawns.isolated")
        self.backward = both("pawns.backward")
        self.connected = both("pawns.connected")
        self.passed = vec[i64](
            [both(f"passed.r{r + 1}") if r + 1 in PASSED_RANKS else 0 for r in range(8)]
        )
        """By rank index 0..7 (white's view): rank 2 is index 1."""
        self.passed_king_them = both("passed.king_them")
        self.passed_king_us = both("passed.king_us")
        self.king_shield1: i64 = pack(weight("king.mg.shield1"), 0)
        self.king_shield2: i64 = pack(weight("king.mg.shield2"), 0)
        self.king_open_file: i64 = pack(weight("king.mg.open_file"), 0)
        self.king_attackers: i64 = pack(weight("king.mg.attackers"), 0)
        self.king_zone_attacks: i64 = pack(weight("king.mg.zone_attacks"), 0)
        self.king_danger: i64 = pack(weight("king.mg.danger"), 0)
        self.rook_open = both("rook.open_file")
        self.rook_semi = both("rook.semi_open_file")
        self.bishop_pair = both("bishop_pair")
        self.tempo = weight("tempo")
        self.threat_minor = vec[i64](
            [0] + [both(f"threats.minor.{PIECE_LETTERS[p]}") for p in range(1, 6)]
        )
        """By the victim's piece type (1 = pawn .. 5 = queen; 0 unused)."""
        self.threat_rook = vec[i64](
            [0] + [both(f"threats.rook.{PIECE_LETTERS[p]}") for p in range(1, 6)]
        )
        self.threat_king = both("threats.king")
        self.threat_hanging = both("threats.hanging")
        self.threat_weak_queen_protection = both("threats.weak_queen_protection")
        self.threat_restricted = both("threats.restricted")
        self.threat_safe_pawn = both("threats.safe_pawn")
        self.threat_pawn_push = both("threats.pawn_push")
        self.threat_knight_on_queen = both("threats.knight_on_queen")
        self.threat_slider_on_queen = both("threats.slider_on_queen")
        # The pawn cache: four parallel native arrays (white pawns, black pawns, both kings'
        # squares, score) that a slot hashed from the first three indexes.  A hit compares the
        # stored words with the position's, so the cache is exact; a miss overwrites.  A
        # dict keyed by a tuple cost a tuple, two boxed boards and a tuple hash per probe.
        self.pawn_white = vec[i64]([_NO_PAWNS_STORED] * PAWN_CACHE_SIZE)
        self.pawn_black = vec[i64]([0] * PAWN_CACHE_SIZE)
        self.pawn_kings = vec[i64]([0] * PAWN_CACHE_SIZE)
        self.pawn_score = vec[i64]([0] * PAWN_CACHE_SIZE)
        # The evaluation cache: direct-mapped by the low bits of the position key, exact by
        # the whole key.  A dict cost a boxed key, a hash and an insert per evaluation.
        self.eval_keys = vec[i64]([0] * EVAL_CACHE_SIZE)
        self.eval_values = vec[i64]([0] * EVAL_CACHE_SIZE)


def psq_index(white: bool, piece_type: i64, square: i64) -> i64:
    """Where :attr:`EvalTables.psq` keeps a piece's material + square value."""
    return ((7 if white else 0) + piece_type) * 64 + square


def material_psq(board: chess.Board, tables: EvalTables) -> i64:
    """Packed material + piece-square sum from scratch (white's view); the adapter then keeps
    it up to date move by move."""
    score: i64 = 0
    for color in chess.COLORS:
        occupied = board.occupied_co[color]
        for piece_type in chess.PIECE_TYPES:
            for square in chess.scan_forward(board.pieces_mask(piece_type, color) & occupied):
                score += tables.psq[psq_index(color, piece_type, square)]
    return score


# -- the fast route --------------------------------------------------------------------------


def _pawn_king_side(t: EvalTables, own: i64, enemy: i64, king: i64, enemy_king: i64) -> i64:
    """Packed pawn-structure and pawn-shelter score of one side, seen as white (black's pawns
    and kings arrive flipped), by whole-board set operations.

    The pawn boards come shifted down a rank (:func:`pawn_king_score`): bit ``b`` is square
    ``b + 8``, so every set below stays under 2⁵⁶ and no shift wraps, compiled or not; the
    frame once kept the sets in tagged ``int`` words too (unshifted, fills reached bit 63,
    where each operation allocated a Python ``int``: a tenth of the search's instructions).
    Rank 1, which the shift drops, never holds a pawn.  The sets, weights and tables are
    native ``i64``: as tagged ``int`` arithmetic with tuple tables, a pawn-cache miss cost
    3,600 instructions.
    """
    # Per file: doubled counts the pawns beyond the first, isolated every pawn of a file with
    # no own pawn on either neighbour file; both as whole-board fills instead of a file loop.
    doubled = popcount(own & ((_north_fill(own) & _LOW48) << 8))
    east = (own << 1) & _NOT_A_UP
    west = (own >> 1) & _NOT_H_UP
    beside = east | west
    has_neighbour_file = _south_fill(_north_fill(beside))
    isolated = popcount(own & ~has_neighbour_file)
    protected_squares = ((own << 9) & _NOT_A_UP) | ((own << 7) & _NOT_H_UP)
    connected = popcount(own & (beside | protected_squares))

    enemy_front = _south_fill(
        (enemy | ((enemy << 1) & _NOT_A_UP) | ((enemy >> 1) & _NOT_H_UP)) >> 8
    )
    passed = own & ~enemy_front & ~_south_fill(own >> 8)

    supported_from_behind = _north_fill(beside)
    enemy_attacks = ((enemy >> 7) & _NOT_A_UP) | ((enemy >> 9) & _NOT_H_UP)
    backward = popcount(own & has_neighbour_file & ~supported_from_behind & (enemy_attacks >> 8))
    # One bit per file with an own pawn, against the files at and beside the king.
    own_files = _south_fill(own) & _RANK_2_UP
    open_files = popcount(_NEAR_FILES[king] & ~own_files)

    score = (
        t.doubled * doubled
        + t.isolated * isolated
        + t.backward * backward
        + t.connected * connected
        + t.king_shield1 * popcount(own & _SHIELD1_UP[king])
        + t.king_shield2 * popcount(own & _SHIELD2_UP[king])
        + t.king_open_file * open_files
    )
    king_row = king * 64
    enemy_king_row = enemy_king * 64
    while passed:
        bit = lsb(passed)
        passed ^= SQUARE[bit]
        sq = bit + 8
        rank = sq >> 3
        score += t.passed[rank]
        if rank >= 3:
            stop = sq + 8
            score += _URGENCY[rank] * (
                t.passed_king_them * _KING_RACE_DISTANCE[enemy_king_row + stop]
                + t.passed_king_us * _KING_RACE_DISTANCE[king_row + stop]
            )
    return score


def pawn_king_score(t: EvalTables, wp: i64, bp: i64, wk: i64, bk: i64) -> i64:
    """Packed pawn and shelter terms, white's minus black's (pawn boards as python-chess's,
    which never have a pawn on rank 1 or 8)."""
    white = wp >> 8
    black = bp >> 8
    return _pawn_king_side(t, white, black, wk, bk) - _pawn_king_side(
        t, _flip_ranks_2_to_7(black), _flip_ranks_2_to_7(white), bk ^ 56, wk ^ 56
    )


def _flip_ranks_2_to_7(bb: i64) -> i64:
    """A pawn board shifted down a rank (six ranks, one byte each) mirrored top to bottom:
    python-chess's ``flip_vertical`` in that frame."""
    return (
        ((bb & 0xFF) << 40)
        | ((bb & 0xFF00) << 24)
        | ((bb & 0xFF_0000) << 8)
        | ((bb >> 8) & 0xFF_0000)
        | ((bb >> 24) & 0xFF00)
        | (bb >> 40)
    )


def _rook_pawns_hold(pawns: i64, bishops: i64, king: i64, white: bool) -> bool:
    """Whether a bare king on ``king`` draws against these pawns and bishops of the side
    (``white`` or not) that has nothing else (see "Known draws" in the module docstring)."""
    if pawns == 0 or popcount(bishops) > 1:
        return False
    if pawns & ~_FILE_A64 == 0:
        near_files = _FILES_AB64
        queening: i64 = 56 if white else 0
    elif pawns & ~_FILE_H64 == 0:
        near_files = _FILES_GH64
        queening = 63 if white else 7
    else:
        return False
    king_bb = SQUARE[king]
    if bishops == 0:
        rank = king >> 3
        ahead = rank > (msb(pawns) >> 3) if white else rank < (lsb(pawns) >> 3)
        return ahead and king_bb & near_files != 0
    if ((bishops & _LIGHT64) == 0) == ((SQUARE[queening] & _LIGHT64) == 0):
        return False  # the bishop covers the queening square
    return king_bb & _ZONE64[queening] != 0


def _known_draw(occ_w: i64, occ_b: i64, pawns: i64, bishops: i64, kings: i64) -> bool:
    """Whether one side holds the other's rook pawns with a bare king, on a board without
    knights, rooks and queens (the caller checks that: it is the cheap test)."""
    if occ_b & ~kings == 0:
        return _rook_pawns_hold(pawns & occ_w, bishops & occ_w, msb(kings & occ_b), True)
    if occ_w & ~kings == 0:
        return _rook_pawns_hold(pawns & occ_b, bishops & occ_b, msb(kings & occ_w), False)
    return False


def known_draw(board: chess.Board) -> bool:
    """:func:`_known_draw` of a python-chess board (the readable route)."""
    if board.knights | board.rooks | board.queens:
        return False
    return _known_draw(
        signed(board.occupied_co[chess.WHITE]),
        signed(board.occupied_co[chess.BLACK]),
        signed(board.pawns),
        signed(board.bishops),
        signed(board.kings),
    )


def _king_danger(  # noqa: PLR0913, PLR0917 - a native call with the attack maps in words
    king: i64,
    occ: i64,
    their_men: i64,
    their_knights: i64,
    their_bishops: i64,
    their_rooks: i64,
    their_queens: i64,
    their_all: i64,
    their_twice: i64,
    units: i64,
    our_all: i64,
    our_twice: i64,
    our_queens: i64,
    our_knights: i64,
) -> i64:
    """``king.danger`` of the king on ``king``: Stockfish classical's king danger (its
    weights, without the shelter, flank, pin and mobility parts), squared and scaled down;
    ``their_*`` are the attacking side's attack maps, ``our_*`` the defender's."""
    our_king: i64 = KING_ATTACKS[king]
    weak = their_all & ~our_twice & (~our_all | our_king | our_queens)
    safe = ~their_men & (~our_all | (weak & their_twice))
    danger = units + DANGER_WEAK_ZONE * popcount(_ZONE64[king] & weak) + DANGER_BASE
    rook_rays = rook_attacks(king, occ)
    bishop_rays = bishop_attacks(king, occ)
    unsafe: i64 = 0
    rook_checks = rook_rays & safe & their_rooks
    if rook_checks:
        danger += DANGER_CHECK_ROOK
    else:
        unsafe |= rook_rays & their_rooks
    queen_checks = (rook_rays | bishop_rays) & their_queens & safe & ~our_queens & ~rook_checks
    if queen_checks:
        danger += DANGER_CHECK_QUEEN
    bishop_checks = bishop_rays & their_bishops & safe & ~queen_checks
    if bishop_checks:
        danger += DANGER_CHECK_BISHOP
    else:
        unsafe |= bishop_rays & their_bishops
    knight_checks = KNIGHT_ATTACKS[king] & their_knights
    if knight_checks & safe:
        danger += DANGER_CHECK_KNIGHT
    else:
        unsafe |= knight_checks
    if unsafe:
        danger += DANGER_UNSAFE_CHECK * popcount(unsafe)
    if our_knights & our_king:
        danger -= DANGER_KNIGHT_GUARD
    if danger <= DANGER_THRESHOLD:
        return 0
    return (danger * danger) >> DANGER_SHIFT


def _threats(  # noqa: PLR0913, PLR0917 - a native call with the attack maps in words
    t: EvalTables,
    boards: Bitboards,
    them: i64,
    our_pawns: i64,
    their_pawn_att: i64,
    our_all: i64,
    our_twice: i64,
    their_all: i64,
    their_twice: i64,
    our_knight: i64,
    our_bishop: i64,
    our_rook: i64,
    their_queen_att: i64,
    our_king_att: i64,
    our_area: i64,
    white: bool,
) -> i64:
    """Packed threats of one side (``our_*``) on the other's men (``them``), Stockfish 11
    classical's ``threats()``: minors on defended or weak men and rooks on weak ones by the
    victim's type, the king on a weak man, hanging men, weak men the enemy queen defends,
    squares both sides attack (restricted), safe pawns and safe pawn pushes hitting pieces,
    and knights and sliders that can hit the lone enemy queen next (docs/evaluation.md has
    the definitions)."""
    occ = boards.occupied
    pawns = boards.pawns
    kings = boards.kings
    non_pawn = them & ~pawns
    strongly = their_pawn_att | (their_twice & ~our_twice)
    weak = them & ~kings & ~strongly & our_all
    score: i64 = 0
    targets = ((non_pawn & ~kings & strongly) | weak) & (our_knight | our_bishop)
    # Each target's bit taken by its square, as the piece loops do: uncompiled, ``x & -x``
    # of a board with h8's bit is not one bit.
    while targets:
        bit: i64 = SQUARE[lsb(targets)]
        targets ^= bit
        score += t.threat_minor[_piece_type(boards, bit)]
    targets = weak & our_rook
    while targets:
        bit = SQUARE[lsb(targets)]
        targets ^= bit
        score += t.threat_rook[_piece_type(boards, bit)]
    if weak:
        if weak & our_king_att:
            score += t.threat_king
        hanging = weak & (~their_all | (non_pawn & our_twice))
        if hanging:
            score += t.threat_hanging * popcount(hanging)
        protected = weak & their_queen_att
        if protected:
            score += t.threat_weak_queen_protection * popcount(protected)
    restricted = their_all & ~strongly & our_all
    if restricted:
        score += t.threat_restricted * popcount(restricted)
    safe = ~their_all | our_all
    hits = _pawn_attacks(our_pawns & safe, white) & non_pawn
    if hits:
        score += t.threat_safe_pawn * popcount(hits)
    empty = ~occ
    # A push to the last rank attacks nothing: the pawns on the seventh are left out, so the
    # shift stays below bit 56.
    if white:
        pushes = ((our_pawns & _LOW48) << 8) & empty
        pushes |= ((pushes & _RANK_3_64) << 8) & empty
    else:
        pushes = (our_pawns >> 8) & empty
        pushes |= ((pushes & _RANK_6_64) >> 8) & empty
    pushes &= ~their_pawn_att & safe
    hits = _pawn_attacks(pushes, white) & non_pawn
    if hits:
        score += t.threat_pawn_push * popcount(hits)
    their_queens = boards.queens & them
    if their_queens and popcount(their_queens) == 1:
        queen = lsb(their_queens)
        open_squares = our_area & ~strongly
        hits = our_knight & KNIGHT_ATTACKS[queen] & open_squares
        if hits:
            score += t.threat_knight_on_queen * popcount(hits)
        hits = (
            ((our_bishop & bishop_attacks(queen, occ)) | (our_rook & rook_attacks(queen, occ)))
            & open_squares
            & our_twice
        )
        if hits:
            score += t.threat_slider_on_queen * popcount(hits)
    return score


def _piece_type(boards: Bitboards, bit: i64) -> i64:
    """The type (1 = pawn .. 6 = king) of the man on the square of the one-bit board ``bit``."""
    if boards.pawns & bit:
        return 1
    if boards.knights & bit:
        return 2
    if boards.bishops & bit:
        return 3
    if boards.rooks & bit:
        return 4
    if boards.queens & bit:
        return 5
    return 6


def _pawn_attacks(pawns: i64, white: bool) -> i64:
    """The squares the pawns ``pawns`` of one side attack."""
    if white:
        return wrapped(((pawns & _NOT_H64) << 9) | ((pawns & _NOT_A64) << 7))
    return ((pawns >> 7) & _NOT_A64) | ((pawns >> 9) & _NOT_H64)


def evaluate_fast(boards: Bitboards, psq: i64, t: EvalTables) -> i64:
    """The evaluation from the side to move's view, given the position's boards and the
    packed material + square sum.

    Must equal ``round(Σ w·f)`` over :func:`features` (the tests check it on many positions).
    """
    occ_w = boards.white
    occ_b = boards.black
    occ = boards.occupied
    pawns = boards.pawns
    knights = boards.knights
    bishops = boards.bishops
    rooks = boards.rooks
    queens = boards.queens
    kings = boards.kings
    if (knights | rooks | queens) == 0 and _known_draw(occ_w, occ_b, pawns, bishops, kings):
        return 0
    # Pawns never stand on a back rank, so both pawn sets are below 2**56: small ints.
    wp = pawns & occ_w
    bp = pawns & occ_b
    wk = msb(kings & occ_w)
    bk = msb(kings & occ_b)

    kings_at = wk | (bk << 6)
    # Only the product's bits 50-63 are read: the same whether it wrapped or not.
    slot = (((wp ^ (bp * _PAWN_MIX) ^ kings_at) * _PAWN_MIX) >> 50) & _PAWN_SLOT_MASK
    if t.pawn_white[slot] == wp and t.pawn_black[slot] == bp and t.pawn_kings[slot] == kings_at:
        score: i64 = t.pawn_score[slot]
    else:
        score = pawn_king_score(t, wp, bp, wk, bk)
        t.pawn_white[slot] = wp
        t.pawn_black[slot] = bp
        t.pawn_kings[slot] = kings_at
        t.pawn_score[slot] = score
    score += psq

    w_pawn_attacks = _pawn_attacks(wp, True)
    b_pawn_attacks = _pawn_attacks(bp, False)
    # The piece loops take each piece's square as lsb() does, inlined: the calls cost 0.9%
    # of the search's instructions per node (5,863 -> 5,811 at depth 6).  The bit is cleared
    # by its signed word, not by ``bb ^= bb & -bb``: uncompiled, h8's bit of a negative board
    # is not one bit.
    lsb_square = LSB_SQUARE
    square_bb = SQUARE
    knight_table = KNIGHT_ATTACKS
    file_of = _FILE_OF64

    mobility: i64 = 0  # packed, white's minus black's
    mob_n = t.mob_n
    mob_b = t.mob_b
    mob_r = t.mob_r
    mob_q = t.mob_q
    rook_open: i64 = 0
    rook_semi: i64 = 0
    attackers: i64 = 0  # on white's king minus on black's king
    zone_attacks: i64 = 0
    # The phase and the bishop pairs, counted in the piece loops below: three popcounts of
    # the piece sets and two of the bishops cost more than an addition per piece.
    phase: i64 = 0
    bishop_pairs: i64 = 0  # white's minus black's
    # What each side attacks: everything, twice (pawns and king included), with each piece
    # type; and the attack units its pieces bring to the enemy king's zone.
    king_wk: i64 = KING_ATTACKS[wk]
    king_bk: i64 = KING_ATTACKS[bk]
    w_all: i64 = 0
    w_twice: i64 = 0
    w_knight: i64 = 0
    w_bishop: i64 = 0
    w_rook: i64 = 0
    w_queen: i64 = 0
    w_units: i64 = 0
    w_area: i64 = 0
    b_all: i64 = 0
    b_twice: i64 = 0
    b_knight: i64 = 0
    b_bishop: i64 = 0
    b_rook: i64 = 0
    b_queen: i64 = 0
    b_units: i64 = 0
    b_area: i64 = 0
    # White, then black, as a native loop: compiled, a loop over a tuple of two bools builds
    # the tuple and goes through Python's iterator protocol (400 instructions an evaluation).
    for side in range(2):
        white = side == 0
        if white:
            own = occ_w
            own_pawns = wp
            # Stockfish's mobility area: not the own king and queens, nor the own pawns that
            # are blocked or still on ranks 2-3, nor the squares enemy pawns attack.  The
            # shift's sign bits land on rank 8, where no pawn stands.
            area = ~(
                (occ_w & (kings | queens)) | (wp & (_LOW_RANKS_W64 | (occ >> 8))) | b_pawn_attacks
            )
            zone: i64 = _ZONE64[bk]
            sign: i64 = 1
            west: i64 = wrapped((wp & _NOT_A64) << 7)
            east: i64 = wrapped((wp & _NOT_H64) << 9)
            king_att = king_wk
        else:
            own = occ_b
            own_pawns = bp
            area = ~(
                (occ_b & (kings | queens))
                | (bp & (_LOW_RANKS_B64 | ((occ & _LOW48) << 8)))
                | w_pawn_attacks
            )
            zone = _ZONE64[wk]
            sign = -1
            west = (bp >> 9) & _NOT_H64
            east = (bp >> 7) & _NOT_A64
            king_att = king_bk
        # Squares attacked at least once and at least twice, built piece by piece.
        once: i64 = west | east | king_att
        twice: i64 = (west & east) | ((west | east) & king_att)
        units: i64 = 0
        knight_att: i64 = 0
        bishop_att: i64 = 0
        rook_att: i64 = 0
        queen_att: i64 = 0
        hitters: i64 = 0
        hits: i64 = 0
        opened: i64 = 0
        semi: i64 = 0
        bb = knights & own
        while bb:
            sq = lsb_square[((bb & -bb) * DEBRUIJN >> 58) & 63]
            bb ^= square_bb[sq]
            a: i64 = knight_table[sq]
            knight_att |= a
            twice |= once & a
            once |= a
            mobility += sign * mob_n[popcount(a & area)]
            phase += 1
            a &= zone
            if a:
                hitters += 1
                hits += popcount(a)
                units += DANGER_KNIGHT
        bb = bishops & own
        bishop_number: i64 = 0
        while bb:
            sq = lsb_square[((bb & -bb) * DEBRUIJN >> 58) & 63]
            bb ^= square_bb[sq]
            a = bishop_attacks(sq, occ)
            bishop_att |= a
            twice |= once & a
            once |= a
            mobility += sign * mob_b[popcount(a & area)]
            bishop_number += 1
            a &= zone
            if a:
                hitters += 1
                hits += popcount(a)
                units += DANGER_BISHOP
        bb = rooks & own
        while bb:
            sq = lsb_square[((bb & -bb) * DEBRUIJN >> 58) & 63]
            bb ^= square_bb[sq]
            a = rook_attacks(sq, occ)
            rook_att |= a
            twice |= once & a
            once |= a
            mobility += sign * mob_r[popcount(a & area)]
            phase += 2
            a &= zone
            if a:
                hitters += 1
                hits += popcount(a)
                units += DANGER_ROOK
            f: i64 = file_of[sq]
            if not pawns & f:
                opened += 1
            elif not own_pawns & f:
                semi += 1
        bb = queens & own
        while bb:
            sq = lsb_square[((bb & -bb) * DEBRUIJN >> 58) & 63]
            bb ^= square_bb[sq]
            a = queen_attacks(sq, occ)
            queen_att |= a
            twice |= once & a
            once |= a
            mobility += sign * mob_q[popcount(a & area)]
            phase += 4
            a &= zone
            if a:
                hitters += 1
                hits += popcount(a)
                units += DANGER_QUEEN
        units += DANGER_ZONE_ATTACK * hits
        if white:
            w_all, w_twice, w_units, w_area = once, twice, units, area
            w_knight, w_bishop, w_rook, w_queen = knight_att, bishop_att, rook_att, queen_att
        else:
            b_all, b_twice, b_units, b_area = once, twice, units, area
            b_knight, b_bishop, b_rook, b_queen = knight_att, bishop_att, rook_att, queen_att
        phase += bishop_number
        if bishop_number >= 2:
            bishop_pairs += sign
        rook_open += sign * opened
        rook_semi += sign * semi
        attackers -= sign * hitters
        zone_attacks -= sign * hits

    score += (
        mobility
        + t.rook_open * rook_open
        + t.rook_semi * rook_semi
        + t.king_attackers * attackers
        + t.king_zone_attacks * zone_attacks
    )
    # King danger: on white's king minus on black's, each only while the attacker has a queen.
    danger: i64 = 0
    if queens & occ_b:
        danger = _king_danger(
            wk,
            occ,
            occ_b,
            b_knight,
            b_bishop,
            b_rook,
            b_queen,
            b_all,
            b_twice,
            b_units,
            w_all,
            w_twice,
            w_queen,
            w_knight,
        )
    if queens & occ_w:
        danger -= _king_danger(
            bk,
            occ,
            occ_w,
            w_knight,
            w_bishop,
            w_rook,
            w_queen,
            w_all,
            w_twice,
            w_units,
            b_all,
            b_twice,
            b_queen,
            b_knight,
        )
    if danger:
        score += t.king_danger * danger
    # Threats: white's on black's men minus black's on white's.
    score += _threats(
        t,
        boards,
        occ_b,
        wp,
        b_pawn_attacks,
        w_all,
        w_twice,
        b_all,
        b_twice,
        w_knight,
        w_bishop,
        w_rook,
        b_queen,
        king_wk,
        w_area,
        True,
    ) - _threats(
        t,
        boards,
        occ_w,
        bp,
        w_pawn_attacks,
        b_all,
        b_twice,
        w_all,
        w_twice,
        b_knight,
        b_bishop,
        b_rook,
        w_queen,
        king_bk,
        b_area,
        False,
    )
    score += t.bishop_pair * bishop_pairs
    # The taper on native words: a tagged int multiplied by a negative one takes mypyc's slow
    # path (Python longs, about 200 instructions), and divmod builds a tuple; TAPER_MAX is a
    # power of two, so the floor division and remainder are a shift and a mask.
    taper: i64 = TAPER_MAX
    if phase < PHASE_MAX:
        taper = _TAPER64[phase]
    eg: i64 = (score + _HALF) >> _SHIFT
    mg: i64 = score - (eg << _SHIFT)
    tapered = mg * taper + eg * (TAPER_MAX - taper)
    # From the side to move's view and with the tempo in, then rounded once, as the feature
    # sum is: rounding before adding an odd tempo would break ties the other way.
    mover: i64 = tapered if boards.turn else -tapered
    tempo: i64 = t.tempo
    mover += tempo * TAPER_MAX
    q = mover >> _TAPER_BITS
    r = mover & (TAPER_MAX - 1)
    if r > 16 or (r == 16 and q & 1):  # half to even, as round() does
        q += 1
    return q
