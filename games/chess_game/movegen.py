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

__all__ = [
    "MOVES",
    "legal_evasions",
    "legal_moves_not_in_check",
    "pinned_pieces",
    "promotions",
    "shared_move",
]

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

_SHARED_PROMOTIONS: Final[dict[tuple[int, int, int], chess.Move]] = {
    (move.from_square, move.to_square, move.promotion or 0): move
    for moves in _PROMOTIONS.values()
    for move in moves
}


_BETWEEN: Final[tuple[tuple[chess.Bitboard, ...], ...]] = tuple(
    tuple(chess.between(a, b) for b in chess.SQUARES) for a in chess.SQUARES
)
"""``_BETWEEN[a][b]``: the squares strictly between two squares on a line (0 off a line)."""


def promotions(frm: chess.Square, to: chess.Square) -> tuple[chess.Move, ...]:
    """The four promotions of a pawn move, queen first (python-chess's order)."""
    return _PROMOTIONS[frm, to]


def shared_move(frm: chess.Square, to: chess.Square, promotion: int) -> chess.Move:
    """The shared object of the move ``frm``-``to`` promoting to ``promotion`` (0: none).

    Every move the adapter hands out is one of these, so the search may compare moves by
    identity (``engine.game.InternedMoves``)."""
    if not promotion:
        return MOVES[frm][to]
    move = _SHARED_PROMOTIONS.get((frm, to, promotion))
    # No shared object for a promotion no pawn can make (a code from outside a search).
    return chess.Move(frm, to, promotion) if move is None else move


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

    # Castling.
    if from_mask & kings and board.castling_rights & to_mask & ours & _BACKRANKS:
        _castling_moves(board, from_mask, to_mask, moves)

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
        _en_passant(board, king, pinned, from_mask, to_mask, moves)
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
        occupied = board.occupied
        while targets:
            to = targets.bit_length() - 1
            targets ^= BB_SQUARES[to]
            if not _attacked(board, enemy, to, occupied):
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
        _en_passant(board, king, pinned, from_mask, to_mask, moves)
    return moves


def _attacked(board: chess.Board, color: chess.Color, square: chess.Square, occupied: int) -> bool:
    """``board.attackers_mask(color, square, occupied) != 0``, compiled with its callers."""
    theirs = board.occupied_co[color]
    queens = board.queens
    return bool(
        (
            BB_KNIGHT_ATTACKS[square] & board.knights
            | BB_KING_ATTACKS[square] & board.kings
            | BB_PAWN_ATTACKS[not color][square] & board.pawns
            | BB_DIAG_ATTACKS[square][BB_DIAG_MASKS[square] & occupied] & (board.bishops | queens)
            | (
                BB_RANK_ATTACKS[square][BB_RANK_MASKS[square] & occupied]
                | BB_FILE_ATTACKS[square][BB_FILE_MASKS[square] & occupied]
            )
            & (board.rooks | queens)
        )
        & theirs
    )


def _path_attacked(board: chess.Board, path: int, occupied: int) -> bool:
    """python-chess's ``_attacked_for_king``: does the opponent attack a square of ``path``?"""
    enemy = not board.turn
    while path:
        square = path.bit_length() - 1
        path ^= BB_SQUARES[square]
        if _attacked(board, enemy, square, occupied):
            return True
    return False


def _castling_moves(
    board: chess.Board, from_mask: int, to_mask: int, moves: list[chess.Move]
) -> None:
    """Append ``board.generate_castling_moves(from_mask, to_mask)``, as shared moves.

    The same tests in the same order (the rook farthest up the board first), and the same
    notation: king to its target square in standard chess, king takes rook in Chess960.
    """
    turn = board.turn
    backrank = chess.BB_RANK_1 if turn else chess.BB_RANK_8
    king = board.occupied_co[turn] & board.kings & ~board.promoted & backrank & from_mask
    king &= -king
    if not king:
        return
    king_square = king.bit_length() - 1
    occupied = board.occupied
    chess960 = board.chess960
    candidates = board.clean_castling_rights() & backrank & to_mask
    base = king_square & 56
    while candidates:
        candidate = candidates.bit_length() - 1
        rook = BB_SQUARES[candidate]
        candidates ^= rook
        a_side = rook < king
        king_to_square = base + 2 if a_side else base + 6
        rook_to_square = base + 3 if a_side else base + 5
        king_to = BB_SQUARES[king_to_square]
        rook_to = BB_SQUARES[rook_to_square]
        king_path = _BETWEEN[king_square][king_to_square]
        rook_path = _BETWEEN[candidate][rook_to_square]
        if (
            (occupied ^ king ^ rook) & (king_path | rook_path | king_to | rook_to)
            or _path_attacked(board, king_path | king, occupied ^ king)
            or _path_attacked(board, king_to, occupied ^ king ^ rook ^ rook_to)
        ):
            continue
        standard = king_square in (chess.E1, chess.E8) and candidate in (base, base + 7)
        if standard and not chess960:
            moves.append(MOVES[king_square][king_to_square])
        else:
            moves.append(MOVES[king_square][candidate])


def _en_passant(  # noqa: PLR0917 - the generators' own arguments, passed on
    board: chess.Board,
    king: chess.Square,
    pinned: int,
    from_mask: int,
    to_mask: int,
    moves: list[chess.Move],
) -> None:
    """Append the legal en passant captures, as shared moves.

    python-chess generates the candidates and tests each with its own pin and skewer test
    (a capture can uncover a rank attack through two pawns at once); the move appended is
    the shared object equal to python-chess's."""
    is_safe = board._is_safe
    for move in board.generate_pseudo_legal_ep(from_mask, to_mask):
        if is_safe(king, pinned, move):
            moves.append(MOVES[move.from_square][move.to_square])
