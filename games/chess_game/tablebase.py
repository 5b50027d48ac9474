"""Syzygy endgame tablebases for the chess adapter, read by python-chess (``chess.syzygy``).

Three parts:

* :func:`find_tables` checks a ``SyzygyPath`` (directories separated by ``os.pathsep``, ``:``
  on Unix, as Stockfish takes them) before it is used: every directory must exist and hold
  tables, and every table file must have a table's size and header (python-chess's own checks:
  its file size and magic bytes), so a wrong path or a damaged download is reported when it
  is set, not in the middle of a game.  It returns :class:`FoundTables`: what was found, with
  a stamp of the files (names, sizes, modification times).
* :class:`SyzygySettings` is what a game carries: the directories as strings and four numbers,
  so a game pickled to a worker process (a server's search, a Lazy SMP helper) keeps them.
* Each process opens its own :class:`chess.syzygy.Tablebase` at the first probe
  (:func:`open_tables`), cached by directories and stamp: tables are memory-mapped and opened
  lazily, so a process that never probes opens nothing.

The probes: :func:`probe_wdl` for a position inside the search (``None`` when the tables do
not have it), and :func:`root_moves` for the root, which ranks every legal move by the
distance to zeroing as Stockfish does (wins that stay wins within the fifty-move rule rank
equally, and the search chooses among them; losses that the rule might save, and wins it
might spoil, rank by distance), falling back to WDL when the DTZ tables are missing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import chess
import chess.syzygy

from games.variant import GameFileError

__all__ = [
    "MAX_PIECES",
    "FoundTables",
    "SyzygySettings",
    "TablebaseError",
    "find_tables",
    "open_tables",
    "probe_wdl",
    "root_moves",
]

logger = logging.getLogger(__name__)

MAX_PIECES: Final = 7
"""The most pieces (kings included) a Syzygy table holds."""

_WDL_SUFFIX: Final = chess.Board.tbw_suffix
_DTZ_SUFFIX: Final = chess.Board.tbz_suffix
_MAX_RANK: Final = 1000
"""Root move ranks, Stockfish's scale: a certain win ranks ``_MAX_RANK``; a win the fifty-move
rule threatens ranks by how soon it zeroes; draws 0; losses mirrored."""
_RULE50_PLIES: Final = 100
"""Plies without a capture or pawn move after which the fifty-move rule draws."""
_MATE_DTZ: Final = 2
"""What the DTZ arithmetic gives a mating move (corrected to 1, as Stockfish does)."""
_WDL_RANKS: Final = {-2: -_MAX_RANK, -1: -_MAX_RANK + 101, 0: 0, 1: _MAX_RANK - 101, 2: _MAX_RANK}
"""Root ranks from WDL alone (no DTZ tables): cursed wins and blessed losses between."""
_PROBE_ERRORS: Final = (KeyError, IndexError, ValueError, OSError)
"""What a probe may raise: a table that is missing (``KeyError``, python-chess's
``MissingTableError``), or one damaged beyond its header."""


class TablebaseError(GameFileError):
    """A ``SyzygyPath`` that cannot be used: the message says which directory or file and why,
    naming them as they were given."""


@dataclass(frozen=True, slots=True)
class FoundTables:
    """The tables of a checked ``SyzygyPath``."""

    directories: tuple[str, ...]
    """Absolute, resolved: what the tables are opened from (in any process)."""
    wdl: int
    """WDL table files (``.rtbw``)."""
    dtz: int
    """DTZ table files (``.rtbz``)."""
    pieces: int
    """The most pieces any WDL table holds (0 without WDL tables)."""
    stamp: int
    """Changes when a table file is added, removed or rewritten: tables are reopened then."""

    def summary(self) -> str:
        """One line for the user, as Stockfish's "Found N tablebases"."""
        return (
            f"found {self.wdl} WDL and {self.dtz} DTZ tablebase files (up to {self.pieces} pieces)"
        )


@dataclass(frozen=True, slots=True)
class SyzygySettings:
    """What a chess game needs to probe tables, in any process: picklable and small."""

    directories: tuple[str, ...]
    pieces: int
    """The most pieces any table holds (:attr:`FoundTables.pieces`)."""
    stamp: int
    probe_depth: int = 1
    """``SyzygyProbeDepth``: in the tree, positions with exactly :attr:`limit` pieces are
    probed only this far from the horizon."""
    probe_limit: int = MAX_PIECES
    """``SyzygyProbeLimit``: positions with more pieces are not probed (0: never)."""
    rule50: bool = True
    """``Syzygy50MoveRule``: wins and losses the fifty-move rule spoils are draws."""

    @classmethod
    def from_found(
        cls, found: FoundTables, *, probe_depth: int, probe_limit: int, rule50: bool
    ) -> SyzygySettings:
        return cls(
            found.directories,
            found.pieces,
            found.stamp,
            probe_depth=probe_depth,
            probe_limit=probe_limit,
            rule50=rule50,
        )

    @property
    def limit(self) -> int:
        """Positions with at most this many pieces are probed (0: none)."""
        return min(self.probe_limit, self.pieces)


def _check_table(path: Path, suffix: str) -> str | None:
    """Why the table file at ``path`` is unusable, or ``None``: python-chess's own checks of
    a table's size and header (its magic bytes), which is what a damaged or truncated
    download fails; nothing beyond the header is read."""
    table: chess.syzygy.Table
    if suffix == _WDL_SUFFIX:
        table = chess.syzygy.WdlTable(str(path))
        magics = (chess.Board.tbw_magic, chess.Board.pawnless_tbw_magic)
    else:
        table = chess.syzygy.DtzTable(str(path))
        magics = (chess.Board.tbz_magic, chess.Board.pawnless_tbz_magic)
    try:
        table.init_mmap()
        table.check_magic(*magics)
    except (OSError, ValueError) as exc:
        text = str(exc)
        if "size" in text:
            return "not a Syzygy table (wrong file size)"
        if "magic" in text:
            return "not a Syzygy table (wrong header)"
        return f"cannot read it ({exc.strerror if isinstance(exc, OSError) else text})"
    finally:
        table.close()
    return None


@dataclass(slots=True)
class _Count:
    """What :func:`find_tables` has counted so far."""

    wdl: int = 0
    dtz: int = 0
    pieces: int = 0


def _list_directory(directory: Path, name: str) -> tuple[Path, list[os.DirEntry[str]]]:
    """The resolved directory and its entries, or :class:`TablebaseError`."""
    try:
        root = directory.expanduser().resolve(strict=True)
        return root, sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        raise TablebaseError(f"{name}: no such directory") from None
    except NotADirectoryError:
        raise TablebaseError(f"{name} is not a directory") from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TablebaseError(f"{name}: cannot read the directory ({why})") from None


def _count_tables(
    entries: Sequence[os.DirEntry[str]], name: str, count: _Count
) -> list[tuple[str, int, int]]:
    """Check and count the table files among ``entries``; their stamps (name, size, mtime)."""
    stamps: list[tuple[str, int, int]] = []
    for entry in entries:
        stem, suffix = os.path.splitext(entry.name)
        if suffix not in (_WDL_SUFFIX, _DTZ_SUFFIX) or not chess.syzygy.is_tablename(stem):
            continue
        try:
            if not entry.is_file():
                continue
            info = entry.stat()
        except OSError:
            continue
        problem = _check_table(Path(entry.path), suffix)
        if problem is not None:
            raise TablebaseError(f"{name}: {entry.name} is {problem}")
        if suffix == _WDL_SUFFIX:
            count.wdl += 1
            count.pieces = max(count.pieces, len(stem) - 1)  # the letters but the "v"
        else:
            count.dtz += 1
        stamps.append((entry.name, info.st_size, info.st_mtime_ns))
    return stamps


def find_tables(directories: Sequence[Path], shown: Sequence[str] | None = None) -> FoundTables:
    """Check the table directories of a ``SyzygyPath`` and count their tables.

    Raises :class:`TablebaseError` when a directory does not exist, is no directory, holds no
    table, or holds a table file that is not one (wrong size or header).  Messages name each
    directory as ``shown`` gives it (default: as passed), so a server can keep its own paths
    to itself.  Files that are not named like tables are ignored, as python-chess does.
    """
    names = [str(d) for d in directories] if shown is None else list(shown)
    if not directories:
        raise TablebaseError("no directory given")
    resolved: list[str] = []
    count = _Count()
    stamps: list[tuple[str, list[tuple[str, int, int]]]] = []
    for directory, name in zip(directories, names, strict=True):
        root, entries = _list_directory(directory, name)
        found = _count_tables(entries, name, count)
        if not found:
            raise TablebaseError(f"{name} holds no Syzygy tables (.rtbw/.rtbz files)")
        resolved.append(str(root))
        stamps.append((str(root), found))
    digest = hashlib.blake2b(repr(stamps).encode(), digest_size=8).digest()
    stamp = int.from_bytes(digest, "big")
    return FoundTables(tuple(resolved), count.wdl, count.dtz, count.pieces, stamp)


_OPEN: dict[tuple[tuple[str, ...], int], chess.syzygy.Tablebase] = {}
"""This process's open tables, by directories and stamp (see :func:`open_tables`)."""
_OPEN_LOCK = threading.Lock()
_OPEN_KEPT: Final = 4
"""Tables of older stamps or other paths are closed past this many sets."""


def open_tables(settings: SyzygySettings) -> chess.syzygy.Tablebase:
    """This process's :class:`chess.syzygy.Tablebase` for ``settings``' directories, opened at
    the first call (files are mapped lazily, at their first probe) and kept for the next."""
    key = (settings.directories, settings.stamp)
    tables = _OPEN.get(key)
    if tables is not None:
        return tables
    with _OPEN_LOCK:
        tables = _OPEN.get(key)
        if tables is None:
            tables = chess.syzygy.Tablebase()
            for directory in settings.directories:
                try:
                    tables.add_directory(directory)
                except OSError:
                    logger.warning("tablebase directory %s cannot be read", directory)
            while len(_OPEN) >= _OPEN_KEPT:
                _OPEN.pop(next(iter(_OPEN))).close()
            _OPEN[key] = tables
        return tables


def probe_wdl(settings: SyzygySettings, board: chess.Board) -> int | None:
    """WDL of ``board`` (just reached by a zeroing move, no castling rights) for the side to
    move: -2..2; ``None`` when the tables do not have it."""
    try:
        return open_tables(settings).probe_wdl(board)
    except _PROBE_ERRORS:
        return None


def _dtz_from_root(tables: chess.syzygy.Tablebase, board: chess.Board, move: chess.Move) -> int:
    """The distance to zeroing, in plies from the root, that ``move`` leads to (positive when
    the side to move wins; Stockfish's ``root_probe``).  Raises what a probe raises."""
    zeroing = board.is_zeroing(move)
    board.push(move)
    try:
        if zeroing:
            # The position after a zeroing move has a clean counter: WDL is exact there.
            dtz = chess.syzygy.dtz_before_zeroing(-tables.probe_wdl(board))
        elif board.is_fifty_moves() or board.is_repetition(3):
            dtz = 0
        else:
            dtz = -tables.probe_dtz(board)
            dtz = dtz + 1 if dtz > 0 else (dtz - 1 if dtz < 0 else 0)
        if dtz == _MATE_DTZ and board.is_checkmate():
            dtz = 1
        return dtz
    finally:
        board.pop()


def _rank(dtz: int, counter: int, repeated: bool) -> int:
    """Stockfish's root rank of a move from its distance to zeroing: certain wins (zeroing in
    time, no repetition in the game) rank equally at the top, other wins by how soon they
    zero; losses rank equally unless the fifty-move rule could save them."""
    if dtz > 0:
        if dtz + counter < _RULE50_PLIES and not repeated:
            return _MAX_RANK
        return _MAX_RANK - (dtz + counter)
    if dtz < 0:
        if -dtz * 2 + counter < _RULE50_PLIES:
            return -_MAX_RANK
        return -_MAX_RANK + (-dtz + counter)
    return 0


def _child_wdl(tables: chess.syzygy.Tablebase, board: chess.Board, move: chess.Move) -> int:
    """WDL after ``move``, for the side playing it, as if the move had zeroed the counter."""
    board.push(move)
    try:
        return -tables.probe_wdl(board)
    finally:
        board.pop()


def _dtz_ranks(
    tables: chess.syzygy.Tablebase, board: chess.Board, moves: Sequence[chess.Move]
) -> list[tuple[int, int, chess.Move]]:
    """``(rank, -dtz, move)`` of each move (see :func:`_rank`)."""
    counter = board.halfmove_clock
    repeated = board.is_repetition(2)
    ranked = []
    for move in moves:
        dtz = _dtz_from_root(tables, board, move)
        # Among equal ranks: the quickest zeroing of a win, the slowest of a loss.
        ranked.append((_rank(dtz, counter, repeated), -dtz, move))
    return ranked


def root_moves(
    settings: SyzygySettings, board: chess.Board, rule50: bool
) -> list[chess.Move] | None:
    """The legal moves of ``board`` that keep the best result the tables promise, best first
    (see the module docstring); ``None`` when the tables do not cover every move.

    DTZ probes cost several times a WDL probe (python-chess decompresses in Python), so
    every move is probed for WDL first, and only the moves of the best WDL (all of them when
    that turns out a draw by rule) are ranked by DTZ; draws need no DTZ at all.  ``board``
    is probed on a copy (probes push and pop moves)."""
    tables = open_tables(settings)
    board = board.copy()
    moves = list(board.legal_moves)
    if not moves:
        return None
    try:
        by_wdl = [(_child_wdl(tables, board, move), move) for move in moves]
    except _PROBE_ERRORS:
        return None
    top = max(wdl for wdl, _ in by_wdl)
    if top == 0:
        return [move for wdl, move in by_wdl if wdl == 0]
    candidates = [move for wdl, move in by_wdl if wdl == top]
    try:
        ranked = _dtz_ranks(tables, board, candidates)
        if max(rank for rank, _, _ in ranked) <= 0 and len(candidates) < len(moves):
            ranked = _dtz_ranks(tables, board, moves)  # repetitions: look at every move
    except _PROBE_ERRORS:  # no DTZ tables: rank by WDL alone, as Stockfish does then
        ranked = []
        for wdl, move in by_wdl:
            sure = wdl if rule50 else (2 if wdl > 0 else (-2 if wdl < 0 else 0))
            ranked.append((_WDL_RANKS[sure], 0, move))
    ranked.sort(key=lambda item: (-item[0], -item[1]))
    best = ranked[0][0]
    return [move for rank, _, move in ranked if rank == best]
