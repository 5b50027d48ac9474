"""Engine → GUI lines, as pure functions of value objects (no I/O, no state).

Keeping output formatting pure makes every line testable against an exact string and keeps
the search ignorant of UCI (DESIGN.md convention 1).  Each function returns one line without
its terminator; the transport adds the newline.  Anything that carries free text (``info
string``, ``id``) has line breaks collapsed first: a stray newline inside a message would
otherwise split it into a second, bogus protocol line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.eval import Term
from engine.info import Bound, SearchInfo
from engine.score import Cp, Reported
from protocol.uci.options import (
    EMPTY_STRING,
    Button,
    Check,
    Combo,
    OptionSpec,
    Spin,
)

UCIOK = "uciok"
READYOK = "readyok"
NULL_MOVE = "0000"
"""What UCI sends as ``bestmove`` when there is no move to play."""

# Every character str.splitlines() treats as a line boundary, so no reader can see two lines.
_BREAK_CHARS = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAKS = re.compile(f"[{_BREAK_CHARS}]+")


def one_line(text: str) -> str:
    """``text`` on one line: breaks at the ends dropped, inner runs of them made one space."""
    return _LINE_BREAKS.sub(" ", text.strip(_BREAK_CHARS))


def id_lines(name: str, author: str) -> list[str]:
    """The ``id`` lines of the ``uci`` answer."""
    return [f"id name {one_line(name)}", f"id author {one_line(author)}"]


def option_line(spec: OptionSpec) -> str:
    """One ``option`` line of the ``uci`` answer, declaring ``spec``."""
    head = f"option name {spec.name} type "
    if isinstance(spec, Spin):
        return f"{head}spin default {spec.default} min {spec.min} max {spec.max}"
    if isinstance(spec, Check):
        return f"{head}check default {'true' if spec.default else 'false'}"
    if isinstance(spec, Combo):
        choices = "".join(f" var {choice}" for choice in spec.choices)
        return f"{head}combo default {spec.default}{choices}"
    if isinstance(spec, Button):
        return f"{head}button"
    return f"{head}string default {one_line(spec.default) or EMPTY_STRING}"


def score_text(score: Reported, bound: Bound = Bound.EXACT) -> str:
    """``cp 34``, ``mate 3``, ``mate -2``, with `` lowerbound``/`` upperbound`` when not exact."""
    text = f"cp {score.value}" if isinstance(score, Cp) else f"mate {score.moves}"
    if bound is Bound.EXACT:
        return text
    return f"{text} {bound.value}"


def info_line(info: SearchInfo, *, show_wdl: bool = False) -> str:
    """Format one search report.

    Three shapes, chosen by what the report carries: a free-text report (``string`` set)
    becomes ``info string …``; a current-move report (``currmove`` set) becomes
    ``info depth D currmove M currmovenumber N``; anything else is a line or statistics
    report with Stockfish's field order::

        info depth D seldepth S multipv K score cp X [lowerbound|upperbound] [wdl W D L]
             nodes N nps R hashfull H tbhits B time T pv m1 m2 …

    ``seldepth`` is left out when 0 (not tracked), ``multipv`` when the report is not a line
    (no score and no pv), ``score`` when ``None``, ``wdl`` unless asked for and known, and
    ``pv`` when empty.  The counters are always sent: 0 is a real value for each of them.
    """
    if info.string is not None:
        return info_string(info.string)
    parts = [f"info depth {info.depth}"]
    if info.currmove is not None:
        parts.append(f"currmove {info.currmove}")
        if info.currmovenumber is not None:
            parts.append(f"currmovenumber {info.currmovenumber}")
        return " ".join(parts)
    if info.seldepth > 0:
        parts.append(f"seldepth {info.seldepth}")
    if info.score is not None or info.pv:
        parts.append(f"multipv {info.multipv}")
    if info.score is not None:
        parts.append(f"score {score_text(info.score, info.bound)}")
    if show_wdl and info.wdl is not None:
        win, draw, loss = info.wdl
        parts.append(f"wdl {win} {draw} {loss}")
    parts.append(
        f"nodes {info.nodes} nps {info.nps} hashfull {info.hashfull} tbhits {info.tbhits} "
        f"time {info.time_ms}"
    )
    if info.pv:
        parts.append("pv " + " ".join(info.pv))
    return " ".join(parts)


def bestmove_line(best: str | None, ponder: str | None = None) -> str:
    """``bestmove <m> [ponder <p>]``; ``bestmove 0000`` when there is no move to play."""
    if best is None:
        return f"bestmove {NULL_MOVE}"
    if ponder is None:
        return f"bestmove {best}"
    return f"bestmove {best} ponder {ponder}"


def explanation_lines(terms: Iterable[Term], total: int) -> list[str]:
    """The ``eval`` command's table: one line per term, then the total (side to move's point
    of view)."""
    lines = [f"{'term':<20} {'value':>10} {'score':>10}"]
    lines += [f"{t.name:<20} {t.value:>10.2f} {t.contribution:>10.1f}" for t in terms]
    lines.append(f"{'total':<20} {'':>10} {total:>10d}")
    return lines


def info_string(text: str) -> str:
    """``info string <text>`` on one line; the GUI shows the text verbatim."""
    text = one_line(text)
    return f"info string {text}" if text else "info string"


def error_line(what: str, offending: str) -> str:
    """How bad client input is reported: ``info string error: <what> (<offending>)``."""
    return info_string(f"error: {what} ({offending})")
