"""Table tests for the UCI command parser, plus a fuzz test that it is total."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.limits import Limits
from protocol.uci.commands import (
    COMMAND_WORDS,
    GO_VALUE_CAP,
    Bench,
    Command,
    Debug,
    Display,
    Empty,
    Eval,
    Go,
    Invalid,
    IsReady,
    Perft,
    PonderHit,
    Position,
    Quit,
    Register,
    SetOption,
    Stop,
    Uci,
    UciNewGame,
    Unknown,
    parse_command,
    parse_int,
)

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

SIMPLE_CASES: list[tuple[str, Command]] = [
    ("uci", Uci()),
    ("isready", IsReady()),
    ("ucinewgame", UciNewGame()),
    ("stop", Stop()),
    ("ponderhit", PonderHit()),
    ("quit", Quit()),
    ("d", Display()),
    ("eval", Eval()),
    # framing: CR/LF, surrounding and inner whitespace of any kind
    ("uci\n", Uci()),
    ("isready\r\n", IsReady()),
    ("  \t quit \t ", Quit()),
    ("", Empty()),
    ("   ", Empty()),
    ("\t\r\n", Empty()),
    # unknown leading tokens are skipped (UCI spec example), trailing ones ignored
    ("joho debug on", Debug(True)),
    ("joho isready", IsReady()),
    ("uci please", Uci()),
    ("foo bar stop now", Stop()),
    # command words are case-sensitive
    ("UCI", Unknown("UCI")),
    ("IsReady", Unknown("IsReady")),
    ("hello world", Unknown("hello world")),
    ("  hello  \r\n", Unknown("hello")),
    # debug
    ("debug", Debug(True)),
    ("debug on", Debug(True)),
    ("debug off", Debug(False)),
    ("debug joho on", Invalid("debug joho on", "debug expects 'on' or 'off', got 'joho'")),
    # register takes anything, raw
    ("register later", Register("later")),
    ("register name Stefan MK code 4359874324", Register("name Stefan MK code 4359874324")),
    ("register", Register("")),
    # perft / bench
    ("perft 1", Perft(1)),
    ("perft 5", Perft(5)),
    ("perft", Invalid("perft", "perft: missing depth")),
    ("perft 0", Invalid("perft 0", "perft: must be at least 1, got 0")),
    ("perft -3", Invalid("perft -3", "perft: must be at least 1, got -3")),
    ("perft x", Invalid("perft x", "perft: 'x' is not an integer")),
    ("perft 2.5", Invalid("perft 2.5", "perft: '2.5' is not an integer")),
    ("perft 3 4", Invalid("perft 3 4", "perft: unexpected '4' after the depth")),
    ("bench", Bench()),
    ("bench 7", Bench(7)),
    ("bench 0", Invalid("bench 0", "bench: must be at least 1, got 0")),
    ("bench deep", Invalid("bench deep", "bench: 'deep' is not an integer")),
]


@pytest.mark.parametrize(("line", "expected"), SIMPLE_CASES)
def test_simple_commands(line: str, expected: Command) -> None:
    assert parse_command(line) == expected


POSITION_CASES: list[tuple[str, Command]] = [
    ("position startpos", Position(None, ())),
    ("position startpos moves", Position(None, ())),
    ("position startpos moves e2e4 e7e5", Position(None, ("e2e4", "e7e5"))),
    ("position  startpos\tmoves  e2e4 \t e7e5 \r\n", Position(None, ("e2e4", "e7e5"))),
    (f"position fen {START_FEN}", Position(START_FEN, ())),
    (f"position fen {START_FEN} moves g1f3", Position(START_FEN, ("g1f3",))),
    # FEN tokens are re-joined by single spaces whatever the client's spacing
    (
        "position fen 8/8/8/8/8/8/8/K6k   w  -  - 0 1 moves a1a2",
        Position("8/8/8/8/8/8/8/K6k w - - 0 1", ("a1a2",)),
    ),
    # a non-chess FEN dialect passes through untouched (validation is the game's job)
    ("position fen x.o/...../o.x x", Position("x.o/...../o.x x", ())),
    ("position fen 4 moves", Position("4", ())),
    # move texts are kept verbatim, even nonsense: the game rejects them
    ("position startpos moves 0000 zz9", Position(None, ("0000", "zz9"))),
    ("position", Invalid("position", "position needs 'startpos' or 'fen <fen>'")),
    (
        "position moves e2e4",
        Invalid("position moves e2e4", "position needs 'startpos' or 'fen <fen>', got 'moves'"),
    ),
    (
        "position kiwipete",
        Invalid("position kiwipete", "position needs 'startpos' or 'fen <fen>', got 'kiwipete'"),
    ),
    ("position fen", Invalid("position fen", "empty FEN")),
    ("position fen moves e2e4", Invalid("position fen moves e2e4", "empty FEN")),
    (
        "position startpos e2e4",
        Invalid("position startpos e2e4", "unexpected 'e2e4' after startpos (expected 'moves')"),
    ),
    ("xyzzy position startpos", Position(None, ())),
]


@pytest.mark.parametrize(("line", "expected"), POSITION_CASES)
def test_position(line: str, expected: Command) -> None:
    assert parse_command(line) == expected


SETOPTION_CASES: list[tuple[str, Command]] = [
    ("setoption name Hash value 64", SetOption("Hash", "64")),
    ("setoption name Clear Hash", SetOption("Clear Hash", None)),
    ("setoption name Move Overhead value 100", SetOption("Move Overhead", "100")),
    ("setoption  name  Move \t Overhead  value 100 \r\n", SetOption("Move Overhead", "100")),
    # the value keeps its inner spacing (a path or a name may need it)
    (
        "setoption name UCI_Opponent value GM 2800  human  Magnus Carlsen",
        SetOption("UCI_Opponent", "GM 2800  human  Magnus Carlsen"),
    ),
    ("setoption name UCI_Opponent value", SetOption("UCI_Opponent", "")),
    ("setoption name UCI_Opponent value <empty>", SetOption("UCI_Opponent", "<empty>")),
    # the first "value" ends the name; later ones belong to the value
    ("setoption name A value b value c", SetOption("A", "b value c")),
    ("setoption", Invalid("setoption", "setoption needs 'name <id>'")),
    ("setoption Hash value 1", Invalid("setoption Hash value 1", "setoption needs 'name <id>'")),
    ("setoption name", Invalid("setoption name", "setoption: empty option name")),
    (
        "setoption name value 3",
        Invalid("setoption name value 3", "setoption: empty option name"),
    ),
]


@pytest.mark.parametrize(("line", "expected"), SETOPTION_CASES)
def test_setoption(line: str, expected: Command) -> None:
    assert parse_command(line) == expected


GO_CASES: list[tuple[str, Command]] = [
    ("go", Go(Limits())),
    ("go infinite", Go(Limits(infinite=True))),
    ("go ponder", Go(Limits(ponder=True))),
    ("go depth 12", Go(Limits(depth=12))),
    ("go nodes 100000", Go(Limits(nodes=100_000))),
    ("go mate 3", Go(Limits(mate=3))),
    ("go movetime 2500", Go(Limits(movetime=2500))),
    (
        "go wtime 300000 btime 299000 winc 2000 binc 2000 movestogo 40",
        Go(Limits(wtime=300_000, btime=299_000, winc=2000, binc=2000, movestogo=40)),
    ),
    (
        "go ponder wtime 1000 btime 1000",
        Go(Limits(ponder=True, wtime=1000, btime=1000)),
    ),
    # a flagged clock may arrive negative; that is input, not an error
    ("go wtime -150 btime 5000", Go(Limits(wtime=-150, btime=5000))),
    ("go wtime 0 winc 0", Go(Limits(wtime=0, winc=0))),
    ("go depth +4", Go(Limits(depth=4))),
    # repeated keywords: the last one wins
    ("go depth 3 depth 5", Go(Limits(depth=5))),
    # searchmoves runs until the next keyword, keeps every text (0000 included)
    (
        "go searchmoves e2e4 d2d4 0000 depth 4",
        Go(Limits(searchmoves=("e2e4", "d2d4", "0000"), depth=4)),
    ),
    ("go depth 4 searchmoves g1f3", Go(Limits(depth=4, searchmoves=("g1f3",)))),
    (
        "go searchmoves e2e4 infinite",
        Go(Limits(searchmoves=("e2e4",), infinite=True)),
    ),
    ("go searchmoves", Go(Limits(), ("searchmoves: no moves given",))),
    ("go searchmoves depth 2", Go(Limits(depth=2), ("searchmoves: no moves given",))),
    # bad values and unknown tokens are reported and skipped; the rest still counts
    ("go depth x", Go(Limits(), ("depth: 'x' is not an integer",))),
    ("go depth", Go(Limits(), ("depth: missing value",))),
    ("go depth 0", Go(Limits(), ("depth: must be at least 1, got 0",))),
    ("go depth -2 nodes 500", Go(Limits(nodes=500), ("depth: must be at least 1, got -2",))),
    ("go nodes 0", Go(Limits(), ("nodes: must be at least 1, got 0",))),
    ("go mate 0", Go(Limits(), ("mate: must be at least 1, got 0",))),
    ("go movestogo 0", Go(Limits(), ("movestogo: must be at least 1, got 0",))),
    ("go movetime -1", Go(Limits(), ("movetime: must be at least 1, got -1",))),
    ("go wtime 1.5e3", Go(Limits(), ("wtime: '1.5e3' is not an integer",))),
    ("go wtime 1_000", Go(Limits(), ("wtime: '1_000' is not an integer",))),
    # a keyword is never swallowed as the previous keyword's value
    ("go depth wtime 100", Go(Limits(wtime=100), ("depth: missing value",))),
    (
        "go depth 5 fast infinite",
        Go(Limits(depth=5, infinite=True), ("unknown token 'fast'",)),
    ),
    (
        "go banana depth 2 nodes z",
        Go(Limits(depth=2), ("unknown token 'banana'", "nodes: 'z' is not an integer")),
    ),
    ("go Depth 3", Go(Limits(), ("unknown token 'Depth'", "unknown token '3'"))),
    ("go perft 4", Perft(4)),
    ("go perft 0", Invalid("go perft 0", "perft: must be at least 1, got 0")),
    ("go perft", Invalid("go perft", "perft: missing value")),
    ("go perft deep", Invalid("go perft deep", "perft: 'deep' is not an integer")),
]


@pytest.mark.parametrize(("line", "expected"), GO_CASES)
def test_go(line: str, expected: Command) -> None:
    assert parse_command(line) == expected


def test_go_error_messages_escape_and_bound_the_offending_text() -> None:
    long_token = "y" * 100
    result = parse_command(f"go depth \x07bell nodes {long_token}")
    assert isinstance(result, Go)
    assert result.errors == (
        "depth: '\\x07bell' is not an integer",
        f"nodes: '{'y' * 40}…' is not an integer",
    )


@pytest.mark.parametrize(
    "keyword", ["wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "mate"]
)
@pytest.mark.parametrize("digits", [11, 400, 10_000])
def test_go_huge_values_are_clamped_not_internal_errors(keyword: str, digits: int) -> None:
    """Issue 12 (5): a 400-digit movetime once became "int too large to convert to float"."""
    result = parse_command(f"go {keyword} " + "9" * digits)
    assert result == Go(Limits(**{keyword: GO_VALUE_CAP}))  # type: ignore[arg-type]


def test_go_huge_negative_clock_and_node_counts_are_clamped() -> None:
    assert parse_command("go wtime -" + "9" * 5000) == Go(Limits(wtime=-GO_VALUE_CAP))
    assert parse_command("go nodes 123456789012345678901234567890") == Go(Limits(nodes=2**63 - 1))
    assert parse_command("go nodes 3000000000") == Go(Limits(nodes=3_000_000_000))
    assert parse_command("go depth 0000000000000000000000007") == Go(Limits(depth=7))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("42", 42),
        ("-7", -7),
        ("+7", 7),
        ("007", 7),
        ("", None),
        ("-", None),
        (" 5", None),
        ("5 ", None),
        ("1_000", None),
        ("٣", None),  # an Arabic-Indic digit: int() would accept it
        ("0x10", None),
        ("1e3", None),
    ],
)
def test_parse_int_is_strict(text: str, expected: int | None) -> None:
    assert parse_int(text) == expected


def test_command_words_are_the_documented_set() -> None:
    assert {
        "uci",
        "debug",
        "isready",
        "setoption",
        "register",
        "ucinewgame",
        "position",
        "go",
        "stop",
        "ponderhit",
        "quit",
        "d",
        "eval",
        "perft",
        "bench",
    } == COMMAND_WORDS


_ANY_TEXT = st.text(max_size=80)  # any code point, control characters and non-ASCII included
_UCI_WORDS = st.sampled_from(
    [
        *sorted(COMMAND_WORDS),
        "name",
        "value",
        "startpos",
        "fen",
        "moves",
        "searchmoves",
        "depth",
        "wtime",
        "nodes",
        "mate",
        "perft",
        "infinite",
        "0",
        "-1",
        "e2e4",
        "<empty>",
    ]
)
_WORDISH = st.lists(
    st.one_of(_UCI_WORDS, _ANY_TEXT),
    max_size=12,
).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_ANY_TEXT, _WORDISH))
def test_parse_command_is_total(line: str) -> None:
    result = parse_command(line)
    assert isinstance(
        result,
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
        | Unknown,
    )
    # every report carries text that fits on one output line
    if isinstance(result, Go):
        assert all("\n" not in error and "\r" not in error for error in result.errors)
    if isinstance(result, Invalid):
        assert "\n" not in result.reason and "\r" not in result.reason
