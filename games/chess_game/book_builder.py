"""Making Polyglot opening books from PGN games (python-chess reads books, but writes none).

:class:`BookBuilder` counts, for every position of the games' first ``max_ply`` plies (ply as
``BookDepth`` counts it), how often each move was played there and how it scored for the side
that played it, positions keyed by their Polyglot key so transpositions merge; its
:meth:`~BookBuilder.entries` are the book, and :func:`write_book` writes them as Polyglot's
16-byte big-endian records (key u64, move u16, weight u16, learn u32), sorted by key, castling
as king takes rook.  Weights (:class:`Weighting`): ``score`` (Polyglot ``make``'s 2 per win, 1
per draw or unfinished game, the default) or ``count``; weight 0 is never written, and weights
beyond 16 bits are scaled together.  ``min_count`` and ``min_score`` (percent, ``(2 W + D) /
(2 N)``) filter moves.  Games of other variants (Chess960 included) are skipped; a game with a
bad move is used up to it.

The encoding and the reasons: docs/playing.md, *Opening books* and *How the games and books
are built*.
"""

from __future__ import annotations

import enum
import itertools
import os
import struct
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

import chess
import chess.pgn
import chess.polyglot

__all__ = [
    "MAX_WEIGHT",
    "BookBuilder",
    "BookEntry",
    "BookStats",
    "Weighting",
    "encode_move",
    "scale_weights",
    "write_book",
]

MAX_WEIGHT: Final = 0xFFFF
"""A Polyglot weight is an unsigned 16-bit number."""

_ENTRY: Final = struct.Struct(">QHHI")

_POINTS: Final = {"1-0": (2, 0), "0-1": (0, 2), "1/2-1/2": (1, 1)}
"""Points for (white, black) by result; anything else (``*``) counts as a draw."""

_PERCENT: Final = 100.0


class Weighting(enum.StrEnum):
    SCORE = "score"
    """2 per win and 1 per draw for the side that moved (Polyglot ``make``)."""
    COUNT = "count"
    """How many games played the move."""


@dataclass(frozen=True, slots=True, order=True)
class BookEntry:
    """One Polyglot record.  ``move`` is in Polyglot's encoding (:func:`encode_move`)."""

    key: int
    move: int
    weight: int
    learn: int = 0

    def pack(self) -> bytes:
        return _ENTRY.pack(self.key, self.move, self.weight, self.learn)


@dataclass(slots=True)
class BookStats:
    """What :class:`BookBuilder` has seen (and, after :meth:`BookBuilder.entries`, kept)."""

    games: int = 0
    """Games read, skipped ones included."""
    skipped: int = 0
    """Games of other variants (not counted)."""
    with_errors: int = 0
    """Games whose movetext went wrong; their moves up to the error are counted."""
    plies: int = 0
    """Positions counted (one per game and ply below the limit)."""
    positions: int = 0
    """Distinct positions counted."""
    moves: int = 0
    """Distinct (position, move) pairs counted."""
    entries: int = 0
    """Entries kept after the filters."""
    book_positions: int = 0
    """Distinct positions among the kept entries."""

    def summary(self) -> str:
        skipped = f" ({self.skipped} of other variants skipped)" if self.skipped else ""
        errors = f", {self.with_errors} with movetext errors" if self.with_errors else ""
        return (
            f"games read: {self.games}{skipped}{errors}\n"
            f"positions counted: {self.plies} ({self.positions} distinct, "
            f"{self.moves} distinct moves)\n"
            f"entries written: {self.entries} ({self.book_positions} positions)"
        )


def encode_move(board: chess.Board, move: chess.Move) -> int:
    """``move`` (legal on ``board``, standard chess) in Polyglot's 16-bit encoding."""
    to_square = move.to_square
    if board.is_castling(move):
        # Standard chess only: the rook stands in the corner on the king's side of the move.
        rank = chess.square_rank(move.from_square)
        kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
        to_square = chess.square(7 if kingside else 0, rank)
    promotion = move.promotion - 1 if move.promotion else 0
    return to_square | move.from_square << 6 | promotion << 12


def scale_weights(weights: Sequence[int]) -> list[int]:
    """``weights`` (positive) within 16 bits: unchanged when the largest fits, else all
    multiplied by ``MAX_WEIGHT / largest``, rounded, and at least 1 (a move kept stays
    playable)."""
    largest = max(weights, default=0)
    if largest <= MAX_WEIGHT:
        return list(weights)
    return [max(1, (weight * MAX_WEIGHT + largest // 2) // largest) for weight in weights]


class BookBuilder:
    """Counts (position, move) over PGN games; :meth:`entries` filters and weighs them."""

    def __init__(
        self,
        *,
        max_ply: int = 16,
        min_count: int = 2,
        min_score: float = 0.0,
        weighting: Weighting = Weighting.SCORE,
    ) -> None:
        if max_ply < 1 or min_count < 1:
            raise ValueError("max_ply and min_count must be at least 1")
        if not 0.0 <= min_score <= _PERCENT:
            raise ValueError("min_score is a percentage, 0..100")
        self.max_ply = max_ply
        self.min_count = min_count
        self.min_score = min_score
        self.weighting = weighting
        self.stats = BookStats()
        self._counts: dict[tuple[int, int], list[int]] = {}
        """(key, Polyglot move) -> [games, points for the side that moved]."""

    def add_pgn(self, handle: TextIO, *, max_games: int | None = None) -> int:
        """Count the games in ``handle`` (at most ``max_games``); returns how many were read.

        Only what the book needs is parsed: the moves after ``max_ply`` and every variation
        are skipped unread, so a database of long games reads about as fast as its openings.
        """
        read = 0
        while max_games is None or read < max_games:
            game: _ReadGame | None = chess.pgn.read_game(
                handle, Visitor=lambda: _OpeningVisitor(self.max_ply)
            )
            if game is None:
                break
            self._add(game)
            read += 1
        return read

    def _add(self, game: _ReadGame) -> None:
        self.stats.games += 1
        if not game.usable:
            self.stats.skipped += 1
            return
        if game.errors:
            self.stats.with_errors += 1
        white, black = _POINTS.get(game.result, (1, 1))
        for key, move, turn in game.moves:
            counted = self._counts.setdefault((key, move), [0, 0])
            counted[0] += 1
            counted[1] += white if turn == chess.WHITE else black
            self.stats.plies += 1

    def entries(self) -> list[BookEntry]:
        """The book: filtered, weighted, scaled to 16 bits, sorted by key (then weight
        descending and move, so each position lists its best move first)."""
        kept: list[tuple[int, int, int]] = []
        for (key, move), (games, points) in self._counts.items():
            if games < self.min_count or _PERCENT * points < self.min_score * 2 * games:
                continue
            weight = points if self.weighting is Weighting.SCORE else games
            if weight > 0:
                kept.append((key, move, weight))
        scaled = scale_weights([weight for _, _, weight in kept])
        kept = [(key, move, weight) for (key, move, _), weight in zip(kept, scaled, strict=True)]
        kept.sort(key=lambda item: (item[0], -item[2], item[1]))
        self.stats.positions = len({key for key, _ in self._counts})
        self.stats.moves = len(self._counts)
        self.stats.entries = len(kept)
        self.stats.book_positions = len({key for key, _, _ in kept})
        return [BookEntry(key, move, weight) for key, move, weight in kept]


def write_book(path: Path, entries: Iterable[BookEntry]) -> int:
    """Write ``entries`` (already in key order) as a Polyglot book; returns how many.

    The file is written beside ``path`` and renamed into place, so a reader (an engine with
    the book open) never sees half a book.
    """
    records = list(entries)
    if any(a.key > b.key for a, b in itertools.pairwise(records)):
        raise ValueError("book entries must be sorted by key")
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(b"".join(entry.pack() for entry in records))
        os.chmod(temporary, 0o644)  # a temporary file starts private; a book is not
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return len(records)


@dataclass(frozen=True, slots=True)
class _ReadGame:
    """What a book needs of one PGN game."""

    usable: bool
    """Standard chess (other variants, Chess960 included, are skipped)."""
    moves: tuple[tuple[int, int, chess.Color], ...]
    """(Polyglot key, Polyglot move, side to move) of each position below the ply limit."""
    result: str
    errors: int


class _OpeningVisitor(chess.pgn.BaseVisitor[_ReadGame]):
    """Reads a game's result and its first plies, skipping variations and the later moves
    (their SAN is never parsed, which is most of the cost of reading PGN)."""

    def __init__(self, max_ply: int) -> None:
        self._max_ply = max_ply
        self._headers = chess.pgn.Headers()
        self._started = False
        self._usable = False
        self._moves: list[tuple[int, int, chess.Color]] = []
        self._errors = 0

    def begin_headers(self) -> chess.pgn.Headers:
        return self._headers

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self._headers[tagname] = tagvalue

    def visit_board(self, board: chess.Board) -> None:
        if not self._started:  # the first call shows the starting position
            self._started = True
            # An unreadable Variant header was reported (handle_error) before this call,
            # and python-chess then reads the game as standard chess: not trusted either.
            self._usable = type(board) is chess.Board and not board.chess960 and not self._errors

    def begin_variation(self) -> chess.pgn.SkipType:
        return chess.pgn.SKIP

    def begin_parse_san(self, board: chess.Board, san: str) -> chess.pgn.SkipType | None:
        if not self._usable or board.ply() >= self._max_ply:
            return chess.pgn.SKIP
        return None

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        self._moves.append(
            (chess.polyglot.zobrist_hash(board), encode_move(board, move), board.turn)
        )

    def visit_result(self, result: str) -> None:
        if self._headers.get("Result", "*") == "*":
            self._headers["Result"] = result

    def handle_error(self, error: Exception) -> None:
        # A bad move ends the game's mainline there (python-chess skips the rest); a bad
        # header (an unknown variant, a broken FEN) skips the whole game.
        self._errors += 1

    def result(self) -> _ReadGame:
        return _ReadGame(
            self._started and self._usable,
            tuple(self._moves),
            self._headers.get("Result", "*"),
            self._errors,
        )
