"""Positions as pictures for the status page: python-chess's SVG board for chess, a plain
grid for the drop games, a row of matches per heap for Grundy's game.

The position comes from a URL the page was given (:meth:`SessionStatus.board_url`), so it is
read as untrusted text: a FEN that does not parse, an unknown variant or a board beyond the
sizes below is refused with :class:`BoardError` (the server answers 400), and everything
drawn is either a shape or text this module wrote, never the client's text.
"""

from __future__ import annotations

import chess
import chess.svg

BOARD_PX = 360
"""The picture's size (it scales in the page)."""
MAX_GRID = 16
"""The largest grid drawn (files or ranks): every drop game here is far below it."""
MAX_HEAPS = 32
MAX_HEAP = 200


class BoardError(ValueError):
    """A position that cannot be drawn (the message says why)."""


def render(variant: str, fen: str, *, chess960: bool = False, arrow: str | None = None) -> str:
    """The SVG of ``fen`` in ``variant``; ``arrow`` (a move in the game's notation, the
    line's first move) is drawn where the game has a way to show it."""
    match variant:
        case "chess":
            return _chess(fen, chess960, arrow)
        case "tictactoe" | "cfour":
            return _grid(fen, arrow, round_stones=variant == "cfour")
        case "grundy":
            return _heaps(fen)
        case _:
            raise BoardError(f"no picture for variant {variant[:40]!r}")


def _chess(fen: str, chess960: bool, arrow: str | None) -> str:
    try:
        board = chess.Board(fen, chess960=chess960)
    except ValueError as exc:
        raise BoardError(f"bad FEN: {exc}") from None
    arrows: list[chess.svg.Arrow] = []
    if arrow:
        try:
            move = chess.Move.from_uci(arrow)
        except ValueError:
            move = None  # a move in another notation: no arrow, still the board
        if move is not None and move:
            arrows.append(chess.svg.Arrow(move.from_square, move.to_square, color="#2e7d32cc"))
    return chess.svg.board(board, size=BOARD_PX, arrows=arrows, coordinates=True)


def _grid(fen: str, arrow: str | None, *, round_stones: bool) -> str:
    """A drop game's ``<ranks>[<pocket>] ...`` FEN: ``P`` first player, ``p`` second."""
    placement = fen.split(" ", 1)[0].split("[", 1)[0]
    rows: list[list[str]] = []
    for rank in placement.split("/"):
        row: list[str] = []
        digits = ""
        for char in rank + "/":
            if char.isdigit():
                digits += char
                continue
            if digits:
                row.extend([""] * int(digits))
                digits = ""
            if char in "Pp":
                row.append(char)
            elif char != "/":
                raise BoardError(f"bad board character {char!r}")
            if len(row) > MAX_GRID:
                raise BoardError("board too large")
        rows.append(row)
    width = len(rows[0]) if rows else 0
    if not rows or len(rows) > MAX_GRID or width == 0 or any(len(r) != width for r in rows):
        raise BoardError("the ranks of the board differ in length, or there are none")
    target = _drop_square(arrow, width, len(rows))
    cell = BOARD_PX // max(width, len(rows))
    out = [_svg_head(cell * width, cell * len(rows))]
    for y, row in enumerate(rows):
        for x, piece in enumerate(row):
            px, py = x * cell, y * cell
            fill = "#fff59d" if (x, y) == target else "#eceff1"
            out.append(
                f'<rect x="{px}" y="{py}" width="{cell}" height="{cell}" fill="{fill}" '
                'stroke="#546e7a" stroke-width="2"/>'
            )
            if piece:
                out.append(_stone(px, py, cell, piece == "P", round_stones))
    out.append("</svg>")
    return "".join(out)


def _drop_square(arrow: str | None, width: int, height: int) -> tuple[int, int] | None:
    """``P@b2`` (or ``b2``) as (column, row from the top), to highlight; else ``None``."""
    if not arrow:
        return None
    square = arrow.rsplit("@", 1)[-1]
    if len(square) < 2 or not square[1:].isdigit():  # noqa: PLR2004 (a file letter and a rank)
        return None
    x, rank = ord(square[0]) - ord("a"), int(square[1:])
    if not (0 <= x < width and 1 <= rank <= height):
        return None
    return x, height - rank


def _stone(px: int, py: int, cell: int, first: bool, round_stones: bool) -> str:
    middle, radius = cell // 2, cell * 3 // 8
    if round_stones:
        colour = "#d32f2f" if first else "#fbc02d"
        return (
            f'<circle cx="{px + middle}" cy="{py + middle}" r="{radius}" fill="{colour}" '
            'stroke="#37474f" stroke-width="2"/>'
        )
    if first:  # X
        a, b = px + middle - radius, px + middle + radius
        c, d = py + middle - radius, py + middle + radius
        return (
            f'<path d="M{a} {c}L{b} {d}M{b} {c}L{a} {d}" stroke="#1565c0" '
            f'stroke-width="{max(2, cell // 10)}" stroke-linecap="round"/>'
        )
    return (  # O
        f'<circle cx="{px + middle}" cy="{py + middle}" r="{radius}" fill="none" '
        f'stroke="#c62828" stroke-width="{max(2, cell // 10)}"/>'
    )


def _heaps(fen: str) -> str:
    """Grundy's ``5/3/1 b 2``: one row of matches per heap, with its size."""
    field = fen.split(" ", 1)[0]
    try:
        heaps = [int(part) for part in field.split("/")]
    except ValueError:
        raise BoardError("heaps must be numbers separated by /") from None
    if not heaps or len(heaps) > MAX_HEAPS or any(not 0 <= h <= MAX_HEAP for h in heaps):
        raise BoardError("too many heaps, or a heap too large")
    row_h = max(12, min(36, BOARD_PX // len(heaps)))
    widest = max(heaps)
    step = max(2.0, min(14.0, (BOARD_PX - 60) / max(widest, 1)))
    out = [_svg_head(BOARD_PX, row_h * len(heaps))]
    for y, size in enumerate(heaps):
        top = y * row_h
        out.append(
            f'<text x="4" y="{top + row_h * 0.7:.1f}" font-family="sans-serif" '
            f'font-size="{row_h * 0.55:.1f}" fill="#263238">{size}</text>'
        )
        for i in range(size):
            x = 50 + i * step
            out.append(
                f'<rect x="{x:.1f}" y="{top + 3}" width="{max(1.0, step * 0.5):.1f}" '
                f'height="{row_h - 6}" rx="1" fill="#8d6e63"/>'
            )
    out.append("</svg>")
    return "".join(out)


def _svg_head(width: int, height: int) -> str:
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
    )
