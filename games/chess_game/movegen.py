"""Legal move lists in python-chess's own order, built from shared move objects.

python-chess generates moves with nested generators and a fresh ``Move`` per move; in a
search that asks for a node's captures and then its quiet moves, that is a third of the time
spent per node.  This module builds the same lists directly: one loop per piece kind over
the attack tables, moves taken from the precomputed tables of
:mod:`games.chess_game.move_codes` (one int object per move, so the search's "is the killer
among these moves?" tests succeed on identity), and the pin test folded into the attack
masks.

The order is python-chess's ``generate_legal_moves`` order exactly: pieces other than pawns
from the highest square down, each to its targets from the highest square down, then
castling, pawn captures, single and double pawn pushes, en passant.  A search's node counts
depend on move order, so the tests compare whole lists, not sets.

The boards arrive as native 64-bit words (:class:`~games.chess_game.bitboard64.Bitboards`,
converted once per node by the adapter) and sliding attacks come from rays: compiled, the
generator does no arithmetic on Python ints and no dictionary lookups keyed by occupancy.
Castling rights, the en passant square and the Chess960 flag come with the record too: the
generator never reads python-chess's board.

Evasions (the side to move in check) follow python-chess's ``_generate_evasions`` order:
king moves first, then, against a single checker, the moves that capture it or block its
line (the generator above, restricted to those squares), then an en passant capture of a
checking pawn.
"""

from __future__ import annotations

from typing import Final

import chess
from mypy_extensions import i64

from games.chess_game.bitboard64 import (
    BETWEEN,
    BISHOP_RAYS,
    BLACK_PAWN_ATTACKS,
    KING_ATTACKS,
    KNIGHT_ATTACKS,
    LINE,
    ROOK_RAYS,
    SQUARE,
    WHITE_PAWN_ATTACKS,
    Bitboards,
    bishop_attacks,
    lsb,
    msb,
    rook_attacks,
    signed,
    signed_table,
    wrapped,
)
from games.chess_game.move_codes import MOVES, promotions

__all__ = [
    "attackers_of",
    "legal_evasions",
    "legal_moves_not_in_check",
    "pinned_pieces",
]

_BACKRANKS: Final = signed(chess.BB_RANK_1 | chess.BB_RANK_8)
_RANK_1: Final = signed(chess.BB_RANK_1)
_RANK_8: Final = signed(chess.BB_RANK_8)
_RANK_4: Final = signed(chess.BB_RANK_4)
_RANK_5: Final = signed(chess.BB_RANK_5)
_RANKS: Final = signed_table(chess.BB_RANKS)
_RANK_2_3: Final = signed(chess.BB_RANK_2 | chess.BB_RANK_3)
_RANK_3_4: Final = signed(chess.BB_RANK_3 | chess.BB_RANK_4)
_RANK_6_5: Final = signed(chess.BB_RANK_6 | chess.BB_RANK_5)
_NOT_FILE_A: Final = signed(chess.BB_ALL & ~chess.BB_FILE_A)
_NOT_FILE_H: Final = signed(chess.BB_ALL & ~chess.BB_FILE_H)
# Masks that keep a right shift logical (an arithmetic shift of h8 brings in ones) or a left
# shift inside 64 bits (bitboard64's rule for plain Python).
_LOW55: Final = (1 << 55) - 1
_LOW56: Final = (1 << 56) - 1
_LOW57: Final = (1 << 57) - 1
_NOT_FILE_A_LOW57: Final = signed(chess.BB_ALL & ~chess.BB_FILE_A & _LOW57)
_NOT_FILE_H_LOW55: Final = signed(chess.BB_ALL & ~chess.BB_FILE_H & _LOW55)


def pinned_pieces(boards: Bitboards, king: i64) -> i64:
    """``board._slider_blockers(king)``: the side to move's pieces that stand alone between
    their king and an enemy slider aiming at it.

    The same bitboard as python-chess's, computed once per node that generates moves, without
    its generator over the snipers and its helper calls per sniper.
    """
    us = boards.turn
    return boards.lone_blockers(king, not us) & (boards.white if us else boards.black)


def legal_moves_not_in_check(
    boards: Bitboards,
    king: i64,
    pinned: i64,
    from_mask: i64,
    to_mask: i64,
) -> list[int]:
    """``list(board.generate_legal_moves(from_mask, to_mask))`` when the side to move is not
    in check; ``boards`` are the board's sets as native words and ``pinned`` is
    :func:`pinned_pieces` (own pieces pinned to the king); the masks are native words too.

    A pinned piece keeps only the targets on the line through it and its king (python-chess's
    ``_is_safe`` test, applied to a whole mask at once); the king keeps only unattacked
    squares; en passant captures get python-chess's own test (a capture can uncover a rank
    attack through two pawns at once).
    """
    turn = boards.turn
    ours = boards.white if turn else boards.black
    theirs = boards.black if turn else boards.white
    occupied = boards.occupied
    pawns = boards.pawns
    knights = boards.knights
    kings = boards.kings
    diagonal = boards.bishops | boards.queens
    straight = boards.rooks | boards.queens
    moves: list[int] = []
    allowed = ~ours & to_mask

    # Pieces other than pawns, highest square first.
    pieces = ours & ~pawns & from_mask
    while pieces:
        frm = msb(pieces)
        bit: i64 = SQUARE[frm]
        pieces ^= bit
        targets: i64 = 0
        if bit & knights:
            knight_targets: i64 = KNIGHT_ATTACKS[frm]
            targets = knight_targets & allowed
        elif bit & kings:
            # python-chess's ``attackers_mask`` test inlined, on the current occupancy: out of
            # check, no slider's ray passes through the king to a square beyond it.
            king_targets: i64 = KING_ATTACKS[frm]
            targets = king_targets & allowed
            if not targets:
                continue
            row = MOVES[frm]
            while targets:
                to = msb(targets)
                targets ^= SQUARE[to]
                if not attackers_of(boards, not turn, to, occupied):
                    moves.append(row[to])
            continue
        else:
            if bit & diagonal:
                targets = bishop_attacks(frm, occupied)
            if bit & straight:
                targets |= rook_attacks(frm, occupied)
            targets &= allowed
        if not targets:
            continue  # most pieces, when only captures are asked for
        if bit & pinned:
            targets &= LINE[frm * 64 + king]
        row = MOVES[frm]
        while targets:
            to = msb(targets)
            targets ^= SQUARE[to]
            moves.append(row[to])

    # Castling.
    if from_mask & kings and boards.castling & to_mask & ours & _BACKRANKS:
        _castling_moves(boards, from_mask, to_mask, moves)

    own_pawns = pawns & ours & from_mask
    if not own_pawns:
        return moves

    # Pawn captures, highest pawn first.
    capture_mask = theirs & to_mask
    if capture_mask:
        # Only the pawns that attack something: the targets, shifted back one pawn step.
        if turn:
            capturers = own_pawns & (
                ((capture_mask >> 7) & _NOT_FILE_A_LOW57)
                | ((capture_mask >> 9) & _NOT_FILE_H_LOW55)
            )
            pawn_attacks = WHITE_PAWN_ATTACKS
        else:
            capturers = own_pawns & wrapped(
                (((capture_mask & _LOW57) << 7) & _NOT_FILE_H)
                | (((capture_mask & _LOW55) << 9) & _NOT_FILE_A)
            )
            pawn_attacks = BLACK_PAWN_ATTACKS
        while capturers:
            frm = msb(capturers)
            bit = SQUARE[frm]
            capturers ^= bit
            attacks: i64 = pawn_attacks[frm]
            targets = attacks & capture_mask
            if bit & pinned:
                line = LINE[frm * 64 + king]
                targets &= line
            row = MOVES[frm]
            while targets:
                to = msb(targets)
                targets ^= SQUARE[to]
                if SQUARE[to] & _BACKRANKS:
                    moves.extend(promotions(frm, to))
                else:
                    moves.append(row[to])

    # Pushes: every single push, then every double push, highest target first.
    empty = ~occupied
    if turn:
        single = wrapped(own_pawns << 8) & empty
        double = ((single & _RANK_2_3) << 8) & empty & _RANK_3_4
        step = 8
    else:
        single = (own_pawns >> 8) & _LOW56 & empty
        double = (single >> 8) & _RANK_6_5 & empty
        step = -8
    single &= to_mask
    double &= to_mask
    while single:
        to = msb(single)
        single ^= SQUARE[to]
        frm = to - step
        if SQUARE[frm] & pinned and not LINE[frm * 64 + king] & SQUARE[to]:
            continue
        if SQUARE[to] & _BACKRANKS:
            moves.extend(promotions(frm, to))
        else:
            moves.append(MOVES[frm][to])
    while double:
        to = msb(double)
        double ^= SQUARE[to]
        frm = to - step - step
        if SQUARE[frm] & pinned and not LINE[frm * 64 + king] & SQUARE[to]:
            continue
        moves.append(MOVES[frm][to])

    # En passant.
    ep = boards.ep_square
    if ep > 0 and SQUARE[ep] & to_mask and not SQUARE[ep] & occupied:
        _en_passant(boards, king, pinned, from_mask, moves)
    return moves


def legal_evasions(  # noqa: PLR0917 - called per node in check: positional is cheapest
    boards: Bitboards,
    king: i64,
    pinned: i64,
    checkers: i64,
    from_mask: i64,
    to_mask: i64,
) -> list[int]:
    """``list(board.generate_legal_moves(from_mask, to_mask))`` when the side to move is in
    check by ``checkers``; ``pinned`` is :func:`pinned_pieces`.

    python-chess's ``_generate_evasions`` filtered by its ``_is_safe``: the king steps off
    every checking slider's line to a square no enemy piece attacks; against one checker,
    the other pieces capture it or step between (pinned ones only along their pin), which is
    what :func:`legal_moves_not_in_check` generates when asked for those squares only.
    """
    turn = boards.turn
    moves: list[int] = []
    if SQUARE[king] & from_mask:
        sliders = checkers & (boards.bishops | boards.rooks | boards.queens)
        off_line: i64 = 0
        while sliders:
            checker = msb(sliders)
            checker_bit: i64 = SQUARE[checker]
            sliders ^= checker_bit
            ray: i64 = LINE[king * 64 + checker]
            off_line |= ray & ~checker_bit
        king_targets: i64 = KING_ATTACKS[king]
        targets = king_targets & ~(boards.white if turn else boards.black) & ~off_line & to_mask
        row = MOVES[king]
        occupied = boards.occupied
        while targets:
            to = msb(targets)
            targets ^= SQUARE[to]
            if not attackers_of(boards, not turn, to, occupied):
                moves.append(row[to])
    checker = msb(checkers)
    if SQUARE[checker] != checkers:
        return moves  # double check: only the king moves
    between: i64 = BETWEEN[king * 64 + checker]
    target = between | checkers
    moves.extend(
        legal_moves_not_in_check(boards, king, pinned, ~boards.kings & from_mask, target & to_mask)
    )
    # En passant capture of the checking pawn (which is not on the ep square itself).
    ep = boards.ep_square
    if (
        ep > 0
        and SQUARE[ep] & to_mask & ~target & ~boards.occupied
        and ep + (-8 if turn else 8) == checker
    ):
        _en_passant(boards, king, pinned, from_mask, moves)
    return moves


def attackers_of(boards: Bitboards, color: bool, square: i64, occupied: i64) -> i64:
    """``board.attackers_mask(color, square, occupied)``: the pieces of ``color`` attacking
    ``square`` when ``occupied`` blocks the sliders (a king's move is tested with the king
    still on its square, castling with the king and rook lifted)."""
    knight: i64 = KNIGHT_ATTACKS[square]
    king: i64 = KING_ATTACKS[square]
    # A pawn of ``color`` attacks ``square`` from where a pawn of the other colour on
    # ``square`` would attack.
    pawn: i64 = BLACK_PAWN_ATTACKS[square] if color else WHITE_PAWN_ATTACKS[square]
    side = boards.white if color else boards.black
    queens = boards.queens
    attackers = (knight & boards.knights | king & boards.kings | pawn & boards.pawns) & side
    # A slider's attacks are looked up only when one stands on the empty board's rays
    # through ``square`` (often none does: 0.989 times the instructions per node).
    diagonal = (boards.bishops | queens) & side
    if diagonal & BISHOP_RAYS[square]:
        attackers |= bishop_attacks(square, occupied) & diagonal
    straight = (boards.rooks | queens) & side
    if straight & ROOK_RAYS[square]:
        attackers |= rook_attacks(square, occupied) & straight
    return attackers


def _path_attacked(boards: Bitboards, path: i64, occupied: i64) -> bool:
    """python-chess's ``_attacked_for_king``: does the opponent attack a square of ``path``?"""
    enemy = not boards.turn
    while path:
        square = msb(path)
        path ^= SQUARE[square]
        if attackers_of(boards, enemy, square, occupied):
            return True
    return False


def _castling_moves(boards: Bitboards, from_mask: i64, to_mask: i64, moves: list[int]) -> None:
    """Append ``board.generate_castling_moves(from_mask, to_mask)``, as shared moves.

    The same tests in the same order (the rook farthest up the board first), and the same
    notation: king to its target square in standard chess, king takes rook in Chess960.
    The record's castling rights are python-chess's ``clean_castling_rights()``; a king is
    never a promoted piece in chess, so python-chess's test of that is left out.
    """
    turn = boards.turn
    backrank = _RANK_1 if turn else _RANK_8
    own_kings = (boards.white if turn else boards.black) & boards.kings
    king = own_kings & backrank & from_mask
    if not king:
        return
    king_square = lsb(king)
    king = SQUARE[king_square]
    occupied = boards.occupied
    chess960 = boards.chess960
    candidates = boards.castling & backrank & to_mask
    base = king_square & 56
    while candidates:
        candidate = msb(candidates)
        rook: i64 = SQUARE[candidate]
        candidates ^= rook
        a_side = candidate < king_square
        king_to_square = base + 2 if a_side else base + 6
        rook_to_square = base + 3 if a_side else base + 5
        king_to: i64 = SQUARE[king_to_square]
        rook_to: i64 = SQUARE[rook_to_square]
        king_path: i64 = BETWEEN[king_square * 64 + king_to_square]
        rook_path: i64 = BETWEEN[candidate * 64 + rook_to_square]
        if (
            (occupied ^ king ^ rook) & (king_path | rook_path | king_to | rook_to)
            or _path_attacked(boards, king_path | king, occupied ^ king)
            or _path_attacked(boards, king_to, occupied ^ king ^ rook ^ rook_to)
        ):
            continue
        standard = king_square in (chess.E1, chess.E8) and candidate in (base, base + 7)
        if standard and not chess960:
            moves.append(MOVES[king_square][king_to_square])
        else:
            moves.append(MOVES[king_square][candidate])


def _en_passant(
    boards: Bitboards, king: i64, pinned: i64, from_mask: i64, moves: list[int]
) -> None:
    """Append the legal en passant captures, as shared moves, in python-chess's order
    (``generate_pseudo_legal_ep`` filtered by ``_is_safe``): the capturer's pin, then the
    rank (or diagonal) attack on the king that the capturer and the captured pawn uncover
    together when they leave the rank at once.  The caller checked that the en passant
    square is set, asked for and empty."""
    turn = boards.turn
    ep = boards.ep_square
    ep_bb: i64 = SQUARE[ep]
    ours = boards.white if turn else boards.black
    # Where a pawn of ours capturing onto ``ep`` stands: where an enemy pawn on ``ep`` would
    # attack.
    origins: i64 = BLACK_PAWN_ATTACKS[ep] if turn else WHITE_PAWN_ATTACKS[ep]
    capturers = boards.pawns & ours & from_mask & origins & (_RANK_5 if turn else _RANK_4)
    if not capturers:
        return
    theirs = boards.black if turn else boards.white
    victim: i64 = SQUARE[ep - 8 if turn else ep + 8]
    straight = theirs & (boards.rooks | boards.queens)
    diagonal = theirs & (boards.bishops | boards.queens)
    rank: i64 = _RANKS[king >> 3]
    while capturers:
        frm = msb(capturers)
        bit: i64 = SQUARE[frm]
        capturers ^= bit
        if bit & pinned and not LINE[frm * 64 + king] & ep_bb:
            continue
        occupancy = boards.occupied & ~victim & ~bit | ep_bb
        if rook_attacks(king, occupancy) & rank & straight:
            continue
        if bishop_attacks(king, occupancy) & diagonal:
            continue
        moves.append(MOVES[frm][ep])
