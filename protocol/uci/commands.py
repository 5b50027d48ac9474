"""Client commands: one text line in, one immutable :data:`Command` value out.

:func:`parse_command` is *total*: it never raises, whatever bytes a GUI, a socket or a fuzzer
sends.  Everything it cannot make sense of comes back as data (:class:`Invalid`,
:class:`Unknown`, :attr:`Go.errors`) so the session can report it as an ``info string`` and
carry on; an engine that dies on a stray line loses the game on time.

Leniency follows the UCI specification (April 2006): unknown tokens *before* the command word
are skipped (``joho debug on`` is ``debug on``), and a malformed ``go`` still searches, because a
GUI that sent ``go`` waits for a ``bestmove`` and must get one.  Elsewhere the parser is strict
where guessing would silently do the wrong thing: ``position startpos e2e4`` (``moves``
forgotten) is :class:`Invalid` rather than the start position, since playing from the wrong
position is worse than saying so.  Command words and keywords are case-sensitive, as in UCI.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from engine.limits import Limits

# -- the commands --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Uci:
    """``uci``: identify, list options, answer ``uciok``."""


@dataclass(frozen=True, slots=True)
class Debug:
    """``debug [on|off]``; a bare ``debug`` switches it on."""

    on: bool


@dataclass(frozen=True, slots=True)
class IsReady:
    """``isready``: must always be answered with ``readyok``, even mid-search."""


@dataclass(frozen=True, slots=True)
class SetOption:
    """``setoption name <id> [value <x>]``.

    ``name`` has its words joined by single spaces (option names are matched by the words,
    not the spacing).  ``value`` keeps the client's inner spacing, since a string option such
    as a file path may depend on it; ``None`` means no ``value`` keyword at all (buttons), ``""``
    means ``value`` followed by nothing.
    """

    name: str
    value: str | None


@dataclass(frozen=True, slots=True)
class Register:
    """``register …``: accepted and ignored; ``args`` is the raw rest of the line."""

    args: str


@dataclass(frozen=True, slots=True)
class UciNewGame:
    """``ucinewgame``: the next position belongs to a different game (clear the hash)."""


@dataclass(frozen=True, slots=True)
class Position:
    """``position (startpos | fen <fen>) [moves <m1> …]``; ``fen is None`` means startpos.

    The FEN is the tokens between ``fen`` and ``moves`` joined by single spaces; whether it
    describes a position is the game's business, as is whether the moves are legal.
    """

    fen: str | None
    moves: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Go:
    """``go …`` with its limits.

    ``errors`` lists what was skipped (bad values, unknown tokens), each message naming the
    offending text.  The session reports them and searches anyway.
    """

    limits: Limits
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Stop:
    """``stop``: finish the search now and send ``bestmove``."""


@dataclass(frozen=True, slots=True)
class PonderHit:
    """``ponderhit``: the opponent played the expected move; switch pondering to the clock."""


@dataclass(frozen=True, slots=True)
class Quit:
    """``quit``: stop everything and leave."""


@dataclass(frozen=True, slots=True)
class Display:
    """``d`` (Stockfish's debugging command): show the current position."""


@dataclass(frozen=True, slots=True)
class Eval:
    """``eval``: print the static evaluation term by term."""


@dataclass(frozen=True, slots=True)
class Perft:
    """``perft N`` or ``go perft N``: count leaf nodes to depth ``N`` (>= 1), per root move."""

    depth: int


@dataclass(frozen=True, slots=True)
class Bench:
    """``bench [depth]``: the fixed search benchmark (its node count is a search signature)."""

    depth: int | None = None


@dataclass(frozen=True, slots=True)
class Empty:
    """A blank or whitespace-only line; transports may see these between commands."""


@dataclass(frozen=True, slots=True)
class Invalid:
    """A known command whose arguments are malformed; ``reason`` names the offending text."""

    line: str
    reason: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """A line in which no known command word appears."""

    line: str


Command: TypeAlias = (
    Uci
    | Debug
    | IsReady
    | SetOption
    | Register
    | UciNewGame
    | Position
    | Go
    | Stop
    | PonderHit
    | Quit
    | Display
    | Eval
    | Perft
    | Bench
    | Empty
    | Invalid
    | Unknown
)

# -- helpers -------------------------------------------------------------------------------

_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_TOKEN = re.compile(r"\S+")
_SHOWN_CHARS = 40


def parse_int(text: str) -> int | None:
    """Strict integer parsing shared by commands and options: ASCII digits, optional sign.

    Python's ``int()`` also accepts ``1_000``, surrounding blanks and non-ASCII digits; a GUI
    never means those, so they are rejected instead of being silently reinterpreted.
    """
    if _INT_TEXT.fullmatch(text) is None:
        return None
    try:
        return int(text)
    except ValueError:  # more digits than the interpreter's int/str conversion limit
        return None


def show(text: str) -> str:
    """Quote client text for an error message: escaped (no control characters) and bounded."""
    if len(text) > _SHOWN_CHARS:
        text = text[:_SHOWN_CHARS] + "…"
    return repr(text)


def _positive(keyword: str, text: str) -> tuple[int | None, str | None]:
    """Parse a value that must be >= 1: the value, or an error message."""
    value = parse_int(text)
    if value is None:
        return None, f"{keyword}: {show(text)} is not an integer"
    if value < 1:
        return None, f"{keyword}: must be at least 1, got {value}"
    return value, None


# -- go ------------------------------------------------------------------------------------

_GO_INT = frozenset(
    {"wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes", "mate"}
)
# Clocks may be negative (a GUI may send the remaining time of a flagged side); these may not.
_GO_POSITIVE = frozenset({"movestogo", "movetime", "depth", "nodes", "mate"})
_GO_KEYWORDS = _GO_INT | {"infinite", "ponder", "searchmoves", "perft"}

GO_VALUE_CAP = 2**31 - 1
"""Largest value ``go`` passes on (about 24.8 days in milliseconds); larger ones are clamped
to it.  They mean the same thing to a search ("no practical limit") and stay within what the
time arithmetic can turn into a float: a 400-digit clock is a client's quirk, not an internal
error."""
_GO_CAPS = {"nodes": 2**63 - 1}
"""Node counts are the one limit that can usefully exceed :data:`GO_VALUE_CAP`."""
_GO_CAP_DIGITS = len(str(max(GO_VALUE_CAP, *_GO_CAPS.values())))
"""Digits of the largest cap (19): a number with more significant digits exceeds every cap."""


def _go_int(keyword: str, text: str) -> int | None:
    """An integer ``go`` value clamped to its cap, any number of digits; ``None`` if not one."""
    cap = _GO_CAPS.get(keyword, GO_VALUE_CAP)
    if (
        _INT_TEXT.fullmatch(text) is not None
        and len(text.lstrip("+-").lstrip("0")) > _GO_CAP_DIGITS
    ):
        # Beyond any cap, and possibly beyond int()'s digit limit: clamp without converting.
        return -cap if text.startswith("-") else cap
    value = parse_int(text)
    return None if value is None else max(-cap, min(cap, value))


def _go_value(token: str, text: str | None, ints: dict[str, int], errors: list[str]) -> None:
    """Record the integer value of ``token`` in ``ints``, or what is wrong with it in
    ``errors`` (``text`` is ``None`` when no value follows the keyword)."""
    if text is None:
        errors.append(f"{token}: missing value")
        return
    value = _go_int(token, text)
    if value is None:
        errors.append(f"{token}: {show(text)} is not an integer")
    elif token in _GO_POSITIVE and value < 1:
        errors.append(f"{token}: must be at least 1, got {value}")
    else:
        ints[token] = value


def _go_perft(text: str | None) -> tuple[int | None, str | None]:
    """``go perft``'s depth, or what is wrong with it (``text`` as for :func:`_go_value`)."""
    if text is None:
        return None, "perft: missing value"
    return _positive("perft", text)


def _go_moves_end(args: list[str], start: int) -> int:
    """Where the moves after ``searchmoves`` (from ``start``) end: at the next keyword."""
    end = start
    while end < len(args) and args[end] not in _GO_KEYWORDS:
        end += 1
    return end


def _parse_go(line: str, args: list[str]) -> Go | Perft | Invalid:
    ints: dict[str, int] = {}
    errors: list[str] = []
    flags: set[str] = set()  # infinite, ponder
    searchmoves: tuple[str, ...] | None = None
    perft: int | None = None
    perft_error: str | None = None
    i = 0
    n = len(args)
    while i < n:
        token = args[i]
        i += 1
        if token in _GO_INT or token == "perft":
            text = args[i] if i < n and args[i] not in _GO_KEYWORDS else None
            if text is not None:
                i += 1
            if token == "perft":
                perft, perft_error = _go_perft(text)
            else:
                _go_value(token, text, ints, errors)
        elif token in ("infinite", "ponder"):
            flags.add(token)
        elif token == "searchmoves":
            start, i = i, _go_moves_end(args, i)
            if i == start:
                errors.append("searchmoves: no moves given")
            else:
                searchmoves = tuple(args[start:i])
        else:
            errors.append(f"unknown token {show(token)}")

    if perft_error is not None:
        return Invalid(line, perft_error)
    if perft is not None:
        return Perft(perft)
    limits = Limits(
        wtime=ints.get("wtime"),
        btime=ints.get("btime"),
        winc=ints.get("winc"),
        binc=ints.get("binc"),
        movestogo=ints.get("movestogo"),
        movetime=ints.get("movetime"),
        depth=ints.get("depth"),
        nodes=ints.get("nodes"),
        mate=ints.get("mate"),
        infinite="infinite" in flags,
        ponder="ponder" in flags,
        searchmoves=searchmoves,
    )
    return Go(limits, tuple(errors))


# -- the other commands with arguments -----------------------------------------------------


def _parse_debug(line: str, args: list[str]) -> Debug | Invalid:
    if not args or args[0] == "on":
        return Debug(True)
    if args[0] == "off":
        return Debug(False)
    return Invalid(line, f"debug expects 'on' or 'off', got {show(args[0])}")


def _parse_position(line: str, args: list[str]) -> Position | Invalid:
    if not args:
        return Invalid(line, "position needs 'startpos' or 'fen <fen>'")
    try:
        moves_at = args.index("moves")
    except ValueError:
        moves_at = len(args)
    moves = tuple(args[moves_at + 1 :])
    head = args[0]
    if head == "startpos":
        if moves_at != 1:
            return Invalid(line, f"unexpected {show(args[1])} after startpos (expected 'moves')")
        return Position(None, moves)
    if head == "fen":
        if moves_at == 1:
            return Invalid(line, "empty FEN")
        return Position(" ".join(args[1:moves_at]), moves)
    return Invalid(line, f"position needs 'startpos' or 'fen <fen>', got {show(head)}")


def _parse_setoption(line: str, spans: list[re.Match[str]]) -> SetOption | Invalid:
    words = [m.group() for m in spans]
    if not words or words[0] != "name":
        return Invalid(line, "setoption needs 'name <id>'")
    try:
        value_at = words.index("value")
    except ValueError:
        value_at = len(words)
    name = " ".join(words[1:value_at])
    if not name:
        return Invalid(line, "setoption: empty option name")
    if value_at == len(words):
        return SetOption(name, None)
    if value_at + 1 == len(words):
        return SetOption(name, "")
    return SetOption(name, line[spans[value_at + 1].start() :])


def _parse_depth_arg(line: str, word: str, args: list[str]) -> int | Invalid:
    """The single depth argument of ``perft``/``bench`` (our own commands, so strict)."""
    if not args:
        return Invalid(line, f"{word}: missing depth")
    if len(args) > 1:
        return Invalid(line, f"{word}: unexpected {show(args[1])} after the depth")
    value, error = _positive(word, args[0])
    if value is None:
        return Invalid(line, error or f"{word}: bad depth {show(args[0])}")
    return value


def _parse_perft(line: str, args: list[str]) -> Perft | Invalid:
    depth = _parse_depth_arg(line, "perft", args)
    return depth if isinstance(depth, Invalid) else Perft(depth)


def _parse_bench(line: str, args: list[str]) -> Bench | Invalid:
    if not args:
        return Bench()
    depth = _parse_depth_arg(line, "bench", args)
    return depth if isinstance(depth, Invalid) else Bench(depth)


# -- dispatch ------------------------------------------------------------------------------

_NoArgs = Callable[[], Command]

# Argument-less commands ignore trailing tokens, as the UCI spec asks of unknown tokens.
_SIMPLE: dict[str, _NoArgs] = {
    "uci": Uci,
    "isready": IsReady,
    "ucinewgame": UciNewGame,
    "stop": Stop,
    "ponderhit": PonderHit,
    "quit": Quit,
    "d": Display,
    "eval": Eval,
}
_Spans = list[re.Match[str]]
_WithArgs = Callable[[str, _Spans], Command]


def _words(parse: Callable[[str, list[str]], Command]) -> _WithArgs:
    """A command's parser that takes its arguments as words rather than as spans."""
    return lambda line, spans: parse(line, [m.group() for m in spans])


def _parse_register(line: str, spans: _Spans) -> Register:
    return Register(line[spans[0].start() :] if spans else "")


# Commands with arguments: each parser gets the stripped line and the spans after the word.
_WITH_ARGS: dict[str, _WithArgs] = {
    "debug": _words(_parse_debug),
    "setoption": _parse_setoption,
    "register": _parse_register,
    "position": _words(_parse_position),
    "go": _words(_parse_go),
    "perft": _words(_parse_perft),
    "bench": _words(_parse_bench),
}

COMMAND_WORDS: frozenset[str] = frozenset(_SIMPLE) | frozenset(_WITH_ARGS)
"""Every word :func:`parse_command` recognises as a command."""

_EMPTY = Empty()


def parse_command(line: str) -> Command:
    """Parse one line from a client; never raises.

    Surrounding whitespace (including the CR of a CRLF line ending) is ignored and tokens are
    split on any run of whitespace.  The first known command word decides the command; tokens
    before it are skipped.  :class:`Invalid` and :class:`Unknown` carry the stripped line.
    """
    stripped = line.strip()
    if not stripped:
        return _EMPTY
    spans = list(_TOKEN.finditer(stripped))
    for index, match in enumerate(spans):
        word = match.group()
        simple = _SIMPLE.get(word)
        if simple is not None:
            return simple()
        with_args = _WITH_ARGS.get(word)
        if with_args is not None:
            return with_args(stripped, spans[index + 1 :])
    return Unknown(stripped)
