"""Opening books for matches: EPD/FEN files (one position per line) and PGN files (each game's
main line, optionally cut to a number of plies).

An :class:`Opening` is a start position plus the moves played from it, in UCI notation, so
the match can hand both to an engine (``position fen … moves …``) and write the moves into
the game's PGN.  For chess the file is read with python-chess; for any other registered
variant each line is a FEN in that game's dialect, checked by the game's adapter.

Books are large (the shared PGN sample holds 4,958 games) and a match uses only as many
openings as it has game pairs, so :func:`load_openings` indexes the file cheaply and parses
just the entries it returns; they are all parsed before the first game starts, so a bad
entry stops the match before it begins rather than in the middle.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

from engine.game import GameError
from games.registry import get_variant

__all__ = [
    "FEN_FIELDS",
    "Opening",
    "OpeningError",
    "OpeningOrder",
    "OpeningSelection",
    "count_openings",
    "load_openings",
]

_PGN_SUFFIXES = (".pgn",)

FEN_FIELDS = 6
"""A full FEN's fields (an EPD line has the first four, then operations)."""


class OpeningError(ValueError):
    """An opening file that cannot be read, or an entry that is not a playable position."""


class OpeningOrder(enum.StrEnum):
    """In which order a book's entries are played (``--openings-order``)."""

    SEQUENTIAL = "sequential"
    """Entries ``start``, ``start+1``, … wrapping around at the end of the file."""
    RANDOM = "random"
    """A shuffle of the whole file with the seed, then taken in that order from ``start``."""


@dataclass(frozen=True, slots=True)
class Opening:
    """A start position (``fen`` None: the variant's standard start) and book moves from it."""

    fen: str | None
    moves: tuple[str, ...]
    label: str
    """Where it came from (``file:line`` or ``file#game``), for messages and PGN comments."""


def _is_pgn(path: Path) -> bool:
    return path.suffix.lower() in _PGN_SUFFIXES


def _epd_lines(path: Path) -> list[tuple[int, str]]:
    """Non-empty, non-comment lines with their 1-based line numbers."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpeningError(f"cannot read openings file {path}: {exc}") from None
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith(("#", "%")):
            out.append((number, line))
    return out


def _pgn_offsets(path: Path) -> list[int]:
    """Byte offsets of the games in a PGN file, found without parsing any moves."""
    offsets = []
    try:
        with path.open(encoding="utf-8-sig") as handle:
            while True:
                offset = handle.tell()
                if not chess.pgn.skip_game(handle):
                    break
                offsets.append(offset)
    except (OSError, UnicodeDecodeError) as exc:
        raise OpeningError(f"cannot read openings file {path}: {exc}") from None
    return offsets


def count_openings(path: str | Path) -> int:
    """How many entries the file holds (games for PGN, positions for EPD)."""
    path = Path(path)
    return len(_pgn_offsets(path)) if _is_pgn(path) else len(_epd_lines(path))


def _chess_epd(line: str, label: str) -> Opening:
    """A chess EPD line (4 fields, then operations such as ``hmvc``/``fmvn``) or a full FEN
    (6 fields, anything after them ignored)."""
    parts = line.split()
    try:
        if len(parts) >= FEN_FIELDS and parts[4].isdigit() and parts[5].rstrip(";").isdigit():
            board = chess.Board(" ".join([*parts[:5], parts[5].rstrip(";")]))
        else:
            board = chess.Board.from_epd(line)[0]
    except ValueError as exc:
        raise OpeningError(f"{label}: not a position ({exc})") from None
    return _checked_chess(board, (), label)


def _checked_chess(board: chess.Board, moves: tuple[str, ...], label: str) -> Opening:
    status = board.status()
    if status != chess.STATUS_VALID:
        raise OpeningError(f"{label}: illegal position ({status!r})")
    end = board.copy()
    for move in moves:
        end.push_uci(move)
    if end.is_game_over(claim_draw=True):
        raise OpeningError(f"{label}: the game is already over")
    fen = board.fen()
    return Opening(None if fen == chess.STARTING_FEN else fen, moves, label)


def _chess_pgn(path: Path, offset: int, label: str, plies: int | None) -> Opening:
    with path.open(encoding="utf-8-sig") as handle:
        handle.seek(offset)
        game = chess.pgn.read_game(handle)
    if game is None:
        raise OpeningError(f"{label}: no game")
    if game.errors:
        raise OpeningError(f"{label}: {game.errors[0]}")
    if game.headers.get("Variant", "Standard").lower() not in ("standard", "chess"):
        raise OpeningError(f"{label}: variant {game.headers['Variant']!r} is not chess")
    board = game.board()
    moves = tuple(move.uci() for move in game.mainline_moves())
    if plies is not None:
        moves = moves[:plies]
    return _checked_chess(board, moves, label)


def _variant_fen(variant: str, line: str, label: str) -> Opening:
    spec = get_variant(variant)
    fen = line.split(";", 1)[0].strip()
    try:
        game = spec.new(fen)
    except GameError as exc:
        raise OpeningError(f"{label}: not a {variant} position ({exc})") from None
    if game.is_terminal() or not game.legal_moves():
        raise OpeningError(f"{label}: the game is already over")
    canonical = game.fen()
    start = spec.new().fen()
    return Opening(None if canonical == start else canonical, (), label)


@dataclass(frozen=True, slots=True)
class OpeningSelection:
    """Which openings a file gives: for which variant, in which order (``sequential``, or
    ``random`` shuffled with ``seed``), from which entry (1-based), PGN lines cut to
    ``plies``."""

    variant: str = "chess"
    order: OpeningOrder | str = OpeningOrder.SEQUENTIAL
    start: int = 1
    seed: int | None = None
    plies: int | None = None


def load_openings(
    path: str | Path, count: int, selection: OpeningSelection = OpeningSelection()
) -> list[Opening]:
    """``count`` openings from ``path``, parsed and checked.

    ``selection.order`` is ``sequential`` (entries ``start``, ``start+1``, … wrapping around
    at the end of the file) or ``random`` (a shuffle of the whole file with ``seed``, then
    taken in that order from ``start``; the same seed gives the same openings).  ``plies``
    cuts PGN main lines.  Raises :class:`OpeningError` for an unreadable file, an empty one,
    or a bad entry.
    """
    variant, start, seed, plies = (
        selection.variant,
        selection.start,
        selection.seed,
        selection.plies,
    )
    order = selection.order
    path = Path(path)
    try:
        order = OpeningOrder(order)
    except ValueError:
        raise OpeningError(f"opening order must be sequential or random, not {order!r}") from None
    if start < 1:
        raise OpeningError(f"the first opening is number 1, not {start}")
    if plies is not None and plies < 0:
        raise OpeningError(f"plies must be positive, not {plies}")
    pgn = _is_pgn(path)
    if pgn and variant != "chess":
        raise OpeningError(f"PGN openings are read for chess only, not for {variant}")
    entries: Sequence[int] | Sequence[tuple[int, str]]
    entries = _pgn_offsets(path) if pgn else _epd_lines(path)
    total = len(entries)
    if total == 0:
        raise OpeningError(f"no openings in {path}")
    indices = list(range(total))
    if order is OpeningOrder.RANDOM:
        random.Random(seed).shuffle(indices)
    chosen = [indices[(start - 1 + k) % total] for k in range(count)]
    name = path.name
    out = []
    for index in chosen:
        if pgn:
            offset = entries[index]
            assert isinstance(offset, int)
            out.append(_chess_pgn(path, offset, f"{name}#{index + 1}", plies))
            continue
        entry = entries[index]
        assert isinstance(entry, tuple)
        number, line = entry
        label = f"{name}:{number}"
        if variant == "chess":
            out.append(_chess_epd(line, label))
        else:
            out.append(_variant_fen(variant, line, label))
    return out
