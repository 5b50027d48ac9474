"""The engine's UCI options: what is declared, and what ``setoption`` may change.

Declarations are data (one frozen spec per option) so the ``uci`` answer, validation and the
defaults cannot drift apart.  :meth:`Options.set` is all-or-nothing: a rejected value raises
:class:`OptionError` and leaves every stored value as it was (DESIGN.md convention 8).

Option names are not case-sensitive in UCI, so lookups fold case; values are stored and
printed with the declared spelling (``setoption name hash value 64`` sets ``Hash``, and a
combo value ``TicTacToe`` is stored as the declared ``tictactoe``).
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.eval import LinearEvaluator
from engine.lab.classic import UCI_ALGORITHMS
from engine.search import ABLATIONS
from engine.skill import FULL_STRENGTH, EloScale
from engine.smp.searcher import MAX_THREADS
from protocol.errors import OptionError, UnknownOptionError
from protocol.text import printable
from protocol.uci.commands import parse_int, show

__all__ = [
    "ANY_PATH",
    "BOOK_FILES",
    "EVAL_FILES",
    "EVAL_FILE_SHIPPED",
    "NO_EVAL_FILES",
    "Button",
    "Check",
    "Combo",
    "EvalFileAccess",
    "FileKind",
    "LoadedWeights",
    "OptionError",
    "OptionSpec",
    "Options",
    "Spin",
    "String",
    "UnknownOptionError",
    "default_specs",
    "is_default_eval_file",
    "load_weights",
]

EMPTY_STRING = "<empty>"
"""How UCI spells the empty string as an option value (both in ``option`` and ``setoption``)."""

EVAL_FILE_SHIPPED = "<default>"
"""Accepted as an ``EvalFile`` value meaning the shipped weights, like the empty default.

Only accepted, never declared as the default: python-chess splits an ``option`` line at the
word ``default`` wherever it stands alone, ``<default>`` included, and would misread it."""

WEIGHT_LIMIT = 10_000
"""Largest weight magnitude ``EvalFile`` accepts, in centipawns.  Scores from ±29,488 up are
mate scores, so a table whose terms reach such sizes would be read as mates; a weight of a
hundred pawns is a unit mistake (pawns scaled twice), not an experiment."""

MAX_EVAL_FILE_BYTES = 1 << 20
"""Larger ``EvalFile``s are refused unread (the chess table is about 17 KB): the file is read
on the session's event loop, which a server shares among its clients."""


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

HASH_MAX_MIB = 4096
BOOK_DEPTH_DEFAULT = 16
"""Plies from the game's start within which the book is asked."""
BOOK_DEPTH_MAX = 255
BOOK_SEED_MAX = (1 << 31) - 1


def default_specs(
    variants: Sequence[str], elo_scale: EloScale | None = None
) -> tuple[OptionSpec, ...]:
    """The options Brudno declares, with ``UCI_Variant`` offering ``variants``.

    ``Threads`` is the number of search processes (Lazy SMP, :mod:`engine.smp`): the main
    search and ``Threads - 1`` helpers sharing one ``Hash``-sized table.
    ``Algorithm`` picks the searcher: ``pvs`` is the production search, ``pvs-no-*`` the same
    search with one heuristic off (for measuring each by a match), the other values the
    classic algorithms of :mod:`engine.lab.classic` (for matching them against each other).
    ``EvalFile`` names a JSON weights table replacing the game's shipped one (so a match can
    compare two tables with one installation); :func:`load_weights` says what it accepts, and
    the empty default (or ``<default>``) means the shipped weights.  Only games whose
    evaluation is such a table (chess) take one; the session refuses it for the others.
    ``OwnBook``, ``BookFile``, ``BookDepth`` and ``BookSeed`` are the Polyglot opening book
    (chess only): the session plays a book move, drawn by weight with a generator seeded by
    the position's key and ``BookSeed``, while the game's ply is below ``BookDepth``.
    ``SyzygyPath``, ``SyzygyProbeDepth``, ``Syzygy50MoveRule`` and ``SyzygyProbeLimit`` are
    Stockfish's endgame tablebase options, declared as Stockfish declares them
    (:mod:`protocol.uci.syzygy` handles them).
    ``Skill Level`` (0..20, 20 the full strength) is a playing level for every game
    (:mod:`engine.skill`); ``UCI_LimitStrength`` and ``UCI_Elo`` choose one by Elo on
    ``elo_scale``, and are declared only with a scale, over its measured range only.
    The variant default is ``chess`` when it is offered, else the first variant given.
    """
    if not variants:
        raise ValueError("at least one variant is needed for UCI_Variant")
    variant_default = "chess" if "chess" in variants else variants[0]
    return (
        Spin("Hash", 16, 1, HASH_MAX_MIB),
        Spin("Threads", 1, 1, MAX_THREADS),
        Spin("MultiPV", 1, 1, 256),
        Check("Ponder", False),
        Spin("Move Overhead", 30, 0, 5000),
        Button("Clear Hash"),
        Combo("UCI_Variant", variant_default, tuple(variants)),
        Check("UCI_Chess960", False),
        Check("UCI_ShowWDL", False),
        Check("UCI_AnalyseMode", False),
        String("UCI_Opponent", ""),
        Combo("Algorithm", "pvs", ("pvs", *ABLATIONS, *UCI_ALGORITHMS)),
        String("EvalFile", ""),
        String("SyzygyPath", ""),
        Spin("SyzygyProbeDepth", 1, 1, 100),
        Check("Syzygy50MoveRule", True),
        Spin("SyzygyProbeLimit", 7, 0, 7),
        Check("OwnBook", False),
        String("BookFile", ""),
        Spin("BookDepth", BOOK_DEPTH_DEFAULT, 1, BOOK_DEPTH_MAX),
        Spin("BookSeed", 0, 0, BOOK_SEED_MAX),
        Spin("Skill Level", FULL_STRENGTH, 0, FULL_STRENGTH),
        *_elo_specs(elo_scale),
    )


def _elo_specs(elo_scale: EloScale | None) -> tuple[OptionSpec, ...]:
    """``UCI_LimitStrength`` and ``UCI_Elo`` over the scale's measured range (none without)."""
    if elo_scale is None:
        return ()
    return (
        Check("UCI_LimitStrength", False),
        Spin("UCI_Elo", elo_scale.lowest, elo_scale.lowest, elo_scale.highest),
    )


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
class LoadedWeights:
    """A weights table read by :func:`load_weights`, with what was done to fit it."""

    evaluator: LinearEvaluator
    from_file: int
    """Weights the file gave."""
    kept: tuple[str, ...]
    """Features the file left out, which keep their shipped weight."""
    rounded: int
    """Fractional weights rounded to whole centipawns."""

    def summary(self, path: str) -> str:
        """One line for the client confirming what is now in use."""
        text = f"EvalFile: {_count(self.from_file, 'weight')} from {path}"
        if self.kept:
            text += f", {_count(len(self.kept), 'missing feature')} at the shipped weight"
        if self.rounded:
            text += f", {_count(self.rounded, 'fractional weight')} rounded"
        return text


def is_default_eval_file(value: str) -> bool:
    """True for the ``EvalFile`` values that mean the shipped weights."""
    text = value.strip()
    return text in ("", EMPTY_STRING) or text.casefold() == EVAL_FILE_SHIPPED


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


def load_weights(
    path: Path, shipped: Mapping[str, float], *, game: str, shown_as: str | None = None
) -> LoadedWeights:
    """Read and check an ``EvalFile``: a flat JSON object ``{"feature": weight}``.

    This is the format ``brudno tune fit --out`` writes and
    :meth:`~engine.eval.LinearEvaluator.from_json` reads.  Refused, with an
    :class:`OptionError` naming the file and the problem: an unreadable file, text that is
    not JSON or not an object, feature names ``shipped`` does not have (a typo would
    otherwise weigh nothing, silently), weights that are not finite numbers or exceed
    ±:data:`WEIGHT_LIMIT`.  Accepted and adjusted:

    * a feature the file leaves out keeps its shipped weight, so a file may change just the
      terms of an experiment (``{"material.mg.N": 400}``); the summary counts them;
    * a fractional weight is rounded to whole centipawns, as the tuner writes them: the chess
      adapter's fast evaluation needs integer weights and falls back to a several times slower
      route otherwise, which would handicap the very engine a match is measuring.

    Messages name the file ``shown_as`` (default: ``path``), so a server can name it as its
    client did without revealing where its weights directory is.
    """
    where = str(path) if shown_as is None else shown_as
    text = _read_text(path, where)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _eval_file_error(
            f"{where} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", where
        ) from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, nesting
        raise _eval_file_error(f"{where} is not usable JSON: {exc}", where) from None
    if not isinstance(data, dict):
        raise _eval_file_error(
            f"{where} holds a JSON {type(data).__name__}, not an object of feature weights",
            where,
        )
    unknown = [show(name) for name in data if name not in shipped]
    if unknown:
        raise _eval_file_error(f"{where}: unknown {game} features {_some(unknown)}", where)
    bad = [
        f"{show(name)}: {_clip(json.dumps(value))}"
        for name, value in data.items()
        if not _is_number(value)
    ]
    if bad:
        raise _eval_file_error(f"{where}: weights that are not numbers: {_some(bad)}", where)
    too_big = [
        f"{show(name)}: {value}" for name, value in data.items() if abs(value) > WEIGHT_LIMIT
    ]
    if too_big:
        raise _eval_file_error(
            f"{where}: weights beyond ±{WEIGHT_LIMIT} centipawns: {_some(too_big)}", where
        )
    weights: dict[str, float] = dict(shipped)
    rounded = 0
    for name, value in data.items():
        whole = round(value)
        rounded += whole != value
        weights[name] = whole
    kept = tuple(name for name in shipped if name not in data)
    return LoadedWeights(LinearEvaluator(weights), len(data), kept, rounded)


def _read_text(path: Path, where: str) -> str:
    """The file's text, refusing (without blocking) anything but a modest regular file: a
    FIFO would block the event loop on open, ``/dev/zero`` would fill the memory."""

    def nonblocking(name: str, flags: int) -> int:
        return os.open(name, flags | getattr(os, "O_NONBLOCK", 0))

    try:
        with open(path, "rb", opener=nonblocking) as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise _eval_file_error(f"{where} is not a regular file", where)
            data = handle.read(MAX_EVAL_FILE_BYTES + 1)
    except OSError as exc:
        raise _eval_file_error(f"cannot read {where}: {exc.strerror or exc}", where) from None
    if len(data) > MAX_EVAL_FILE_BYTES:
        raise _eval_file_error(
            f"{where} is larger than {MAX_EVAL_FILE_BYTES} bytes: not a weights table", where
        )
    try:
        return data.decode("utf-8-sig")  # a BOM, as some editors write, is harmless
    except UnicodeDecodeError:
        raise _eval_file_error(f"{where} is not UTF-8 text", where) from None


def _is_number(value: object) -> bool:
    """A JSON number usable as a weight (JSON ``true`` is a Python int; ``NaN`` parses)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _eval_file_error(what: str, value: str) -> OptionError:
    return OptionError(f"EvalFile: {what}", option="EvalFile", value=value)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _some(items: Sequence[str], limit: int = 5) -> str:
    """The first few of a possibly long list (a wrong file can have hundreds of bad names)."""
    shown = ", ".join(items[:limit])
    if len(items) > limit:
        shown += f" and {len(items) - limit} more"
    return shown
