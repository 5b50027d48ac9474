"""Bitboards as native 64-bit words, for the compiled hot path.

python-chess keeps a bitboard in a Python ``int`` from 0 to 2⁶⁴ - 1.  Compiled by mypyc, an
``int`` above 2⁶² no longer fits a tagged machine word: every ``&``, ``|`` or ``>>`` on it
allocates a new Python object, and black's back rank (g8 and h8 are bits 62 and 63) puts most
boards there.  Profiles of the search showed a fifth of its time in that arithmetic and its
allocations.  This module lets a function convert the boards it needs once, with
:func:`signed`, and then work on ``i64`` values that mypyc keeps in machine registers.

An ``i64`` holds the same 64 bits in two's complement: h8 (bit 63) is the sign bit.  The
rules that keep the code right both compiled and as plain Python (where ``i64`` is an
unbounded ``int`` and nothing wraps):

* ``&``, ``|``, ``^`` and ``~`` of canonical values (``-2⁶³ <= v < 2⁶³``) are canonical, and
  ``>>`` is arithmetic in both: mask what a right shift brings in when the sign may be set;
* no ``<<`` and no ``x - 1`` on a board (compiled they wrap, in Python they do not): shift
  before :func:`signed`, and take single squares from :data:`SQUARE` instead;
* a product is only ever looked at through its bits 0-63, by a right shift by s and a mask
  of at most 64 - s bits (``>> 58 & 63``, ``>> 56 & 0xFF``, a magic index), whose bits are
  the same whether the product wrapped or not.  Compiled, an ``i64`` product is C's signed
  multiplication, whose overflow C leaves undefined: ``setup.py`` compiles with ``-fwrapv``,
  which makes it wrap modulo 2⁶⁴ (CPython's own flags usually carry it too).

Sliding attacks (:func:`rook_attacks`, :func:`bishop_attacks`) are "fancy" magic bitboards,
as in Stockfish: the occupancy under the piece's mask, times the square's magic number, its
top bits an index into one shared table (an AND, a multiply, shifts and a load).
The magic numbers are :mod:`games.chess_game.magics`, written by ``scripts/find_magics.py``;
the table (107,648 boards, 861 kB) is filled from python-chess's attack tables at import,
which checks every magic (about 160 million instructions, 0.05 s, of the import).  They
replaced rays cut at the first blocker with :func:`lsb` or :func:`msb` (0.88 times the
instructions per node of search).  Not python-chess's tables keyed by occupancy: its
dictionaries hash a large ``int`` per lookup.
"""

from __future__ import annotations

from typing import Final

import chess
from librt.vecs import vec
from mypy_extensions import i64

from games.chess_game.magics import BISHOP_MAGICS, ROOK_MAGICS
from games.chess_game.move_codes import PROMOTION_SHIFT, SQUARE_MASK, TO_SHIFT

__all__ = [
    "BETWEEN",
    "BISHOP",
    "BISHOP_RAYS",
    "BLACK_PAWN_ATTACKS",
    "DEBRUIJN",
    "KING",
    "KING_ATTACKS",
    "KNIGHT",
    "KNIGHT_ATTACKS",
    "LINE",
    "LSB_SQUARE",
    "PAWN",
    "QUEEN",
    "ROOK",
    "ROOK_RAYS",
    "SQUARE",
    "WHITE_PAWN_ATTACKS",
    "Bitboards",
    "bishop_attacks",
    "castling_rook",
    "castling_targets",
    "lsb",
    "msb",
    "popcount",
    "queen_attacks",
    "rook_attacks",
    "signed",
    "signed_table",
    "unsigned",
    "wrapped",
]

_COMPILED: Final = not __file__.endswith(".py")
"""Whether this module runs as mypyc's extension (``False`` with ``BRUDNO_PURE_PYTHON``)."""

_MAX_I64: Final = 0x7FFF_FFFF_FFFF_FFFF
_TWO_64: Final = 0x1_0000_0000_0000_0000
_MASK_64: Final = _TWO_64 - 1
DEBRUIJN: Final = 0x03F7_9D71_B4CB_0A89
"""A de Bruijn sequence: the top six bits of ``2**k * DEBRUIJN`` (mod 2⁶⁴) differ for
every k, and so do those of ``(2**(k+1) - 1) * DEBRUIJN``."""


PAWN: Final = 1
KNIGHT: Final = 2
BISHOP: Final = 3
ROOK: Final = 4
QUEEN: Final = 5
KING: Final = 6
"""python-chess's piece types as literals, which compiled code inlines (a name imported
from ``chess`` is a dictionary lookup at every use)."""
assert tuple(chess.PIECE_TYPES) == (PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING)


_CASTLING_STEP: Final = 2
"""How far the king moves when castling, in standard notation."""


def castling_rook(own: i64, king_from: i64, to: i64) -> i64:
    """The rook square of a king move from ``king_from`` to ``to`` that castles, else -1:
    king takes own rook (Chess960 notation) or two files sideways (standard notation, the
    rook in that corner); ``own`` are the mover's pieces."""
    if own & SQUARE[to]:
        return to
    if to - king_from == _CASTLING_STEP:
        return king_from | 7
    if king_from - to == _CASTLING_STEP:
        return king_from & 56
    return -1


def castling_targets(king_from: i64, rook_from: i64) -> tuple[i64, i64]:
    """Where castling puts the king and the rook: (king's square, rook's square)."""
    base = king_from & 56
    if rook_from > king_from:
        return base + 6, base + 5
    return base + 2, base + 3


def signed(bb: int) -> i64:
    """python-chess's bitboard as the ``i64`` with the same 64 bits."""
    if bb > _MAX_I64:
        bb -= _TWO_64
    return bb


def unsigned(bb: i64) -> int:
    """The python-chess bitboard (0 to 2⁶⁴ - 1) with the bits of ``bb``."""
    value: int = bb
    return value + _TWO_64 if value < 0 else value


_SIGN: Final = signed(0x8000_0000_0000_0000)
"""A mask above 2⁶², made ``i64`` by a call: compiled code would box an integer literal that
large and unbox it again on every use, while a final ``i64`` name is one load of a native
global."""


def signed_table(boards: tuple[int, ...] | list[int]) -> vec[i64]:
    """A table of python-chess bitboards with each entry in :func:`signed` form, as a native
    array of ``i64`` (librt's ``vec``): compiled code reads an entry with one load, where a
    tuple of Python ints cost a bounds check, reference counting and unboxing a multi-digit
    ``int`` (a fifth of the instructions of the evaluation's attack loops)."""
    return vec[i64]([signed(bb) for bb in boards])


_RANK_1: Final = signed(chess.BB_RANK_1)
_RANK_8: Final = signed(chess.BB_RANK_8)
_DOUBLE_STEP: Final = 16
"""How far a pawn's first move of two squares goes, in square numbers."""

SQUARE: Final = signed_table(chess.BB_SQUARES)
"""``SQUARE[sq]``: the board with only ``sq`` (h8 is the sign bit)."""
KNIGHT_ATTACKS: Final = signed_table(chess.BB_KNIGHT_ATTACKS)
KING_ATTACKS: Final = signed_table(chess.BB_KING_ATTACKS)
WHITE_PAWN_ATTACKS: Final = signed_table(chess.BB_PAWN_ATTACKS[chess.WHITE])
"""``[sq]``: what a white pawn on ``sq`` attacks; also where black pawns attacking ``sq``
stand."""
BLACK_PAWN_ATTACKS: Final = signed_table(chess.BB_PAWN_ATTACKS[chess.BLACK])
"""``[sq]``: what a black pawn on ``sq`` attacks; also where white pawns attacking ``sq``
stand."""
ROOK_RAYS: Final = signed_table(
    [chess.BB_RANK_ATTACKS[sq][0] | chess.BB_FILE_ATTACKS[sq][0] for sq in chess.SQUARES]
)
"""``[sq]``: the rank and file through ``sq`` on an empty board, ``sq`` left out."""
BISHOP_RAYS: Final = signed_table([chess.BB_DIAG_ATTACKS[sq][0] for sq in chess.SQUARES])
"""``[sq]``: the diagonals through ``sq`` on an empty board, ``sq`` left out."""
BETWEEN: Final = signed_table([chess.between(a, b) for a in chess.SQUARES for b in chess.SQUARES])
"""``[a * 64 + b]``: the squares strictly between two squares on a line (0 off a line)."""
LINE: Final = signed_table([chess.BB_RAYS[a][b] for a in chess.SQUARES for b in chess.SQUARES])
"""``[a * 64 + b]``: the whole line through two squares, edge to edge (0 off a line)."""


def _scan_table(words: list[int]) -> vec[i64]:
    table = [-1] * 64
    for square, word in enumerate(words):
        table[((word * DEBRUIJN) & _MASK_64) >> 58] = square
    assert -1 not in table, "not a de Bruijn multiplier"
    return vec[i64](table)


LSB_SQUARE: Final = _scan_table([1 << k for k in range(64)])
"""``[(b * DEBRUIJN >> 58) & 63]``: the square of the one-square board ``b`` (:func:`lsb`)."""


def lsb(bb: i64) -> i64:
    """The lowest square of a non-empty board."""
    return LSB_SQUARE[((bb & -bb) * DEBRUIJN >> 58) & 63]


def msb(bb: i64) -> i64:
    """The highest square of a non-empty board.

    ``int.bit_length`` is a mypyc primitive (a count of leading zeros) for an int that fits
    its tagged form, below 2⁶²; the two top squares are tested first.  This replaced a
    six-step fill and a de Bruijn multiply (36 instructions a call, 4% of the search)."""
    if bb < 0:
        return 63
    if bb >> 62:
        return 62
    return i64(int(bb).bit_length()) - 1


def popcount(bb: i64) -> i64:
    """Squares on the board (SWAR: pairs, nibbles, bytes, then one multiply sums the
    bytes into the top one).

    The 64-bit masks are built here from their 32-bit halves, which the C compiler folds
    into immediates: a literal above 2⁶² would be boxed and unboxed on every use, and a
    final ``i64`` global is a load and a check that it is set (half the instructions)."""
    pairs: i64 = 0x5555_5555
    nibbles: i64 = 0x3333_3333
    nibble_sums: i64 = 0x0F0F_0F0F
    byte_ones: i64 = 0x0101_0101
    pairs |= pairs << 32
    nibbles |= nibbles << 32
    nibble_sums |= nibble_sums << 32
    byte_ones |= byte_ones << 32
    bb -= (bb >> 1) & pairs
    bb = (bb & nibbles) + ((bb >> 2) & nibbles)
    bb = (bb + (bb >> 4)) & nibble_sums
    return (bb * byte_ones >> 56) & 0xFF


# -- sliding attacks: fancy magic bitboards -----------------------------------------------
# For a rook or bishop on a square, its *mask* holds the squares whose occupancy can change
# its attacks (its rays on an empty board, without the board's edge beyond them).  A magic
# number (games.chess_game.magics, from scripts/find_magics.py) maps each subset of an
# n-square mask to an index below 2^n: the top n bits of ``subset * magic`` mod 2^64.  Both
# pieces' tables share one array, each square's at its own offset.
#
# The product wraps when compiled and does not as plain Python, and ``>>`` of a negative
# product brings in ones: the index is the product shifted right by one, its sign bit
# cleared (a logical shift), then shifted by the rest, which keeps only bits 64-n..63 of the
# product, the same bits whether it wrapped or not.  The square's offset and shift come
# packed in one word (one table load, where three loads cost more than the unpacking), and
# the square's mask, magic and place sit at the front of the attack table itself: compiled,
# each module-level table read is a global load and a check that it is set, so one table
# for everything made a lookup 0.8 times the instructions of four.
# (tests/games/test_chess_bitboard64.py proves both: the compiled lookup against
# python-chess, and the uncompiled source against the same.)


def _offsets(masks: list[int], start: int) -> list[int]:
    """Where each square's table starts: 2^n entries for an n-square mask, square by square."""
    offsets = []
    for mask in masks:
        offsets.append(start)
        start += 1 << mask.bit_count()
    return offsets


_ROOK_MASKS: Final = [chess.BB_RANK_MASKS[sq] | chess.BB_FILE_MASKS[sq] for sq in chess.SQUARES]
_BISHOP_MASKS: Final = list(chess.BB_DIAG_MASKS)
_ROOK_MASK: Final = signed_table(_ROOK_MASKS)
_ROOK_MAGIC: Final = signed_table(ROOK_MAGICS)
_HEADER: Final = 6 * 64
"""The words before the attack tables in :data:`_SLIDER_ATTACKS`: six per square."""
_ROOK_OFFSETS: Final = _offsets(_ROOK_MASKS, _HEADER)
_ROOK_PLACE: Final = vec[i64](
    [
        offset << 6 | (63 - mask.bit_count())
        for offset, mask in zip(_ROOK_OFFSETS, _ROOK_MASKS, strict=True)
    ]
)
"""``[sq]``: the square's table offset times 64, plus its shift minus one (the product is
shifted right by one, and the bit brought in cleared, before the rest of its shift)."""
_BISHOP_MASK: Final = signed_table(_BISHOP_MASKS)
_BISHOP_MAGIC: Final = signed_table(BISHOP_MAGICS)
_BISHOP_OFFSETS: Final = _offsets(
    _BISHOP_MASKS, _ROOK_OFFSETS[63] + (1 << _ROOK_MASKS[63].bit_count())
)
_BISHOP_PLACE: Final = vec[i64](
    [
        offset << 6 | (63 - mask.bit_count())
        for offset, mask in zip(_BISHOP_OFFSETS, _BISHOP_MASKS, strict=True)
    ]
)
_SLIDER_SIZE: Final = _BISHOP_OFFSETS[63] + (1 << _BISHOP_MASKS[63].bit_count())
"""108,032 words: the squares' rook and bishop masks, magics and places (:data:`_HEADER`),
then 107,648 boards: every square's rook table, then every square's bishop table."""
_NO_ATTACKS: Final = {0: 0}
"""A bishop's second table: nothing more."""


def _magic_index(table: vec[i64], entry: i64, occupied: i64) -> i64:
    """The index in ``table`` (:data:`_SLIDER_ATTACKS`, or the one being built) of the
    attacks among ``occupied`` of the piece whose mask, magic and place are at ``entry``
    (6 x square, plus 3 for a bishop): the product's top bits, by a logical shift (the
    product shifted right by one with the sign bit cleared, then by the rest of the
    square's shift)."""
    place = table[entry + 2]
    product = (occupied & table[entry]) * table[entry + 1]
    low_63: i64 = 0x7FFF_FFFF  # built from halves the C compiler folds (see popcount)
    low_63 = low_63 << 32 | 0xFFFF_FFFF
    return (place >> 6) + ((product >> 1 & low_63) >> (place & 63))


def _fill(table: vec[i64], square: i64, rook: bool) -> None:
    """Store python-chess's attacks for every subset of the square's mask at its magic index
    (the lookup's own arithmetic), and check the magic: two subsets that share an index must
    give the same attacks."""
    mask = _ROOK_MASK[square] if rook else _BISHOP_MASK[square]
    # python-chess's tables, keyed by the subset of their own masks (which partition ours).
    first: dict[int, int] = (chess.BB_RANK_ATTACKS if rook else chess.BB_DIAG_ATTACKS)[square]
    first_mask: i64 = signed(chess.BB_RANK_MASKS[square] if rook else chess.BB_DIAG_MASKS[square])
    second: dict[int, int] = chess.BB_FILE_ATTACKS[square] if rook else _NO_ATTACKS
    second_mask: i64 = signed(chess.BB_FILE_MASKS[square]) if rook else 0
    subset: i64 = 0  # masks never hold h8 (bit 63): every subset is positive
    while True:
        attacks = signed(first[subset & first_mask] | second[subset & second_mask])
        index = _magic_index(table, 6 * square + (0 if rook else 3), subset)
        stored: i64 = table[index]
        assert stored in (0, attacks), f"the magic of square {square} collides"
        table[index] = attacks
        subset = (subset - mask) & mask
        if not subset:
            return


def _slider_table() -> vec[i64]:
    table = vec[i64]([0] * _SLIDER_SIZE)
    for square in range(64):
        entry = 6 * square
        table[entry] = _ROOK_MASK[square]
        table[entry + 1] = _ROOK_MAGIC[square]
        table[entry + 2] = _ROOK_PLACE[square]
        table[entry + 3] = _BISHOP_MASK[square]
        table[entry + 4] = _BISHOP_MAGIC[square]
        table[entry + 5] = _BISHOP_PLACE[square]
    for square in range(64):
        _fill(table, square, True)
        _fill(table, square, False)
    return table


_SLIDER_ATTACKS: Final = _slider_table() if _COMPILED else vec[i64]()
"""Built when compiled; plain Python takes the twins at the end of the module instead (as
plain Python the build costs half a second)."""


def rook_attacks(square: i64, occupied: i64) -> i64:
    """Squares a rook on ``square`` attacks (its first blocker in each direction included),
    the same set as python-chess's rank and file attack tables.

    :func:`_magic_index` written out: compiled, the call would cost a tenth of the lookup."""
    entry = 6 * square
    place = _SLIDER_ATTACKS[entry + 2]
    product = (occupied & _SLIDER_ATTACKS[entry]) * _SLIDER_ATTACKS[entry + 1]
    low_63: i64 = 0x7FFF_FFFF
    low_63 = low_63 << 32 | 0xFFFF_FFFF
    return _SLIDER_ATTACKS[(place >> 6) + ((product >> 1 & low_63) >> (place & 63))]


def bishop_attacks(square: i64, occupied: i64) -> i64:
    """Squares a bishop on ``square`` attacks (its first blocker in each direction
    included), the same set as python-chess's diagonal attack table (:func:`_magic_index`
    written out, as in :func:`rook_attacks`)."""
    entry = 6 * square + 3
    place = _SLIDER_ATTACKS[entry + 2]
    product = (occupied & _SLIDER_ATTACKS[entry]) * _SLIDER_ATTACKS[entry + 1]
    low_63: i64 = 0x7FFF_FFFF
    low_63 = low_63 << 32 | 0xFFFF_FFFF
    return _SLIDER_ATTACKS[(place >> 6) + ((product >> 1 & low_63) >> (place & 63))]


def queen_attacks(square: i64, occupied: i64) -> i64:
    return rook_attacks(square, occupied) | bishop_attacks(square, occupied)


def wrapped(bb: i64) -> i64:
    """A left-shifted board (``0 <= bb < 2**64`` as plain Python) in canonical form.

    Compiled, ``bb`` already wrapped and this returns it unchanged (bit 63 flipped twice);
    as plain Python it maps 2⁶³ and above to the negative value with the same bits."""
    return (bb ^ _SIGN) - _SIGN


class Bitboards:
    """A position's piece sets and state as native words: the search's board.

    The adapter keeps one per ply of the search: the root's is read from python-chess's
    board (:meth:`load`), every other one is made from its parent's by the move played, so
    the search never touches python-chess's board, whose fields are Python attributes and
    Python ints.  The evaluation, the move generator, the check test and the exchange test
    all read these records.
    """

    def __init__(self, board: chess.Board | None = None) -> None:
        self.key: i64 = -1
        """The adapter's Zobrist key of the position, as a native signed word (set by the
        adapter; each ply's record keeps its key, so unmaking restores nothing and the
        repetition test reads the keys of earlier plies from their records)."""
        self.ep_key: i64 = 0
        """The en passant part of :attr:`key` (0: none), which the next move takes out."""
        self.castling_key: i64 = 0
        """The castling-rights part of :attr:`key`, which a move that changes the rights
        replaces."""
        self.turn: bool = True
        self.ep_square: i64 = -1
        self.castling: i64 = 0
        """python-chess's ``clean_castling_rights()``: the rooks that may still castle."""
        self.halfmove: i64 = 0
        self.chess960: bool = False
        self.white: i64 = 0
        self.black: i64 = 0
        self.occupied: i64 = 0
        self.pawns: i64 = 0
        self.knights: i64 = 0
        self.bishops: i64 = 0
        self.rooks: i64 = 0
        self.queens: i64 = 0
        self.kings: i64 = 0
        # Filled in by the adapter, per node: the side to move's king square, the enemy
        # pieces giving check, and (once a node generates moves) the own pinned pieces.
        self.king: i64 = 0
        self.checkers: i64 = 0
        self.pinned: i64 = 0
        self.pinned_known: bool = False
        self.move: i64 = 0
        """Set by the adapter: the move that made this position from its parent's (0: none, or
        a null move), which python-chess's board replays when it catches up."""
        self.parent_psq: i64 = 0
        self.parent_window: i64 = 0
        """Set by the adapter: its incremental material + square sum and repetition window
        in the parent's position, which unmaking this move restores (kept here as native
        words, where a tuple per move boxed them)."""
        if board is not None:
            self.load(board, -1)

    def load(self, board: chess.Board, key: i64) -> None:
        occupied_co = board.occupied_co
        ep = board.ep_square
        self.key = key
        self.turn = board.turn
        self.ep_square = -1 if ep is None else ep
        self.castling = signed(board.clean_castling_rights())
        self.halfmove = board.halfmove_clock
        self.chess960 = board.chess960
        self.white = signed(occupied_co[True])
        self.black = signed(occupied_co[False])
        self.occupied = signed(board.occupied)
        self.pawns = signed(board.pawns)
        self.knights = signed(board.knights)
        self.bishops = signed(board.bishops)
        self.rooks = signed(board.rooks)
        self.queens = signed(board.queens)
        self.kings = signed(board.kings)
        self.pinned_known = False

    def play(self, parent: Bitboards, move: i64, piece: i64, captured: i64) -> None:
        """Become the position after ``move`` (legal, not castling, encoded as in
        :mod:`games.chess_game.move_codes`) in ``parent``: ``piece``
        is the moving piece's type, ``captured`` the type on the target square (0 for none and
        for en passant, which is recognised here).  The adapter's key, king and checkers are
        left to the caller."""
        frm = move & SQUARE_MASK
        to = (move >> TO_SHIFT) & SQUARE_MASK
        us = parent.turn
        from_bb: i64 = SQUARE[frm]
        to_bb: i64 = SQUARE[to]
        self._inherit(parent)
        self.halfmove = parent.halfmove + 1
        self.ep_square = -1
        if captured:
            self.halfmove = 0
            self._flip(captured, to_bb, not us)
        landing = piece
        if piece == PAWN:
            self.halfmove = 0
            if to - frm == _DOUBLE_STEP or frm - to == _DOUBLE_STEP:
                self.ep_square = (frm + to) >> 1
            elif to == parent.ep_square:
                self._flip(PAWN, SQUARE[to - 8 if us else to + 8], not us)
            promotion = move >> PROMOTION_SHIFT
            if promotion:
                landing = promotion
        self._flip(piece, from_bb, us)
        self._flip(landing, to_bb, us)
        castling = parent.castling
        if castling:
            castling &= ~(from_bb | to_bb)
            if piece == KING:
                castling &= ~(_RANK_1 if us else _RANK_8)
        self.castling = castling

    def castle(self, parent: Bitboards, king_from: i64, rook_from: i64) -> None:
        """Become the position after castling in ``parent`` with the rook on ``rook_from``
        (standard or Chess960: the king ends on the c- or g-file, the rook beside it)."""
        us = parent.turn
        king_to, rook_to = castling_targets(king_from, rook_from)
        self._inherit(parent)
        # Both off, then both on: in Chess960 the king may land where the rook stood.
        self._flip(KING, SQUARE[king_from], us)
        self._flip(ROOK, SQUARE[rook_from], us)
        self._flip(KING, SQUARE[king_to], us)
        self._flip(ROOK, SQUARE[rook_to], us)
        self.castling = parent.castling & ~(_RANK_1 if us else _RANK_8)
        self.halfmove = parent.halfmove + 1
        self.ep_square = -1

    def pass_turn(self, parent: Bitboards) -> None:
        """Become ``parent`` with the other side to move (a null move): no en passant."""
        self._inherit(parent)
        self.castling = parent.castling
        self.halfmove = parent.halfmove + 1
        self.ep_square = -1

    def _inherit(self, parent: Bitboards) -> None:
        """Take ``parent``'s pieces, with the other side to move: the start of every child."""
        self.turn = not parent.turn
        self.white = parent.white
        self.black = parent.black
        self.occupied = parent.occupied
        self.pawns = parent.pawns
        self.knights = parent.knights
        self.bishops = parent.bishops
        self.rooks = parent.rooks
        self.queens = parent.queens
        self.kings = parent.kings
        self.chess960 = parent.chess960
        self.pinned_known = False

    def _flip(self, piece: i64, squares: i64, white: bool) -> None:
        """Put a ``piece`` of ``white``'s side on ``squares``, or take it off: the piece's set,
        the side's set and the occupancy all toggle."""
        if piece == PAWN:
            self.pawns ^= squares
        elif piece == KNIGHT:
            self.knights ^= squares
        elif piece == BISHOP:
            self.bishops ^= squares
        elif piece == ROOK:
            self.rooks ^= squares
        elif piece == QUEEN:
            self.queens ^= squares
        else:
            self.kings ^= squares
        if white:
            self.white ^= squares
        else:
            self.black ^= squares
        self.occupied ^= squares

    def lone_blockers(self, square: i64, color: bool) -> i64:
        """The pieces, of either colour, that stand alone between ``square`` and a slider of
        ``color`` aiming at it along a rank, file or diagonal: pinned pieces when ``square``
        holds the other side's king, discovered-check candidates when it holds ``color``'s
        opponent's king and the pieces are ``color``'s own."""
        queens = self.queens
        rook_rays: i64 = ROOK_RAYS[square]
        bishop_rays: i64 = BISHOP_RAYS[square]
        snipers = rook_rays & (self.rooks | queens) | bishop_rays & (self.bishops | queens)
        snipers &= self.white if color else self.black
        occupied = self.occupied
        base = square * 64
        blockers: i64 = 0
        while snipers:
            sniper = msb(snipers)
            snipers ^= SQUARE[sniper]
            between: i64 = BETWEEN[base + sniper]
            line = between & occupied
            if line and popcount(line) == 1:  # exactly one piece in between
                blockers |= line
        return blockers

    def piece_type_on(self, square: i64) -> i64:  # noqa: PLR0911 - one test each
        """python-chess's piece type on ``square`` (a one-square board), 0 if empty."""
        if self.pawns & square:
            return PAWN
        if self.knights & square:
            return KNIGHT
        if self.bishops & square:
            return BISHOP
        if self.rooks & square:
            return ROOK
        if self.queens & square:
            return QUEEN
        if self.kings & square:
            return KING
        return 0


# -- the choice: compiled or plain Python ----------------------------------------------------
# Compiled, every compiled caller calls the definitions above directly and this branch never
# runs.  Not compiled, that word arithmetic would run as interpreted bytecode: the builtin-based
# twins of games.chess_game.bitboard_plain take their names before any caller imports them
# (plain Python, ``brudno bench --depth 3`` under cachegrind: 192,000 instructions a node
# against 346,000; tests/games/test_chess_bitboard64.py checks both sets against
# python-chess).
# queen_attacks looks both attack functions up at each call, so it follows.
if not _COMPILED:
    from games.chess_game.bitboard_plain import (
        bishop_attacks,
        lsb,
        msb,
        popcount,
        rook_attacks,
    )
