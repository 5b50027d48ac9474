"""``brudno book build``: make a Polyglot opening book from PGN games.

Usage (scripts depend on this interface)::

    brudno book build GAMES.pgn [MORE.pgn ...] --out BOOK.bin [--max-ply N] [--min-count N]
                      [--min-score PERCENT] [--weights score|count] [--max-games N]

It counts every (position, move) of the games' first ``--max-ply`` plies, keeps those played
in at least ``--min-count`` games (and scoring at least ``--min-score`` percent for the side
that played them), weighs them (``score``: 2 per win and 1 per draw for the mover, as
Polyglot's ``make``; ``count``: games), and writes the book sorted by key.  The rules are in
:mod:`games.chess_game.book_builder`.  The engine uses the book with ``setoption name
BookFile value BOOK.bin`` and ``setoption name OwnBook value true``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from brudno.argtypes import positive_int
from games.chess_game.book_builder import BookBuilder, Weighting, write_book

__all__ = ["configure", "run"]

_MAX_PERCENT = 100.0


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0.0 <= value <= _MAX_PERCENT:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be within 0..100: {text!r}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    steps = parser.add_subparsers(dest="step", metavar="STEP", required=True)
    build = steps.add_parser(
        "build",
        help="make a Polyglot book (.bin) from PGN games",
        description="Count the moves of the games' first plies by position and write the "
        "frequent ones as a Polyglot opening book, weighted by their results.",
    )
    build.add_argument("games", type=Path, nargs="+", help="PGN files")
    build.add_argument("--out", type=Path, required=True, help="book to write (.bin)")
    build.add_argument(
        "--max-ply",
        type=positive_int,
        default=16,
        metavar="N",
        help="count positions up to ply N (from the start position; default 16)",
    )
    build.add_argument(
        "--min-count",
        type=positive_int,
        default=2,
        metavar="N",
        help="keep moves played in at least N games (default 2)",
    )
    build.add_argument(
        "--min-score",
        type=_percent,
        default=0.0,
        metavar="PERCENT",
        help="keep moves that scored at least PERCENT for the side that played them "
        "(default 0: all but those that only lost)",
    )
    build.add_argument(
        "--weights",
        type=Weighting,
        choices=list(Weighting),
        default=Weighting.SCORE,
        help="score: 2 per win and 1 per draw for the side that moved (Polyglot make's, "
        "the default); count: games that played the move",
    )
    build.add_argument(
        "--max-games", type=positive_int, metavar="N", help="read at most N games in all"
    )


def _build(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    builder = BookBuilder(
        max_ply=args.max_ply,
        min_count=args.min_count,
        min_score=args.min_score,
        weighting=args.weights,
    )
    left = args.max_games
    for path in args.games:
        if left == 0:
            break
        # PGN files in the wild are not always UTF-8; a stray byte must not end the build.
        with path.open(encoding="utf-8", errors="replace") as handle:
            read = builder.add_pgn(handle, max_games=left)
        if left is not None:
            left -= read
    entries = builder.entries()
    print(builder.stats.summary())
    if not entries:
        print(
            "brudno book: no move passed the filters; nothing written (lower --min-count?)",
            file=sys.stderr,
        )
        return 1
    write_book(args.out, entries)
    print(f"wrote {args.out} ({len(entries) * 16} bytes) in {time.perf_counter() - started:.1f} s")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return _build(args)
    except OSError as exc:
        print(f"brudno book: {exc}", file=sys.stderr)
        return 2
