"""The Syzygy options of a session: which directories ``SyzygyPath`` may name, and the tables
its positions probe.

Stockfish's four options, declared as it declares them (:func:`~protocol.uci.options.
default_specs`): ``SyzygyPath`` (directories separated by ``os.pathsep``, ``:`` on Unix;
``<empty>``: no tables), ``SyzygyProbeDepth``, ``Syzygy50MoveRule`` and ``SyzygyProbeLimit``.
A new ``SyzygyPath`` is checked when it is set (by the game's
:class:`~games.variant.Tablebases` capability, off the event loop): a missing directory, one
without tables or a damaged table is an ``info string error:`` and the option keeps its old
value.  Good tables are announced (``info string Syzygy: found …``).  Only the variants with
the capability (chess) use them; the others ignore them.

The tables are read by the engine's own process.  On stdio that is the user's business, but
on a server the value would name directories on the *server's* machine, so the transport picks
a policy, as for ``EvalFile`` (:class:`~protocol.uci.options.EvalFileAccess`):

* :data:`ANY_SYZYGY_PATH` — the directories are paths, ``~`` expanded (stdio);
* :data:`NO_SYZYGY` — every directory is refused (the servers' default);
* :meth:`SyzygyAccess.within` a directory the operator chose (``--syzygy-dir``) — each
  directory of the value is a relative name inside it (``.`` is the directory itself), which
  must resolve, symlinks followed, to a directory inside it.  Anything else gets one refusal
  that names neither the server's directory nor the reason, and messages about tables name
  directories as the client gave them.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engine.game import Game
from games.variant import FoundTables, GameFileError, Tablebases, TableSettings, Variant
from protocol.errors import OptionError
from protocol.text import printable
from protocol.uci.options import OptionName, Options, server_directory

__all__ = [
    "ANY_SYZYGY_PATH",
    "NO_SYZYGY",
    "SYZYGY_OPTIONS",
    "SessionTablebases",
    "SyzygyAccess",
    "split_path",
]

PATH: Final = OptionName.SYZYGY_PATH
SYZYGY_OPTIONS: Final = (
    PATH,
    OptionName.SYZYGY_PROBE_DEPTH,
    OptionName.SYZYGY_50_MOVE_RULE,
    OptionName.SYZYGY_PROBE_LIMIT,
)
"""The options :class:`SessionTablebases` reacts to."""


def split_path(value: str) -> list[str]:
    """The directories of a ``SyzygyPath`` value (``os.pathsep`` between them; empty parts and
    surrounding blanks dropped)."""
    return [part.strip() for part in value.split(os.pathsep) if part.strip()]


def _refusal(what: str, value: str) -> OptionError:
    return OptionError(f"{PATH}: {what}", option=PATH, value=value)


@dataclass(frozen=True, slots=True)
class SyzygyAccess:
    """Which directories a ``SyzygyPath`` value may name (see the module docstring)."""

    any_path: bool
    directory: Path | None = None
    """The only directory tables are read from (and from below it): absolute, resolved."""

    def __post_init__(self) -> None:
        if self.any_path and self.directory is not None:
            raise ValueError("SyzygyAccess: any_path and a directory exclude each other")

    @classmethod
    def within(cls, directory: Path) -> SyzygyAccess:
        """Directories in ``directory`` only.  :class:`ValueError` (naming the directory,
        for the operator at startup) unless it is an existing directory."""
        return cls(any_path=False, directory=server_directory(directory))

    @classmethod
    def for_server(cls, directory: Path | None) -> SyzygyAccess:
        """A server's policy (``--syzygy-dir``): directories in ``directory`` only, or none
        without one.  Raises :class:`ValueError` like :meth:`within`."""
        return NO_SYZYGY if directory is None else cls.within(directory)

    def locate(self, value: str) -> tuple[list[Path], list[str]]:
        """The directories ``value`` names, each real directory once, and how messages
        should name each.

        Raises :class:`OptionError` when the policy refuses the value; nothing is read."""
        names = split_path(value)
        if self.any_path:
            return _once([(Path(name).expanduser(), name) for name in names])
        root = self.directory
        if root is None:
            raise _refusal("this server uses no tablebases (start it with --syzygy-dir DIR)", value)
        paths: list[tuple[Path, str]] = []
        for name in names:
            given = Path(name)
            try:
                path = (root / given).resolve()
                inside = (
                    not given.is_absolute()
                    and (path == root or path.is_relative_to(root))
                    and path.is_dir()
                )
            except (OSError, ValueError, RuntimeError):  # a NUL byte, a symlink loop
                inside = False
            if not inside:
                raise _refusal(
                    f"{printable(name)} is not a directory in the server's tablebase directory",
                    value,
                )
            paths.append((path, name))
        return _once(paths)


def _once(paths: list[tuple[Path, str]]) -> tuple[list[Path], list[str]]:
    """Each real directory once (the first spelling of it): ``.:./.:link-to-.`` would open
    every table once per repetition."""
    seen: set[Path] = set()
    kept: list[Path] = []
    shown: list[str] = []
    for path, name in paths:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # a symlink loop: find_tables reports it
            real = path
        if real not in seen:
            seen.add(real)
            kept.append(path)
            shown.append(name)
    return kept, shown


ANY_SYZYGY_PATH: Final = SyzygyAccess(any_path=True)
"""``SyzygyPath`` may name any directory the process can read (stdio, the default)."""

NO_SYZYGY: Final = SyzygyAccess(any_path=False)
"""``SyzygyPath`` refuses every directory (the servers' default)."""


class SessionTablebases:
    """The tables one session uses: the checked ``SyzygyPath`` and the probe options.

    ``kind`` is the tablebase capability ``SyzygyPath`` is checked with (the first variant's
    that has one, chess); positions of variants with another or none get no tables."""

    def __init__(
        self, access: SyzygyAccess = ANY_SYZYGY_PATH, kind: Tablebases | None = None
    ) -> None:
        self._access = access
        self._kind = kind
        self._found: FoundTables | None = None
        """The tables ``SyzygyPath`` names; ``None`` while it is empty."""

    async def option_set(self, options: Options, name: str, before: object) -> str | None:
        """React to one of :data:`SYZYGY_OPTIONS` having been set in ``options``.

        A ``SyzygyPath`` is checked again even when it is unchanged (tables may have been
        added).  Returns a line to tell the client (the tables found), or raises
        :class:`OptionError` after putting the option's old value back."""
        if name != PATH:
            return None
        value = options.get_str(PATH)
        if not split_path(value):
            options.set(PATH, "")  # blanks and lone separators: no tables, one spelling
            self._found = None
            return None
        try:
            if self._kind is None:
                raise GameFileError("no game here has tablebases")
            paths, shown = self._access.locate(value)
            found = await asyncio.to_thread(self._kind.find, paths, shown)
        except GameFileError as exc:
            options.set(PATH, str(before))
            raise _refusal(str(exc), value) from None
        except OptionError:
            options.set(PATH, str(before))
            raise
        self._found = found
        return f"{PATH}: {found.summary()}"

    def apply(self, game: Game[Any], variant: Variant, options: Options) -> None:
        """Give ``game`` (a position of ``variant``) the tables of the current options."""
        kind = variant.tablebases
        if kind is None:
            return
        probing = TableSettings(
            depth=options.get_int(OptionName.SYZYGY_PROBE_DEPTH),
            limit=options.get_int(OptionName.SYZYGY_PROBE_LIMIT),
            rule50=options.get_bool(OptionName.SYZYGY_50_MOVE_RULE),
        )
        kind.use(game, self._found if kind == self._kind else None, probing)
