"""Games an engine did not win after its own score said it was ahead, from a match's PGN.

    python bench/lost_leads.py /tmp/m16/sf2000.pgn Brudno [--lead 2.0]

For the named player: how many games it won, drew and lost, how many of the draws and losses
came after one of its own move comments showed a score of ``--lead`` pawns or more (the
comments `brudno match` writes, ``{+2.31/9 0.171s}``; a mate for it counts as ahead), and for
each such game the final material (``KRB v KR``, the player's side first) with ``OCB`` where
the last bishops stand on squares of opposite colours.  Drawn endgames the player thought it
was winning (a minor piece up without pawns, opposite bishops) point at the evaluation's
endgame knowledge; losses after a lead point at a score that was never real (the opponent's
own scores in the same PGN say which).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

import chess
import chess.pgn

_SCORE = re.compile(r"^\s*([+-])(M?)([0-9]+(?:\.[0-9]+)?)")
"""A score always carries its sign (``+0.00``, ``-M3``); an unsigned number is a time."""
_ORDER = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)


def own_score(comment: str) -> float | None:
    """The score in pawns of a move comment (a mate for the mover is +inf), if it has one."""
    found = _SCORE.match(comment)
    if found is None:
        return None
    sign = -1.0 if found.group(1) == "-" else 1.0
    if found.group(2):
        return sign * float("inf")
    return sign * float(found.group(3))


def material(board: chess.Board, color: chess.Color) -> str:
    return "".join(
        chess.piece_symbol(piece).upper() * len(board.pieces(piece, color)) for piece in _ORDER
    )


def opposite_bishops(board: chess.Board) -> bool:
    white = board.pieces(chess.BISHOP, chess.WHITE)
    black = board.pieces(chess.BISHOP, chess.BLACK)
    return (
        len(white) == 1
        and len(black) == 1
        and bool(white & chess.BB_LIGHT_SQUARES) != bool(black & chess.BB_LIGHT_SQUARES)
    )


def player_outcome(game: chess.pgn.Game, name: str) -> tuple[chess.Color, str] | None:
    """The player's colour and "won", "drawn" or "lost"; ``None`` if it did not play this
    game or the game has no result."""
    headers = game.headers
    if name not in (headers.get("White"), headers.get("Black")):
        return None
    side = chess.WHITE if headers.get("White") == name else chess.BLACK
    result = headers.get("Result", "*")
    if result == "1/2-1/2":
        return side, "drawn"
    if result in ("1-0", "0-1"):
        return side, "won" if (result == "1-0") == (side == chess.WHITE) else "lost"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", type=Path)
    parser.add_argument("name", help="the player as named in the PGN")
    parser.add_argument("--lead", type=float, default=2.0, help="pawns (default 2.0)")
    args = parser.parse_args()
    outcomes: Counter[str] = Counter()
    after_lead: Counter[str] = Counter()
    endings: list[str] = []
    with args.pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            played = player_outcome(game, args.name)
            if played is None:
                continue
            side, outcome = played
            outcomes[outcome] += 1
            best = -float("inf")
            for node in game.mainline():
                if node.parent is not None and node.parent.turn() == side:
                    score = own_score(node.comment)
                    if score is not None:
                        best = max(best, score)
            if outcome == "won" or best < args.lead:
                continue
            after_lead[outcome] += 1
            board = game.end().board()
            ocb = " OCB" if opposite_bishops(board) else ""
            endings.append(
                f"{outcome} after +{best:.2f}: {material(board, side)} v "
                f"{material(board, not side)}{ocb}, {board.ply()} plies, "
                f"{game.headers.get('Termination', '?')}"
            )
    for line in endings:
        print(line)
    print(
        f"{args.name}: won {outcomes['won']} drawn {outcomes['drawn']} lost {outcomes['lost']}; "
        f"after a lead of {args.lead:+.1f} or more: drawn {after_lead['drawn']} "
        f"lost {after_lead['lost']}"
    )


if __name__ == "__main__":
    main()
