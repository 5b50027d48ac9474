"""Legal move lists in python-chess's own order, built from shared move objects.

python-chess generates moves with nested generators and a fresh ``Move`` per move; in a
search that asks for a node's captures and then its quiet moves, that is a third of the time
spent per node.  This module builds the same lists directly: one loop per piece kind over
the attack tables, moves taken from a precomputed table (``chess.Move`` is an immutable value,
so sharing one object per from/to/promotion is safe), and the pin test folded into the attack
masks.  Sharing objects also makes the search's "is the killer among these moves?" tests
succeed on identity before any ``Move.__eq__`` call.

The order is python-chess's ``generate_legal_moves`` order exactly: pieces other than pawns
from the highest square down, each to its targets from the highest square down, then
castling, pawn captures, single and double pawn pushes, en passant.  A search's node counts
depend on move order, so the tests compare whole lists, not sets.

Evasions (the side to move in check) follow python-chess's ``_generate_evasions`` order:
king moves first, then, against a single checker, the moves that capture it or block its
line (the generator above, restricted to those squares), then an en passant capture of a
checking pawn.
"""

from __future__ import annotations

from typing import Final

import chess
from chess import (
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_ATTACKS,
    BB_FILE_MASKS,
    BB_KING_ATTACKS,
    BB_KNIGHT_ATTACKS,
    BB_PAWN_ATTACKS,
    BB_RANK_ATTACKS,
    BB_RANK_MASKS,
    BB_RAYS,
    BB_SQUARES,
)

__all__ = ["MOVES", "legal_evasions", "legal_moves_not_in_check", "pinned_pieces", "promotions"]

_BACKRANKS: Final = chess.BB_RANK_1 | chess.BB_RANK_8
_NOT_FILE_A: Final = chess.BB_ALL & ~chess.BB_FILE_A
_NOT_FILE_H: Final = chess.BB_ALL & ~chess.BB_FILE_H

MOVES: Final[tuple[tuple[chess.Move, ...], ...]] = tuple(
    tuple(chess.Move(frm, to) for to in chess.SQUARES) for frm in chess.SQUARES
)
"""``MOVES[from][to]``: the plain move, one shared object per pair."""

_PROMOTION_PIECES: Final = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
_PROMOTIONS: Final[dict[tuple[int, int], tuple[chess.Move, ...]]] = {
    (frm, to): tuple(chess.Move(frm, to, piece) for piece in _PROMOTION_PIECES)
    for frm in chess.SQUARES
    for to in chess.SQUARES
    if chess.square_rank(to) in (0, 7)
}


_BETWEEN: Final[tuple[tuple[chess.Bitboard, ...], ...]] = tuple(
    tuple(chess.between(a, b) for b in chess.SQUARES) for a in chess.SQUARES
)
"""``_BETWEEN[a][b]``: the squares strictly between two squares on a line (0 off a line)."""


def promotions(frm: chess.Square, to: chess.Square) -> tuple[chess.Move, ...]:
    """The four promotions of a pawn move, queen first (python-chess's order)."""
    return _PROMOTIONS[frm, to]


def pinned_pieces(board: chess.Board, king: chess.Square) -> chess.Bitboard:
    """``board._slider_blockers(king)``: the side to move's pieces that stand alone between
    their king and an enemy slider aiming at it.

    The same bitboard as python-chess's, computed once per node that generates moves, without
    its generator over the snipers and its helper calls per sniper.
    """
    occupied = board.occupied
    rooks_queens = board.rooks | board.queens
    bishops_queens = board.bishops | board.queens
    snipers = (
        (BB_RANK_ATTACKS[king][0] | BB_FILE_ATTACKS[king][0]) & rooks_queens
        | BB_DIAG_ATTACKS[king][0] & bishops_queens
    ) & board.occupied_co[not board.turn]
    between = _BETWEEN[king]
    blockers = 0
    while snipers:
        sniper = snipers.bit_length() - 1
        snipers ^= BB_SQUARES[sniper]
        line = between[sniper] & occupied
        if line and not line & (line - 1):  # exactly one piece in between
            blockers |= line
    return blockers & board.occupied_co[board.turn]


def legal_moves_not_in_check(
    board: chess.Board,
    king: chess.Square,
    pinned: chess.Bitboard,
    from_mask: chess.Bitboard,
    to_mask: chess.Bitboard,
) -> list[chess.Move]:
    """``list(board.generate_legal_moves(from_mask, to_mask))`` when the side to move is not
    in check; ``pinned`` is :func:`pinned_pieces` (own pieces pinned to the king).

    A pinned piece keeps only the targets on the line through it and its king (python-chess's
    ``_is_safe`` test, applied to a whole mask at once); the king keeps only unattacked
    squares; en passant captures go through python-chess's own test (a capture can uncover a
    rank attack through two pawns at once).
    """
    turn = board.turn
    ours = board.occupied_co[turn]
    theirs = board.occupied_co[not turn]
    occupied = board.occupied
    pawns = board.pawns
    knights = board.knights
    kings = board.kings
    diagonal = board.bishops | board.queens
    straight = board.rooks | board.queens
    moves: list[chess.Move] = []
    append = moves.append
    extend = moves.extend
    allowed = ~ours & to_mask

    # Pieces other than pawns, highest square first.
    pieces = ours & ~pawns & from_mask
    while pieces:
        frm = pieces.bit_length() - 1
        bit = BB_SQUARES[frm]
        pieces ^= bit
        if bit & knights:
            targets = BB_KNIGHT_ATTACKS[frm] & allowed
        elif bit & kings:
            # python-chess's ``attackers_mask`` test inlined, on the current occupancy: out of
            # check, no slider's ray passes through the king to a square beyond it.
            targets = BB_KING_ATTACKS[frm] & allowed
            if not targets:
                continue
            row = MOVES[frm]
            their_pawns = pawns & theirs
            their_knights = knights & theirs
            their_kings = kings & theirs
            their_diagonal = diagonal & theirs
            their_straight = straight & theirs
            pawn_attackers = BB_PAWN_ATTACKS[turn]
            while targets:
                to = targets.bit_length() - 1
                targets ^= BB_SQUARES[to]
                if (
                    BB_KNIGHT_ATTACKS[to] & their_knights
                    or BB_KING_ATTACKS[to] & their_kings
                    or pawn_attackers[to] & their_pawns
                    or BB_DIAG_ATTACKS[to][BB_DIAG_MASKS[to] & occupied] & their_diagonal
                    or (
                        BB_RANK_ATTACKS[to][BB_RANK_MASKS[to] & occupied]
                        | BB_FILE_ATTACKS[to][BB_FILE_MASKS[to] & occupied]
                    )
                    & their_straight
                ):
                    continue
                append(row[to])
            continue
        else:
            targets = 0
            if bit & diagonal:
                targets = BB_DIAG_ATTACKS[frm][BB_DIAG_MASKS[frm] & occupied]
            if bit & straight:
                targets |= (
                    BB_RANK_ATTACKS[frm][BB_RANK_MASKS[frm] & occupied]
                    | BB_FILE_ATTACKS[frm][BB_FILE_MASKS[frm] & occupied]
                )
            targets &= allowed
        if not targets:
            continue  # most pieces, when only captures are asked for
        if bit & pinned:
            targets &= BB_RAYS[frm][king]
        row = MOVES[frm]
        while targets:
            to = targets.bit_length() - 1
            targets ^= BB_SQUARES[to]
            append(row[to])

    # Castling (python-chess checks rights, paths and attacked squares).
    if from_mask & kings and board.castling_rights & to_mask & ours & _BACKRANKS:
        extend(board.generate_castling_moves(from_mask, to_mask))

    own_pawns = pawns & ours & from_mask
    if not own_pawns:
        return moves

    # Pawn captures, highest pawn first.
    pawn_attacks = BB_PAWN_ATTACKS[turn]
    capture_mask = theirs & to_mask
    if capture_mask:
        # Only the pawns that attack something: the targets, shifted back one pawn step.
        if turn:
            capturers = own_pawns & (
                ((capture_mask >> 7) & _NOT_FILE_A) | ((capture_mask >> 9) & _NOT_FILE_H)
            )
        else:
            capturers = own_pawns & (
                ((capture_mask << 7) & _NOT_FILE_H) | ((capture_mask << 9) & _NOT_FILE_A)
            )
        while capturers:
            frm = capturers.bit_length() - 1
            bit = BB_SQUARES[frm]
            capturers ^= bit
            targets = pawn_attacks[frm] & capture_mask
            if bit & pinned:
                targets &= BB_RAYS[frm][king]
            row = MOVES[frm]
            while targets:
                to = targets.bit_length() - 1
                targets ^= BB_SQUARES[to]
                if BB_SQUARES[to] & _BACKRANKS:
                    extend(_PROMOTIONS[frm, to])
                else:
                    append(row[to])

    # Pushes: every single push, then every double push, highest target first.
    if turn:
        single = (own_pawns << 8) & ~occupied
        double = (single << 8) & ~occupied & (chess.BB_RANK_3 | chess.BB_RANK_4)
        step = 8
    else:
        single = (own_pawns >> 8) & ~occupied
        double = (single >> 8) & ~occupied & (chess.BB_RANK_6 | chess.BB_RANK_5)
        step = -8
    single &= to_mask
    double &= to_mask
    while single:
        to = single.bit_length() - 1
        single ^= BB_SQUARES[to]
        frm = to - step
        if BB_SQUARES[frm] & pinned and not BB_RAYS[frm][king] & BB_SQUARES[to]:
            continue
        if BB_SQUARES[to] & _BACKRANKS:
            extend(_PROMOTIONS[frm, to])
        else:
            append(MOVES[frm][to])
    while double:
        to = double.bit_length() - 1
        double ^= BB_SQUARES[to]
        frm = to - step - step
        if BB_SQUARES[frm] & pinned and not BB_RAYS[frm][king] & BB_SQUARES[to]:
            continue
        append(MOVES[frm][to])

    # En passant.
    ep = board.ep_square
    if ep and BB_SQUARES[ep] & to_mask and not BB_SQUARES[ep] & occupied:
        is_safe = board._is_safe  # python-chess's own pin and skewer test
        for move in board.generate_pseudo_legal_ep(from_mask, to_mask):
            if is_safe(king, pinned, move):
                append(move)
    return moves


def legal_evasions(  # noqa: PLR0917 - called per node in check: positional is cheapest
    board: chess.Board,
    king: chess.Square,
    pinned: chess.Bitboard,
    checkers: chess.Bitboard,
    from_mask: chess.Bitboard,
    to_mask: chess.Bitboard,
) -> list[chess.Move]:
    """``list(board.generate_legal_moves(from_mask, to_mask))`` when the side to move is in
    check by ``checkers``; ``pinned`` is :func:`pinned_pieces`.

    python-chess's ``_generate_evasions`` filtered by its ``_is_safe``: the king steps off
    every checking slider's line to a square no enemy piece attacks; against one checker,
    the other pieces capture it or step between (pinned ones only along their pin), which is
    what :func:`legal_moves_not_in_check` generates when asked for those squares only.
    """
    turn = board.turn
    moves: list[chess.Move] = []
    if BB_SQUARES[king] & from_mask:
        sliders = checkers & (board.bishops | board.rooks | board.queens)
        off_line = 0
        while sliders:
            checker = sliders.bit_length() - 1
            sliders ^= BB_SQUARES[checker]
            off_line |= BB_RAYS[king][checker] & ~BB_SQUARES[checker]
        targets = BB_KING_ATTACKS[king] & ~board.occupied_co[turn] & ~off_line & to_mask
        row = MOVES[king]
        enemy = not turn
        attackers_mask = board.attackers_mask
        while targets:
            to = targets.bit_length() - 1
            targets ^= BB_SQUARES[to]
            if not attackers_mask(enemy, to):
                moves.append(row[to])
    checker = checkers.bit_length() - 1
    if BB_SQUARES[checker] != checkers:
        return moves  # double check: only the king moves
    target = _BETWEEN[king][checker] | checkers
    moves.extend(
        legal_moves_not_in_check(board, king, pinned, ~board.kings & from_mask, target & to_mask)
    )
    # En passant capture of the checking pawn (which is not on the ep square itself).
    ep = board.ep_square
    if ep and not BB_SQUARES[ep] & target and ep + (-8 if turn else 8) == checker:
        is_safe = board._is_safe
        for move in board.generate_pseudo_legal_ep(from_mask, to_mask):
            if is_safe(king, pinned, move):
                moves.append(move)
    return moves
