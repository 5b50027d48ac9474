"""Exact output lines for everything the engine says to a GUI."""

from __future__ import annotations

import pytest

from engine.eval import Term
from engine.info import Bound, SearchInfo
from engine.score import Cp, Mate, Reported
from protocol.uci.engine import default_specs
from protocol.uci.formatting import (
    bestmove_line,
    error_line,
    explanation_lines,
    id_lines,
    info_line,
    info_string,
    option_line,
    score_text,
)
from protocol.uci.options import (
    Button,
    Check,
    Combo,
    OptionSpec,
    Spin,
    String,
)


def test_id_lines() -> None:
    assert id_lines("Brudno 0.1.0", "Brudno developers") == [
        "id name Brudno 0.1.0",
        "id author Brudno developers",
    ]
    assert id_lines("Two\nLines", "A\r\nB") == ["id name Two Lines", "id author A B"]


OPTION_LINES: list[tuple[OptionSpec, str]] = [
    (Spin("Hash", 16, 1, 4096), "option name Hash type spin default 16 min 1 max 4096"),
    (
        Spin("Move Overhead", 30, 0, 5000),
        "option name Move Overhead type spin default 30 min 0 max 5000",
    ),
    (Spin("Skew", -5, -10, 10), "option name Skew type spin default -5 min -10 max 10"),
    (Check("Ponder", False), "option name Ponder type check default false"),
    (Check("Own Book", True), "option name Own Book type check default true"),
    (
        Combo("UCI_Variant", "chess", ("chess", "tictactoe")),
        "option name UCI_Variant type combo default chess var chess var tictactoe",
    ),
    (Button("Clear Hash"), "option name Clear Hash type button"),
    (String("UCI_Opponent", ""), "option name UCI_Opponent type string default <empty>"),
    (String("Book File", "book.bin"), "option name Book File type string default book.bin"),
]


@pytest.mark.parametrize(("spec", "line"), OPTION_LINES)
def test_option_line(spec: OptionSpec, line: str) -> None:
    assert option_line(spec) == line


def test_declared_options_as_the_uci_command_lists_them() -> None:
    assert [option_line(spec) for spec in default_specs(["chess", "tictactoe"])] == [
        "option name Hash type spin default 16 min 1 max 4096",
        "option name Threads type spin default 1 min 1 max 64",
        "option name MultiPV type spin default 1 min 1 max 256",
        "option name Ponder type check default false",
        "option name Move Overhead type spin default 30 min 0 max 5000",
        "option name Clear Hash type button",
        "option name UCI_Variant type combo default chess var chess var tictactoe",
        "option name UCI_Chess960 type check default false",
        "option name UCI_ShowWDL type check default false",
        "option name UCI_AnalyseMode type check default false",
        "option name UCI_Opponent type string default <empty>",
        "option name Algorithm type combo default pvs var pvs var pvs-no-nullmove var pvs-no-lmr"
        " var pvs-no-futility var pvs-no-see var pvs-no-checkext var pvs-no-tteval"
        " var pvs-no-qstteval var pvs-no-probcut var pvs-no-historylmr var pvs-no-improving"
        " var pvs-no-singular var pvs-no-razoring var pvs-countermove var pvs-fallingtime"
        " var minimax var negamax var alphabeta var failsoft var negascout var aspiration"
        " var mtdf var sssstar var dualstar",
        "option name EvalFile type string default <empty>",
        "option name SyzygyPath type string default <empty>",
        "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
        "option name Syzygy50MoveRule type check default true",
        "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
        "option name OwnBook type check default false",
        "option name BookFile type string default <empty>",
        "option name BookDepth type spin default 16 min 1 max 255",
        "option name BookSeed type spin default 0 min 0 max 2147483647",
        "option name Skill Level type spin default 20 min 0 max 20",
    ]


SCORES: list[tuple[Reported, Bound, str]] = [
    (Cp(34), Bound.EXACT, "cp 34"),
    (Cp(0), Bound.EXACT, "cp 0"),
    (Cp(-120), Bound.EXACT, "cp -120"),
    (Mate(3), Bound.EXACT, "mate 3"),
    (Mate(-2), Bound.EXACT, "mate -2"),
    (Mate(0), Bound.EXACT, "mate 0"),
    (Cp(51), Bound.LOWER, "cp 51 lowerbound"),
    (Cp(-7), Bound.UPPER, "cp -7 upperbound"),
    (Mate(4), Bound.LOWER, "mate 4 lowerbound"),
]


@pytest.mark.parametrize(("score", "bound", "text"), SCORES)
def test_score_text(score: Reported, bound: Bound, text: str) -> None:
    assert score_text(score, bound) == text


def test_score_text_defaults_to_exact() -> None:
    assert score_text(Cp(5)) == "cp 5"


INFO_LINES: list[tuple[SearchInfo, bool, str]] = [
    (
        SearchInfo(
            depth=12,
            seldepth=18,
            multipv=1,
            score=Cp(34),
            nodes=123,
            nps=4567,
            time_ms=89,
            hashfull=12,
            pv=("e2e4", "e7e5"),
        ),
        False,
        "info depth 12 seldepth 18 multipv 1 score cp 34 nodes 123 nps 4567 hashfull 12 "
        "tbhits 0 time 89 pv e2e4 e7e5",
    ),
    (
        SearchInfo(
            depth=9,
            seldepth=14,
            multipv=2,
            score=Mate(-3),
            nodes=5000,
            nps=100_000,
            time_ms=50,
            hashfull=0,
            pv=("g1f3",),
        ),
        False,
        "info depth 9 seldepth 14 multipv 2 score mate -3 nodes 5000 nps 100000 hashfull 0 "
        "tbhits 0 time 50 pv g1f3",
    ),
    # an aspiration fail-high: the bound follows the score, wdl follows the bound
    (
        SearchInfo(
            depth=7,
            seldepth=10,
            score=Cp(80),
            bound=Bound.LOWER,
            nodes=10,
            nps=20,
            time_ms=500,
            hashfull=3,
            pv=("d2d4",),
            wdl=(412, 560, 28),
        ),
        True,
        "info depth 7 seldepth 10 multipv 1 score cp 80 lowerbound wdl 412 560 28 nodes 10 "
        "nps 20 hashfull 3 tbhits 0 time 500 pv d2d4",
    ),
    # wdl is sent only when asked for (UCI_ShowWDL) ...
    (
        SearchInfo(
            depth=3, seldepth=3, score=Cp(-15), bound=Bound.UPPER, pv=("a2a3",), wdl=(100, 700, 200)
        ),
        False,
        "info depth 3 seldepth 3 multipv 1 score cp -15 upperbound nodes 0 nps 0 hashfull 0 "
        "tbhits 0 time 0 pv a2a3",
    ),
    # ... and known
    (
        SearchInfo(depth=3, seldepth=3, score=Cp(-15), pv=("a2a3",)),
        True,
        "info depth 3 seldepth 3 multipv 1 score cp -15 nodes 0 nps 0 hashfull 0 tbhits 0 "
        "time 0 pv a2a3",
    ),
    # a statistics tick: no score, no pv, so no multipv either; seldepth 0 is "not tracked"
    (
        SearchInfo(depth=15, nodes=2_000_000, nps=400_000, time_ms=5000, hashfull=650),
        False,
        "info depth 15 nodes 2000000 nps 400000 hashfull 650 tbhits 0 time 5000",
    ),
    # a line report without a score (the pv alone still makes it a line)
    (
        SearchInfo(depth=1, seldepth=1, nodes=21, time_ms=1, pv=("b1c3",)),
        False,
        "info depth 1 seldepth 1 multipv 1 nodes 21 nps 0 hashfull 0 tbhits 0 time 1 pv b1c3",
    ),
    (
        SearchInfo(depth=12, currmove="e2e4", currmovenumber=1, nodes=99),
        False,
        "info depth 12 currmove e2e4 currmovenumber 1",
    ),
    (
        SearchInfo(depth=4, currmove="c7c5"),
        False,
        "info depth 4 currmove c7c5",
    ),
    (
        SearchInfo(depth=0, string="NNUE? No: linear evaluation"),
        False,
        "info string NNUE? No: linear evaluation",
    ),
    (
        SearchInfo(depth=5, string="two\nlines\r\nhere", score=Cp(3)),
        True,
        "info string two lines here",
    ),
]


@pytest.mark.parametrize(("info", "show_wdl", "line"), INFO_LINES)
def test_info_line(info: SearchInfo, show_wdl: bool, line: str) -> None:
    assert info_line(info, show_wdl=show_wdl) == line


@pytest.mark.parametrize(
    ("best", "ponder", "line"),
    [
        ("e2e4", None, "bestmove e2e4"),
        ("e2e4", "e7e5", "bestmove e2e4 ponder e7e5"),
        ("e7e8q", "a2a1n", "bestmove e7e8q ponder a2a1n"),
        ("b2", None, "bestmove b2"),
        (None, None, "bestmove 0000"),
        (None, "e7e5", "bestmove 0000"),
    ],
)
def test_bestmove_line(best: str | None, ponder: str | None, line: str) -> None:
    assert bestmove_line(best, ponder) == line


def test_bestmove_line_ponder_defaults_to_none() -> None:
    assert bestmove_line("g1f3") == "bestmove g1f3"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("hello", "info string hello"),
        ("", "info string"),
        ("a\nb", "info string a b"),
        ("a\r\nb", "info string a b"),
        ("a\n\n\nb\r", "info string a b"),
        ("\r\n", "info string"),
        (" padded ", "info string  padded "),
        ("tab\tstays", "info string tab\tstays"),
        ("x\u2028y\x85z", "info string x y z"),
        ("Zürich ♞", "info string Zürich ♞"),
    ],
)
def test_info_string(text: str, line: str) -> None:
    assert info_string(text) == line


@pytest.mark.parametrize(
    ("what", "offending", "line"),
    [
        ("illegal move", "e2e5", "info string error: illegal move (e2e5)"),
        (
            "Hash: 99999 is out of range 1..4096",
            "setoption name Hash value 99999",
            "info string error: Hash: 99999 is out of range 1..4096 "
            "(setoption name Hash value 99999)",
        ),
        ("unknown command", "joho\r\nquit", "info string error: unknown command (joho quit)"),
    ],
)
def test_error_line(what: str, offending: str, line: str) -> None:
    assert error_line(what, offending) == line


def test_explanation_lines_are_a_table_ending_in_the_total() -> None:
    terms = [Term("material", 1.0, 310.0), Term("mobility", -2.5, -12.25)]
    assert explanation_lines(terms, 298) == [
        "term                      value      score",
        "material                   1.00      310.0",
        "mobility                  -2.50      -12.2",
        "total                                  298",
    ]
