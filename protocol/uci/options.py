"""The kinds of UCI option, their names, and the store of their values.

Declarations are data (one frozen spec per option, declared with its change handler in
:mod:`protocol.uci.engine`'s table) so the ``uci`` answer, validation and the defaults cannot
drift apart.  :meth:`Options.set` is all-or-nothing: a rejected value raises
:class:`OptionError` and leaves every stored value as it was (DESIGN.md convention 8).

Option names are not case-sensitive in UCI, so lookups fold case; values are stored and
printed with the declared spelling (``setoption name hash value 64`` sets ``Hash``, and a
combo value ``TicTacToe`` is stored as the declared ``tictactoe``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from protocol.errors import OptionError, UnknownOptionError
from protocol.text import printable
from protocol.uci.commands import parse_int, show

__all__ = [
    "ANY_PATH",
    "BOOK_FILES",
    "EMPTY_STRING",
    "EVAL_FILES",
    "NO_EVAL_FILES",
    "Button",
    "Check",
    "Combo",
    "EvalFileAccess",
    "FileKind",
    "OptionError",
    "OptionName",
    "OptionSpec",
    "Options",
    "Spin",
    "String",
    "UnknownOptionError",
]

EMPTY_STRING = "<empty>"
"""How UCI spells the empty string as an option value (both in ``option`` and ``setoption``)."""


class OptionName(enum.StrEnum):
    """Every option Brudno declares, spelled as the ``uci`` listing shows it."""

    HASH = "Hash"
    THREADS = "Threads"
    MULTI_PV = "MultiPV"
    PONDER = "Ponder"
    MOVE_OVERHEAD = "Move Overhead"
    CLEAR_HASH = "Clear Hash"
    VARIANT = "UCI_Variant"
    CHESS960 = "UCI_Chess960"
    SHOW_WDL = "UCI_ShowWDL"
    ANALYSE_MODE = "UCI_AnalyseMode"
    OPPONENT = "UCI_Opponent"
    ALGORITHM = "Algorithm"
    EVAL_FILE = "EvalFile"
    SYZYGY_PATH = "SyzygyPath"
    SYZYGY_PROBE_DEPTH = "SyzygyProbeDepth"
    SYZYGY_50_MOVE_RULE = "Syzygy50MoveRule"
    SYZYGY_PROBE_LIMIT = "SyzygyProbeLimit"
    OWN_BOOK = "OwnBook"
    BOOK_FILE = "BookFile"
    BOOK_DEPTH = "BookDepth"
    BOOK_SEED = "BookSeed"
    SKILL_LEVEL = "Skill Level"
    LIMIT_STRENGTH = "UCI_LimitStrength"
    ELO = "UCI_Elo"


def _check_name(name: str) -> None:
    # A name that is blank, or contains the keyword "value", could not be sent back by a GUI
    # in a ``setoption`` line that parses to the same name.
    words = name.split()
    if not words or " ".join(words) != name or "value" in words:
        raise ValueError(f"unusable option name {name!r}")


@dataclass(frozen=True, slots=True)
class Spin:
    """An integer in ``min..max``."""

    name: str
    default: int
    min: int
    max: int

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not self.min <= self.default <= self.max:
            raise ValueError(f"{self.name}: default {self.default} outside {self.min}..{self.max}")


@dataclass(frozen=True, slots=True)
class Check:
    """A boolean, sent as ``true``/``false``."""

    name: str
    default: bool

    def __post_init__(self) -> None:
        _check_name(self.name)


@dataclass(frozen=True, slots=True)
class Combo:
    """One of a fixed list of words."""

    name: str
    default: str
    choices: tuple[str, ...]

    def __post_init__(self) -> None:
        _check_name(self.name)
        folded = [choice.casefold() for choice in self.choices]
        if len(set(folded)) != len(folded):
            raise ValueError(f"{self.name}: choices differ only by case: {self.choices}")
        if self.default.casefold() not in folded:
            raise ValueError(f"{self.name}: default {self.default!r} not among {self.choices}")
        if any(
            not choice or choice.split() != [choice] or choice == "var" for choice in self.choices
        ):
            raise ValueError(f"{self.name}: choices must be single words other than 'var'")


@dataclass(frozen=True, slots=True)
class Button:
    """An action without a value (``Clear Hash``); the session reacts to it being set."""

    name: str

    def __post_init__(self) -> None:
        _check_name(self.name)


@dataclass(frozen=True, slots=True)
class String:
    """Free text, possibly empty."""

    name: str
    default: str

    def __post_init__(self) -> None:
        _check_name(self.name)


OptionSpec = Spin | Check | Combo | Button | String


class Options:
    """Current values of a fixed set of declared options.

    Not thread-safe by design: the session owns it and applies ``setoption`` between
    searches (UCI forbids ``setoption`` while searching).
    """

    __slots__ = ("_specs_by_key", "_values", "specs")

    def __init__(self, specs: Sequence[OptionSpec]) -> None:
        self.specs: tuple[OptionSpec, ...] = tuple(specs)
        self._specs_by_key: dict[str, OptionSpec] = {}
        self._values: dict[str, int | bool | str] = {}
        for spec in self.specs:
            key = spec.name.casefold()
            if key in self._specs_by_key:
                raise ValueError(f"option {spec.name!r} declared twice")
            self._specs_by_key[key] = spec
            if not isinstance(spec, Button):
                self._values[key] = spec.default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and " ".join(name.split()).casefold() in self._specs_by_key

    def spec(self, name: str) -> OptionSpec:
        """The declaration of ``name`` (any case); :class:`UnknownOptionError` if undeclared."""
        spec = self._specs_by_key.get(" ".join(name.split()).casefold())
        if spec is None:
            raise UnknownOptionError(f"unknown option {show(name)}", option=name)
        return spec

    def set(self, name: str, value: str | None) -> OptionSpec:
        """Validate and store ``value`` for ``name``; returns the option's spec.

        The caller reacts to the returned spec (``Hash`` → resize, ``Clear Hash`` → clear).
        Raises :class:`OptionError` (naming the option and the offending text) and changes
        nothing when the name is unknown or the value is unacceptable.  A ``String`` option
        given no value, or the UCI spelling ``<empty>``, becomes the empty string.
        """
        spec = self.spec(name)
        if isinstance(spec, Button):
            return spec  # a button carries no value; any text sent with it is meaningless
        self._values[spec.name.casefold()] = _convert(spec, value)
        return spec

    def __getitem__(self, name: str) -> int | bool | str:
        """Current value of ``name`` (any case).

        Undeclared names raise :class:`UnknownOptionError` (a ``KeyError`` and an
        :class:`OptionError`); buttons have no value and raise a plain ``KeyError``.
        """
        spec = self.spec(name)
        try:
            return self._values[spec.name.casefold()]
        except KeyError:
            raise KeyError(f"option {spec.name!r} is a button and has no value") from None

    def get_int(self, name: str) -> int:
        """The value of a ``Spin`` option, typed for callers."""
        value = self[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"option {name!r} is not an integer option")
        return value

    def get_bool(self, name: str) -> bool:
        """The value of a ``Check`` option, typed for callers."""
        value = self[name]
        if not isinstance(value, bool):
            raise TypeError(f"option {name!r} is not a check option")
        return value

    def get_str(self, name: str) -> str:
        """The value of a ``Combo`` or ``String`` option, typed for callers."""
        value = self[name]
        if not isinstance(value, str):
            raise TypeError(f"option {name!r} is not a text option")
        return value

    def values(self) -> dict[str, int | bool | str]:
        """Every stored value keyed by declared name, in declaration order (for display)."""
        return {
            spec.name: self._values[spec.name.casefold()]
            for spec in self.specs
            if not isinstance(spec, Button)
        }


def _convert(spec: Spin | Check | Combo | String, value: str | None) -> int | bool | str:
    """The typed value ``value`` denotes for ``spec``, or :class:`OptionError`."""
    if isinstance(spec, String):
        if value is None or value == EMPTY_STRING:
            return ""
        return value
    if value is None:
        raise OptionError(f"{spec.name}: missing value", option=spec.name)
    text = value.strip()
    if isinstance(spec, Spin):
        number = parse_int(text)
        if number is None:
            raise OptionError(
                f"{spec.name}: {show(value)} is not an integer", option=spec.name, value=value
            )
        if not spec.min <= number <= spec.max:
            raise OptionError(
                f"{spec.name}: {number} is out of range {spec.min}..{spec.max}",
                option=spec.name,
                value=value,
            )
        return number
    if isinstance(spec, Check):
        folded = text.casefold()
        if folded == "true":
            return True
        if folded == "false":
            return False
        raise OptionError(
            f"{spec.name}: {show(value)} is not 'true' or 'false'", option=spec.name, value=value
        )
    folded = text.casefold()
    for choice in spec.choices:
        if choice.casefold() == folded:
            return choice
    raise OptionError(
        f"{spec.name}: {show(value)} is not one of {', '.join(spec.choices)}",
        option=spec.name,
        value=value,
    )


@dataclass(frozen=True, slots=True)
class FileKind:
    """How :meth:`EvalFileAccess.locate`'s refusals name an option that reads a file."""

    option: str
    files: str
    """What the files are, plural (``weight files``)."""
    flag: str
    """The server's command-line flag that names the directory."""
    directory: str
    """What the directory is (``weights directory``)."""


EVAL_FILES = FileKind("EvalFile", "weight files", "--eval-file-dir", "weights directory")
BOOK_FILES = FileKind("BookFile", "book files", "--book-dir", "book directory")


def server_directory(directory: Path) -> Path:
    """``directory`` resolved, for a server's file policy; :class:`ValueError` naming it (for
    the operator at startup) unless it is an existing directory."""
    try:
        root = directory.expanduser().resolve(strict=True)
    except FileNotFoundError:
        raise ValueError(f"{directory} does not exist") from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise ValueError(f"cannot use {directory}: {exc}") from None
    if not root.is_dir():
        raise ValueError(f"{directory} is not a directory")
    return root


@dataclass(frozen=True, slots=True)
class EvalFileAccess:
    """Which files an ``EvalFile`` value may name, and the path a value stands for.

    The file is read by the engine's own process.  On stdio that is the user's business, but
    on a server the value names a path on the *server's* machine, and the error messages (no
    such file, not JSON, unknown feature names) would let a remote client learn which files
    exist and read pieces of them.  So the transport picks one of three policies:

    * :data:`ANY_PATH` — the value is a path, ``~`` expanded (stdio: the user owns the process);
    * :data:`NO_EVAL_FILES` — every file is refused (the servers' default);
    * :meth:`within` a directory the operator chose — the value names a file in it (or in a
      subdirectory), which must resolve, symlinks followed, to a regular file inside it.
      Absolute paths, ``..`` leading out, symlinks leading out, missing files and anything
      that is not a regular file all get the same refusal, which names neither the directory
      nor the reason: nothing is learned about the filesystem outside the directory.

    The values meaning the shipped weights (:func:`is_default_eval_file`) are no file and
    always allowed; the session checks them before asking :meth:`locate`.
    """

    any_path: bool
    directory: Path | None = None
    """The only directory files are read from: absolute and resolved (set by :meth:`within`)."""

    def __post_init__(self) -> None:
        if self.any_path and self.directory is not None:
            raise ValueError("EvalFileAccess: any_path and a directory exclude each other")

    @classmethod
    def within(cls, directory: Path) -> EvalFileAccess:
        """Files in ``directory`` only.  Raises :class:`ValueError` (naming the directory, for
        the operator at startup) unless it is an existing directory."""
        return cls(any_path=False, directory=server_directory(directory))

    @classmethod
    def for_server(cls, directory: Path | None) -> EvalFileAccess:
        """A server's policy (``--eval-file-dir``): files in ``directory`` only, or none
        without one.  Raises :class:`ValueError` like :meth:`within`."""
        return NO_EVAL_FILES if directory is None else cls.within(directory)

    def locate(self, value: str, kind: FileKind = EVAL_FILES) -> tuple[Path, str]:
        """The file ``value`` names, and how messages to the client should name it.

        Raises :class:`OptionError` when the policy refuses the value; nothing is read.
        Under a directory, messages name the value as given, never the server's path.
        ``kind`` words the refusals for another option than ``EvalFile`` (``BookFile``: the
        same policy, with a directory of its own).
        """
        text = value.strip()
        if self.any_path:
            path = Path(text).expanduser()
            return path, str(path)
        root = self.directory
        if root is None:
            raise OptionError(
                f"{kind.option}: this server loads no {kind.files} (start it with {kind.flag} DIR)",
                option=kind.option,
                value=value,
            )
        name = Path(text)
        try:
            path = (root / name).resolve()
            inside = (
                not name.is_absolute()
                and path != root
                and path.is_relative_to(root)
                and path.is_file()
            )
        except (OSError, ValueError, RuntimeError):  # a NUL byte, a symlink loop
            inside = False
        if not inside:
            shown = printable(text)
            raise OptionError(
                f"{kind.option}: {shown} is not a file in the server's {kind.directory}",
                option=kind.option,
                value=value,
            )
        return path, text


ANY_PATH = EvalFileAccess(any_path=True)
"""``EvalFile`` may name any path the process can read (stdio, the default)."""

NO_EVAL_FILES = EvalFileAccess(any_path=False)
"""``EvalFile`` refuses every file; only the shipped weights (the servers' default)."""
