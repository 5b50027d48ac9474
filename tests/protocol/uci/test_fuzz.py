"""Protocol fuzzing (issue 12): random scripts of good, bad and hostile lines.

Invariants, checked on the session in-process (many scripts) and on the real `brudno` process
(fewer, slower scripts):

* no traceback ever reaches the client;
* exactly one ``bestmove`` per ``go``;
* ``isready`` is answered at once in every state (in-process: before ``handle`` returns);
* a bad line changes nothing: position and options are the same after it.

Searches in the scripts are bounded (small depth, nodes or movetime) or infinite and later
stopped, so a script takes milliseconds; nothing here asserts on time.
"""

from __future__ import annotations

import asyncio

import chess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.uci import commands as cmd
from protocol.uci.session import EngineSession
from tests.support.uci_process import UciProcess

FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate: bestmove 0000
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
]

_numbers = st.one_of(
    st.integers(-5, 3),
    st.integers(0, 60),
    st.just(10**400),
    st.just(-(10**30)),
).map(str) | st.sampled_from(["abc", "", "1_000", "٣", "1e3", "0x10"])

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
"""Any text a client can encode (lone surrogates cannot be sent as UTF-8)."""

_bounded_go = st.one_of(
    st.integers(1, 3).map(lambda d: f"go depth {d}"),
    st.integers(1, 400).map(lambda n: f"go nodes {n}"),
    st.integers(1, 30).map(lambda t: f"go movetime {t}"),
    st.tuples(st.integers(1, 300), st.integers(0, 10)).map(
        lambda c: f"go wtime {c[0]} btime {c[0]} winc {c[1]} binc {c[1]}"
    ),
    st.just("go infinite"),
    st.just("go ponder depth 2"),
    st.just("go depth 2 searchmoves e2e4 a7a8q 0000"),
    _numbers.map(lambda v: f"go depth 2 movetime {v}"),
    _numbers.map(lambda v: f"go movetime {v}"),
    st.just("go mate 1 depth 3"),
)

_position = st.one_of(
    st.just("position startpos"),
    st.sampled_from(FENS).map(lambda f: f"position fen {f}"),
    st.lists(
        st.sampled_from(["e2e4", "e7e5", "g1f3", "b8c6", "zz", "e2e5", "0000"]), max_size=5
    ).map(lambda ms: "position startpos moves " + " ".join(ms)),
    _text.map(lambda t: f"position fen {t}"),
    st.just("position"),
)

_option = st.one_of(
    st.sampled_from(
        [
            "setoption name Hash value 1",
            "setoption name Hash value 99999",
            "setoption name MultiPV value 2",
            "setoption name MultiPV value 1",
            "setoption name Clear Hash",
            "setoption name UCI_Chess960 value true",
            "setoption name UCI_Chess960 value false",
            "setoption name UCI_ShowWDL value maybe",
            "setoption name Nonexistent value 3",
            "setoption name Move Overhead value -1",
            "setoption name",
        ]
    ),
    _numbers.map(lambda v: f"setoption name Hash value {v}"),
)

_noise = st.one_of(
    _text,
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
    st.sampled_from(
        [
            "\x00",
            "\r",
            "stop stop",
            "isready now",
            "go perft 0",
            "perft -1",
            "debug maybe",
            "quit?",
            "uci " + "x" * 300,
        ]
    ),
)

_line = st.one_of(
    _bounded_go,
    _position,
    _option,
    _noise,
    st.sampled_from(
        [
            "isready",
            "stop",
            "ponderhit",
            "ucinewgame",
            "d",
            "eval",
            "uci",
            "perft 2",
            "go perft 1",
            "bench 1",
            "debug on",
            "debug off",
            "",
        ]
    ),
)

scripts = st.lists(_line, min_size=1, max_size=30)


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str, *, droppable: bool = False) -> None:
        self.lines.append(line)


def _is_quit(line: str) -> bool:
    return isinstance(cmd.parse_command(line), cmd.Quit)


def _counts_as_go(line: str) -> bool:
    return isinstance(cmd.parse_command(line), cmd.Go)


def _is_bad(line: str) -> bool:
    return isinstance(cmd.parse_command(line), cmd.Invalid | cmd.Unknown)


def _options(session: EngineSession) -> list[object]:
    return [
        session.options[spec.name] for spec in session.options.specs if spec.name != "Clear Hash"
    ]


async def _run_in_process(script: list[str]) -> None:
    sink = ListSink()
    session = EngineSession(sink)
    gos = 0
    try:
        async with asyncio.timeout(120):  # a hang fails the example instead of the suite
            for line in script:
                if _is_quit(line):
                    continue
                gos += _counts_as_go(line)
                before = (session.position.fen(), _options(session)) if session.idle else None
                readies = sink.lines.count("readyok")
                assert await session.handle(line)
                if line.strip() == "isready":
                    assert sink.lines.count("readyok") == readies + 1, "isready not answered"
                if before is not None and _is_bad(line):
                    assert (session.position.fen(), _options(session)) == before, line
            await session.handle("stop")
            await session.finish_input()
    finally:
        await session.close()
    _check_output(sink.lines, gos)


def _check_output(lines: list[str], gos: int) -> None:
    assert not any("Traceback" in s or 'File "' in s for s in lines), lines
    best = [s for s in lines if s.startswith("bestmove")]
    assert len(best) == gos, (gos, best)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts)
def test_session_invariants_under_random_scripts(script: list[str]) -> None:
    asyncio.run(_run_in_process(script))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts)
def test_the_real_process_keeps_the_invariants(brudno: list[str], script: list[str]) -> None:
    async def run() -> None:
        engine = await UciProcess.start(brudno)
        sent = [s.replace("\n", " ") for s in script]
        sent = [s for s in sent if not _is_quit(s)]
        await engine.send(*sent, "stop", "isready")
        lines = await engine.read_until(lambda s: s == "readyok")
        gos = sum(_counts_as_go(s) for s in sent)
        # Queued commands run after the stop; a last stop + isready pair once they are done.
        while sum(s.startswith("bestmove") for s in lines) < gos:
            await engine.send("stop")
            lines += [await engine.readline()]
        await engine.send("quit")
        out, err = await asyncio.wait_for(engine.proc.communicate(), 60)
        lines += out.decode(errors="replace").splitlines()
        assert engine.proc.returncode == 0
        assert b"Traceback" not in err, err.decode(errors="replace")
        _check_output(lines, gos)
        for best in (s.split()[1] for s in lines if s.startswith("bestmove")):
            assert best == "0000" or chess.Move.from_uci(best)  # well formed

    asyncio.run(run())
