"""The ``EvalFile`` option's weights: reading and checking a table, and the one a session uses.

:func:`load_weights` reads a JSON weights table and checks it against a game's shipped one;
:class:`SessionWeights` holds the table ``EvalFile`` loaded, for the game it was checked
against.  Which files may be read is the transport's policy
(:class:`~protocol.uci.options.EvalFileAccess`).
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
from games.variant import Variant
from protocol.errors import OptionError
from protocol.uci.commands import show
from protocol.uci.options import EMPTY_STRING, EvalFileAccess

__all__ = [
    "EVAL_FILE_SHIPPED",
    "LoadedWeights",
    "SessionWeights",
    "is_default_eval_file",
    "load_weights",
]

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


@dataclass(frozen=True, slots=True)
class _EvalFile:
    """A table loaded through ``EvalFile``, for the game whose features it was checked
    against, and the file's name as the client gave it (for ``eval``)."""

    game: str
    path: str
    evaluator: LinearEvaluator


class SessionWeights:
    """The weights table ``EvalFile`` loaded for one session (``None``: the shipped ones)."""

    def __init__(self, access: EvalFileAccess, weighted_games: Sequence[str]) -> None:
        self._access = access
        self._weighted = tuple(weighted_games)
        """The games that have a weights table (named when another refuses a file)."""
        self._loaded: _EvalFile | None = None

    def load(self, value: str, variant: Variant) -> tuple[bool, str | None]:
        """Load the table ``value`` names for ``variant``, or go back to the shipped one.

        Returns whether the weights in use changed (the same table again keeps its
        evaluator) and a line for the client (the summary of a loaded file).  Raises
        :class:`OptionError` (nothing changes) when the policy refuses the file, the variant
        has no weights table, or the file is not a usable table.
        """
        loaded: _EvalFile | None = None
        said: str | None = None
        if not is_default_eval_file(value):
            path, shown_as = self._access.locate(value)
            if variant.weights is None:
                raise OptionError(
                    f"EvalFile: {variant.name} has no weights table to replace "
                    f"(only {', '.join(self._weighted)} has)",
                    option="EvalFile",
                    value=value,
                )
            table = load_weights(
                path, variant.weights.shipped().weights, game=variant.name, shown_as=shown_as
            )
            given = value.strip()
            loaded = _EvalFile(variant.name, given, table.evaluator)
            said = table.summary(given)
        old, self._loaded = self._loaded, loaded
        if old is None and loaded is None:
            return False, said  # the shipped weights again
        if (
            old is not None
            and loaded is not None
            and (old.game, old.evaluator.weights) == (loaded.game, loaded.evaluator.weights)
        ):
            # The same table again: keep the evaluator the positions (and their precomputed
            # tables and caches) already share, and the hash table.
            self._loaded = _EvalFile(loaded.game, loaded.path, old.evaluator)
            return False, said
        return True, said

    def evaluator(self, variant: Variant) -> LinearEvaluator | None:
        """The weights positions of ``variant`` are built with (``None``: shipped)."""
        loaded = self._loaded
        if loaded is None or loaded.game != variant.name:
            return None
        return loaded.evaluator

    def shown(self, variant: Variant) -> str:
        """What ``eval`` says is in use for ``variant``: the file as given, or ``shipped``."""
        loaded = self._loaded
        return loaded.path if loaded is not None and loaded.game == variant.name else "shipped"
