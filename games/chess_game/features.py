"""The chess features by name, the readable way: the route ``explain()`` and tuning take.

Each feature is counted with python-chess square sets and per-piece loops, as the feature
list in :mod:`games.chess_game.evaluation` defines it; with integer weights the compiled
``evaluate_fast`` gives the same number (``tests/games/test_chess_eval.py`` checks).  Plain
Python: nothing here runs per node.
"""

from __future__ import annotations

from typing import Final

import chess

from games.chess_game.evaluation import (
    DANGER_BASE,
    DANGER_KNIGHT_GUARD,
    DANGER_SAFE_CHECK,
    DANGER_SHIFT,
    DANGER_THRESHOLD,
    DANGER_UNITS,
    DANGER_UNSAFE_CHECK,
    DANGER_WEAK_ZONE,
    DANGER_ZONE_ATTACK,
    PASSED_RANKS,
    PHASE_MAX,
    PIECE_LETTERS,
    TAPER,
    TAPER_MAX,
    known_draw,
)

__all__ = ["features", "game_phase", "mobility_counts", "side_counts"]

_MOBILE: Final = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
_PAWN_TERMS: Final = ("doubled", "isolated", "backward", "connected")
_GROUP_ORDER: Final = {
    g: i
    for i, g in enumerate(
        (
            "material",
            "psqt",
            "mobility",
            "pawns",
            "passed",
            "king",
            "rook",
            "bishop_pair",
            "threats",
        )
    )
}
_MG_ONLY: Final = frozenset({"king"})
_SPARSE: Final = frozenset({"psqt", "mobility"})
"""Groups of one-hot features (a square, a count), most of them zero in any position."""
_FILES: Final = 8
_PAIR: Final = 2
_KING_RACE_FROM_RANK: Final = 3
"""Passed pawns from this relative rank index on (rank 4) run the king race."""


def game_phase(board: chess.Board) -> int:
    phase = (
        chess.popcount(board.knights | board.bishops)
        + 2 * chess.popcount(board.rooks)
        + 4 * chess.popcount(board.queens)
    )
    return min(phase, PHASE_MAX)


def side_counts(board: chess.Board, color: chess.Color) -> dict[str, int]:
    """Raw feature counts of one side (names without the phase part: ``material.N``,
    ``king.attackers``); :func:`features` turns white's minus black's into feature values."""
    counts: dict[str, int] = {}
    _count_material_and_squares(board, color, counts)
    _count_mobility(board, color, counts)
    _count_pawns(board, color, counts)
    _count_king_safety(board, color, counts)
    _count_rooks_and_bishops(board, color, counts)
    _count_threats(board, color, counts)
    return counts


def _relative_rank(square: chess.Square, color: chess.Color) -> int:
    rank = chess.square_rank(square)
    return rank if color == chess.WHITE else 7 - rank


def _pawns_per_file(board: chess.Board, color: chess.Color) -> list[int]:
    per_file = [0] * _FILES
    for square in board.pieces(chess.PAWN, color):
        per_file[chess.square_file(square)] += 1
    return per_file


def _beside(file: int) -> list[int]:
    return [f for f in (file - 1, file + 1) if 0 <= f < _FILES]


def _count_material_and_squares(
    board: chess.Board, color: chess.Color, counts: dict[str, int]
) -> None:
    for piece_type in (chess.PAWN, *_MOBILE):
        counts[f"material.{PIECE_LETTERS[piece_type]}"] = len(board.pieces(piece_type, color))
    for piece_type in chess.PIECE_TYPES:
        for square in board.pieces(piece_type, color):
            rel = square if color == chess.WHITE else chess.square_mirror(square)
            name = f"psqt.{PIECE_LETTERS[piece_type]}.{chess.SQUARE_NAMES[rel]}"
            counts[name] = counts.get(name, 0) + 1


def mobility_counts(board: chess.Board, color: chess.Color) -> dict[str, int]:
    """The ``mobility.X.k`` counts of one side alone (what :func:`side_counts` has of them)."""
    counts: dict[str, int] = {}
    _count_mobility(board, color, counts)
    return counts


def _mobility_area(board: chess.Board, color: chess.Color) -> chess.SquareSet:
    """Stockfish's mobility area of ``color``: every square but the own king's and queens',
    the own pawns' that are blocked or still on their second or third rank, and those enemy
    pawns attack."""
    own_pawns = board.pieces(chess.PAWN, color)
    low_ranks = (
        (chess.BB_RANK_2 | chess.BB_RANK_3) if color else (chess.BB_RANK_7 | chess.BB_RANK_6)
    )
    stuck = chess.SquareSet(
        square
        for square in own_pawns
        if chess.BB_SQUARES[square] & low_ranks
        or board.piece_at(square + (8 if color else -8)) is not None
    )
    excluded = (
        board.pieces(chess.KING, color)
        | board.pieces(chess.QUEEN, color)
        | stuck
        | _attacks_by(board, not color, chess.PAWN)
    )
    return ~excluded


def _count_mobility(board: chess.Board, color: chess.Color, counts: dict[str, int]) -> None:
    """Each piece by the number of squares it attacks in its side's mobility area
    (``mobility.N.3``: the knights that reach three)."""
    area = _mobility_area(board, color)
    for piece_type in _MOBILE:
        for square in board.pieces(piece_type, color):
            name = f"mobility.{PIECE_LETTERS[piece_type]}.{len(board.attacks(square) & area)}"
            counts[name] = counts.get(name, 0) + 1


def _count_pawns(board: chess.Board, color: chess.Color, counts: dict[str, int]) -> None:
    """Doubled, isolated, backward and connected pawns; passed pawns by rank and their
    king race."""
    own_pawns = list(board.pieces(chess.PAWN, color))
    enemy_pawns = list(board.pieces(chess.PAWN, not color))
    per_file = _pawns_per_file(board, color)
    terms = dict.fromkeys(_PAWN_TERMS, 0)
    terms["doubled"] = sum(n - 1 for n in per_file if n > 1)
    passed = dict.fromkeys(PASSED_RANKS, 0)
    own_king = board.king(color)
    enemy_king = board.king(not color)
    assert own_king is not None and enemy_king is not None, "evaluation needs both kings"
    king_them = king_us = 0

    def rank_of(square: chess.Square) -> int:
        return _relative_rank(square, color)

    for square in own_pawns:
        file, rank = chess.square_file(square), rank_of(square)
        sides = _beside(file)
        isolated = all(per_file[f] == 0 for f in sides)
        if isolated:
            terms["isolated"] += 1
        if any(chess.square_file(o) in sides and rank_of(o) in (rank, rank - 1) for o in own_pawns):
            terms["connected"] += 1
        if (
            not isolated
            and not any(chess.square_file(o) in sides and rank_of(o) <= rank for o in own_pawns)
            and any(chess.square_file(e) in sides and rank_of(e) == rank + 2 for e in enemy_pawns)
        ):
            terms["backward"] += 1
        blocked = any(
            abs(chess.square_file(e) - file) <= 1 and rank_of(e) > rank for e in enemy_pawns
        ) or any(chess.square_file(o) == file and rank_of(o) > rank for o in own_pawns)
        if not blocked:
            passed[rank + 1] += 1
            if rank >= _KING_RACE_FROM_RANK:
                stop = square + 8 if color == chess.WHITE else square - 8
                urgency = 5 * rank - 13
                king_them += urgency * min(chess.square_distance(enemy_king, stop), 5)
                king_us += urgency * min(chess.square_distance(own_king, stop), 5)
    for name, value in terms.items():
        counts[f"pawns.{name}"] = value
    for rank_name, value in passed.items():
        counts[f"passed.r{rank_name}"] = value
    counts["passed.king_them"] = king_them
    counts["passed.king_us"] = king_us


def _count_king_safety(board: chess.Board, color: chess.Color, counts: dict[str, int]) -> None:
    """The pawn shield, open files at the king, and the enemy pieces attacking its zone."""
    own_king = board.king(color)
    assert own_king is not None, "evaluation needs both kings"
    own_pawns = board.pieces(chess.PAWN, color)
    per_file = _pawns_per_file(board, color)
    king_file, king_rank = chess.square_file(own_king), _relative_rank(own_king, color)
    near_files = [f for f in (king_file - 1, king_file, king_file + 1) if 0 <= f < _FILES]
    for name, ahead in (("king.shield1", 1), ("king.shield2", 2)):
        counts[name] = sum(
            1
            for o in own_pawns
            if chess.square_file(o) in near_files and _relative_rank(o, color) == king_rank + ahead
        )
    counts["king.open_file"] = sum(1 for f in near_files if per_file[f] == 0)
    zone = board.attacks(own_king) | chess.SquareSet.from_square(own_king)
    attackers = zone_attacks = 0
    for piece_type in _MOBILE:
        for square in board.pieces(piece_type, not color):
            hit = board.attacks(square) & zone
            if hit:
                attackers += 1
                zone_attacks += len(hit)
    counts["king.attackers"] = attackers
    counts["king.zone_attacks"] = zone_attacks
    counts["king.danger"] = _king_danger(board, color)


def _king_danger(board: chess.Board, color: chess.Color) -> int:
    """Stockfish classical's king danger on ``color``'s king, squared and scaled down (the
    units and why: :mod:`games.chess_game.evaluation`); 0 while the enemy has no queen."""
    them = not color
    if not board.pieces(chess.QUEEN, them):
        return 0
    king = _king(board, color)
    zone = board.attacks(king) | chess.SquareSet.from_square(king)

    their = {piece_type: _attacks_by(board, them, piece_type) for piece_type in _MOBILE}
    their_all, their_twice = _attacked(board, them, 1), _attacked(board, them, 2)
    our_all, our_twice = _attacked(board, color, 1), _attacked(board, color, 2)
    our_king = board.attacks(king)
    our_queens = _attacks_by(board, color, chess.QUEEN)
    weak = their_all & ~our_twice & (~our_all | our_king | our_queens)
    safe = ~chess.SquareSet(board.occupied_co[them]) & (~our_all | (weak & their_twice))
    danger = DANGER_BASE + DANGER_WEAK_ZONE * len(zone & weak)
    for piece_type in _MOBILE:
        for square in board.pieces(piece_type, them):
            hit = board.attacks(square) & zone
            if hit:
                danger += DANGER_UNITS[piece_type] + DANGER_ZONE_ATTACK * len(hit)
    occupied = board.occupied
    rook_rays = chess.SquareSet(
        chess.BB_RANK_ATTACKS[king][chess.BB_RANK_MASKS[king] & occupied]
        | chess.BB_FILE_ATTACKS[king][chess.BB_FILE_MASKS[king] & occupied]
    )
    bishop_rays = chess.SquareSet(chess.BB_DIAG_ATTACKS[king][chess.BB_DIAG_MASKS[king] & occupied])
    knight_rays = chess.SquareSet(chess.BB_KNIGHT_ATTACKS[king])
    unsafe = chess.SquareSet()
    rook_checks = rook_rays & safe & their[chess.ROOK]
    if rook_checks:
        danger += DANGER_SAFE_CHECK[chess.ROOK]
    else:
        unsafe |= rook_rays & their[chess.ROOK]
    queen_checks = (rook_rays | bishop_rays) & their[chess.QUEEN] & safe - our_queens - rook_checks
    if queen_checks:
        danger += DANGER_SAFE_CHECK[chess.QUEEN]
    bishop_checks = bishop_rays & their[chess.BISHOP] & safe - queen_checks
    if bishop_checks:
        danger += DANGER_SAFE_CHECK[chess.BISHOP]
    else:
        unsafe |= bishop_rays & their[chess.BISHOP]
    knight_checks = knight_rays & their[chess.KNIGHT]
    if knight_checks & safe:
        danger += DANGER_SAFE_CHECK[chess.KNIGHT]
    else:
        unsafe |= knight_checks
    danger += DANGER_UNSAFE_CHECK * len(unsafe)
    if _attacks_by(board, color, chess.KNIGHT) & our_king:
        danger -= DANGER_KNIGHT_GUARD
    return danger * danger >> DANGER_SHIFT if danger > DANGER_THRESHOLD else 0


def _count_rooks_and_bishops(
    board: chess.Board, color: chess.Color, counts: dict[str, int]
) -> None:
    pawn_files = {chess.square_file(p) for p in chess.SquareSet(board.pawns)}
    per_file = _pawns_per_file(board, color)
    rook_open = rook_semi = 0
    for square in board.pieces(chess.ROOK, color):
        file = chess.square_file(square)
        if file not in pawn_files:
            rook_open += 1
        elif per_file[file] == 0:
            rook_semi += 1
    counts["rook.open_file"] = rook_open
    counts["rook.semi_open_file"] = rook_semi
    counts["bishop_pair"] = int(len(board.pieces(chess.BISHOP, color)) >= _PAIR)


def _count_threats(board: chess.Board, color: chess.Color, counts: dict[str, int]) -> None:
    """Stockfish 11 classical's threats of ``color`` on the enemy's men (the definitions:
    docs/evaluation.md): minors hitting defended or weak men and rooks hitting weak ones by
    the victim's type, the king hitting a weak man, hanging men, weak men the enemy queen
    defends, restricted squares, safe pawns and safe pawn pushes hitting pieces, and knights
    and sliders that can hit the lone enemy queen next move."""
    them = not color
    their_men = chess.SquareSet(board.occupied_co[them])
    non_pawn = their_men - board.pieces(chess.PAWN, them)
    kings = chess.SquareSet(board.kings)
    our_all, our_twice = _attacked(board, color, 1), _attacked(board, color, 2)
    their_all, their_twice = _attacked(board, them, 1), _attacked(board, them, 2)
    strongly = _attacks_by(board, them, chess.PAWN) | (their_twice - our_twice)
    weak = (their_men - kings - strongly) & our_all
    minor_attacks = _attacks_by(board, color, chess.KNIGHT) | _attacks_by(
        board, color, chess.BISHOP
    )
    rook_attacks = _attacks_by(board, color, chess.ROOK)

    def add(name: str, value: int) -> None:
        if value:
            counts[name] = counts.get(name, 0) + value

    for square in (((non_pawn - kings) & strongly) | weak) & minor_attacks:
        add(f"threats.minor.{PIECE_LETTERS[board.piece_type_at(square) or 0]}", 1)
    for square in weak & rook_attacks:
        add(f"threats.rook.{PIECE_LETTERS[board.piece_type_at(square) or 0]}", 1)
    add("threats.king", int(bool(weak & board.attacks(_king(board, color)))))
    add("threats.hanging", len(weak & (~their_all | (non_pawn & our_twice))))
    add("threats.weak_queen_protection", len(weak & _attacks_by(board, them, chess.QUEEN)))
    add("threats.restricted", len(their_all & ~strongly & our_all))
    safe = ~their_all | our_all
    safe_pawns = board.pieces(chess.PAWN, color) & safe
    add("threats.safe_pawn", len(_pawn_attacks(safe_pawns, color) & non_pawn))
    empty = ~chess.SquareSet(board.occupied)
    shift = chess.shift_up if color else chess.shift_down
    third = chess.BB_RANK_3 if color else chess.BB_RANK_6
    pushes = chess.SquareSet(shift(board.pieces_mask(chess.PAWN, color))) & empty
    pushes |= chess.SquareSet(shift(int(pushes & third))) & empty
    pushes &= ~_attacks_by(board, them, chess.PAWN) & safe
    add("threats.pawn_push", len(_pawn_attacks(pushes, color) & non_pawn))
    queens = board.pieces(chess.QUEEN, them)
    if len(queens) == 1:
        queen = next(iter(queens))
        open_squares = _mobility_area(board, color) - strongly
        knight_hits = chess.SquareSet(chess.BB_KNIGHT_ATTACKS[queen])
        add(
            "threats.knight_on_queen",
            len(_attacks_by(board, color, chess.KNIGHT) & knight_hits & open_squares),
        )
        occupied = board.occupied
        rook_rays = chess.SquareSet(
            chess.BB_RANK_ATTACKS[queen][chess.BB_RANK_MASKS[queen] & occupied]
            | chess.BB_FILE_ATTACKS[queen][chess.BB_FILE_MASKS[queen] & occupied]
        )
        bishop_rays = chess.SquareSet(
            chess.BB_DIAG_ATTACKS[queen][chess.BB_DIAG_MASKS[queen] & occupied]
        )
        sliders = (_attacks_by(board, color, chess.BISHOP) & bishop_rays) | (
            rook_attacks & rook_rays
        )
        add("threats.slider_on_queen", len(sliders & open_squares & our_twice))


def _king(board: chess.Board, color: chess.Color) -> chess.Square:
    king = board.king(color)
    assert king is not None, "evaluation needs both kings"
    return king


def _attacks_by(
    board: chess.Board, side: chess.Color, piece_type: chess.PieceType
) -> chess.SquareSet:
    """The squares ``side``'s men of ``piece_type`` attack."""
    squares = chess.SquareSet()
    for square in board.pieces(piece_type, side):
        squares |= board.attacks(square)
    return squares


def _attacked(board: chess.Board, side: chess.Color, times: int) -> chess.SquareSet:
    """The squares ``side`` attacks at least ``times`` times (pawns, pieces and king)."""
    return chess.SquareSet(
        square for square in chess.SQUARES if len(board.attackers(side, square)) >= times
    )


def _pawn_attacks(pawns: chess.SquareSet, color: chess.Color) -> chess.SquareSet:
    squares = chess.SquareSet()
    for square in pawns:
        squares |= chess.BB_PAWN_ATTACKS[color][square]
    return squares


def features(board: chess.Board) -> dict[str, float]:
    """Feature values from the side to move's view (see the module docstring), grouped in a
    fixed order so ``explain()`` reads top-down: material, squares, mobility, pawns, king...
    In a known draw every value is 0 (see the module docstring)."""
    if known_draw(board):
        return {"tempo": 0.0}
    taper = TAPER[game_phase(board)]
    white = side_counts(board, chess.WHITE)
    black = side_counts(board, chess.BLACK)
    sign = 1 if board.turn == chess.WHITE else -1
    names = list(white) + [name for name in black if name not in white]
    names.sort(key=lambda name: _GROUP_ORDER[name.partition(".")[0]])
    values: dict[str, float] = {}
    for name in names:
        raw = sign * (white.get(name, 0) - black.get(name, 0))
        group, _, rest = name.partition(".")
        if group in _SPARSE and raw == 0:
            continue
        suffix = f".{rest}" if rest else ""
        values[f"{group}.mg{suffix}"] = raw * taper / TAPER_MAX
        if group not in _MG_ONLY:
            values[f"{group}.eg{suffix}"] = raw * (TAPER_MAX - taper) / TAPER_MAX
    values["tempo"] = 1.0
    return values
